"""Differential test against the official ``openai`` SDK (Chat Completions).

The same fixture bytes are served through an ``httpx.MockTransport`` as a
``text/event-stream`` response; the SDK parses the SSE and the chunks
(``client.chat.completions.create(stream=True)``) and accumulates them with
``ChatCompletionStreamState`` — the accumulator behind
``client.chat.completions.stream()``. Its final snapshot is compared with our
final message field by field.

Every disagreement is listed in ``KNOWN_DIFFERENCES`` with the name of the test
below that shows the SDK's output and why ours is the right one; the generic
test checks that a listed field really disagrees, so the list cannot go stale.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from streamnorm import Done, Error, TextBlock, ThinkingBlock
from streamnorm.apis import ApiName

from .support import fixture_id, fixture_paths, load, needs_fixtures, run_bytes, terminal

openai = pytest.importorskip("openai")
httpx = pytest.importorskip("httpx")
from openai.lib.streaming.chat import ChatCompletionStreamState  # noqa: E402

API: ApiName = "openai-completions"
PATHS = fixture_paths(API)
IDS = [fixture_id(p) for p in PATHS]

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

#: fixture → {field: name of the test that shows the SDK is wrong there}.
KNOWN_DIFFERENCES: dict[str, dict[str, str]] = {
    "anthropic-openai-compat-tool-call": {"crash": "test_sdk_bug_tool_calls_starting_at_index_1"},
    "mistral-tool-calls-parallel": {"crash": "test_sdk_bug_tool_calls_without_index"},
    "openrouter-web-search-annotations": {"crash": "test_sdk_bug_annotations_without_index"},
    "cerebras-structured-tool": {
        "text": "test_sdk_bug_concatenates_second_response",
        "reasoning": "test_sdk_bug_concatenates_second_response",
        "tool_calls": "test_sdk_bug_concatenates_second_response",
    },
    "groq-text-x-groq-usage": {"usage": "test_sdk_bug_ignores_x_groq_usage"},
    "groq-browser-search-executed-tools": {"usage": "test_sdk_bug_ignores_x_groq_usage"},
    "xai-tool-call": {"usage": "test_sdk_bug_xai_usage_omits_reasoning_tokens"},
    "openrouter-midstream-error": {"usage": "test_sdk_bug_error_chunk_usage_is_lost"},
}

FIELDS = ("text", "refusal", "reasoning", "details", "tool_calls", "usage", "finish", "error")


@dataclass
class View:
    """What both sides say about one choice of one stream."""

    crash: str | None = None
    text: str = ""
    refusal: str = ""
    reasoning: str | None = None  # None: the SDK does not expose it
    details: str | None = None  # OpenRouter reasoning_details (our thinking signature)
    tool_calls: list[tuple[str, str, str]] = field(default_factory=list)
    usage: tuple[int, int, int, int] = (0, 0, 0, 0)  # input, output, cache read, reasoning
    finish: str | None = None
    error: tuple[str, str | None] | None = None  # message, code


# ---------------------------------------------------------------------------
# The SDK side


def sdk_client(data: bytes) -> Any:
    def handler(request: Any) -> Any:
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content=iter([data])
        )

    http_client = httpx.Client(transport=httpx.MockTransport(handler))
    return openai.OpenAI(
        api_key="x", base_url="http://sdk.test/v1", http_client=http_client, max_retries=0
    )


def sdk_chunks(data: bytes) -> Iterator[Any]:
    client = sdk_client(data)
    yield from client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}], stream=True
    )


def sdk_state(data: bytes) -> tuple[ChatCompletionStreamState[Any], BaseException | None]:
    state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for chunk in sdk_chunks(data):
                state.handle_chunk(chunk)
    except Exception as exc:  # the SDK's own failure is part of what we compare
        return state, exc
    return state, None


def sdk_usage(usage: Any) -> tuple[int, int, int, int]:
    """The SDK's ``CompletionUsage`` in canonical terms, from its typed fields."""
    if usage is None:
        return (0, 0, 0, 0)
    details = usage.prompt_tokens_details
    cached = (details.cached_tokens or 0) if details is not None else 0
    out_details = usage.completion_tokens_details
    reasoning = (out_details.reasoning_tokens or 0) if out_details is not None else 0
    return (usage.prompt_tokens - cached, usage.completion_tokens, cached, reasoning)


