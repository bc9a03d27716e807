"""``bedrock-converse-stream`` and ``bedrock-invoke-stream``, end to end.

Oracles: botocore reads the same bytes with the Bedrock service model (the
events a boto3 user gets), from which the expected blocks, stop reason and
usage are assembled independently of the decoders; and for Invoke, the
inner Anthropic events read as an Anthropic Messages stream. Every recorded
stream ends with one terminal event and its MANIFEST outcome, identically
for any chunking and with ``api="auto"``; a cut anywhere is ``truncated`` and
a damaged frame ``protocol``, with everything before kept.
"""

from __future__ import annotations

import base64
import json
import random
from pathlib import Path
from typing import Any

import botocore.session
import pytest
from botocore import parsers
from botocore.eventstream import EventStream
from fuzz.check import check

from streamnorm import (
    Done,
    Error,
    NormalizationError,
    ProviderBlock,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    decode_response,
)
from streamnorm.apis import resolve_api
from streamnorm.events import Event
from streamnorm.eventstream import EventStreamDecoder
from streamnorm.messages import AssistantMessage
from streamnorm.sse import SSEDecoder

from .support import (
    EXTRA_FIXTURES,
    FIXTURES,
    aws_event,
    aws_frame,
    aws_frame_ends,
    dicts,
    done,
    failed,
    final_done,
    invoke_chunk,
    needs_fixtures,
    random_split,
    run,
    run_bytes,
    split_every,
    terminal,
)

CONVERSE = sorted(EXTRA_FIXTURES.glob("bedrock-converse-stream/*.bin"))
INVOKE = sorted(EXTRA_FIXTURES.glob("bedrock-invoke-stream/*.bin"))
ANTHROPIC = sorted((FIXTURES / "anthropic-messages").glob("*.sse"))

# The MANIFEST outcome of every recorded stream: each ends with Done, with
# this stop reason, raw stop value and sequence of block kinds.
TEXT, THINK, REDACTED, CALL, PROVIDER = "text", "thinking", "redacted", "call", "provider"
OUTCOMES: dict[str, tuple[StopReason, str, list[str]]] = {
    "guardrail-intervened-titan": (StopReason.CONTENT_FILTER, "guardrail_intervened", [TEXT]),
    "max-tokens-titan-text-lite": (StopReason.LENGTH, "max_tokens", [TEXT]),
    "reasoning-no-signature-empty-text-gpt-oss-120b": (StopReason.STOP, "end_turn", [THINK, TEXT]),
    "reasoning-redacted-claude-3-7-sonnet": (
        StopReason.STOP,
        "end_turn",
        [REDACTED, REDACTED, TEXT],
    ),
    "reasoning-text-signature-claude-sonnet-4": (StopReason.STOP, "end_turn", [THINK, TEXT]),
    "server-tool-code-interpreter-nova-2-lite": (
        StopReason.TOOL_USE,
        "tool_use",
        [PROVIDER, PROVIDER, CALL],
    ),
    "structured-output-claude-sonnet-4-5": (StopReason.STOP, "end_turn", [TEXT]),
    "text-llama3-2-1b": (StopReason.STOP, "end_turn", [TEXT]),
    "text-nova-micro": (StopReason.STOP, "end_turn", [TEXT]),
    "text-then-tool-use-claude-3-sonnet": (StopReason.TOOL_USE, "tool_use", [TEXT, CALL]),
    "text-then-tool-use-nova-micro": (StopReason.TOOL_USE, "tool_use", [TEXT, CALL]),
    "legacy-text-completion-claude-instant": (StopReason.STOP, "stop_sequence", []),
    "text-claude-3-sonnet": (StopReason.STOP, "end_turn", [TEXT]),
    "text-claude-haiku-4-5": (StopReason.STOP, "end_turn", [TEXT]),
    "text-claude-opus-4-6": (StopReason.STOP, "end_turn", [TEXT]),
    "text-single-delta-claude-sonnet-4-5": (StopReason.STOP, "end_turn", [TEXT]),
    "text-then-two-tool-uses-claude-3-5-sonnet": (
        StopReason.TOOL_USE,
        "tool_use",
        [TEXT, CALL, CALL],
    ),
    "text-then-two-tool-uses-image-input-claude-3-5-sonnet": (
        StopReason.TOOL_USE,
        "tool_use",
        [TEXT, CALL, CALL],
    ),
    "tool-use-claude-haiku-4-5": (StopReason.TOOL_USE, "tool_use", [CALL]),
    "tool-use-claude-opus-4-6": (StopReason.TOOL_USE, "tool_use", [CALL]),
    "tool-use-claude-sonnet-4-5": (StopReason.TOOL_USE, "tool_use", [CALL]),
}


