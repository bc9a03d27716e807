"""Differential test against the official ``anthropic`` SDK (Messages).

The same fixture bytes are served through a mock transport as a
``text/event-stream`` response; the SDK parses the SSE and accumulates the
events with ``client.messages.stream()``. Its ``get_final_message()`` is
compared with our final message block by block: text and citations, thinking
text and signature, redacted thinking data, tool-use id, name and input,
server-tool blocks (type and object), usage in canonical terms, and the raw
stop reason.

Every disagreement is listed in ``KNOWN_DIFFERENCES`` with the name of the test
below that shows both values and why ours is the right one; the generic test
checks that a listed field really disagrees, so the list cannot go stale.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from streamnorm import Done, Error, ProviderBlock, TextBlock, ThinkingBlock, ToolCallBlock
from streamnorm.apis import ApiName

from .support import fixture_id, fixture_paths, load, needs_fixtures, run_bytes, terminal

anthropic = pytest.importorskip("anthropic")
# anthropic 2.x rejects ``httpx`` objects and takes ``httpx2`` ones (same API).
try:
    import httpx2 as httpx
except ImportError:  # pragma: no cover - older SDKs are built on httpx
    httpx = pytest.importorskip("httpx")

API: ApiName = "anthropic-messages"
PATHS = fixture_paths(API)
IDS = [fixture_id(p) for p in PATHS]

#: fixture → {field: name of the test that shows why the two sides differ}.
KNOWN_DIFFERENCES: dict[str, dict[str, str]] = {
    "compaction-usage-cache": {
        "blocks": "test_sdk_bug_ignores_compaction_delta",
        "usage": "test_usage_adds_compaction_iterations",
    },
    "max-tokens-mid-tool-input": {"blocks": "test_sdk_bug_cut_tool_input_looks_whole"},
    "mcp-connector": {"blocks": "test_sdk_bug_drops_mcp_tool_use_input"},
}

FIELDS = ("crash", "blocks", "usage", "stop", "end")


@dataclass
class View:
    """What both sides say about one stream."""

    crash: str | None = None
    blocks: list[tuple[Any, ...]] = field(default_factory=list)
    usage: tuple[int, int, int, int, int] = (0, 0, 0, 0, 0)  # in, out, cache r/w, reasoning
    stop: str | None = None
    end: str = "done"  # "done", or our Error kind / the SDK's exception


def plain(value: Any) -> Any:
    """JSON round trip: tuples → lists, models' dumps and our data comparable."""
    return json.loads(json.dumps(value))


# ---------------------------------------------------------------------------
# The SDK side


def sdk_client(data: bytes) -> Any:
    def handler(request: Any) -> Any:
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content=iter([data])
        )

    http_client = httpx.Client(transport=httpx.MockTransport(handler))
    return anthropic.Anthropic(api_key="x", http_client=http_client, max_retries=0)


def sdk_stream(data: bytes) -> Any:
    return sdk_client(data).messages.stream(
        model="m", max_tokens=1024, messages=[{"role": "user", "content": "hi"}]
    )


def sdk_message(data: bytes) -> Any:
    with sdk_stream(data) as s:
        return s.get_final_message()


def sdk_events(data: bytes) -> list[Any]:
    with sdk_stream(data) as s:
        return list(s)


def sdk_block(b: Any) -> tuple[Any, ...]:
    if b.type == "text":
        return ("text", b.text, plain([c.to_dict() for c in b.citations or []]))
    if b.type == "thinking":
        return ("thinking", b.thinking, b.signature or None)
    if b.type == "redacted_thinking":
        return ("redacted_thinking", b.data)
    if b.type == "tool_use":
        return ("tool_use", b.id, b.name, plain(b.input), None)  # no notion of a cut call
    return (b.type, plain(b.to_dict()))


def sdk_usage(u: Any) -> tuple[int, int, int, int, int]:
    details = getattr(u, "output_tokens_details", None)
    if isinstance(details, dict):
        thinking = details.get("thinking_tokens") or 0
    else:
        thinking = getattr(details, "thinking_tokens", None) or 0
    return (
        u.input_tokens or 0,
        u.output_tokens or 0,
        u.cache_read_input_tokens or 0,
        u.cache_creation_input_tokens or 0,
        thinking,
    )