def sdk_view(data: bytes, choice: int = 0) -> View:
    state, exc = sdk_state(data)
    view = View()
    if exc is not None and not isinstance(exc, openai.APIError):
        return View(crash=f"{type(exc).__name__}: {exc}")
    if isinstance(exc, openai.APIError):
        view.error = (exc.message, exc.code)
    try:
        snapshot = state.current_completion_snapshot
    except AssertionError:  # no chunk at all
        return view
    view.usage = sdk_usage(snapshot.usage)
    for c in snapshot.choices:
        if c.index != choice:
            continue
        message = c.message
        view.text = message.content if isinstance(message.content, str) else ""
        view.refusal = message.refusal or ""
        extra = message.model_extra or {}
        exposed = [
            extra[k] for k in ("reasoning_content", "reasoning", "reasoning_text") if k in extra
        ]
        if exposed:
            view.reasoning = next((r for r in exposed if isinstance(r, str) and r), "")
        if extra.get("reasoning_details"):
            view.details = json.dumps(
                extra["reasoning_details"], separators=(",", ":"), ensure_ascii=False
            )
        view.tool_calls = [
            (t.id or "", t.function.name or "", t.function.arguments or "")
            for t in message.tool_calls or []
        ]
        view.finish = c.finish_reason
    return view


# ---------------------------------------------------------------------------
# Our side


def our_view(data: bytes, choice: int = 0) -> View:
    end = terminal(run_bytes(data, API, choice=choice))
    m = end.message
    thinking = [b for b in m.content if isinstance(b, ThinkingBlock)]
    u = m.usage
    return View(
        text=m.text,
        refusal="".join(b.text for b in m.content if isinstance(b, TextBlock) and b.refusal),
        reasoning="".join(b.thinking for b in thinking),
        details=thinking[0].signature if thinking else None,
        tool_calls=[(c.id, c.name, c.raw_arguments) for c in m.tool_calls],
        usage=(u.input_tokens, u.output_tokens, u.cache_read_tokens, u.reasoning_tokens),
        finish=m.raw_stop_reason,
        error=(end.reason, end.code) if isinstance(end, Error) and end.kind == "upstream" else None,
    )


def disagreements(sdk: View, ours: View) -> set[str]:
    if sdk.crash is not None:
        return {"crash"}
    out = set()
    for name in FIELDS:
        a, b = getattr(sdk, name), getattr(ours, name)
        if name == "reasoning" and a is None:
            continue  # not exposed by the SDK
        if name == "details" and (a is None or b is None):
            continue  # compared where both have the merged entries
        # Ours appends provider detail (Groq failed_generation) to the message.
        if name == "error" and a and b and b[0].startswith(a[0]) and a[1] == b[1]:
            continue
        if a != b:
            out.add(name)
    return out


# ---------------------------------------------------------------------------
# The differential


@needs_fixtures
@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_sdk_agrees(path: Path) -> None:
    data = path.read_bytes()
    known = KNOWN_DIFFERENCES.get(path.stem, {})
    for test_name in known.values():
        assert callable(globals().get(test_name)), test_name
    choices = (0, 1, 2) if path.stem == "openai-multiple-choices-n3" else (0,)
    for choice in choices:
        sdk, ours = sdk_view(data, choice), our_view(data, choice)
        assert disagreements(sdk, ours) == set(known), (sdk, ours)


@needs_fixtures
def test_agreement_count() -> None:
    agree = [p.stem for p in PATHS if p.stem not in KNOWN_DIFFERENCES]
    readable = [p.stem for p in PATHS if "crash" not in KNOWN_DIFFERENCES.get(p.stem, {})]
    print(f"\nSDK agreement: {len(agree)}/{len(PATHS)} fixtures fully, {len(readable)} readable")
    assert len(agree) == len(PATHS) - len(KNOWN_DIFFERENCES)
    assert len(agree) >= 25


# ---------------------------------------------------------------------------
# Where the SDK is wrong, shown one by one


