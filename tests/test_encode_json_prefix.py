"""``StrictPrefix``: the Anthropic encoder streams tool arguments only while
they are a prefix of strict JSON. Judged against the standard library's
strict parser."""

from __future__ import annotations

import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from streamnorm.providers.json_prefix import StrictPrefix

_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=12,
)
_objects = st.dictionaries(st.text(max_size=6), _values, max_size=5)


def _feed(text: str, rng: random.Random) -> StrictPrefix:
    scanner = StrictPrefix()
    i = 0
    while i < len(text):
        n = rng.randint(1, 5)
        scanner.feed(text[i : i + n])
        i += n
    return scanner


@settings(max_examples=150, deadline=None)
@given(_objects, st.booleans(), st.integers(0, 2**32))
def test_every_prefix_of_a_json_object_is_valid_and_closes(
    value: object, spaced: bool, seed: int
) -> None:
    text = json.dumps(value, separators=(", ", ": ") if spaced else (",", ":"))
    whole = _feed(text, random.Random(seed))
    assert whole.valid and whole.complete
    rng = random.Random(seed)
    for cut in sorted(rng.sample(range(len(text) + 1), min(len(text) + 1, 8))):
        scanner = _feed(text[:cut], rng)
        assert scanner.valid, text[:cut]
        closing = scanner.closing()
        if closing and not scanner.complete:
            json.loads(text[:cut] + closing)  # the closed prefix is strict JSON


_junk = st.text(alphabet='{}[]":,\\ \t\n0123456789.eE+-truefalsnxu\x01', max_size=24)


@settings(max_examples=300, deadline=None)
@given(_junk, st.integers(0, 2**32))
def test_verdict_agrees_with_the_strict_parser(text: str, seed: int) -> None:
    scanner = _feed(text, random.Random(seed))
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        assert scanner.valid and scanner.complete
    if scanner.valid and scanner.complete:  # text after the object is ignored, as by the SDK
        obj, _ = json.JSONDecoder().raw_decode(text.lstrip(" \t\n\r"))
        assert isinstance(obj, dict)
    elif scanner.valid and scanner.closing():
        assert isinstance(json.loads(text + scanner.closing()), dict)


def test_what_the_sdk_rejects_is_invalid() -> None:
    for bad in (
        '{"a":"x\ty"}',
        '{"a":"\\q"}',
        "{a:1}",
        '{"a":01}',
        '{"a":1,}',
        '{"a":[1,]}',
        "[1]",
        '{"a":tru}',
    ):
        assert not StrictPrefix().feed(bad), bad
