"""Every response fixture × every target api: decode with streamnorm, encode
for the target, and let the target's official SDK read the bytes.

The SDK must read them without error and end with the text, thinking, tool
calls (ids where the target keeps them, names, parsed arguments), stop value
and usage of the canonical message (``encode_oracles.expected``). A pair that
cannot agree is listed in ``KNOWN`` with the field and the section of
docs/encoding.md that says why; the test checks that a listed field really
differs, so the list cannot go stale.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from streamnorm import Error, encode_stream

from .support import APIS, api_of, fixture_id, fixture_paths, needs_fixtures, run_bytes, terminal

pytest.importorskip("anthropic")
pytest.importorskip("openai")
pytest.importorskip("google.genai")

from .encode_oracles import READERS, View, expected

# The SDKs' own pydantic serialisers warn about provider items they model loosely.
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

PAIRS = [(p, target) for p in fixture_paths() for target in APIS]
IDS = [f"{fixture_id(p)}->{target}" for p, target in PAIRS]

#: (fixture, target) → {field: why} — every entry is a loss docs/encoding.md lists.
KNOWN: dict[tuple[str, str], dict[str, str]] = {}


def _known(fixture: str, targets: tuple[str, ...], fields: dict[str, str]) -> None:
    for target in targets:
        KNOWN.setdefault((fixture, target), {}).update(fields)


_OTHERS = ("anthropic-messages", "openai-completions", "google-generative-ai")
_CUT = "the SDK drops the cut string of a call cut off (encoding.md 'Cut tool calls')"
_CORRECTED = "the source's final item corrected text already streamed (encoding.md 'Corrections')"
_known("anthropic-messages/max-tokens-mid-tool-input.sse", ("anthropic-messages",), {"calls": _CUT})
_known("openai-responses/shell-tool-container.sse", _OTHERS, {"text": _CORRECTED})


@needs_fixtures
@pytest.mark.parametrize(("path", "target"), PAIRS, ids=IDS)
def test_sdk_reads_encoded_stream(path: Path, target: str) -> None:
    events = run_bytes(path.read_bytes(), api_of(path))
    end = terminal(events)
    data = b"".join(encode_stream(events, target))
    got = READERS[target](data)
    want = expected(end.message, target, isinstance(end, Error))
    known = KNOWN.get((fixture_id(path), target), {})
    for f in dataclasses.fields(View):
        mine, theirs = getattr(want, f.name), getattr(got, f.name)
        if f.name in known:
            assert mine != theirs, f"{f.name} agrees now: drop it from KNOWN ({known[f.name]})"
        else:
            assert theirs == mine, f"{f.name}: SDK read {theirs!r}, canonical says {mine!r}"
