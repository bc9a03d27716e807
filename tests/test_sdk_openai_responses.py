"""Differential test: the official ``openai`` SDK and streamnorm read the same
recorded ``openai-responses`` bytes and must agree on the final message.

The SDK gets the bytes through ``httpx.MockTransport``; its
``responses.stream(...)`` gives the events it yields and
``get_final_response()``. Compared: final text and refusals (and the message
ids and phases in our text signatures), reasoning text, encrypted reasoning,
function calls (call ids, names, arguments, item ids, namespaces), server-side
items, usage mapped to the canonical fields, response id, model, status, and
the deltas. Where the SDK cannot read a fixture, a named test shows what it
does and what we do instead.

One difference is the provider's, not either reader's: OpenAI re-encrypts a
reasoning item's ``encrypted_content`` each time it serialises the item, so
``output_item.done`` and ``response.completed`` carry different tokens for the
same reasoning. Our signature keeps the ``output_item.done`` item
(providers.md §2.2), which the SDK yields as ``ResponseOutputItemDoneEvent``;
that is what our encrypted content is compared with, and
``test_encrypted_content_is_reissued_by_the_provider`` shows the difference.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import pytest

from streamnorm import (
    Done,
    Error,
    Event,
    ProviderBlock,
    StopReason,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCallBlock,
    ToolCallDelta,
)
from streamnorm.apis import ApiName

from .support import fixture_paths, load, needs_fixtures, run_bytes, terminal

openai = pytest.importorskip("openai")
httpx = pytest.importorskip("httpx")

API: ApiName = "openai-responses"

#: Fixtures the SDK cannot turn into a final response; each has a named test.
SDK_CANNOT_READ = {
    "background-resume-starting-after": "test_sdk_bug_rejects_resumed_stream",
    "max-output-tokens-incomplete": "test_sdk_bug_incomplete_response_has_no_final_response",
    "error-response-failed": "test_sdk_error_event_agrees",
}
READABLE = [p.stem for p in fixture_paths(API) if p.stem not in SDK_CANNOT_READ]


class SDKRun:
    """What the SDK made of a stream: the events it yielded, and the final
    response or the exception it raised."""

    def __init__(self, data: bytes, **stream_args: Any) -> None:
        def handler(request: Any) -> Any:
            return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=data)

        client = openai.OpenAI(
            api_key="x",
            base_url="http://sdk.test/v1",
            max_retries=0,
            http_client=httpx.Client(transport=httpx.MockTransport(handler)),
        )
        self.events: list[Any] = []
        self.final: Any = None
        self.error: BaseException | None = None
        args = stream_args or {"model": "m", "input": "hi"}
        try:
            with client.responses.stream(**args) as stream:
                for event in stream:
                    self.events.append(event)
                self.final = stream.get_final_response()
        except Exception as exc:
            self.error = exc

    def of_type(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]


def fixture(name: str) -> bytes:
    return load(f"{API}/{name}.sse")


def ours(name: str) -> tuple[list[Event], Done | Error]:
    events = run_bytes(fixture(name), API)
    return events, terminal(events)


def canonical_usage(usage: Any) -> tuple[int, int, int, int, int]:
    """The SDK's usage object in the canonical fields (providers.md §2.5)."""
    details = usage.input_tokens_details
    cached = getattr(details, "cached_tokens", 0) or 0
    written = getattr(details, "cache_write_tokens", 0) or 0
    reasoning = getattr(usage.output_tokens_details, "reasoning_tokens", 0) or 0
    return (usage.input_tokens - cached - written, usage.output_tokens, cached, written, reasoning)


def our_usage(end: Done | Error) -> tuple[int, int, int, int, int]:
    u = end.message.usage
    return (
        u.input_tokens,
        u.output_tokens,
        u.cache_read_tokens,
        u.cache_write_tokens,
        u.reasoning_tokens,
    )


def sdk_texts(output: list[Any]) -> list[tuple[str, bool, dict[str, Any]]]:
    """(text, refusal, signature fields) per message part, in output order."""
    out = []
    for item in output:
        if item.type != "message":
            continue
        signed = {"id": item.id}
        if getattr(item, "phase", None):
            signed["phase"] = item.phase
        for part in item.content:
            if part.type == "output_text":
                out.append((part.text, False, signed))
            elif part.type == "refusal":
                out.append((part.refusal, True, signed))
    return out


def sdk_reasoning(output: list[Any]) -> list[str]:
    texts = []
    for item in output:
        if item.type == "reasoning":
            parts = [s.text for s in item.summary or []] + [c.text for c in item.content or []]
            texts.append("\n\n".join(parts))
    return texts


