"""What a new user meets first: a whole stream passed as ``bytes``, a ``str``
where bytes belong, a non-streaming body fed to the stream reader, the
package's own samples reached as an attribute, api names read from a config
file."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

import streamnorm
from streamnorm import (
    AssistantMessage,
    Done,
    Error,
    Event,
    Request,
    StopReason,
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
    Usage,
    UserMessage,
    anormalize,
    decode_response,
    detect_response_api,
    encode_request,
    normalize,
)

ANTHROPIC_BODY = (
    b'{"type":"message","id":"msg_1","role":"assistant","model":"claude-x",'
    b'"content":[{"type":"text","text":"Hi"}],"stop_reason":"end_turn",'
    b'"usage":{"input_tokens":3,"output_tokens":1}}'
)


def _last(events: list[Event]) -> Event:
    return events[-1]


@pytest.mark.parametrize("wrap", [bytes, bytearray, memoryview])
def test_normalize_takes_the_bytes_of_a_whole_stream(wrap: type) -> None:
    body = streamnorm.samples.read("anthropic")
    whole = list(normalize(wrap(body)))
    chunked = list(normalize([body[:7], body[7:]]))
    assert isinstance(whole[-1], Done)
    assert whole == chunked


def test_anormalize_takes_the_bytes_of_a_whole_stream() -> None:
    body = streamnorm.samples.read("gemini")

    async def collect() -> list[Event]:
        return [event async for event in anormalize(body)]

    events = asyncio.run(collect())
    assert isinstance(events[-1], Done)
    assert events[-1].message.text


def test_normalize_refuses_str_saying_what_to_pass() -> None:
    with pytest.raises(TypeError, match="bytes, not str"):
        normalize("data: {}\n\n")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="bytes, not str"):
        anormalize("data: {}\n\n")  # type: ignore[arg-type]


@pytest.mark.parametrize("chunk", ["data: {}\n\n", 17, [1, 2]])
def test_a_chunk_that_is_not_bytes_is_refused(chunk: object) -> None:
    with pytest.raises(TypeError, match="a chunk must be bytes"):
        list(normalize([chunk]))  # type: ignore[list-item]


def test_samples_reachable_after_import_streamnorm() -> None:
    code = "import streamnorm; print(len(streamnorm.samples.read('anthropic')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert int(out.stdout) > 100


def test_detect_response_api_takes_a_parsed_body() -> None:
    assert detect_response_api({"object": "chat.completion", "choices": []}) == (
        "openai-completions"
    )
    assert detect_response_api(ANTHROPIC_BODY) == "anthropic-messages"
    with pytest.raises(TypeError, match="body must be"):
        detect_response_api(12)  # type: ignore[arg-type]


@pytest.mark.parametrize("api", ["auto", "anthropic-messages"])
def test_a_non_streaming_body_points_at_decode_response(api: str) -> None:
    error = _last(list(normalize(ANTHROPIC_BODY, api)))
    assert isinstance(error, Error)
    assert error.kind == "protocol"
    assert "decode_response(body, 'anthropic-messages')" in error.reason
    assert decode_response(ANTHROPIC_BODY, "anthropic-messages").text == "Hi"


def test_an_api_name_read_from_config_is_accepted_and_checked() -> None:
    config: dict[str, str] = {"api": "anthropic"}
    api: str = config["api"]
    assert isinstance(_last(list(normalize(streamnorm.samples.read("anthropic"), api))), Done)
    request = Request("claude-x", (UserMessage("hi"),))
    assert encode_request(request, api).path == "/v1/messages"
    with pytest.raises(ValueError, match="valid names"):
        normalize(b"", "antrhopic")
    with pytest.raises(TypeError, match="api must be a str"):
        normalize(b"", None)  # type: ignore[arg-type]


# --------------------------------------------------------------------------
# Canonical messages built by hand


def test_tool_result_json_value_becomes_its_json_text() -> None:
    result = ToolResultMessage("call_1", "get_weather", {"temp": 21, "sky": "clear"})  # type: ignore[arg-type]
    assert result.content == '{"temp": 21, "sky": "clear"}'
    assert ToolResultMessage("c", "n", [1, "été"]).content == '[1, "été"]'  # type: ignore[arg-type]
    assert ToolResultMessage("c", "n", 42).content == "42"  # type: ignore[arg-type]
    call = ToolCallBlock("call_1", "get_weather", {}, "{}")
    turn = AssistantMessage(
        (call,), "openai-completions", "gpt-x", StopReason.TOOL_USE, None, Usage(), None
    )
    history = (UserMessage("w?"), turn, result)
    body = encode_request(Request("gpt-x", history), "openai-completions").body
    assert body["messages"][-1]["content"] == '{"temp": 21, "sky": "clear"}'


def test_a_list_of_strings_is_text_blocks() -> None:
    message = UserMessage(["a", TextBlock("b")])  # type: ignore[arg-type]
    assert message.content == (TextBlock("a"), TextBlock("b"))
    assert UserMessage(TextBlock("c")).content == (TextBlock("c"),)  # type: ignore[arg-type]
    assert ToolResultMessage("c", "n", [TextBlock("x")]).content == (TextBlock("x"),)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (None, r"UserMessage.content must be .*not None"),
        (7, r"UserMessage.content must be .*not int"),
        ({"type": "text", "text": "hi"}, r"UserMessage.content must be .*not dict"),
        (
            ["a", {"type": "text", "text": "b"}],
            r"UserMessage.content\[1\] .*not dict.*block_from_dict",
        ),
        ([ToolCallBlock("i", "n", {}, "{}")], r"UserMessage.content\[0\] .*not ToolCallBlock"),
    ],
)
def test_user_message_content_checked_at_construction(content: object, match: str) -> None:
    with pytest.raises(TypeError, match=match):
        UserMessage(content)  # type: ignore[arg-type]


def test_tool_result_checked_at_construction() -> None:
    with pytest.raises(TypeError, match=r"ToolResultMessage.content .*not None"):
        ToolResultMessage("c", "n", None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"ToolResultMessage.tool_call_id must be a str, not int"):
        ToolResultMessage(3, "n", "x")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"ToolResultMessage.tool_name must be a str, not None"):
        ToolResultMessage("c", None, "x")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"ToolResultMessage.content is not JSON"):
        ToolResultMessage("c", "n", {"when": object()})  # type: ignore[arg-type]


def test_request_with_a_str_is_one_user_message() -> None:
    request = Request("claude-x", "hi")
    assert request.messages == (UserMessage("hi"),)
    assert Request("m", [UserMessage("a")]).messages == (UserMessage("a"),)
    body = encode_request(request, "anthropic-messages").body
    assert body["messages"] == [{"role": "user", "content": "hi"}]


def test_request_names_the_index_of_what_is_not_a_message() -> None:
    with pytest.raises(TypeError, match=r"messages\[1\] must be .*not dict.*message_from_dict"):
        Request("m", [UserMessage("a"), {"role": "user", "content": "b"}])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"Request.messages must be .*not NoneType"):
        Request("m", None)  # type: ignore[arg-type]
