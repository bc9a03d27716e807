"""``cancel_after``: a time limit on part of the current task's work.

``asyncio.wait_for`` runs the awaited coroutine in a task of its own, a
task per request for the bound on a request's body read;
``asyncio.timeout`` needs Python 3.11. This is the same limit on the task
already running: a timer that cancels it, and the cancellation turned into
``asyncio.TimeoutError`` when it was the timer's.

(The drain of an upstream's last bytes keeps ``wait_for`` when the body
is still open: in the request's own task it measured 1.2 → 2.0 ms of CPU
a request, 53 events at once, when the worker idled between requests. A
body the builtin client has read to its end needs no drain, and no task.)
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator

__all__ = ["cancel_after", "forget_cancel"]


class _Timer:
    __slots__ = ("fired", "task")

    def __init__(self, task: asyncio.Task[object]) -> None:
        self.task = task
        self.fired = False

    def fire(self) -> None:
        self.fired = True
        self.task.cancel()


@contextlib.contextmanager
def cancel_after(seconds: float | None) -> Iterator[None]:
    """Raise ``asyncio.TimeoutError`` in the block once ``seconds`` have
    passed (None: no limit); another cancellation passes through."""
    task = asyncio.current_task()
    if seconds is None or task is None:
        yield
        return
    timer = _Timer(task)
    handle = asyncio.get_running_loop().call_later(seconds, timer.fire)
    try:
        yield
    except asyncio.CancelledError:
        if not timer.fired:
            raise
        forget_cancel(task)
        raise asyncio.TimeoutError from None
    finally:
        handle.cancel()


def forget_cancel(task: asyncio.Task[object] | None) -> None:
    """Take back one cancellation of ``task`` that was handled (Python 3.11's
    count, which ``asyncio.timeout`` and task groups read; 3.10 has none)."""
    uncancel = getattr(task, "uncancel", None)
    if uncancel is not None:
        uncancel()
