"""``cancel_after``: the time limit the gateway puts on part of a request's
own task (the body read)."""

from __future__ import annotations

import asyncio
import sys
import time

import pytest

from streamnorm.gateway.deadline import cancel_after


async def test_the_block_ends_with_a_timeout_and_the_task_goes_on() -> None:
    started = time.monotonic()
    with pytest.raises(asyncio.TimeoutError), cancel_after(0.05):
        await asyncio.sleep(5)
    assert time.monotonic() - started < 1.0
    await asyncio.sleep(0.01)  # no cancellation left pending on the task
    task = asyncio.current_task()
    assert task is not None
    if sys.version_info >= (3, 11):
        assert task.cancelling() == 0


async def test_a_block_within_its_time_is_left_alone() -> None:
    with cancel_after(1.0):
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)  # the timer was stopped with the block


async def test_no_limit_is_none() -> None:
    with cancel_after(None):
        await asyncio.sleep(0.01)


async def test_another_cancellation_passes_through() -> None:
    async def work() -> None:
        with cancel_after(5.0):
            await asyncio.sleep(5)

    task = asyncio.create_task(work())
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
