"""Properties every recorded stream must have, whatever its api:

* exactly one terminal event, last, and every index names a final block;
* chunk-boundary invariance: whole, one byte at a time and generated
  splittings give identical event sequences (every event, not only ``Done``);
* ``api="auto"`` gives the same sequence as the explicit api;
* a stream cut anywhere ends in ``Error(kind="truncated")`` carrying what was
  received — never a ``Done`` unless the terminal signal arrived before the cut.
"""

from __future__ import annotations

import itertools
import random
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamnorm import (
    BlockEnd,
    Done,
    Error,
    Start,
    TextBlock,
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

# A line holding an api's terminal signal (providers.md §7). For Chat
# Completions and Gemini a stop value followed by end of input is a normal end.
TERMINAL_SIGNAL = {
    "anthropic-messages": re.compile(rb'"type"\s*:\s*"message_stop"'),
    "openai-responses": re.compile(rb'"type"\s*:\s*"response\.(completed|incomplete)"'),
    "openai-completions": re.compile(rb'"finish_reason"\s*:\s*"|\[DONE\]'),
    "google-generative-ai": re.compile(rb'"finishReason"\s*:\s*"|"blockReason"\s*:\s*"'),
}


@needs_fixtures
def test_all_fixtures_are_found() -> None:
    assert len(ALL) == 110


def _whole(path: Path) -> list[dict]:
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


def _texts(message) -> list[str]:  # type: ignore[no-untyped-def]
    return [b.text for b in message.content if isinstance(b, TextBlock)]


@needs_fixtures
@pytest.mark.parametrize("path", ALL, ids=fixture_id)
def test_truncation_at_random_offsets(path: Path) -> None:
    data = path.read_bytes()
    api = api_of(path)
    full_events = run([data], api)
    full = terminal(full_events)
    streamed: dict[int, str] = {}
    for e in full_events:
        if isinstance(e, TextDelta):
            streamed[e.index] = streamed.get(e.index, "") + e.delta
    signals = [m for m in TERMINAL_SIGNAL[api].finditer(data)]
    first_signal = signals[0].start() if signals else len(data)
    last_line_end = data.find(b"\n", signals[-1].end()) + 1 if signals else len(data) + 1
    rng = random.Random(path.name)
    for cut in sorted(rng.sample(range(len(data)), min(50, len(data)))):
        end = terminal(run([data[:cut]], api))
        if cut < first_signal:
            assert not isinstance(end, Done), f"Done before the terminal signal (cut {cut})"
        if isinstance(full, Done) and last_line_end and cut >= last_line_end:
            assert isinstance(end, Done), f"cut {cut} after the terminal signal must be Done"
        if isinstance(end, Done):
            if isinstance(full, Done):
                assert _texts(end.message) == _texts(full.message)
            continue
        assert end.kind in ("truncated", "upstream"), end
        # Everything received is kept: every text block so far is a prefix of
        # the same block in the full message (or of its deltas, where a final
        # ``*.done`` value replaced them).
        partial = end.message.content
        assert len(partial) <= len(full.message.content)
        for i, (got, want) in enumerate(zip(partial, full.message.content, strict=False)):
            if isinstance(got, TextBlock) and isinstance(want, TextBlock):
                assert want.text.startswith(got.text) or streamed.get(i, "").startswith(got.text)