def _id(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def kinds(message: AssistantMessage) -> list[str]:
    out = []
    for block in message.content:
        if isinstance(block, TextBlock):
            out.append(TEXT)
        elif isinstance(block, ThinkingBlock):
            out.append(REDACTED if block.redacted else THINK)
        elif isinstance(block, ToolCallBlock):
            out.append(CALL)
        else:
            out.append(PROVIDER)
    return out


# -- botocore as the oracle -----------------------------------------------------


class _Body:
    def __init__(self, data: bytes) -> None:
        self._data = data

    def stream(self) -> Any:
        yield self._data

    def close(self) -> None:
        pass


def botocore_events(data: bytes, operation: str) -> list[dict[str, Any]]:
    """The events boto3 gives for these bytes (parsed with the service model)."""
    model = botocore.session.get_session().get_service_model("bedrock-runtime")
    op = model.operation_model(operation)
    member = "stream" if operation == "ConverseStream" else "body"
    shape = op.output_shape.members[member]
    return list(EventStream(_Body(data), shape, parsers.EventStreamJSONParser(), op.name))


def reference_converse(events: list[dict[str, Any]]) -> dict[str, Any]:
    """What a boto3 user assembles from ConverseStream events: blocks in
    index order (blocks with no content left out), stop reason, usage."""
    blocks: dict[int, dict[str, Any]] = {}
    out: dict[str, Any] = {"stop": None, "usage": None}
    for event in events:
        (name, body), *_ = event.items()
        if name == "contentBlockStart":
            start = body["start"]
            kind = "toolUse" if "toolUse" in start else "toolResult"
            blocks[body["contentBlockIndex"]] = {"kind": kind, **start[kind], "parts": []}
        elif name == "contentBlockDelta":
            block = blocks.setdefault(body["contentBlockIndex"], {"parts": []})
            delta = body["delta"]
            if "text" in delta:
                block.setdefault("kind", "text")
                block["parts"].append(delta["text"])
            elif "reasoningContent" in delta:
                reasoning = delta["reasoningContent"]
                block.setdefault("kind", "redacted" if "redactedContent" in reasoning else "think")
                block["parts"].append(reasoning.get("text", ""))
                if "signature" in reasoning:
                    block["signature"] = reasoning["signature"]
                if "redactedContent" in reasoning:
                    block["blob"] = reasoning["redactedContent"]
            elif "toolUse" in delta:
                block["parts"].append(delta["toolUse"]["input"])
            elif "toolResult" in delta:
                block["parts"].extend(delta["toolResult"])
        elif name == "messageStop":
            out["stop"] = body["stopReason"]
        elif name == "metadata":
            out["usage"] = body["usage"]
    out["blocks"] = [
        b
        for _, b in sorted(blocks.items())
        if b["kind"] not in ("text", "think") or any(b["parts"])
    ]
    return out


def check_against_reference(message: AssistantMessage, reference: dict[str, Any]) -> None:
    assert len(message.content) == len(reference["blocks"])
    for block, ref in zip(message.content, reference["blocks"], strict=True):
        if ref["kind"] == "text":
            assert isinstance(block, TextBlock) and block.text == "".join(ref["parts"])
        elif ref["kind"] == "think":
            assert isinstance(block, ThinkingBlock) and not block.redacted
            assert block.thinking == "".join(ref["parts"])
            assert block.signature == ref.get("signature")
        elif ref["kind"] == "redacted":
            # The wire value (base64, as JSON carries a blob) is kept verbatim.
            assert isinstance(block, ThinkingBlock) and block.redacted
            assert block.signature is not None
            assert base64.b64decode(block.signature) == ref["blob"]
        elif ref["kind"] == "toolUse" and ref.get("type", "tool_use") == "tool_use":
            assert isinstance(block, ToolCallBlock)
            assert (block.id, block.name) == (ref["toolUseId"], ref["name"])
            assert block.raw_arguments == "".join(ref["parts"])
        elif ref["kind"] == "toolUse":  # a server tool
            assert isinstance(block, ProviderBlock) and block.kind == "toolUse"
            assert block.data["toolUseId"] == ref["toolUseId"]
            assert block.data["input"] == json.loads("".join(ref["parts"]))
        else:
            assert isinstance(block, ProviderBlock) and block.kind == "toolResult"
            assert block.data["toolUseId"] == ref["toolUseId"]
            assert block.data["content"] == ref["parts"]


def converse_message(data: bytes) -> AssistantMessage:
    return terminal(run_bytes(data, "bedrock-converse-stream")).message


# -- every recorded stream ------------------------------------------------------


@needs_fixtures
def test_all_fixtures_have_an_outcome() -> None:
    assert sorted(p.stem for p in [*CONVERSE, *INVOKE]) == sorted(OUTCOMES)


@needs_fixtures
@pytest.mark.parametrize("path", [*CONVERSE, *INVOKE], ids=_id)
def test_manifest_outcome_under_any_chunking(path: Path) -> None:
    data = path.read_bytes()
    api = path.parent.name
    whole = run([data], api)
    end = done(whole)
    stop, raw_stop, expected_kinds = OUTCOMES[path.stem]
    assert (end.stop_reason, end.message.raw_stop_reason) == (stop, raw_stop)
    assert kinds(end.message) == expected_kinds
    assert end.message.api == api
    assert not [e for e in whole if isinstance(e, NormalizationError)]
    expected = dicts(whole)
    assert dicts(run(split_every(data, 1), api)) == expected
    for seed in range(4):
        assert dicts(run(random_split(data, random.Random(seed), 200), api)) == expected
    assert dicts(run([data], "auto")) == expected
    assert dicts(run(random_split(data, random.Random(9), 5), "auto")) == expected


@needs_fixtures
@pytest.mark.parametrize("path", CONVERSE, ids=_id)
def test_converse_matches_what_botocore_reads(path: Path) -> None:
    data = path.read_bytes()
    reference = reference_converse(botocore_events(data, "ConverseStream"))
    message = converse_message(data)
    check_against_reference(message, reference)
    assert message.raw_stop_reason == reference["stop"]
    usage = reference["usage"]
    assert message.usage.input_tokens == usage["inputTokens"]
    assert message.usage.output_tokens == usage["outputTokens"]
    assert message.usage.total_tokens == usage["totalTokens"]
    assert message.usage.raw is not None
    # (the raw usage may hold fields newer than botocore's service model)
    assert usage.items() <= message.usage.raw["usage"].items()
    assert "latencyMs" in message.usage.raw["metrics"]
    assert "p" not in message.usage.raw


@needs_fixtures
def test_the_guardrail_trace_is_kept() -> None:
    message = converse_message(
        (EXTRA_FIXTURES / "bedrock-converse-stream/guardrail-intervened-titan.bin").read_bytes()
    )
    assert message.usage.raw is not None
    guardrail = message.usage.raw["trace"]["guardrail"]
    assert guardrail["modelOutput"] == [
        "\nThe capital of Italy is Rome. The capital of Japan is Tokyo."
    ]
    assert isinstance(message.content[0], TextBlock)
    assert "{ADDRESS}" in message.content[0].text


def anthropic_sse(inner_events: list[bytes]) -> bytes:
    """Inner events written as the Anthropic Messages API streams them."""
    out = []
    for raw in inner_events:
        kind = json.loads(raw)["type"]
        out.append(b"event: " + kind.encode() + b"\ndata: " + raw + b"\n\n")
    return b"".join(out)


@needs_fixtures
@pytest.mark.parametrize("path", [p for p in INVOKE if "legacy" not in p.name], ids=_id)
def test_invoke_gives_the_anthropic_message(path: Path) -> None:
    """Decoded by botocore, the chunks are Anthropic events; read as an
    Anthropic stream they give the same message, but for the usage, which
    is Bedrock's invocation metrics."""
    data = path.read_bytes()
    inner = [e["chunk"]["bytes"] for e in botocore_events(data, "InvokeModelWithResponseStream")]
    anthropic = done(run_bytes(anthropic_sse(inner), "anthropic-messages")).message
    invoke = done(run_bytes(data, "bedrock-invoke-stream")).message
    assert invoke.content == anthropic.content
    assert (invoke.stop_reason, invoke.raw_stop_reason) == (
        anthropic.stop_reason,
        anthropic.raw_stop_reason,
    )
    assert (invoke.model, invoke.response_id) == (anthropic.model, anthropic.response_id)
    metrics = json.loads(inner[-1])["amazon-bedrock-invocationMetrics"]
    assert invoke.usage.input_tokens == metrics["inputTokenCount"]
    assert invoke.usage.output_tokens == metrics["outputTokenCount"]
    assert invoke.usage.cache_read_tokens == anthropic.usage.cache_read_tokens
    assert invoke.usage.raw == {
        **(anthropic.usage.raw or {}),
        "amazon-bedrock-invocationMetrics": metrics,
    }


@needs_fixtures
def test_the_legacy_completion_chunk() -> None:
    data = EXTRA_FIXTURES / "bedrock-invoke-stream/legacy-text-completion-claude-instant.bin"
    end = done(run_bytes(data.read_bytes(), "bedrock-invoke-stream"))
    assert end.message.content == ()
    assert (end.usage.input_tokens, end.usage.output_tokens) == (25, 4)


def test_legacy_completion_text_streams_into_one_block() -> None:
    chunks: list[dict[str, Any]] = [
        {"completion": " Hello", "stop_reason": None},
        {"completion": " world", "stop_reason": None},
        {
            "completion": "!",
            "stop_reason": "max_tokens",
            "amazon-bedrock-invocationMetrics": {"inputTokenCount": 3, "outputTokenCount": 5},
        },
    ]
    events = run_bytes(b"".join(invoke_chunk(c) for c in chunks), "auto")
    end = done(events)
    assert end.message.content == (TextBlock(" Hello world!"),)
    assert end.stop_reason is StopReason.LENGTH
    assert (end.usage.input_tokens, end.usage.output_tokens) == (3, 5)
    assert not [e for e in events if isinstance(e, NormalizationError)]


# -- an Anthropic stream re-framed as Invoke chunks ------------------------------


def reframe(sse: bytes) -> bytes:
    """The events of an Anthropic SSE stream as Bedrock Invoke chunk frames."""
    return b"".join(invoke_chunk(data.encode()) for data in sse_data(sse))


def sse_data(sse: bytes) -> list[str]:
    """The data of every event, a final one without its blank line too (as
    the normalizer reads it)."""
    decoder = SSEDecoder()
    events = decoder.feed(sse) + decoder.flush()
    last = decoder.pending()
    return [e.data for e in [*events, *([last] if last else [])]]


def without_api(events: list[Event]) -> Any:
    """The events as dicts, without the api names (of the Start, the
    messages and the provider blocks), which are all that differ."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "api"}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip(dicts(events))


@needs_fixtures
@pytest.mark.parametrize("path", ANTHROPIC, ids=_id)
def test_a_reframed_anthropic_stream_gives_the_same_events(path: Path) -> None:
    sse = path.read_bytes()
    framed = reframe(sse)
    expected = run_bytes(sse, "anthropic-messages")
    got = run_bytes(framed, "bedrock-invoke-stream")
    assert without_api(got) == without_api(expected)
    assert terminal(got).message.api == "bedrock-invoke-stream"
    rng = random.Random(len(framed))
    assert without_api(run(random_split(framed, rng, 50), "auto")) == without_api(expected)


@needs_fixtures
def test_invocation_metrics_replace_the_counts_but_keep_the_cache_split() -> None:
    sse = (FIXTURES / "anthropic-messages/prompt-cache-read-usage.sse").read_bytes()
    anthropic = done(run_bytes(sse, "anthropic-messages")).usage
    assert anthropic.cache_read_tokens > 0
    inner = [json.loads(data) for data in sse_data(sse)]
    metrics = {"inputTokenCount": 11, "outputTokenCount": 22, "invocationLatency": 5}
    inner[-1]["amazon-bedrock-invocationMetrics"] = metrics
    assert inner[-1]["type"] == "message_stop"
    usage = done(run_bytes(b"".join(map(invoke_chunk, inner)), "auto")).usage
    assert (usage.input_tokens, usage.output_tokens) == (11, 22)
    assert usage.cache_read_tokens == anthropic.cache_read_tokens
    assert usage.total_tokens == 33 + anthropic.cache_read_tokens + anthropic.cache_write_tokens
    with_cache = {**metrics, "cacheReadInputTokenCount": 7, "cacheWriteInputTokenCount": 8}
    inner[-1]["amazon-bedrock-invocationMetrics"] = with_cache
    usage = done(run_bytes(b"".join(map(invoke_chunk, inner)), "auto")).usage
    assert (usage.cache_read_tokens, usage.cache_write_tokens, usage.total_tokens) == (7, 8, 48)


# -- cuts and damage --------------------------------------------------------------


def _content_at(data: bytes, api: str) -> AssistantMessage:
    return terminal(run_bytes(data, api)).message


@needs_fixtures
@pytest.mark.parametrize("path", [*CONVERSE, *INVOKE], ids=_id)
def test_a_cut_anywhere_is_truncated_with_the_content_so_far(path: Path) -> None:
    data = path.read_bytes()
    api = path.parent.name
    ends = aws_frame_ends(data)
    rng = random.Random(11)
    offsets = sorted({*ends[:-1], *(rng.randrange(1, len(data)) for _ in range(25))})
    at_boundary: dict[int, AssistantMessage] = {}
    for cut in [0, *ends[:-1]]:
        at_boundary[cut] = _content_at(data[:cut], api)
    for cut in offsets:
        for chunks in ([data[:cut]], random_split(data[:cut], random.Random(cut), 40)):
            end = failed(run(chunks, api))
            assert end.kind == "truncated", (cut, end)
            last = max(b for b in at_boundary if b <= cut)
            assert end.message.content == at_boundary[last].content
            assert end.message.usage == at_boundary[last].usage
    if api == "bedrock-converse-stream":  # what each boundary holds, against botocore
        for cut in ends[:-1]:
            reference = reference_converse(botocore_events(data[:cut], "ConverseStream"))
            assert len(at_boundary[cut].content) == len(reference["blocks"])
            for block, ref in zip(at_boundary[cut].content, reference["blocks"], strict=True):
                if isinstance(block, TextBlock):
                    assert block.text == "".join(ref["parts"])
                elif isinstance(block, ToolCallBlock):
                    assert block.raw_arguments == "".join(ref["parts"])


@needs_fixtures
@pytest.mark.parametrize("path", [*CONVERSE, *INVOKE], ids=_id)
def test_a_flipped_crc_byte_is_a_protocol_error_with_the_content_before(path: Path) -> None:
    data = path.read_bytes()
    api = path.parent.name
    ends = aws_frame_ends(data)
    rng = random.Random(5)
    for start, end_ in zip([0, *ends[:-1]], ends, strict=True):
        before = _content_at(data[:start], api)
        for at in (start + 8 + rng.randrange(4), end_ - 1 - rng.randrange(4)):
            bad = data[:at] + bytes([data[at] ^ 0x80]) + data[at + 1 :]
            end = failed(run([bad], api))
            assert end.kind == "protocol", end
            assert end.message.content == before.content


# -- upstream errors, limits, detection ----------------------------------------------


def _converse_start() -> bytes:
    return aws_event("messageStart", {"role": "assistant"}) + aws_event(
        "contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Hel"}}
    )


@pytest.mark.parametrize("api", ["bedrock-converse-stream", "auto", "bedrock"])
def test_an_exception_frame_is_an_upstream_error(api: str) -> None:
    exception = aws_frame(
        {
            ":message-type": "exception",
            ":exception-type": "modelStreamErrorException",
            ":content-type": "application/json",
        },
        b'{"message":"The model failed","originalStatusCode":500}',
    )
    end = failed(run_bytes(_converse_start() + exception, api))
    assert (end.kind, end.code, end.reason) == (
        "upstream",
        "modelStreamErrorException",
        "The model failed",
    )
    assert end.message.content == (TextBlock("Hel"),)


def test_an_error_frame_is_an_upstream_error() -> None:
    error = aws_frame(
        {":message-type": "error", ":error-code": "InternalFailure", ":error-message": "oops"}
    )
    end = failed(run_bytes(_converse_start() + error, "auto"))
    assert (end.kind, end.code, end.reason) == ("upstream", "InternalFailure", "oops")


@needs_fixtures
def test_an_exception_in_an_invoke_stream() -> None:
    data = (EXTRA_FIXTURES / "bedrock-invoke-stream/text-claude-haiku-4-5.bin").read_bytes()
    ends = aws_frame_ends(data)
    throttled = aws_frame(
        {":message-type": "exception", ":exception-type": "throttlingException"},
        b'{"message":"Too many requests"}',
    )
    end = failed(run_bytes(data[: ends[3]] + throttled, "auto"))
    assert (end.kind, end.code) == ("upstream", "throttlingException")
    assert end.message.api == "bedrock-invoke-stream"
    assert isinstance(end.message.content[0], TextBlock)
    assert end.message.content[0].text == "Olá! 👋"  # the first four frames


def test_an_exception_as_the_first_frame() -> None:
    exception = aws_frame(
        {":message-type": "exception", ":exception-type": "validationException"},
        b'{"message":"bad model id"}',
    )
    events = run_bytes(exception, "auto")
    end = failed(events)
    assert (end.kind, end.code, end.reason) == ("upstream", "validationException", "bad model id")


def test_a_frame_over_max_event_bytes_is_a_limit_error() -> None:
    big = aws_event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "x" * 5000}})
    end = failed(run_bytes(_converse_start() + big, "bedrock", max_event_bytes=4096))
    assert (end.kind, end.code) == ("limit", "max_event_bytes")
    assert end.message.content == (TextBlock("Hel"),)


def test_bytes_that_are_not_an_event_stream() -> None:
    end = failed(run_bytes(b"\x00\x00\x00\x20not a frame at all", "auto"))
    assert end.kind == "protocol"
    end = failed(run_bytes(b'data: {"type":"message_start"}\n\n', "bedrock-converse-stream"))
    assert end.kind == "protocol"
    assert failed(run_bytes(b"{}", "bedrock-invoke-stream")).kind == "protocol"
    end = failed(run_bytes(b"", "bedrock"))
    assert end.kind == "truncated"


def test_the_alias() -> None:
    assert resolve_api("bedrock") == "bedrock-converse-stream"
    assert resolve_api("Bedrock-Invoke-Stream") == "bedrock-invoke-stream"


# -- ConverseStream shapes the recordings do not show --------------------------------


def converse(*events: tuple[str, dict[str, Any]], stop: str = "end_turn") -> bytes:
    frames = [aws_event("messageStart", {"role": "assistant"})]
    frames += [aws_event(name, payload) for name, payload in events]
    frames.append(aws_event("messageStop", {"stopReason": stop}))
    frames.append(aws_event("metadata", {"usage": {"inputTokens": 1, "outputTokens": 2}}))
    return b"".join(frames)


def delta(index: int, value: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return ("contentBlockDelta", {"contentBlockIndex": index, "delta": value})


def stop(index: int) -> tuple[str, dict[str, Any]]:
    return ("contentBlockStop", {"contentBlockIndex": index})


def stop_reasons() -> list[str]:
    model = botocore.session.get_session().get_service_model("bedrock-runtime")
    return list(model.shape_for("StopReason").enum)


EXPECTED_STOPS = {
    "end_turn": StopReason.STOP,
    "stop_sequence": StopReason.STOP,
    "tool_use": StopReason.TOOL_USE,
    "max_tokens": StopReason.LENGTH,
    "model_context_window_exceeded": StopReason.LENGTH,
    "guardrail_intervened": StopReason.CONTENT_FILTER,
    "content_filtered": StopReason.CONTENT_FILTER,
    "malformed_model_output": None,
    "malformed_tool_use": None,
}


def test_every_stop_reason_of_the_service_model_is_known() -> None:
    assert sorted(stop_reasons()) == sorted(EXPECTED_STOPS)


@pytest.mark.parametrize("raw", sorted(EXPECTED_STOPS))
def test_each_stop_reason(raw: str) -> None:
    events = run_bytes(converse(delta(0, {"text": "hi"}), stop(0), stop=raw), "bedrock")
    end = terminal(events)
    expected = EXPECTED_STOPS[raw]
    if expected is None:  # the service failed to make a message of the output
        assert isinstance(end, Error) and (end.kind, end.code) == ("upstream", raw)
    else:
        assert isinstance(end, Done) and end.stop_reason is expected
    assert end.message.raw_stop_reason == raw
    assert end.message.usage.output_tokens == 2  # the metadata came before the end
    assert not [e for e in events if isinstance(e, NormalizationError)]


def test_an_unknown_stop_reason_is_a_diagnostic() -> None:
    events = run_bytes(converse(delta(0, {"text": "hi"}), stop=":-)"), "bedrock")
    assert done(events).stop_reason is StopReason.STOP
    assert [e.kind for e in events if isinstance(e, NormalizationError)] == ["unknown_stop_reason"]


def test_citations_attach_to_their_text_block() -> None:
    citation = {
        "title": "Doc",
        "sourceContent": [{"text": "Paris is the capital"}],
        "location": {"documentChar": {"documentIndex": 0, "start": 0, "end": 20}},
    }
    data = converse(
        delta(0, {"text": "Paris."}),
        delta(0, {"citation": citation}),
        stop(0),
        delta(1, {"citation": citation}),
    )
    message = done(run_bytes(data, "bedrock")).message
    assert message.content == (
        TextBlock("Paris.", citations=(citation,)),
        TextBlock("", citations=(citation,)),
    )


def test_cache_usage() -> None:
    frames = [
        aws_event("messageStart", {"role": "assistant"}),
        aws_event("messageStop", {"stopReason": "end_turn"}),
        aws_event(
            "metadata",
            {
                "usage": {
                    "inputTokens": 10,
                    "outputTokens": 20,
                    "cacheReadInputTokens": 300,
                    "cacheWriteInputTokens": 4000,
                    "totalTokens": 4330,
                },
                "metrics": {"latencyMs": 12},
                "serviceTier": {"type": "priority"},
            },
        ),
    ]
    usage = done(run_bytes(b"".join(frames), "bedrock")).usage
    assert (usage.input_tokens, usage.output_tokens) == (10, 20)
    assert (usage.cache_read_tokens, usage.cache_write_tokens, usage.total_tokens) == (
        300,
        4000,
        4330,
    )
    assert usage.raw is not None and usage.raw["serviceTier"] == {"type": "priority"}


def test_metadata_before_message_stop_still_ends_the_stream() -> None:
    frames = [
        aws_event("messageStart", {"role": "assistant"}),
        aws_event("metadata", {"usage": {"inputTokens": 1, "outputTokens": 1}}),
        aws_event("messageStop", {"stopReason": "end_turn"}),
    ]
    assert done(run_bytes(b"".join(frames), "bedrock")).usage.output_tokens == 1


def test_message_stop_without_metadata_is_truncated() -> None:
    frames = [
        aws_event("messageStart", {"role": "assistant"}),
        aws_event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "hi"}}),
        aws_event("messageStop", {"stopReason": "end_turn"}),
    ]
    end = failed(run_bytes(b"".join(frames), "bedrock"))
    assert end.kind == "truncated"
    assert end.message.content == (TextBlock("hi"),)
    assert end.message.raw_stop_reason == "end_turn"


def test_a_tool_call_cut_off_is_incomplete() -> None:
    frames = [
        aws_event("messageStart", {"role": "assistant"}),
        aws_event(
            "contentBlockStart",
            {"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "t1", "name": "f"}}},
        ),
        aws_event(
            "contentBlockDelta",
            {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '{"a": 1, "b'}}},
        ),
    ]
    end = failed(run_bytes(b"".join(frames), "bedrock"))
    [call] = end.message.content
    assert isinstance(call, ToolCallBlock)
    assert (call.id, call.name, call.error, call.arguments) == ("t1", "f", "incomplete", {"a": 1})


def test_image_blocks_and_unknown_events() -> None:
    data = converse(
        ("contentBlockStart", {"contentBlockIndex": 0, "start": {"image": {"format": "png"}}}),
        delta(0, {"image": {"source": {"bytes": "iVBORw0KGgo="}}}),
        stop(0),
        ("somethingNew", {"x": 1}),
        delta(1, {"somethingElse": {}}),
    )
    events = run_bytes(data, "bedrock")
    message = done(events).message
    assert message.content == (
        ProviderBlock(
            "bedrock-converse-stream",
            "image",
            {"format": "png", "source": {"bytes": "iVBORw0KGgo="}},
        ),
    )
    assert [e.kind for e in events if isinstance(e, NormalizationError)] == [
        "unknown_event",
        "unknown_delta",
    ]


def test_redacted_content_in_pieces_is_joined() -> None:
    data = converse(
        delta(0, {"reasoningContent": {"redactedContent": "QUJD"}}),
        delta(0, {"reasoningContent": {"redactedContent": "REVG"}}),
        stop(0),
    )
    message = done(run_bytes(data, "bedrock")).message
    assert message.content == (ThinkingBlock("", "QUJDREVG", redacted=True),)


def test_an_invoke_chunk_that_is_not_base64_json_is_a_diagnostic() -> None:
    frames = [
        aws_event("chunk", {"bytes": "!!not base64!!"}),
        aws_event("chunk", {"nothing": 1}),
        invoke_chunk(b"[1, 2]"),
        invoke_chunk({"generation": "a llama chunk"}),
    ]
    events = run_bytes(b"".join(frames), "bedrock-invoke-stream")
    assert failed(events).kind == "truncated"
    assert [e.kind for e in events if isinstance(e, NormalizationError)] == [
        "invalid_chunk",
        "invalid_chunk",
        "invalid_chunk",
        "unknown_event",
    ]


# -- hostile variants of the recordings ------------------------------------------------

_JUNK: list[Any] = [None, -1, 0, 2**70, 1.5, "", "x" * 300, [], {}, [1, {"a": None}], True]
_NAMES = [
    "messageStart",
    "contentBlockStart",
    "contentBlockDelta",
    "contentBlockStop",
    "messageStop",
    "metadata",
    "chunk",
    "somethingNew",
]


def _mutate_json(value: Any, rng: random.Random) -> Any:
    """``value`` with one node, chosen at random, replaced by junk."""
    children = list(value.items()) if isinstance(value, dict) else list(enumerate(value))
    if not children or rng.random() < 0.25 or not isinstance(value, (dict, list)):
        return rng.choice(_JUNK)
    key, child = rng.choice(children)
    if isinstance(child, (dict, list)) and rng.random() < 0.7:
        value[key] = _mutate_json(child, rng)
    else:
        value[key] = rng.choice(_JUNK)
    return value


def _mutate_payload(payload: bytes, rng: random.Random) -> bytes:
    try:
        body = json.loads(payload)
    except ValueError:  # cut by an earlier mutation
        return payload[: rng.randrange(len(payload) + 1)]
    if isinstance(body, dict) and isinstance(body.get("bytes"), str) and rng.random() < 0.8:
        inner = _mutate_json(json.loads(base64.b64decode(body["bytes"])), rng)
        body["bytes"] = base64.b64encode(json.dumps(inner).encode()).decode()
        return json.dumps(body).encode()
    return json.dumps(_mutate_json(body, rng)).encode()


def mutate(data: bytes, rng: random.Random) -> bytes:
    """A hostile variant of a recorded stream: frames dropped, repeated,
    swapped, renamed, cut or given junk JSON (and framed again, so that the
    decoders see them), an exception frame put in; then, sometimes, a byte
    flipped or the whole cut short."""
    frames: list[tuple[dict[str, Any], bytes]] = [
        (dict(m.headers), m.payload) for m in EventStreamDecoder().feed(data)
    ]
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(frames))
        headers, payload = frames[i]
        op = rng.randrange(7)
        if op == 0 and len(frames) > 1:
            del frames[i]
        elif op == 1:
            frames.insert(i, frames[i])
        elif op == 2:
            j = rng.randrange(len(frames))
            frames[i], frames[j] = frames[j], frames[i]
        elif op == 3:
            frames[i] = (headers, _mutate_payload(payload, rng))
        elif op == 4:
            frames[i] = (headers, payload[: rng.randrange(len(payload) + 1)])
        elif op == 5:
            frames[i] = ({**headers, ":event-type": rng.choice(_NAMES)}, payload)
        else:
            kind = {":message-type": "exception", ":exception-type": "throttlingException"}
            frames.insert(i, (kind, b'{"message":"slow down"}'))
    body = b"".join(aws_frame(h, p) for h, p in frames)
    roll = rng.random()
    if roll < 0.15:
        at = rng.randrange(len(body))
        body = body[:at] + bytes([body[at] ^ (1 << rng.randrange(8))]) + body[at + 1 :]
    elif roll < 0.3:
        body = body[: rng.randrange(len(body))]
    return body


@needs_fixtures
def test_hostile_variants_keep_every_invariant() -> None:
    """The fuzz harness's invariants (one terminal event, last; Start first;
    indices dense; every delta in its final block; the same events under
    other chunkings) on seeded hostile variants of every recording."""
    paths = [*CONVERSE, *INVOKE]
    kinds_seen: set[str] = set()
    for seed in range(160):
        rng = random.Random(seed)
        path = paths[seed % len(paths)]
        data = mutate(path.read_bytes(), rng)
        api = path.parent.name if seed % 2 else "auto"
        end = check(data, api, split_seed=seed, byte_at_a_time_max=3000)
        kinds_seen.add(end.kind if isinstance(end, Error) else "done")
    # The variants reach every ending, so the invariants are checked on each.
    assert kinds_seen >= {"done", "upstream", "truncated", "protocol"}, kinds_seen


# -- whole (non-streaming) answers ------------------------------------------------------

_WHOLE_CONVERSE = {
    "output": {
        "message": {
            "role": "assistant",
            "content": [
                {"reasoningContent": {"reasoningText": {"text": "Look.", "signature": "c2ln"}}},
                {"reasoningContent": {"redactedContent": "cmVk"}},
                {"text": "Checking."},
                {
                    "toolUse": {
                        "toolUseId": "tooluse_1",
                        "name": "weather",
                        "input": {"city": "Paris"},
                    }
                },
            ],
        }
    },
    "stopReason": "tool_use",
    "usage": {"inputTokens": 12, "outputTokens": 9, "totalTokens": 21, "cacheReadInputTokens": 4},
    "metrics": {"latencyMs": 300},
}


def _converse_stream_of_whole() -> bytes:
    """The ConverseStream form of ``_WHOLE_CONVERSE``, as Bedrock streams it."""

    def delta(index: int, value: dict[str, Any]) -> bytes:
        return aws_event("contentBlockDelta", {"contentBlockIndex": index, "delta": value})

    def stop(index: int) -> bytes:
        return aws_event("contentBlockStop", {"contentBlockIndex": index})

    start = {"toolUse": {"toolUseId": "tooluse_1", "name": "weather"}}
    return b"".join(
        [
            aws_event("messageStart", {"role": "assistant"}),
            delta(0, {"reasoningContent": {"text": "Lo"}}),
            delta(0, {"reasoningContent": {"text": "ok."}}),
            delta(0, {"reasoningContent": {"signature": "c2ln"}}),
            stop(0),
            delta(1, {"reasoningContent": {"redactedContent": "cmVk"}}),
            stop(1),
            delta(2, {"text": "Checking."}),
            stop(2),
            aws_event("contentBlockStart", {"contentBlockIndex": 3, "start": start}),
            delta(3, {"toolUse": {"input": '{"city": '}}),
            delta(3, {"toolUse": {"input": '"Paris"}'}}),
            stop(3),
            aws_event("messageStop", {"stopReason": "tool_use"}),
            aws_event("metadata", {k: _WHOLE_CONVERSE[k] for k in ("usage", "metrics")}),
        ]
    )


def test_a_whole_converse_answer_is_the_message_its_stream_gives() -> None:
    whole = decode_response(_WHOLE_CONVERSE, "bedrock-converse-stream", provider="bedrock")
    streamed = final_done(_converse_stream_of_whole(), "bedrock-converse-stream").message
    assert [type(b) for b in whole.content] == [
        ThinkingBlock,
        ThinkingBlock,
        TextBlock,
        ToolCallBlock,
    ]
    assert whole.content[0] == ThinkingBlock("Look.", "c2ln")
    assert whole.content[1] == ThinkingBlock("", "cmVk", redacted=True)
    assert (whole.stop_reason, whole.usage.cache_read_tokens) == (StopReason.TOOL_USE, 4)
    assert whole.tool_calls[0].arguments == {"city": "Paris"}
    assert [b.to_dict() for b in whole.content][:3] == [b.to_dict() for b in streamed.content][:3]
    assert whole.tool_calls[0].arguments == streamed.tool_calls[0].arguments
    assert (whole.usage.input_tokens, whole.usage.output_tokens) == (12, 9)
    assert whole.usage == streamed.usage and whole.provider == "bedrock"


def test_a_bedrock_error_body_is_an_error_message() -> None:
    body = {"message": "Too many tokens", "__type": "ValidationException"}
    for api in ("bedrock-converse-stream", "bedrock-invoke-stream"):
        message = decode_response(body, api)
        assert message.stop_reason is StopReason.ERROR
        assert (message.error, message.error_code) == ("Too many tokens", "ValidationException")


def test_a_whole_invoke_answer_is_the_message_its_stream_gives() -> None:
    body = {
        "id": "msg_bdrk_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Paris"}},
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 12, "output_tokens": 9},
    }
    whole = decode_response(body, "bedrock-invoke-stream")
    assert whole.api == "bedrock-invoke-stream" and whole.provider == "bedrock"
    assert whole.text == "Checking." and whole.tool_calls[0].arguments == {"city": "Paris"}
    assert (whole.stop_reason, whole.response_id) == (StopReason.TOOL_USE, "msg_bdrk_01")


def test_a_whole_converse_answer_keeps_citations_and_server_tool_blocks() -> None:
    citation = {
        "title": "Doc",
        "location": {"documentChar": {"documentIndex": 0, "start": 0, "end": 4}},
    }
    result = {"toolUseId": "t1", "status": "success", "content": [{"text": "42"}]}
    body = {
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    {"citationsContent": {"content": [{"text": "Paris"}], "citations": [citation]}},
                    {"toolResult": result},
                ],
            }
        },
        "stopReason": "end_turn",
        "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
    }
    message = decode_response(body, "bedrock-converse-stream")
    text, block = message.content
    assert isinstance(text, TextBlock) and text.text == "Paris" and len(text.citations) == 1
    assert isinstance(block, ProviderBlock) and block.data == result