def sdk_view(data: bytes) -> View:
    try:
        m = sdk_message(data)
    except Exception as exc:  # the SDK's own failure is part of what we compare
        return View(crash=f"{type(exc).__name__}: {exc}")
    return View(
        blocks=[sdk_block(b) for b in m.content],
        usage=sdk_usage(m.usage),
        stop=m.stop_reason,
    )


# ---------------------------------------------------------------------------
# Our side


def our_block(b: Any) -> tuple[Any, ...]:
    if isinstance(b, TextBlock):
        return ("text", b.text, plain(list(b.citations)))
    if isinstance(b, ThinkingBlock):
        if b.redacted:
            return ("redacted_thinking", b.signature)
        return ("thinking", b.thinking, b.signature)
    if isinstance(b, ToolCallBlock):
        return ("tool_use", b.id, b.name, plain(dict(b.arguments)), b.error)
    assert isinstance(b, ProviderBlock)
    return (b.kind, plain(dict(b.data)))


def our_view(data: bytes) -> View:
    end = terminal(run_bytes(data, API))
    m = end.message
    u = m.usage
    return View(
        blocks=[our_block(b) for b in m.content],
        usage=(
            u.input_tokens,
            u.output_tokens,
            u.cache_read_tokens,
            u.cache_write_tokens,
            u.reasoning_tokens,
        ),
        stop=m.raw_stop_reason,
        end="done" if isinstance(end, Done) else end.kind,
    )


def disagreements(sdk: View, ours: View) -> set[str]:
    if sdk.crash is not None:
        return {"crash"}
    return {name for name in FIELDS if getattr(sdk, name) != getattr(ours, name)}


# ---------------------------------------------------------------------------
# The differential


@needs_fixtures
@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_sdk_agrees(path: Path) -> None:
    data = path.read_bytes()
    known = KNOWN_DIFFERENCES.get(path.stem, {})
    for test_name in known.values():
        assert callable(globals().get(test_name)), test_name
    sdk, ours = sdk_view(data), our_view(data)
    assert disagreements(sdk, ours) == set(known), (sdk, ours)


@needs_fixtures
def test_agreement_count() -> None:
    agree = [p.stem for p in PATHS if p.stem not in KNOWN_DIFFERENCES]
    print(f"\nSDK agreement: {len(agree)}/{len(PATHS)} fixtures fully")
    assert set(KNOWN_DIFFERENCES) <= {p.stem for p in PATHS}
    assert len(agree) == len(PATHS) - len(KNOWN_DIFFERENCES)
    assert len(agree) >= 22


# ---------------------------------------------------------------------------
# Where the two sides differ, shown one by one


def sse(*payloads: dict[str, Any], event_lines: bool = True) -> bytes:
    out = []
    for p in payloads:
        head = f"event: {p['type']}\n" if event_lines else ""
        out.append(f"{head}data: {json.dumps(p)}\n\n")
    return "".join(out).encode()


START = {
    "type": "message_start",
    "message": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 1},
    },
}


def tool_stream(partial_json: str) -> bytes:
    return sse(
        START,
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": partial_json},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"type": "message_delta", "stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": 9},
        },
        {"type": "message_stop"},
    )


@needs_fixtures
def test_usage_adds_compaction_iterations() -> None:
    """By design (providers.md §1.4): with ``usage.iterations`` present, the
    top-level counts cover the ``message`` iterations only; the compaction
    iteration is billed to the same model, so ``Usage`` adds it. The SDK
    reports the top-level 181 / 8 / 0 and loses the 55 096 cache-read tokens
    the compaction pass consumed."""
    data = load(f"{API}/compaction-usage-cache.sse")
    iterations = [(i["type"], i["input_tokens"], i["output_tokens"]) for i in wire_iterations(data)]
    assert iterations == [("compaction", 100, 83), ("message", 181, 8)]
    assert sdk_view(data).usage == (181, 8, 0, 0, 0)
    assert our_view(data).usage == (281, 91, 55096, 0, 0)


