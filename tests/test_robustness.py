"""Fuzzing in CI: every invariant of ``fuzz/check.py`` on generated hostile
streams of every api, plus one regression test per bug the fuzzer found.

The bulk run checks the inputs of seeds ``0 .. FUZZ_INPUTS - 1``
(``fuzz.mutate.generate``: seed ``s`` is fed as ``APIS[s % 4]``), each whole,
in random chunks and, when small, one byte at a time. It is deterministic:
the same seeds make the same bytes on every machine. A failure names the
seed, the command that replays it, and a minimised reproducer.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from typing import Any

import pytest
from fuzz.check import InvariantError, check
from fuzz.mutate import APIS, cases, generate
from fuzz.run import fuzz_seeds
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamnorm import (
    Done,
    Error,
    NormalizationError,
    PromptProgress,
    ProviderBlock,
    Start,
    ThinkingBlock,
    ThinkingDelta,
    ToolCallBlock,
    Usage,
)

from .support import needs_fixtures, run_bytes, terminal

#: Inputs of the bulk run, in SHARDS equal runs of consecutive seeds (so that
#: they can run on different cores). Measured on a 2-core machine: about
#: half a minute in all.
FUZZ_INPUTS = 20_000
SHARDS = 4
SHARD = FUZZ_INPUTS // SHARDS


@needs_fixtures
@pytest.mark.parametrize("shard", range(SHARDS))
def test_fuzz_seeded_bulk(shard: int) -> None:
    seeds = range(shard * SHARD, (shard + 1) * SHARD)
    started = time.monotonic()
    count, failures = fuzz_seeds(seeds, budget=1500)
    elapsed = time.monotonic() - started
    per_api = Counter(APIS[seed % len(APIS)] for seed in seeds[:count])
    assert count == SHARD, f"only {count} inputs of seeds {seeds} were checked"
    assert all(per_api[api] == SHARD // len(APIS) for api in APIS), per_api
    reports = "\n\n".join(f.report() for f in failures[:5])
    assert not failures, (
        f"{len(failures)} of {count} fuzzed inputs (seeds {seeds}) broke an invariant "
        f"({elapsed:.0f}s):\n\n{reports}"
    )


def test_the_bulk_shards_cover_every_seed_once() -> None:
    assert SHARD * SHARDS == FUZZ_INPUTS and SHARD % len(APIS) == 0


@needs_fixtures
@pytest.mark.parametrize("api", APIS)
@settings(
    max_examples=500,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
@given(data=st.data())
def test_fuzz_hypothesis(api: str, data: st.DataObject) -> None:
    """The same mutations with hypothesis choosing (and shrinking) every
    decision."""
    case = data.draw(cases(api), label="case")
    try:
        check(case.data, case.api, case.options, split_seed=case.split_seed)
    except InvariantError as exc:
        # Hypothesis shrinks the decisions; the bytes of the example it ends
        # with are the reproducer.
        raise AssertionError(
            f"{exc}\n  input: {case.describe()}\n  bytes ({len(case.data)}): {case.data!r}"
        ) from exc


def test_generation_is_reproducible() -> None:
    for seed in (0, 1, 2, 3, 4711):
        assert generate(seed).data == generate(seed).data
        assert generate(seed).api.startswith(APIS[seed % 4]) or generate(seed).api == "auto"


def test_a_failure_reports_seed_and_minimal_reproducer(monkeypatch: pytest.MonkeyPatch) -> None:
    """The report of a broken rule: seed, replay command, minimised bytes."""
    import fuzz.run

    real = vars(fuzz.run)["check"]  # the name fuzz.run calls, patched below

    def strict(data: bytes, api: str = "auto", options: Any = None, **kw: Any) -> Any:
        if b"ping" in data:
            raise InvariantError("test_rule", "a ping")
        return real(data, api, options, **kw)

    monkeypatch.setattr(fuzz.run, "check", strict)
    seed = next(s for s in range(0, 400, 4) if b"ping" in generate(s).data)
    count, failures = fuzz_seeds([seed])
    assert count == 1 and len(failures) == 1
    report = failures[0].report()
    assert f"seed {seed}" in report and f"--replay {seed}" in report
    assert len(failures[0].minimal) <= 8, failures[0].minimal  # b"ping" and little else


# --------------------------------------------------------------------------
# Regressions: one per bug found by fuzzing


def _sse(*payloads: str, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return "".join(f"{head}data: {p}\n\n" for p in payloads).encode()


def test_sse_limit_is_reported_as_max_event_bytes() -> None:
    """``Error.code`` named the SSE decoder's ``max_line_bytes`` instead of
    the normalizer's own option."""
    data = _sse('{"type":"message_start","message":{"id":"m","model":"x"}}', "x" * 500)
    end = terminal(run_bytes(data, "anthropic-messages", max_event_bytes=100))
    assert isinstance(end, Error) and end.kind == "limit" and end.code == "max_event_bytes"
    assert "max_event_bytes" in end.reason


