"""A Responses assistant turn's ``output_text`` annotations (url_citation)
survive a same-API round trip of the request codec, with or without the
message item's id (Codex sends its own assistant messages without one, and
sanitize drops an id it cannot vouch for)."""

from __future__ import annotations

from typing import Any

import pytest

from streamnorm import AssistantMessage, TextBlock, decode_request, encode_request

from .request_support import sdk_validate

CITE = {
    "type": "url_citation",
    "url": "https://example.com/a",
    "title": "A",
    "start_index": 0,
    "end_index": 2,
}


def _body(item: dict[str, Any]) -> dict[str, Any]:
    return {
        "model": "gpt-5",
        "input": [
            {"role": "user", "content": "hi"},
            item,
            {"role": "user", "content": "more"},
        ],
    }


@pytest.mark.parametrize("ids", [{}, {"id": "msg_1", "status": "completed"}], ids=["no-id", "id"])
@pytest.mark.parametrize("sanitize", [False, True])
def test_annotations_survive_a_same_api_round_trip(ids: dict[str, Any], sanitize: bool) -> None:
    part = {"type": "output_text", "text": "Hi", "annotations": [CITE]}
    item = {"type": "message", "role": "assistant", **ids, "content": [part]}
    request = decode_request(_body(item), "openai-responses", provider="openai")
    body = encode_request(request, "openai-responses", provider="openai", sanitize=sanitize).body
    sent = body["input"][1]
    assert sent["content"] == [part] and sent["type"] == "message"
    if "id" in sent:
        assert sdk_validate("openai-responses", body) == []
    else:  # the form Codex sends; the API takes it, the SDK's types want an id
        assert set(sent) == {"type", "role", "content"}
    again = decode_request(body, "openai-responses").messages[1]
    assert isinstance(again, AssistantMessage)
    (text,) = again.content
    assert isinstance(text, TextBlock) and text.citations == (CITE,)