def sdk_calls(output: list[Any]) -> list[tuple[str, str, str, str, str | None]]:
    return [
        (item.call_id, item.name, item.arguments, item.id, getattr(item, "namespace", None))
        for item in output
        if item.type == "function_call"
    ]


def sdk_streams(run: SDKRun) -> dict[str, list[str]]:
    """The SDK's deltas, concatenated per text part, per reasoning item (parts
    joined by a blank line) and per function call, in order of appearance."""
    text: dict[tuple[int, int], str] = {}
    reasoning: dict[int, dict[tuple[str, int], str]] = defaultdict(dict)
    arguments: dict[int, str] = {}
    for e in run.events:
        if e.type in ("response.output_text.delta", "response.refusal.delta"):
            key = (e.output_index, e.content_index)
            text[key] = text.get(key, "") + e.delta
        elif e.type == "response.reasoning_summary_text.delta":
            parts = reasoning[e.output_index]
            part = ("summary", e.summary_index)
            parts[part] = parts.get(part, "") + e.delta
        elif e.type == "response.reasoning_text.delta":
            parts = reasoning[e.output_index]
            part = ("content", e.content_index)
            parts[part] = parts.get(part, "") + e.delta
        elif e.type == "response.function_call_arguments.delta":
            arguments[e.output_index] = arguments.get(e.output_index, "") + e.delta
    return {
        "text": list(text.values()),
        "reasoning": ["\n\n".join(p.values()) for p in reasoning.values()],
        "arguments": list(arguments.values()),
    }


def our_streams(events: list[Event]) -> dict[str, dict[int, str]]:
    streams: dict[str, dict[int, str]] = {"text": {}, "reasoning": {}, "arguments": {}}
    for e in events:
        if isinstance(e, TextDelta):
            streams["text"][e.index] = streams["text"].get(e.index, "") + e.delta
        elif isinstance(e, ThinkingDelta):
            streams["reasoning"][e.index] = streams["reasoning"].get(e.index, "") + e.delta
        elif isinstance(e, ToolCallDelta):
            streams["arguments"][e.index] = streams["arguments"].get(e.index, "") + e.raw_json_delta
    return streams


def streams_agree(theirs: str, mine: str, final: str) -> bool:
    """Our deltas equal the SDK's, or add the suffix that only a ``*.done``
    event carried (providers.md §2.3)."""
    return mine == theirs or (mine == final and final.startswith(theirs))


def disagreements(name: str) -> list[str]:
    """Everything on which the SDK and streamnorm differ for one fixture."""
    sdk = SDKRun(fixture(name))
    events, end = ours(name)
    if sdk.error is not None:
        return [f"SDK raised {type(sdk.error).__name__}: {sdk.error}"]
    final = sdk.final
    message = end.message
    found: list[str] = []

    def check(what: str, theirs: Any, mine: Any) -> None:
        if theirs != mine:
            found.append(f"{what}: SDK {theirs!r} != ours {mine!r}")

    check("status", final.status, message.raw_stop_reason)
    check("terminal", "completed", "completed" if isinstance(end, Done) else type(end).__name__)
    check("response id", final.id, message.response_id)
    check("model", final.model, message.response_model)
    check("usage", canonical_usage(final.usage), our_usage(end))
    check(
        "output_text",
        final.output_text,
        "".join(b.text for b in message.content if isinstance(b, TextBlock) and not b.refusal),
    )

    blocks = message.content
    texts = [b for b in blocks if isinstance(b, TextBlock)]
    check(
        "text parts",
        [(t, r, s) for t, r, s in sdk_texts(final.output)],
        [(b.text, b.refusal, json.loads(b.signature or "{}")) for b in texts],
    )
    thinking = [b for b in blocks if isinstance(b, ThinkingBlock)]
    check("reasoning", sdk_reasoning(final.output), [b.thinking for b in thinking])
    calls = [b for b in blocks if isinstance(b, ToolCallBlock)]
    check(
        "function calls",
        sdk_calls(final.output),
        [
            (
                b.id,
                b.name,
                b.raw_arguments,
                json.loads(b.signature or "{}").get("id"),
                json.loads(b.signature or "{}").get("namespace"),
            )
            for b in calls
        ],
    )
    for b in calls:
        check(f"arguments of {b.id}", json.loads(b.raw_arguments or "{}"), b.arguments)
    others = [i for i in final.output if i.type not in ("message", "reasoning", "function_call")]
    check(
        "server-side and client-executed items",
        [(i.type, getattr(i, "id", None)) for i in others],
        [(b.kind, b.data.get("id")) for b in blocks if isinstance(b, ProviderBlock)],
    )
    has_client_tool = any(
        i.type in ("custom_tool_call", "apply_patch_call", "computer_call", "local_shell_call")
        for i in final.output
    )
    expected_stop = StopReason.TOOL_USE if calls or has_client_tool else StopReason.STOP
    check("stop reason", expected_stop, message.stop_reason)

    # Encrypted reasoning: the item the SDK reports at output_item.done.
    done_items = [
        e.item for e in sdk.of_type("response.output_item.done") if e.item.type == "reasoning"
    ]
    check(
        "encrypted_content",
        [getattr(i, "encrypted_content", None) for i in done_items],
        [json.loads(b.signature or "{}").get("encrypted_content") for b in thinking],
    )
    check(
        "encrypted_content present in the final response",
        [
            bool(getattr(i, "encrypted_content", None))
            for i in final.output
            if i.type == "reasoning"
        ],
        [bool(json.loads(b.signature or "{}").get("encrypted_content")) for b in thinking],
    )

    # Deltas.
    theirs = sdk_streams(sdk)
    mine = our_streams(events)
    for kind, finals in (
        ("text", {blocks.index(b): b.text for b in texts}),
        ("reasoning", {blocks.index(b): b.thinking for b in thinking}),
        ("arguments", {blocks.index(b): b.raw_arguments for b in calls}),
    ):
        streamed = {i: s for i, s in mine[kind].items() if s}
        expected = [s for s in theirs[kind] if s]
        indices = sorted(streamed)
        if len(expected) > len(indices):
            found.append(f"{kind} deltas: SDK has {len(expected)} streams, ours {len(indices)}")
            continue
        # Streams only we have come from *.done values that had no deltas.
        for position, index in enumerate(indices):
            sdk_stream = expected[position] if position < len(expected) else ""
            if not streams_agree(sdk_stream, streamed[index], finals[index]):
                if kind == "text" and any(d.kind == "text_mismatch" for d in _diagnostics(events)):
                    check(f"{kind} deltas of block {index}", sdk_stream, streamed[index])
                else:
                    found.append(f"{kind} deltas of block {index} differ")
    return found