def test_usage_counts_beyond_64_bits_are_ignored() -> None:
    """Two 4300-digit counts summed into ``total_tokens`` gave an int that
    ``str()`` refuses, so ``to_dict()`` could not be serialised."""
    big = "9" * 4300
    data = _sse(
        '{"type":"message_start","message":{"id":"m","model":"x","usage":'
        f'{{"input_tokens":{big},"output_tokens":{big},"cache_read_input_tokens":2}}}}}}',
        '{"type":"message_stop"}',
    )
    events = run_bytes(data, "anthropic-messages")
    end = terminal(events)
    assert isinstance(end, Done)
    assert end.usage == Usage.of(cache_read_tokens=2, raw=end.usage.raw)
    check(data, "anthropic-messages")  # every event's to_dict() serialises


def test_anthropic_iteration_with_a_non_string_type() -> None:
    """``usage.iterations[].type`` as a list raised ``TypeError: unhashable``
    inside the decoder."""
    data = _sse(
        '{"type":"message_start","message":{"id":"m","model":"x","usage":{"input_tokens":1}}}',
        '{"type":"message_delta","delta":{"stop_reason":"end_turn"},'
        '"usage":{"output_tokens":2,"iterations":[{"type":["message"],"input_tokens":5}]}}',
        '{"type":"message_stop"}',
    )
    events = run_bytes(data, "anthropic-messages")
    assert not [e for e in events if isinstance(e, NormalizationError)]
    end = terminal(events)
    assert isinstance(end, Done) and end.usage.output_tokens == 2


def test_completions_prompt_progress_with_a_huge_time() -> None:
    """``prompt_progress.time_ms`` beyond a double's range raised
    ``OverflowError`` in ``float()``."""
    data = _sse(
        '{"id":"c","object":"chat.completion.chunk","choices":[],'
        f'"prompt_progress":{{"processed":1,"total":2,"cache":0,"time_ms":-{"9" * 400}}}}}',
        '{"id":"c","object":"chat.completion.chunk","choices":'
        '[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}',
        "[DONE]",
    )
    events = run_bytes(data, "openai-completions")
    assert not [e for e in events if isinstance(e, NormalizationError)]
    (progress,) = [e for e in events if isinstance(e, PromptProgress)]
    assert progress.time_ms == 0.0 and progress.processed == 1
    assert isinstance(terminal(events), Done)


def test_google_partial_args_index_far_past_the_end() -> None:
    """``$.a[99999999999999999999]`` made the decoder pad a list with nulls up
    to that index: a 100-byte payload exhausted the machine's memory."""
    call = (
        '{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","willContinue":true,'
        '"partialArgs":[{"jsonPath":"$.a[99999999999999999999]","nullValue":null}]}}]},'
        '"index":0}]}'
    )
    end_call = (
        '{"candidates":[{"content":{"parts":[{"functionCall":{}}]},'
        '"finishReason":"STOP","index":0}]}'
    )
    started = time.monotonic()
    events = run_bytes(_sse(call, end_call).replace(b"\n\n", b"\r\n\r\n"), "google-generative-ai")
    assert time.monotonic() - started < 1
    end = terminal(events)
    assert isinstance(end, Done)
    (block,) = end.content
    assert isinstance(block, ToolCallBlock) and block.arguments == {"a": []}
    assert "partial_args_out_of_order" in [
        e.kind for e in events if isinstance(e, NormalizationError)
    ]


def test_usage_update_is_serialisable_with_hostile_counts() -> None:
    data = _sse(
        '{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{}}],'
        f'"usage":{{"prompt_tokens":{"9" * 4300},"completion_tokens":{"8" * 4300},'
        '"total_tokens":1e400}}',
        '{"id":"c","object":"chat.completion.chunk","choices":'
        '[{"index":0,"delta":{},"finish_reason":"stop"}]}',
    )
    end = terminal(run_bytes(data, "openai-completions"))
    assert isinstance(end, Done) and end.usage.total_tokens == 0
    check(data, "openai-completions")


# --------------------------------------------------------------------------
# Linear cost (DESIGN.md §6): four times the events take about four times
# as long. Quadratic work (re-serialising or re-copying what accumulated on
# every event) shows as about sixteen; the bound is eight.