def wire_iterations(data: bytes) -> list[dict[str, Any]]:
    """``usage.iterations`` of the ``message_delta`` on the wire (the SDK's
    ``Usage`` does not carry it)."""
    for line in data.decode().splitlines():
        if line.startswith("data:") and '"message_delta"' in line:
            iterations: list[dict[str, Any]] = json.loads(line[5:])["usage"]["iterations"]
            return iterations
    raise AssertionError("no message_delta")


@needs_fixtures
def test_usage_leaves_advisor_iterations_out() -> None:
    """By design (providers.md §1.4) an ``advisor_message`` iteration names its
    own model and is billed at that model's rates, so it stays out of
    ``Usage``. Its top-level counts already exclude it, so here the SDK's
    top-level usage and ours agree: 2 411 / 145, not 4 954 / 163."""
    data = load(f"{API}/advisor-tool.sse")
    iterations = [(i["type"], i["input_tokens"], i["output_tokens"]) for i in wire_iterations(data)]
    assert iterations == [
        ("message", 1128, 135),
        ("advisor_message", 2543, 18),
        ("message", 1283, 10),
    ]
    assert sdk_view(data).usage == our_view(data).usage == (2411, 145, 0, 0, 47)


@needs_fixtures
def test_sdk_bug_ignores_compaction_delta() -> None:
    """The SDK's accumulator has no branch for ``compaction_delta``: the
    compaction block keeps the start object's ``content: null`` and the
    summary that must be replayed next turn is lost."""
    data = load(f"{API}/compaction-usage-cache.sse")
    (sdk_kind, sdk_data), _ = sdk_view(data).blocks
    (our_kind, our_data), _ = our_view(data).blocks
    assert sdk_kind == our_kind == "compaction"
    assert sdk_data == {"type": "compaction", "content": None}
    assert our_data["content"].startswith("The user provided a very long context")
    assert sdk_view(data).blocks[1] == our_view(data).blocks[1]


@needs_fixtures
def test_sdk_bug_drops_mcp_tool_use_input() -> None:
    """The SDK accumulates ``input_json_delta`` only for ``tool_use`` and
    ``server_tool_use``: an ``mcp_tool_use`` block keeps ``input: {}``."""
    data = load(f"{API}/mcp-connector.sse")
    sdk, ours = sdk_view(data).blocks[1], our_view(data).blocks[1]
    assert sdk[0] == ours[0] == "mcp_tool_use"
    assert sdk[1]["id"] == ours[1]["id"] == "mcptoolu_01FZmJ5UspaX5BB9uU339UT1"
    assert sdk[1]["input"] == {}
    assert ours[1]["input"] == {
        "repoName": "pydantic/pydantic-ai",
        "question": "What is this repository about? What are its main features and purpose?",
    }
    assert {k: v for k, v in sdk[1].items() if k != "input"} == {
        k: v for k, v in ours[1].items() if k != "input"
    }


@needs_fixtures
def test_sdk_bug_cut_tool_input_looks_whole() -> None:
    """``max_tokens`` cuts the second tool call mid-string and its block is
    never stopped. The SDK returns the jiter partial-mode value as ``input``
    (the cut string dropped) with nothing marking it incomplete: a caller
    would execute it. Ours keeps the decoded prefix as a preview and sets
    ``error="incomplete"`` (partial-json.md §3.1 step 5)."""
    data = load(f"{API}/max-tokens-mid-tool-input.sse")
    sdk, ours = sdk_view(data), our_view(data)
    lines = [
        "# COMPREHENSIVE TAX GUIDE FOR INDIVIDUALS WITH MULTIPLE W-2s",
        "",
        "## INTRODUCTION",
        "",
    ]
    tool_id = "toolu_01EKqbqmZrGRXy18eN7m9kvY"
    args = {"filename": "taxes.txt", "lines_of_text": lines}
    assert sdk.blocks[1] == ("tool_use", tool_id, "make_file", args, None)
    ours_args = {"filename": "taxes.txt", "lines_of_text": [*lines, "Filing taxes"]}
    assert ours.blocks[1] == ("tool_use", tool_id, "make_file", ours_args, "incomplete")
    assert (sdk.stop, sdk.usage) == (ours.stop, ours.usage) == ("max_tokens", (450, 124, 0, 0, 0))
    end = terminal(run_bytes(data, API))
    assert isinstance(end, Done) and str(end.message.stop_reason) == "length"


