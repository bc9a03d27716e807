"""Every dialect sample, fed whole, per character and re-split at random.

The result must equal the sample's golden parse and ``parse_all`` in every
case (reference §6.1, §6.6), no marker may leak into text, and the calls must
survive the trip through ``NormalizingStream`` unchanged.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamnorm.events import BlockEnd, Done, TextDelta, ThinkingDelta, ToolCallDelta
from streamnorm.inline import get_parser
from streamnorm.messages import TextBlock, ThinkingBlock, ToolCallBlock

from .test_inline_samples import (
    SAMPLES,
    Sample,
    fold,
    golden,
    random_splits,
    run_stream,
    split_at,
    summary,
    upstream,
)

pytestmark = pytest.mark.parametrize("sample", SAMPLES, ids=str)


def test_whole(sample: Sample) -> None:
    out = get_parser(sample.dialect, **sample.options).parse_all(sample.source)
    assert summary(out) == golden(sample)


def test_per_character(sample: Sample) -> None:
    out = fold(sample.dialect, list(sample.source), **sample.options)
    assert summary(out) == golden(sample)


def test_seeded_random_splits(sample: Sample) -> None:
    want = golden(sample)
    for chunks in random_splits(sample.source, 500, seed=len(sample.id)):
        assert summary(fold(sample.dialect, chunks, **sample.options)) == want, chunks


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_hypothesis_splits(sample: Sample, data: st.DataObject) -> None:
    n = len(sample.source)
    cuts = data.draw(st.lists(st.integers(0, n), max_size=min(n, 40)))
    chunks = split_at(sample.source, cuts)
    assert summary(fold(sample.dialect, chunks, **sample.options)) == golden(sample)


def test_stream_round_trip(sample: Sample) -> None:
    """Per-character deltas through NormalizingStream: the final message holds
    the golden text, reasoning and calls in order; deltas carry no residue."""
    events = run_stream(sample.dialect, upstream(list(sample.source)), **sample.options)
    done = events[-1]
    assert isinstance(done, Done)
    content = done.message.content
    text = "".join(b.text for b in content if isinstance(b, TextBlock))
    reasoning = "".join(b.thinking for b in content if isinstance(b, ThinkingBlock))
    calls = tuple(
        (b.name, b.raw_arguments, b.error) for b in content if isinstance(b, ToolCallBlock)
    )
    assert (text, reasoning) == (sample.text, sample.reasoning)
    assert calls == sample.calls
    for ev in events:
        if isinstance(ev, (TextDelta, ThinkingDelta)):
            for marker in sample.residue:
                assert marker not in ev.delta
    # Indices are dense, one BlockEnd each; raw arguments of clean calls parse.
    ends = [ev.index for ev in events if isinstance(ev, BlockEnd)]
    assert sorted(ends) == list(range(len(content)))
    for b in content:
        if isinstance(b, ToolCallBlock) and b.error is None:
            assert isinstance(json.loads(b.raw_arguments or "{}"), dict)
    deltas = [ev for ev in events if isinstance(ev, ToolCallDelta)]
    assert all(ev.id for ev in deltas)
    ids = [b.id for b in content if isinstance(b, ToolCallBlock)]
    assert len(set(ids)) == len(ids)
    if sample.ids is not None:
        assert tuple(ids) == sample.ids
    if sample.dialect == "mistral":
        assert all(len(i) == 9 and i.isalnum() for i in ids)