def _sse_lines(*payloads: Any, crlf: bool = False) -> bytes:
    out = "".join(f"data: {p if isinstance(p, str) else json.dumps(p)}\n\n" for p in payloads)
    return (out.replace("\n", "\r\n") if crlf else out).encode()


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"id": "c", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def _signed_reasoning_details(n: int) -> bytes:
    """OpenRouter reasoning_details signed early, then n text chunks: the
    signature used to be re-serialised from every merged entry per chunk."""
    entries = [
        _chunk(
            {
                "reasoning_details": [
                    {
                        "type": "reasoning.text",
                        "index": 0,
                        "text": "thinking",
                        "signature": "SIG" if i == 0 else None,
                    }
                ]
            }
        )
        for i in range(n)
    ]
    return _sse_lines(*entries, _chunk({}, "stop"), "[DONE]")


def _executed_tools(n: int) -> bytes:
    """Groq executed_tools, one new entry per chunk: every entry used to be
    copied on every chunk."""
    entries = [
        _chunk({"executed_tools": [{"index": i, "type": "search", "arguments": "{}"}]})
        for i in range(n)
    ]
    return _sse_lines(*entries, _chunk({}, "stop"), "[DONE]")


def _anthropic_blocks(n: int) -> bytes:
    payloads: list[Any] = [{"type": "message_start", "message": {"id": "m", "model": "c"}}]
    for i in range(n):
        payloads += [
            {"type": "content_block_start", "index": i, "content_block": {"type": "text"}},
            {
                "type": "content_block_delta",
                "index": i,
                "delta": {"type": "text_delta", "text": "ab"},
            },
            {"type": "content_block_stop", "index": i},
        ]
    return _sse_lines(*payloads, {"type": "message_stop"})


def _responses_summary_parts(n: int) -> bytes:
    payloads: list[Any] = [
        {"type": "response.created", "response": {"id": "r", "model": "g"}},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {"type": "reasoning", "id": "rs"},
        },
    ]
    for i in range(n):
        payloads.append(
            {
                "type": "response.reasoning_summary_text.delta",
                "output_index": 0,
                "summary_index": i,
                "delta": "abcdefgh" * 4,
            }
        )
    return _sse_lines(
        *payloads, {"type": "response.completed", "response": {"id": "r", "status": "completed"}}
    )


def _gemini_partial_args(n: int) -> bytes:
    def part(call: dict[str, Any], **extra: Any) -> dict[str, Any]:
        return {
            "candidates": [{"content": {"parts": [{"functionCall": call}]}, "index": 0, **extra}]
        }

    pieces = [
        part(
            {
                "willContinue": True,
                "partialArgs": [
                    {"jsonPath": f"$.a[{i}].b", "stringValue": "xy", "willContinue": True}
                ],
            }
        )
        for i in range(n)
    ]
    return _sse_lines(
        part({"name": "f", "willContinue": True}), *pieces, part({}, finishReason="STOP"), crlf=True
    )


def _anthropic_compaction(n: int) -> bytes:
    """Compaction deltas used to be appended with ``str + str`` in the
    block's data: every delta copied all the content so far."""
    block = {"type": "compaction", "content": ""}
    delta = {"type": "compaction_delta", "content": "abcdefgh" * 32}
    return _sse_lines(
        {"type": "message_start", "message": {"id": "m", "model": "c"}},
        {"type": "content_block_start", "index": 0, "content_block": block},
        *({"type": "content_block_delta", "index": 0, "delta": delta} for _ in range(n)),
        {"type": "content_block_stop", "index": 0},
        {"type": "message_stop"},
    )


#: Streams whose shape once made the cost quadratic; ``benchmarks/linear.py``
#: measures their growth.
LINEAR_CASES = {
    "anthropic-messages/compaction": ("anthropic-messages", _anthropic_compaction),
    "openai-completions/reasoning_details": ("openai-completions", _signed_reasoning_details),
    "openai-completions/executed_tools": ("openai-completions", _executed_tools),
    "anthropic-messages/blocks": ("anthropic-messages", _anthropic_blocks),
    "openai-responses/summary_parts": ("openai-responses", _responses_summary_parts),
    "google-generative-ai/partial_args": ("google-generative-ai", _gemini_partial_args),
}