@needs_fixtures
def test_sdk_drops_final_event_without_terminator() -> None:
    """The same file ends with ``data: {"type":"message_stop" }`` and no line
    terminator. The SDK's SSE decoder discards that last block, so its event
    stream ends at ``message_delta`` (no ``message_stop``, no
    ``content_block_stop`` for the cut call) and ``get_final_message()``
    still returns. Ours interprets the complete JSON and ends with ``Done``
    (providers.md §7)."""
    data = load(f"{API}/max-tokens-mid-tool-input.sse")
    assert not data.endswith(b"\n")
    types = [e.type for e in sdk_events(data)]
    assert types[-1] == "message_delta" and "message_stop" not in types
    assert isinstance(terminal(run_bytes(data, API)), Done)


@needs_fixtures
def test_sdk_bug_drops_every_event_without_event_lines() -> None:
    """Proxies strip ``event:`` lines (providers.md §0.2). The SDK skips every
    SSE event whose name is missing: it yields nothing and
    ``get_final_message()`` fails. We dispatch on the payload's ``type``."""
    data = re.sub(rb"(?m)^event:[^\n]*\n", b"", load(f"{API}/text-basic.sse"))
    assert b"event:" not in data
    assert sdk_events(data) == []
    with pytest.raises(AssertionError):
        sdk_message(data)
    ours = our_view(data)
    assert ours == our_view(load(f"{API}/text-basic.sse"))
    assert ours.blocks == [("text", "- Captain\n- Scoop", [])] and ours.end == "done"


@needs_fixtures
def test_sdk_bug_truncated_stream_is_not_an_error() -> None:
    """A stream cut before ``message_stop``: the SDK returns the message with no
    error (and ``stop_reason=None`` when ``message_delta`` was lost too). Ours
    keeps the same content but ends ``Error(kind="truncated")`` (§1.5)."""
    full = load(f"{API}/text-basic.sse")
    for cut_before, stop, output in (
        (b"event: message_stop", "end_turn", 10),
        (b"event: message_delta", None, 1),
    ):
        data = full[: full.index(cut_before)]
        sdk, ours = sdk_view(data), our_view(data)
        assert sdk.crash is None and sdk.end == "done"
        assert ours.end == "truncated"
        assert sdk.stop == ours.stop == stop
        assert sdk.blocks == ours.blocks == [("text", "- Captain\n- Scoop", [])]
        assert sdk.usage == ours.usage == (17, output, 0, 0, 0)
        end = terminal(run_bytes(data, API))
        assert isinstance(end, Error) and str(end.message.stop_reason) == "error"


def test_sdk_bug_accepts_trailing_data_after_tool_input() -> None:
    """``{"a":1}}``: the SDK's jiter partial mode stops after the object and
    accepts it silently; ours flags ``invalid_json: Extra data`` with the
    preview ``{'a': 1}`` (partial-json.md §3)."""
    data = tool_stream('{"a":1}}')
    sdk, ours = sdk_view(data), our_view(data)
    assert sdk.blocks == [("tool_use", "toolu_1", "f", {"a": 1}, None)]
    ((kind, tool_id, name, args, error),) = ours.blocks
    assert (kind, tool_id, name, args) == ("tool_use", "toolu_1", "f", {"a": 1})
    assert error is not None and error.startswith("invalid_json: Extra data")
    assert sdk.stop == ours.stop == "tool_use"


def test_well_formed_tool_input_agrees() -> None:
    """The synthetic stream above, with clean input, agrees field by field."""
    data = tool_stream('{"a": [1, "x"]}')
    assert disagreements(sdk_view(data), our_view(data)) == set()


def test_error_event_fails_both() -> None:
    """A mid-stream ``error`` event: the SDK raises ``APIStatusError``; ours
    ends ``Error(kind="upstream")`` with the type as code."""
    err = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    data = sse(START, err)
    with pytest.raises(anthropic.APIStatusError, match="Overloaded"):
        sdk_message(data)
    end = terminal(run_bytes(data, API))
    assert isinstance(end, Error) and end.kind == "upstream"
    assert (end.reason, end.code) == ("Overloaded", "overloaded_error")