@needs_fixtures
def test_sdk_bug_tool_calls_starting_at_index_1() -> None:
    """Anthropic's compatibility endpoint numbers its first call 1: the SDK
    inserts it at list position 0, then looks it up at position 1 and raises."""
    data = load(f"{API}/anthropic-openai-compat-tool-call.sse")
    _, exc = sdk_state(data)
    assert isinstance(exc, IndexError)
    ours = our_view(data)
    assert ours.tool_calls == [("toolu_sanitized", "read_file", '{"path": "a.txt"}')]
    assert (ours.text, ours.finish) == ("Reading it.", "tool_calls")


@needs_fixtures
def test_sdk_bug_tool_calls_without_index() -> None:
    """Mistral sends whole tool calls without ``index``: the SDK raises."""
    data = load(f"{API}/mistral-tool-calls-parallel.sse")
    _, exc = sdk_state(data)
    assert isinstance(exc, (TypeError, RuntimeError))
    assert our_view(data).tool_calls == [
        ("nqjf8Hqe1", "plus", '{"a": 1, "b": 2}'),
        ("ATcpCKul3", "minus", '{"a": 2, "b": 1}'),
    ]


@needs_fixtures
def test_sdk_bug_annotations_without_index() -> None:
    """OpenRouter's ``delta.annotations`` entries have no ``index``: the SDK's
    delta accumulator raises on the second chunk that carries them."""
    data = load(f"{API}/openrouter-web-search-annotations.sse")
    _, exc = sdk_state(data)
    assert isinstance(exc, RuntimeError) and "index" in str(exc)
    end = terminal(run_bytes(data))
    assert isinstance(end, Done)
    (block,) = end.message.content
    assert isinstance(block, TextBlock) and len(block.citations) == 5
    assert block.text.startswith("The URL for Pydantic AI's GitHub repository is:")


@needs_fixtures
def test_sdk_bug_concatenates_second_response() -> None:
    """Cerebras sent two complete responses in one stream. The SDK glues them
    into one message: both answers' reasoning, the second one's text, and one
    tool call whose id, name and arguments are the two calls concatenated."""
    data = load(f"{API}/cerebras-structured-tool.sse")
    sdk, ours = sdk_view(data), our_view(data)
    assert sdk.tool_calls == [("bbd2b9d98e0ecf32e0", "nonUsefulToolnonUsefulTool", "{}{}")]
    assert sdk.text == '{"result": "2026"}'
    assert sdk.reasoning is not None and sdk.reasoning.count("The") >= 2 and "2026" in sdk.reasoning
    assert ours.tool_calls == [("bbd2b9d98", "nonUsefulTool", "{}")]
    assert ours.text == ""
    assert ours.reasoning is not None and "2026" not in ours.reasoning
    assert sdk.reasoning.startswith(ours.reasoning)
    # What both agree on: the last usage snapshot and the finish reason.
    assert (sdk.usage, sdk.finish) == (ours.usage, ours.finish)


