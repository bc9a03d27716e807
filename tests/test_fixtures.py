"""Properties every recorded stream must have, whatever its api:

* exactly one terminal event, last, and every index names a final block;
* chunk-boundary invariance: whole, one byte at a time and generated
  splittings give identical event sequences (every event, not only ``Done``);
* ``api="auto"`` gives the same sequence as the explicit api.

Truncation at every offset is tested in ``test_faults.py``.
"""

from __future__ import annotations

import functools
import itertools
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamnorm import (
    BlockEnd,
    Done,
    Error,
    Start,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
)

from .support import (
    api_of,
    dicts,
    fixture_id,
    fixture_paths,
    needs_fixtures,
    run,
    split_every,
    terminal,
)

ALL = fixture_paths()


@needs_fixtures
def test_all_fixtures_are_found() -> None:
    assert len(ALL) == 110


@functools.cache
def _whole(path: Path) -> list[dict[str, Any]]:
    """The events of ``path`` fed whole: the reference every chunking is
    compared with, decoded once per fixture (not once per example)."""
    return dicts(run([path.read_bytes()], api_of(path)))


@needs_fixtures
@pytest.mark.parametrize("path", ALL, ids=fixture_id)
def test_one_terminal_event_and_valid_indices(path: Path) -> None:
    events = run([path.read_bytes()], api_of(path))
    end = terminal(events)
    assert isinstance(events[0], Start) or isinstance(end, Error)
    content = end.message.content
    ended = [e.index for e in events if isinstance(e, BlockEnd)]
    assert sorted(ended) == list(range(len(content))), "every block ends exactly once"
    for e in events:
        if isinstance(e, (TextDelta, ThinkingDelta, ToolCallDelta, BlockEnd)):
            assert 0 <= e.index < len(content)
        if isinstance(e, BlockEnd):
            assert content[e.index] == e.block or isinstance(end, Done)


@needs_fixtures
@pytest.mark.parametrize("path", ALL, ids=fixture_id)
def test_byte_at_a_time_is_identical(path: Path) -> None:
    data = path.read_bytes()
    assert dicts(run(split_every(data, 1), api_of(path))) == _whole(path)


@needs_fixtures
@pytest.mark.parametrize("path", ALL, ids=fixture_id)
@settings(max_examples=20, deadline=None, derandomize=True)
@given(cuts=st.lists(st.floats(min_value=0, max_value=1), max_size=40))
def test_any_chunking_is_identical(path: Path, cuts: list[float]) -> None:
    data = path.read_bytes()
    points = sorted({int(c * len(data)) for c in cuts} | {0, len(data)})
    chunks = [data[a:b] for a, b in itertools.pairwise(points)]
    assert dicts(run(chunks, api_of(path))) == _whole(path)


@needs_fixtures
@pytest.mark.parametrize("path", ALL, ids=fixture_id)
def test_auto_detection_matches_explicit_api(path: Path) -> None:
    assert dicts(run([path.read_bytes()], "auto")) == _whole(path)