def _diagnostics(events: list[Event]) -> list[Any]:
    return [e for e in events if type(e).__name__ == "NormalizationError"]


@needs_fixtures
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", READABLE)
def test_sdk_agrees(name: str) -> None:
    assert disagreements(name) == []


@needs_fixtures
def test_agreement_count() -> None:
    """Every fixture is either read alike by both, or has a named test."""
    names = [p.stem for p in fixture_paths(API)]
    assert len(names) == 32
    assert set(SDK_CANNOT_READ) <= set(names)
    assert len(READABLE) == 29
    for test in SDK_CANNOT_READ.values():
        assert callable(globals()[test])


# ---------------------------------------------------------------------------
# Fixtures the SDK cannot read


@needs_fixtures
def test_sdk_bug_rejects_resumed_stream() -> None:
    """A background stream resumed with ``starting_after`` begins at
    ``response.queued`` (sequence number 1). The SDK's own resume call
    (``responses.stream(response_id=..., starting_after=0)``) raises on it,
    since its accumulator insists on ``response.created`` first; we read it."""
    data = fixture("background-resume-starting-after")
    response_id = "resp_0850765c843cca5300699cc47d93c0819089a181f5feeff8eb"
    for args in ({"model": "m", "input": "hi"}, {"response_id": response_id, "starting_after": 0}):
        sdk = SDKRun(data, **args)
        assert isinstance(sdk.error, RuntimeError)
        assert "Expected to have received `response.created` before `response.queued`" in str(
            sdk.error
        )
        assert sdk.events == [] and sdk.final is None
    _, end = ours("background-resume-starting-after")
    assert isinstance(end, Done)
    assert end.message.response_id == response_id
    assert [b.text for b in end.message.content if isinstance(b, TextBlock)] == ["2 + 2 equals 4."]
    assert our_usage(end) == (15, 9, 0, 0, 0)


@needs_fixtures
def test_sdk_bug_incomplete_response_has_no_final_response() -> None:
    """``response.incomplete`` is a terminal event carrying the whole response,
    but ``get_final_response()`` raises because no ``response.completed``
    came. We end with ``Done(length)``, and agree with the response the SDK
    yields in its ``response.incomplete`` event and with its text deltas."""
    sdk = SDKRun(fixture("max-output-tokens-incomplete"))
    assert isinstance(sdk.error, RuntimeError)
    assert "Didn't receive a `response.completed` event" in str(sdk.error)
    (incomplete,) = sdk.of_type("response.incomplete")
    response = incomplete.response
    events, end = ours("max-output-tokens-incomplete")
    assert isinstance(end, Done) and end.stop_reason is StopReason.LENGTH
    assert end.message.raw_stop_reason == response.incomplete_details.reason == "max_output_tokens"
    assert response.status == "incomplete"
    (text,) = end.message.content
    assert isinstance(text, TextBlock)
    assert [t for t, _, _ in sdk_texts(response.output)] == [text.text]
    assert json.loads(text.signature or "{}") == {"id": response.output[0].id}
    assert canonical_usage(response.usage) == our_usage(end)
    sdk_deltas = "".join(e.delta for e in sdk.of_type("response.output_text.delta"))
    assert sdk_deltas == "".join(e.delta for e in events if isinstance(e, TextDelta)) == text.text