def test_sdk_bug_concatenates_repeated_ids() -> None:
    """Servers that repeat ``id`` and ``name`` on every fragment (llama.cpp
    #13774): the SDK concatenates them into ``call_1call_1`` and ``ff``."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        body = {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return f"data: {json.dumps(body)}\n\n"

    def frag(args: str) -> dict[str, Any]:
        call = {
            "index": 0,
            "id": "call_1",
            "type": "function",
            "function": {"name": "f", "arguments": args},
        }
        return {"tool_calls": [call]}

    data = (
        chunk(frag('{"a"')) + chunk(frag(":1}")) + chunk({}, "tool_calls") + "data: [DONE]\n\n"
    ).encode()
    assert sdk_view(data).tool_calls == [("call_1call_1", "ff", '{"a":1}')]
    assert our_view(data).tool_calls == [("call_1", "f", '{"a":1}')]


@needs_fixtures
def test_sdk_bug_ignores_x_groq_usage() -> None:
    """Groq reports usage only in ``x_groq.usage`` on some models; the SDK
    reads the top-level ``usage`` only and ends with none."""
    data = load(f"{API}/groq-text-x-groq-usage.sse")
    state, exc = sdk_state(data)
    assert exc is None and state.current_completion_snapshot.usage is None
    assert our_view(data).usage == (18, 73, 0, 0)
    data = load(f"{API}/groq-browser-search-executed-tools.sse")
    state, _ = sdk_state(data)
    assert state.current_completion_snapshot.usage is None
    assert our_view(data).usage == (5003, 359, 0, 0)


@needs_fixtures
def test_sdk_bug_xai_usage_omits_reasoning_tokens() -> None:
    """xAI bills reasoning beside ``completion_tokens`` (307 + 26 + 227 = 560).
    The SDK's ``completion_tokens`` is 26, so a bill computed from it misses
    the 227 reasoning tokens; canonical output is what is billed (DESIGN §4)."""
    data = load(f"{API}/xai-tool-call.sse")
    state, _ = sdk_state(data)
    usage = state.current_completion_snapshot.usage
    assert usage is not None
    assert (usage.completion_tokens, usage.total_tokens) == (26, 560)
    assert usage.prompt_tokens + usage.completion_tokens != usage.total_tokens
    assert sdk_view(data).usage == (1, 26, 306, 227)
    assert our_view(data).usage == (1, 253, 306, 227)
    end = terminal(run_bytes(data))
    assert end.message.usage.total_tokens == usage.total_tokens


@needs_fixtures
def test_sdk_bug_error_chunk_usage_is_lost() -> None:
    """OpenRouter's error chunk carries the final usage; the SDK raises on the
    chunk without reading it. We apply the chunk, then end with the error."""
    data = load(f"{API}/openrouter-midstream-error.sse")
    state, exc = sdk_state(data)
    assert isinstance(exc, openai.APIError) and exc.message == "Token limit reached"
    assert state.current_completion_snapshot.usage is None
    end = terminal(run_bytes(data))
    assert isinstance(end, Error) and (end.reason, end.code) == ("Token limit reached", "400")
    assert our_view(data).usage == (43, 10, 0, 11)


def test_sdk_bug_empty_data_event() -> None:
    """An empty ``data:`` event makes the SDK's ``sse.json()`` raise."""
    body = {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}],
    }
    data = b"data: \n\n" + f"data: {json.dumps(body)}\n\ndata: [DONE]\n\n".encode()
    _, exc = sdk_state(data)
    assert isinstance(exc, ValueError)
    ours = our_view(data)
    assert (ours.text, ours.finish) == ("hi", "stop")


@needs_fixtures
def test_sdk_bug_stream_helper_skips_chunks_without_object() -> None:
    """``client.chat.completions.stream()`` drops every chunk whose ``object``
    is not ``chat.completion.chunk``. Moonshot omits ``object`` everywhere
    (the helper then has no completion at all); Perplexity omits it on the
    finish chunk (the helper loses the finish reason)."""

    def helper(name: str) -> Any:
        client = sdk_client(load(f"{API}/{name}.sse"))
        with client.chat.completions.stream(
            model="m", messages=[{"role": "user", "content": "hi"}]
        ) as s:
            s.until_done()
            return s.current_completion_snapshot

    with pytest.raises(AssertionError):
        helper("moonshot-kimi-text")
    assert our_view(load(f"{API}/moonshot-kimi-text.sse")).text == "Hello!"
    snapshot = helper("perplexity-citations")
    assert snapshot.choices[0].finish_reason is None
    assert our_view(load(f"{API}/perplexity-citations.sse")).finish == "stop"


@needs_fixtures
def test_stream_helper_matches_stream_state() -> None:
    """Where every chunk carries ``object``, ``.stream()`` and the state used
    above are the same accumulation."""
    data = load(f"{API}/openai-tool-calls-parallel.sse")
    client = sdk_client(data)
    with client.chat.completions.stream(
        model="m", messages=[{"role": "user", "content": "hi"}]
    ) as s:
        final = s.get_final_completion()
    state, _ = sdk_state(data)
    assert final.choices[0].message.tool_calls is not None
    assert (
        [(t.id, t.function.name, t.function.arguments) for t in final.choices[0].message.tool_calls]
        == sdk_view(data).tool_calls
        == our_view(data).tool_calls
    )
    assert final.usage == state.current_completion_snapshot.usage
