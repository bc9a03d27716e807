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
    Done,
    Error,
    Event,
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
    request = streamnorm.Request("claude-x", (streamnorm.UserMessage("hi"),))
    assert encode_request(request, api).path == "/v1/messages"
    with pytest.raises(ValueError, match="valid names"):
        normalize(b"", "antrhopic")
    with pytest.raises(TypeError, match="api must be a str"):
        normalize(b"", None)  # type: ignore[arg-type]
