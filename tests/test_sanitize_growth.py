"""Sanitize and validation cost linear in the history: growth tests.

Each test times the same work for ``n`` and ``4n`` in one run, in CPU time
of this process (the best of a few repeats, so that other processes on a
shared machine do not decide) and asserts the ratio loosely: linear work
gives about 4, quadratic about 16. No absolute time is asserted.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

from streamnorm.messages import AssistantMessage, Message
from streamnorm.sanitize import sanitize_messages_for_target, validate_history_for_target

from .sanitize_support import assistant, call, result

#: Below 16 (quadratic) with room for noise; linear work measures about 4.
MAX_RATIO = 8.0
REPEATS = 5


def _best_time(work: Callable[[], object]) -> float:
    """The best of ``REPEATS`` runs, with the cyclic collector off as
    ``timeit`` does (its full passes grow with the heap, not with the work)."""
    best = float("inf")
    gc.collect()
    gc.disable()
    try:
        for _ in range(REPEATS):
            start = time.process_time()
            work()
            best = min(best, time.process_time() - start)
    finally:
        gc.enable()
    return best


def sanitize(history: list[Message]) -> list[Message]:
    return sanitize_messages_for_target(history, "anthropic", "claude-sonnet-4-5")


def validate(history: list[Message]) -> list[str]:
    return validate_history_for_target(history, "anthropic", "claude-sonnet-4-5")


def growth(
    build: Callable[[int], list[Message]], n: int, work: Callable[[list[Message]], object]
) -> float:
    """Time of ``work(build(4n))`` over that of ``work(build(n))``."""
    small, large = build(n), build(4 * n)
    work(small)  # warm up
    return _best_time(lambda: work(large)) / _best_time(lambda: work(small))


def repeated_id(n: int) -> list[Message]:
    """``n`` Gemini turns, each calling ``call_0`` (the id streamnorm gives a
    call of a response without ``responseId``), each with its result."""
    out: list[Message] = []
    for k in range(n):
        turn = assistant(
            [call("call_0", n=k)], provider="google", api="google-generative-ai", model="gemini"
        )
        out += [turn, result("call_0")]
    return out


def wide_turn(n: int) -> list[Message]:
    """One turn with ``n`` calls, then their ``n`` results, last call first."""
    ids = [f"toolu_{k:06d}" for k in range(n)]
    calls = assistant([call(i, n=k) for k, i in enumerate(ids)])
    return [calls, *(result(i) for i in reversed(ids))]


def test_repeated_call_id_is_linear() -> None:
    out = sanitize_messages_for_target(repeated_id(50), "anthropic", "claude-sonnet-4-5")
    ids = [b.id for m in out if isinstance(m, AssistantMessage) for b in m.tool_calls]
    assert len(ids) == len(set(ids)) == 50 and ids[0] == "call_0"
    assert validate(out) == []
    ratio = growth(repeated_id, 500, sanitize)
    assert ratio < MAX_RATIO, f"n -> 4n took x{ratio:.1f}"


def test_results_of_a_wide_turn_are_linear() -> None:
    out = sanitize(wide_turn(50))
    assert out == wide_turn(50) and validate(out) == []
    ratio = growth(wide_turn, 4000, sanitize)
    assert ratio < MAX_RATIO, f"n -> 4n took x{ratio:.1f}"


def test_validation_of_a_wide_turn_is_linear() -> None:
    ratio = growth(wide_turn, 4000, validate)
    assert ratio < MAX_RATIO, f"n -> 4n took x{ratio:.1f}"