def test_reasoning_details_signature_is_brought_up_to_date_at_the_end() -> None:
    """The signature written lazily still holds every merged entry."""
    events = run_bytes(_signed_reasoning_details(3), "openai-completions")
    end = terminal(events)
    assert isinstance(end, Done)
    (block,) = end.content
    assert isinstance(block, ThinkingBlock) and block.thinking == "thinking" * 3
    merged = [{"type": "reasoning.text", "index": 0, "text": "thinking" * 3, "signature": "SIG"}]
    assert block.signature is not None and json.loads(block.signature) == merged
    announced = [e.signature for e in events if isinstance(e, ThinkingDelta) and e.signature]
    assert announced[-1] == block.signature


def test_executed_tools_block_holds_every_entry() -> None:
    end = terminal(run_bytes(_executed_tools(3), "openai-completions"))
    assert isinstance(end, Done)
    (block,) = end.content
    assert isinstance(block, ProviderBlock) and block.kind == "executed_tools"
    assert [e["index"] for e in block.data["executed_tools"]] == [0, 1, 2]


def test_compaction_delta_for_a_content_that_is_not_text() -> None:
    """A ``compaction_delta`` for a block whose ``content`` is an object
    raised ``TypeError`` (dict + str) in the builder."""
    data = _sse(
        '{"type":"message_start","message":{"id":"m","model":"x"}}',
        '{"type":"content_block_start","index":0,"content_block":'
        '{"type":"compaction","content":{"a":1}}}',
        '{"type":"content_block_delta","index":0,"delta":{"type":"compaction_delta","content":"x"}}',
        '{"type":"content_block_start","index":1,"content_block":{"type":"compaction"}}',
        '{"type":"content_block_delta","index":1,"delta":{"type":"compaction_delta","content":"ab"}}',
        '{"type":"content_block_delta","index":1,"delta":{"type":"compaction_delta","content":"c"}}',
        '{"type":"message_stop"}',
    )
    events = run_bytes(data, "anthropic-messages")
    kinds = [e.kind for e in events if isinstance(e, NormalizationError)]
    assert kinds == ["unknown_delta", "missing_stop_reason"]
    end = terminal(events)
    assert isinstance(end, Done)
    first, second = end.content
    assert isinstance(first, ProviderBlock) and first.data["content"] == {"a": 1}
    assert isinstance(second, ProviderBlock) and second.data["content"] == "abc"
    check(data, "anthropic-messages")


def test_a_stream_that_never_identifies_itself_still_starts() -> None:
    """A Chat Completions stream of chunks without ``id`` or ``choices``,
    then ``[DONE]``, ended with a ``Done`` that no ``Start`` preceded."""
    data = _sse('{"object":"chat.completion.chunk","usage":{"prompt_tokens":1}}', "[DONE]")
    events = run_bytes(data, "openai-completions")
    assert isinstance(events[0], Start) and isinstance(terminal(events), Done)
    check(data, "openai-completions")


def test_diagnostics_before_the_start_follow_it() -> None:
    """``Start`` is always the first event: an invalid payload between a
    ``ping`` and ``message_start`` is reported right after the ``Start``."""
    data = _sse(
        '{"type":"ping"}',
        "{not json",
        '{"type":"message_start","message":{"id":"m","model":"x"}}',
        '{"type":"message_stop"}',
    )
    events = run_bytes(data, "anthropic-messages")
    assert isinstance(events[0], Start)
    assert isinstance(events[1], NormalizationError) and events[1].kind == "invalid_json"
    assert isinstance(terminal(events), Done)
    check(data, "anthropic-messages")
    # Without any Start from the stream, they follow the Start of the terminal Error.
    events = run_bytes(_sse('{"type":"ping"}', "{not json"), "anthropic-messages")
    assert [type(e) for e in events] == [Start, NormalizationError, Error]


def test_payload_mutation_too_deep_to_write_leaves_the_block(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A mutated payload nested past what ``json.dumps`` can write is left as
    it was: the generator must not raise (atheris found one)."""
    import random

    import fuzz.mutate as mutate

    def too_deep(value: Any, rng: Any = None) -> str:
        raise RecursionError("maximum recursion depth exceeded while encoding a JSON object")

    monkeypatch.setattr(mutate, "dumps", too_deep)
    block = b'data: {"type":"ping"}\n\n'
    stream = mutate._Stream("anthropic-messages", [block])
    assert mutate._m_payload(stream, random.Random(1)) == "payload(too deep)"
    assert stream.blocks == [block]


def test_as_counts_is_as_int_of_each() -> None:
    from streamnorm.providers.base import as_counts, as_int

    valid = (0, 1, 2**63 - 1)
    junk = (2**63, True, -1, 1.5, "3", None)
    assert as_counts(*valid) == valid
    assert as_counts(*valid, *junk) == tuple(map(as_int, (*valid, *junk)))