@needs_fixtures
def test_sdk_error_event_agrees() -> None:
    """The ``error`` event: the SDK raises ``APIError`` at once; we end with
    one ``Error(upstream)`` with the same message and code, and ignore the
    ``response.failed`` that follows."""
    sdk = SDKRun(fixture("error-response-failed"))
    assert isinstance(sdk.error, openai.APIError)
    _, end = ours("error-response-failed")
    assert isinstance(end, Error) and end.kind == "upstream"
    assert end.reason == sdk.error.message
    assert end.code == sdk.error.body["code"] == "insufficient_quota"
    assert [e.type for e in sdk.events] == ["response.created", "response.in_progress"]


# ---------------------------------------------------------------------------
# Named cases where both read the bytes but say different things


@needs_fixtures
def test_encrypted_content_is_reissued_by_the_provider() -> None:
    """Three copies of one reasoning item, three tokens: ``output_item.added``,
    ``output_item.done`` and ``response.completed``. The SDK's final response
    takes the last; our signature is the ``output_item.done`` item, as the
    SDK itself reports it in ``ResponseOutputItemDoneEvent``."""
    name = "reasoning-encrypted-function-call"
    sdk = SDKRun(fixture(name))
    added = sdk.of_type("response.output_item.added")[0].item.encrypted_content
    done = sdk.of_type("response.output_item.done")[0].item.encrypted_content
    final = sdk.final.output[0].encrypted_content
    assert len({added, done, final}) == 3
    _, end = ours(name)
    thinking = end.message.content[0]
    assert isinstance(thinking, ThinkingBlock)
    signed = json.loads(thinking.signature or "{}")
    assert signed["encrypted_content"] == done
    assert signed["id"] == sdk.final.output[0].id


@needs_fixtures
def test_sdk_keeps_streamed_text_that_output_text_done_replaced() -> None:
    """``shell-tool-container.sse`` streams ``The command ran successfully.``
    and its ``output_text.done`` carries a different 190-character text. Both
    finals hold the ``.done`` text; both delta streams hold what was streamed.
    We also report ``text_mismatch``."""
    sdk = SDKRun(fixture("shell-tool-container"))
    events, end = ours("shell-tool-container")
    streamed = "".join(e.delta for e in sdk.of_type("response.output_text.delta"))
    assert streamed == "".join(e.delta for e in events if isinstance(e, TextDelta))
    assert streamed == "The command ran successfully."
    text = end.message.content[2]
    assert isinstance(text, TextBlock)
    assert sdk.final.output_text == text.text
    assert len(sdk.final.output_text) == 190
    assert [e.kind for e in _diagnostics(events)] == ["text_mismatch"]


def test_sdk_raises_without_terminal_event_and_we_report_truncation() -> None:
    """A stream that ends with ``[DONE]`` but no terminal event: the SDK's
    ``get_final_response()`` raises; we end with ``Error(truncated)`` and
    keep the text received."""
    lines = [
        {
            "type": "response.created",
            "sequence_number": 0,
            "response": {
                "id": "resp_1",
                "object": "response",
                "created_at": 0,
                "model": "m",
                "status": "in_progress",
                "output": [],
                "tools": [],
                "parallel_tool_calls": True,
                "tool_choice": "auto",
            },
        },
        {
            "type": "response.output_item.added",
            "sequence_number": 1,
            "output_index": 0,
            "item": {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "in_progress",
                "content": [],
            },
        },
        {
            "type": "response.content_part.added",
            "sequence_number": 2,
            "output_index": 0,
            "content_index": 0,
            "item_id": "msg_1",
            "part": {"type": "output_text", "text": "", "annotations": []},
        },
        {
            "type": "response.output_text.delta",
            "sequence_number": 3,
            "output_index": 0,
            "content_index": 0,
            "item_id": "msg_1",
            "delta": "partial",
            "logprobs": [],
        },
    ]
    data = "".join(f"data: {json.dumps(p)}\n\n" for p in lines).encode() + b"data: [DONE]\n\n"
    sdk = SDKRun(data)
    assert isinstance(sdk.error, RuntimeError)
    assert "".join(e.delta for e in sdk.of_type("response.output_text.delta")) == "partial"
    end = terminal(run_bytes(data, API))
    assert isinstance(end, Error) and end.kind == "truncated"
    (text,) = end.message.content
    assert isinstance(text, TextBlock) and text.text == "partial"
