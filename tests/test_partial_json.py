"""partial_json and _json: previews, the incremental scanner, the argument
buffer, final arguments with repair, and the JSON facade of the core.

The reference is ``partial-json.md``: its example table is reproduced row by
row, then extended; properties check the contract on generated JSON (every
prefix, every split, every read order) and on the argument texts recorded in
the fixtures.
"""

from __future__ import annotations

import copy
import json
import math
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamnorm import ToolCallDelta
from streamnorm._json import (
    MAX_DEPTH,
    JSONDecodeError,
    JSONDepthError,
    dumps_bytes,
    dumps_compact,
    loads,
)
from streamnorm.partial_json import (
    ArgsOp,
    ArgumentBuffer,
    IncrementalJSONParser,
    apply_ops,
    parse_final_arguments,
    parse_partial_json,
    repair_json,
)
from tests.support import FIXTURES, api_of, fixture_id, fixture_paths, run_bytes

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ---------------------------------------------------------------------------
# Helpers


def same(a: Any, b: Any) -> bool:
    """Equal values of equal types, recursively (``1 == 1.0`` is not enough)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def grows_into(a: Any, b: Any) -> bool:
    """partial-json.md §1.2 monotonicity: preview ``a`` of a prefix, ``b`` of a longer one."""
    if isinstance(a, str):
        return isinstance(b, str) and b.startswith(a)
    if isinstance(a, dict):
        return isinstance(b, dict) and all(k in b and grows_into(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return (
            isinstance(b, list)
            and len(a) <= len(b)
            and all(grows_into(x, y) for x, y in zip(a, b, strict=False))
        )
    return same(a, b)


def surrogate_free(value: Any) -> bool:
    """Every string and key of ``value`` can be encoded to UTF-8."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if re.search("[\ud800-\udfff]", item):
                return False
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return True


def without_surrogates(value: Any) -> Any:
    """``json.loads`` output with lone surrogates replaced as ``loads`` does."""
    if isinstance(value, str):
        return re.sub("[\ud800-\udfff]", "\ufffd", value)
    if isinstance(value, list):
        return [without_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {without_surrogates(k): without_surrogates(v) for k, v in value.items()}
    return value


# JSON values as Python builds them; no NaN or infinity (not JSON).
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**63 - 2, max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.text(st.sampled_from('"\\/\b\f\n\r\t\x00\x1f\u00e9\u20ac\U0001f600 a'), max_size=8)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=16,
)
json_objects = st.dictionaries(st.text(max_size=6), json_values, max_size=5)

WHITESPACE = ("", " ", "\n", "\t", "\r\n  ", "  ")


def dump(value: Any, gaps: list[str], ensure_ascii: bool) -> str:
    """Serialise like ``json.dumps`` but with whitespace taken from ``gaps`` in turn."""
    out: list[str] = []
    turn = iter(range(sys.maxsize))

    def gap() -> str:
        return gaps[next(turn) % len(gaps)] if gaps else ""

    def emit(v: Any) -> None:
        if isinstance(v, dict):
            out.append("{" + gap())
            for n, (k, item) in enumerate(v.items()):
                if n:
                    out.append(gap() + "," + gap())
                out.append(json.dumps(k, ensure_ascii=ensure_ascii) + gap() + ":" + gap())
                emit(item)
            out.append(gap() + "}")
        elif isinstance(v, list):
            out.append("[" + gap())
            for n, item in enumerate(v):
                if n:
                    out.append(gap() + "," + gap())
                emit(item)
            out.append(gap() + "]")
        else:
            out.append(json.dumps(v, ensure_ascii=ensure_ascii))

    emit(value)
    return "".join(out)


@st.composite
def object_texts(draw: st.DrawFn) -> tuple[dict[str, Any], str]:
    """A JSON object and one of its many serialisations."""
    value = draw(json_objects)
    gaps = draw(st.lists(st.sampled_from(WHITESPACE), max_size=6))
    text = dump(value, gaps, draw(st.booleans()))
    return value, text


# Text that is mostly JSON-like, to reach the error paths.
json_ish = st.text(
    st.sampled_from([*'{}[]",:-+.0123456789eEtruefalsn \n\t\\/ubd8Dx', "\ud83d", "\ude00", "é"]),
    max_size=40,
)


@st.composite
def splits(draw: st.DrawFn, text: str) -> list[str]:
    """``text`` cut at random places (empty fragments included)."""
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=12)))
    pieces, start = [], 0
    for cut in [*cuts, len(text)]:
        pieces.append(text[start:cut])
        start = cut
    return pieces


# ---------------------------------------------------------------------------
# parse_partial_json: the table of partial-json.md §1.3, then more

DOC_TABLE: list[tuple[str, dict[str, Any]]] = [
    ("", {}),
    ("   ", {}),
    ("{", {}),
    ('{"', {}),
    ('{"a', {}),
    ('{"a"', {}),
    ('{"a":', {}),
    ('{"a": "', {"a": ""}),
    ('{"a": "hel', {"a": "hel"}),
    ('{"a": "hello"', {"a": "hello"}),
    ('{"a": "x\\', {"a": "x"}),
    ('{"a": "x\\n', {"a": "x\n"}),
    ('{"a": "x\\"', {"a": 'x"'}),
    ('{"a": "x\\u00', {"a": "x"}),
    ('{"a": "x\\u00e9', {"a": "xé"}),
    ('{"a": "\\ud83d', {"a": ""}),
    ('{"a": "\\ud83d\\ude', {"a": ""}),
    ('{"a": "\\ud83d\\ude00', {"a": "😀"}),
    ('{"a": "\\ud83d"}', {"a": "\ufffd"}),
    ('{"a": "\\ud83dx"}', {"a": "\ufffdx"}),
    ('{"a": "x\\q', {"a": "x\\q"}),
    ('{"a": "line1\nline2', {"a": "line1\nline2"}),
    ('{"a": 1', {}),
    ('{"a": 1,', {"a": 1}),
    ('{"a": 12 ', {"a": 12}),
    ('{"a": -', {}),
    ('{"a": 1.', {}),
    ('{"a": 1.5', {}),
    ('{"a": 1e', {}),
    ('{"a": 1e5', {}),
    ('{"a": 1e5}', {"a": 100000.0}),
    ('{"a": tr', {}),
    ('{"a": true', {"a": True}),
    ('{"a": nul', {}),
    ('{"a": null', {"a": None}),
    ('{"a": [', {"a": []}),
    ('{"a": [1, 2', {"a": [1]}),
    ('{"a": [1, 2,', {"a": [1, 2]}),
    ('{"a": 1, "b": [true, fa', {"a": 1, "b": [True]}),
    ('{"a": [{"b": "c', {"a": [{"b": "c"}]}),
    ('{"a": {"b": {', {"a": {"b": {}}}),
    ('{"a": {"b": 1, "c', {"a": {"b": 1}}),
    ('{"a": 1, "b', {"a": 1}),
    ('{"a": 1, "b": ', {"a": 1}),
    ('{"a": 1,}', {"a": 1}),
    ('{"a": [1,]}', {"a": [1]}),
    ('{"a": "x", "a": "y"}', {"a": "y"}),
    ('{"a": "x" "b": 1}', {"a": "x"}),
    ('{"a": 1, "b": xyz', {"a": 1}),
    ('  {"a": {}}', {"a": {}}),
    ('{"a": 1} trailing', {"a": 1}),
    ("[1, 2]", {}),
    ('"text"', {}),
    ("42", {}),
    ("null", {}),
    ("hello", {}),
]

MORE_TABLE: list[tuple[str, dict[str, Any]]] = [
    # surrogates
    ('{"a": "\\ude00"}', {"a": "\ufffd"}),
    ('{"a": "\\ud83d\\u0041"}', {"a": "\ufffdA"}),
    ('{"a": "\\ud83d\\ud83d\\ude00"}', {"a": "\ufffd😀"}),
    ('{"a": "\\ud83d\\u00', {"a": "\ufffd"}),  # the partner can no longer arrive
    ('{"a": "\\ud83d\\', {"a": ""}),
    ('{"a": "\\ud83d\\n', {"a": "\ufffd\n"}),
    ('{"a": "\\uD83D\\uDE00"}', {"a": "😀"}),
    ('{"a": "\ud800x"}', {"a": "\ufffdx"}),  # a raw surrogate in the input
    ('{"\\ud800": 1}', {"\ufffd": 1}),
    # escapes
    ('{"a": "x\\u00G1"}', {"a": "x\\u00G1"}),
    ('{"a": "\\/\\b\\f\\r\\t\\\\"}', {"a": "/\b\f\r\t\\"}),
    ('{"a": "C:\\Users\\me"}', {"a": "C:\\Users\\me"}),
    ('{"a": "\\\\q"}', {"a": "\\q"}),
    ('{"a\\"b": 1}', {'a"b': 1}),
    ('{"a": "\x00\x1f\t"}', {"a": "\x00\x1f\t"}),
    # numbers
    ('{"a": 0}', {"a": 0}),
    ('{"a": -0.5,', {"a": -0.5}),
    ('{"a": -1E-2}', {"a": -0.01}),
    ('{"a": 1e+5,', {"a": 100000.0}),
    ('{"a": 123456789012345678901234567890,', {"a": 123456789012345678901234567890}),
    ('{"a": 01,', {}),
    ('{"a": 1.2.3,', {}),
    ('{"a": 1x', {}),
    ('{"a": 1-2,', {}),
    ('{"a": 1\x0c', {}),  # form feed is not JSON whitespace
    ('{"a": 1e400}', {"a": math.inf}),
    # literals and structure
    ('{"a": truex', {"a": True}),
    ('{"a": nulL', {}),
    ('{"a": [1}', {"a": [1]}),
    ('{"a": [,', {"a": []}),
    ("{,", {}),
    ('{"a":}', {}),
    ('{"a" 1}', {}),
    ("{a: 1}", {}),
    ("\ufeff{}", {}),
    ('{"a": [[], [[]], [[', {"a": [[], [[]], [[]]]}),
    ('{"a": {"b": [1, {"c": "d"}], "e": ', {"a": {"b": [1, {"c": "d"}]}}),
    ('{"a": 1}{"b": 2}', {"a": 1}),
    ('{"a": "x"}}', {"a": "x"}),
    ('{"": ""}', {"": ""}),
    ('\t\r\n {"a": null}', {"a": None}),
    ('{"a": "x", "a": "y', {"a": "y"}),
    ('{"a": "x", "a": ', {"a": "x"}),
    ('{"a": "x", "b": 2, "a": [', {"a": [], "b": 2}),
]


@pytest.mark.parametrize(("text", "expected"), DOC_TABLE + MORE_TABLE)
def test_table(text: str, expected: dict[str, Any]) -> None:
    assert same(parse_partial_json(text), expected)
    # Fed one character at a time, the scanner reaches the same preview.
    parser = IncrementalJSONParser()
    for char in text:
        parser.feed(char)
    assert same(parser.value(), expected)


def test_table_sizes() -> None:
    assert len(DOC_TABLE) == 56
    assert len(DOC_TABLE) + len(MORE_TABLE) >= 60


def test_duplicate_key_keeps_first_position() -> None:
    assert list(parse_partial_json('{"a": 1, "b": 2, "a": 3}')) == ["a", "b"]
    assert list(parse_partial_json('{"a": 1, "b": 2, "a": "x')) == ["a", "b"]


def test_deep_nesting_is_cut_at_max_depth() -> None:
    for opener in ("[", '{"a":'):
        value = parse_partial_json("{" + '"k":' + opener * 100_000)
        depth = 0
        node: Any = value
        while isinstance(node, (dict, list)) and node:
            if isinstance(node, list):
                assert depth != 0
                node = node[0]
            else:
                node = node["k"] if depth == 0 else node["a"]
            depth += 1
        assert depth == MAX_DEPTH - 1  # the root plus 511 nested containers, the last empty
    text = '{"a":' * (MAX_DEPTH - 1) + '{"b": 1}' + "}" * (MAX_DEPTH - 1)
    assert parse_partial_json(text) == json.loads(text)  # exactly MAX_DEPTH is fine


def test_huge_inputs() -> None:
    big = "x" * 300_000
    assert parse_partial_json('{"a": "' + big) == {"a": big}
    digits = "9" * 10_000
    assert parse_partial_json('{"a": 1, "b": ' + digits + "}") == {"a": 1}
    assert parse_partial_json('{"a": 1, "b": ' + digits) == {"a": 1}
    assert parse_partial_json('{"a": "' + "\\ud800" * 10_000 + '"}') == {"a": "\ufffd" * 10_000}


# ---------------------------------------------------------------------------
# parse_partial_json: properties


@SETTINGS
@given(object_texts())
def test_full_text_equals_json_loads(case: tuple[dict[str, Any], str]) -> None:
    value, text = case
    assert same(parse_partial_json(text), json.loads(text))
    assert same(json.loads(text), value) or not same(value, value)  # sanity of the generator


@SETTINGS
@given(object_texts())
def test_prefixes_are_monotone(case: tuple[dict[str, Any], str]) -> None:
    _, text = case
    previous: dict[str, Any] = {}
    for end in range(len(text) + 1):
        preview = parse_partial_json(text[:end])
        assert isinstance(preview, dict)
        assert surrogate_free(preview)
        assert grows_into(previous, preview), (text[:end], previous, preview)
        previous = preview
    assert same(previous, json.loads(text))


@SETTINGS
@given(json_ish)
def test_never_raises_on_json_like_text(text: str) -> None:
    preview = parse_partial_json(text)
    assert isinstance(preview, dict)
    assert surrogate_free(preview)


@SETTINGS
@given(st.binary(max_size=64))
def test_never_raises_on_random_bytes(data: bytes) -> None:
    for text in (data.decode("utf-8", "replace"), "{" + data.decode("latin-1")):
        assert isinstance(parse_partial_json(text), dict)


@SETTINGS
@given(st.text(st.characters(exclude_categories=()), max_size=30))
def test_never_raises_on_any_text(text: str) -> None:
    for candidate in (text, '{"a": "' + text, '{"' + text):
        preview = parse_partial_json(candidate)
        assert isinstance(preview, dict)
        assert surrogate_free(preview)


# ---------------------------------------------------------------------------
# IncrementalJSONParser and ArgumentBuffer


def check_incremental(text: str, pieces: list[str]) -> None:
    """Feeding ``pieces`` gives the preview of each prefix; old results never change."""
    parser = IncrementalJSONParser()
    seen: list[tuple[dict[str, Any], dict[str, Any]]] = []
    fed = ""
    for piece in pieces:
        parser.feed(piece)
        fed += piece
        assert parser.position == len(fed)
        result = parser.value()
        assert same(result, parse_partial_json(fed)), (pieces, fed)
        seen.append((result, copy.deepcopy(result)))
    assert fed == text
    for result, snapshot in seen:
        assert same(result, snapshot)  # later input did not touch earlier results


@SETTINGS
@given(st.data())
def test_incremental_matches_on_json(data: st.DataObject) -> None:
    _, text = data.draw(object_texts())
    check_incremental(text, data.draw(splits(text)))


@SETTINGS
@given(st.data())
def test_incremental_matches_on_json_like_text(data: st.DataObject) -> None:
    text = data.draw(json_ish.map(lambda t: "{" + t))
    check_incremental(text, data.draw(splits(text)))


# Pieces of string content that stress escapes, quotes and surrogates at cuts.
string_pieces = st.sampled_from(
    [*'a "\\u0dD8eE9:,{}[]', "\\ud83d", "\\ude00", '\\"', "\\\\", "\\n", "\\q", "\ud800", "é"]
)


@SETTINGS
@given(st.data())
def test_incremental_matches_on_escape_heavy_strings(data: st.DataObject) -> None:
    body = "".join(data.draw(st.lists(string_pieces, max_size=30)))
    for text in ('{"k": "' + body, '{"k": "' + body + '", "' + body + '": 1}'):
        check_incremental(text, data.draw(splits(text)))


def test_incremental_one_character_at_a_time() -> None:
    text = json.dumps(
        {"s": 'a"b\\c\u00e9\U0001f600\n', "n": [1, -2.5e-3, 10**30], "o": {"t": True, "f": None}},
        ensure_ascii=True,
    )
    check_incremental(text, list(text))


def test_value_is_cached_until_something_changes() -> None:
    parser = IncrementalJSONParser()
    parser.feed('{"a": [1, 2')
    first = parser.value()
    parser.feed("3")  # the number may still grow: nothing new to report
    assert parser.value() is first
    parser.feed(", ")
    assert parser.value() == {"a": [1, 23]}
    assert first == {"a": [1]}


def test_completed_values_are_shared() -> None:
    parser = IncrementalJSONParser()
    parser.feed('{"done": {"x": [1, 2]}, "open": "ab')
    first = parser.value()
    parser.feed("cd")
    second = parser.value()
    assert second["done"] is first["done"]
    assert (first["open"], second["open"]) == ("ab", "abcd")


def test_feed_after_done_is_ignored() -> None:
    parser = IncrementalJSONParser()
    parser.feed('{"a": 1}')
    assert parser.done
    parser.feed(', "b": 2}')
    assert parser.value() == {"a": 1}
    assert parser.position == 17


@SETTINGS
@given(st.data())
def test_argument_buffer_in_any_read_order(data: st.DataObject) -> None:
    _, text = data.draw(object_texts())
    pieces = data.draw(splits(text))
    buffer = ArgumentBuffer()
    ends = [buffer.append(piece) for piece in pieces]
    assert ends[-1] == len(buffer) == len(text)
    order = data.draw(st.permutations(range(len(ends))))
    for k in order:
        assert same(buffer.partial(ends[k]), parse_partial_json(text[: ends[k]]))
    assert buffer.text() == text


@SETTINGS
@given(st.data())
def test_argument_buffer_interleaved(data: st.DataObject) -> None:
    # Appends, reads and text() in the order a stream produces them.
    _, text = data.draw(object_texts())
    buffer = ArgumentBuffer()
    for piece in data.draw(splits(text)):
        end = buffer.append(piece)
        action = data.draw(st.sampled_from(["none", "read", "text", "old"]))
        if action == "read":
            assert same(buffer.partial(end), parse_partial_json(text[:end]))
        elif action == "text":
            assert buffer.text() == text[:end]
        elif action == "old":
            old = data.draw(st.integers(0, end))
            assert same(buffer.partial(old), parse_partial_json(text[:old]))
    assert same(buffer.partial(len(text)), json.loads(text))


def test_argument_buffer_basics() -> None:
    buffer = ArgumentBuffer()
    assert (len(buffer), buffer.text(), buffer.partial(0)) == (0, "", {})
    assert buffer.append('{"a": ') == 6
    assert buffer.append("") == 6
    assert buffer.append('"xy') == 9
    assert buffer.partial(9) == {"a": "xy"}
    assert buffer.partial(100) == {"a": "xy"}  # clamped to the length
    assert buffer.partial(7) == {"a": ""}  # older than the scanner: from scratch
    assert buffer.text() == '{"a": "xy'
    assert buffer.append('z"}') == 12
    assert buffer.partial(12) == {"a": "xyz"}


def test_long_string_in_small_pieces_is_linear() -> None:
    # 300 KB in 10-character pieces, read after every piece: completes quickly
    # because only new text is scanned (the open string is joined per read).
    buffer = ArgumentBuffer()
    buffer.append('{"path": "a.txt", "content": "')
    chunk = "0123456789"
    for _ in range(30_000):
        end = buffer.append(chunk)
        buffer.partial(end)
    assert len(buffer.partial(len(buffer))["content"]) == 300_000


def check_ops(text: str, pieces: list[str]) -> None:
    """The operations of each piece turn the previous preview into the next."""
    parser = IncrementalJSONParser(record_ops=True)
    mine: dict[str, Any] = {}
    fed = ""
    for piece in pieces:
        parser.feed(piece)
        fed += piece
        ops = parser.take_ops()
        assert all(isinstance(op, ArgsOp) and op.op in ("set", "append") for op in ops)
        json.dumps([op.to_dict() for op in ops])  # JSON-ready
        apply_ops(mine, ops)
        assert same(mine, parse_partial_json(fed)), (pieces, fed, ops)
        assert same(mine, parser.value())
    assert fed == text


@SETTINGS
@given(st.data())
def test_ops_rebuild_every_preview_on_json(data: st.DataObject) -> None:
    _, text = data.draw(object_texts())
    check_ops(text, data.draw(splits(text)))


@SETTINGS
@given(st.data())
def test_ops_rebuild_every_preview_on_json_like_text(data: st.DataObject) -> None:
    text = data.draw(json_ish.map(lambda t: "{" + t))
    check_ops(text, data.draw(splits(text)))


@SETTINGS
@given(st.data())
def test_ops_rebuild_every_preview_on_escape_heavy_strings(data: st.DataObject) -> None:
    body = "".join(data.draw(st.lists(string_pieces, max_size=30)))
    for text in ('{"k": "' + body, '{"k": ["' + body + '", {"' + body + '": "' + body + '"}]}'):
        check_ops(text, data.draw(splits(text)))


def test_ops_of_a_growing_call() -> None:
    parser = IncrementalJSONParser(record_ops=True)
    steps = [
        ('{"path": "a.py", "lines": [', [("set", ("path",), "a.py"), ("set", ("lines",), [])]),
        ('"one", "tw', [("set", ("lines", 0), "one"), ("set", ("lines", 1), "tw")]),
        ("o", [("append", ("lines", 1), "o")]),
        ('", 3', []),  # the number may still grow
        ("], ", [("set", ("lines", 2), 3)]),
        ('"n": {"x": nul', [("set", ("n",), {})]),
        ("l}}", [("set", ("n", "x"), None)]),
        (', "after": 1', []),  # the object is closed: the rest is ignored
    ]
    for piece, expected in steps:
        parser.feed(piece)
        assert [tuple(op) for op in parser.take_ops()] == expected, piece
    assert parser.value() == {"path": "a.py", "lines": ["one", "two", 3], "n": {"x": None}}


def test_ops_need_record_ops() -> None:
    with pytest.raises(ValueError, match="record_ops"):
        IncrementalJSONParser().take_ops()


def test_apply_ops_leaves_the_ops_as_they_were() -> None:
    parser = IncrementalJSONParser(record_ops=True)
    parser.feed('{"a": {"b": [1, "x')
    ops = parser.take_ops()
    first, second = apply_ops({}, ops), apply_ops({}, ops)
    first["a"]["b"].append(2)
    assert second == {"a": {"b": [1, "x"]}} == apply_ops({}, ops)
    assert ArgsOp("set", ("a",), {}).to_dict() == {"op": "set", "path": ["a"], "value": {}}


@SETTINGS
@given(st.data())
def test_results_kept_by_the_reader_never_change(data: st.DataObject) -> None:
    """Copy on write: some results (or containers inside them) are kept, the
    others dropped at once; every result is the prefix's preview, and what
    was kept is still as it was when read."""
    _, text = data.draw(object_texts())
    parser = IncrementalJSONParser()
    kept: list[tuple[Any, Any]] = []
    fed = ""
    for piece in data.draw(splits(text)):
        parser.feed(piece)
        fed += piece
        result = parser.value()
        assert same(result, parse_partial_json(fed))
        choice = data.draw(st.sampled_from(["drop", "keep", "inner"]))
        if choice == "keep":
            kept.append((result, copy.deepcopy(result)))
        elif choice == "inner":
            inner: Any = result
            while isinstance(inner, dict) and inner:
                inner = inner[list(inner)[-1]]  # the innermost last member: the open spine
            kept.append((inner, copy.deepcopy(inner)))
        del result
    for value, snapshot in kept:
        assert same(value, snapshot)


@SETTINGS
@given(st.data())
def test_argument_buffer_ops_in_any_read_order(data: st.DataObject) -> None:
    _, text = data.draw(object_texts())
    pieces = data.draw(splits(text))
    buffer = ArgumentBuffer()
    ends = [0] + [buffer.append(piece) for piece in pieces]
    order = data.draw(st.permutations(range(1, len(ends))))
    for k in order:
        if data.draw(st.booleans()):  # the preview first, as a reader of both would
            assert same(buffer.partial(ends[k], ends[k - 1]), parse_partial_json(text[: ends[k]]))
        before = copy.deepcopy(parse_partial_json(text[: ends[k - 1]]))
        after = apply_ops(before, buffer.ops(ends[k - 1], ends[k]))
        assert same(after, parse_partial_json(text[: ends[k]]))
    assert buffer.ops(3, 3) == ()


def test_tool_call_delta_ops_without_a_buffer() -> None:
    event = ToolCallDelta(0, "c", "f", '{"a": "x')
    assert event.ops == (ArgsOp("set", ("a",), "x"),)
    assert event.partial_args == {"a": "x"}
    assert event.to_dict()["ops"] == [{"op": "set", "path": ["a"], "value": "x"}]


_TOOL_MARKERS = (b"input_json_delta", b"function_call_arguments", b"tool_calls", b"functionCall")
TOOL_FIXTURES = [
    path for path in fixture_paths() if any(m in path.read_bytes() for m in _TOOL_MARKERS)
]


@pytest.mark.skipif(not TOOL_FIXTURES, reason="no fixture corpus")
def test_tool_fixtures_are_found() -> None:
    assert len(TOOL_FIXTURES) >= 10


@pytest.mark.parametrize("path", TOOL_FIXTURES, ids=[fixture_id(p) for p in TOOL_FIXTURES])
def test_to_dict_ops_rebuild_every_preview(path: Path) -> None:
    """The CLI's lines carry operations only; applied in order per call, they
    give every event's ``partial_args`` (the JSON round trip included)."""
    everything = run_bytes(path.read_bytes(), api_of(path))
    events = [e for e in everything if isinstance(e, ToolCallDelta)]
    previews: dict[int, dict[str, Any]] = {}
    for event in events:
        line = json.loads(json.dumps(event.to_dict()))
        assert "partial_args" not in line
        ops = [ArgsOp(op["op"], tuple(op["path"]), op["value"]) for op in line["ops"]]
        mine = apply_ops(previews.setdefault(event.index, {}), ops)
        assert same(mine, event.partial_args), (path.name, event)


# ---------------------------------------------------------------------------
# Fixtures: every argument text recorded, fed in its real deltas


def _data_payloads(path: Path) -> Iterator[dict[str, Any]]:
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith("data:"):
            try:
                payload = json.loads(line[5:].strip())
            except ValueError:
                continue
            if isinstance(payload, dict):
                yield payload


def fixture_arguments() -> list[tuple[str, list[str]]]:
    """(id, deltas) of every streamed tool-call argument text in the fixtures."""
    found: dict[str, list[str]] = {}
    for path in sorted(FIXTURES.glob("*/*.sse")) if FIXTURES.is_dir() else []:
        api = path.parent.name
        for payload in _data_payloads(path):
            key_deltas: list[tuple[str, str]] = []
            if api == "anthropic-messages" and payload.get("type") == "content_block_delta":
                delta = payload.get("delta") or {}
                if delta.get("type") == "input_json_delta":
                    key_deltas.append((str(payload.get("index")), delta.get("partial_json", "")))
            elif api == "openai-responses":
                if payload.get("type") == "response.function_call_arguments.delta":
                    key_deltas.append((str(payload.get("item_id")), payload.get("delta", "")))
            elif api == "openai-completions":
                for choice in payload.get("choices") or []:
                    for call in (choice.get("delta") or {}).get("tool_calls") or []:
                        args = (call.get("function") or {}).get("arguments")
                        if isinstance(args, str):
                            key_deltas.append((f"{choice.get('index')}.{call.get('index')}", args))
            elif api == "google-generative-ai":
                for candidate in payload.get("candidates") or []:
                    for part in (candidate.get("content") or {}).get("parts") or []:
                        call = part.get("functionCall")
                        if call and isinstance(call.get("args"), dict):
                            text = json.dumps(call["args"])
                            key_deltas.append((f"g{len(found)}", text))
            for key, delta in key_deltas:
                found.setdefault(f"{api}/{path.name}#{key}", []).append(delta)
    return [(k, v) for k, v in found.items() if "".join(v).strip()]


FIXTURE_ARGUMENTS = fixture_arguments()


@pytest.mark.skipif(not FIXTURE_ARGUMENTS, reason="no fixture corpus")
def test_fixture_arguments_are_found() -> None:
    assert len(FIXTURE_ARGUMENTS) >= 10


@pytest.mark.parametrize(
    "deltas", [d for _, d in FIXTURE_ARGUMENTS], ids=[k for k, _ in FIXTURE_ARGUMENTS]
)
def test_fixture_arguments(deltas: list[str]) -> None:
    text = "".join(deltas)
    previous: dict[str, Any] = {}
    for end in range(0, len(text) + 1, max(1, len(text) // 400)):
        preview = parse_partial_json(text[:end])
        assert grows_into(previous, preview)
        previous = preview
    check_incremental(text, deltas)
    check_ops(text, deltas)
    arguments, error, repaired = parse_final_arguments(text)
    try:
        expected = json.loads(text)
    except ValueError:
        assert error is not None
        return
    if isinstance(expected, dict):
        assert (error, repaired) == (None, False)
        assert same(arguments, expected)
        assert same(parse_partial_json(text), expected)


# ---------------------------------------------------------------------------
# parse_final_arguments


@pytest.mark.parametrize(
    ("raw", "arguments", "error", "repaired"),
    [
        ("", {}, None, False),
        (" \n\t\r ", {}, None, False),
        ('{"city": "Paris"}', {"city": "Paris"}, None, False),
        ('{"code": "a\nb"}', {"code": "a\nb"}, None, True),
        ('{"path": "C:\\Users\\me"}', {"path": "C:\\Users\\me"}, None, True),
        ('{"a": "tab\there", "b": "\\d+"}', {"a": "tab\there", "b": "\\d+"}, None, True),
        ('{"a": "\\\n"}', {"a": "\\\n"}, None, True),  # backslash + raw newline
        ('{"a": "\x01\\q"}', {"a": "\x01\\q"}, None, True),
        ('{\n  "a": "x\ny"\n}', {"a": "x\ny"}, None, True),  # whitespace outside kept
        ('{"a": 1}}', {"a": 1}, "invalid_json: Extra data: line 1 column 9 (char 8)", False),
        ("[1, 2]", {}, "not_an_object", False),
        ('"text"', {}, "not_an_object", False),
        ("null", {}, "not_an_object", False),
        ('["a\nb"]', {}, "not_an_object", False),  # repaired, still not an object
        ('{"a": NaN}', {}, "invalid_json: Expecting value: line 1 column 7 (char 6)", False),
        ('{"a": Infinity}', {}, "invalid_json: Expecting value: line 1 column 7 (char 6)", False),
        (
            '{"filename": "taxes.txt", "lines": ["# GUIDE", "Filing',
            {"filename": "taxes.txt", "lines": ["# GUIDE", "Filing"]},
            "invalid_json: Unterminated string starting at: line 1 column 48 (char 47)",
            False,
        ),
        # After a repair, the error is the repaired text's, located in the raw text.
        (
            '{"a": "\n", "b": [1 2]}',
            {"a": "\n", "b": [1]},
            "invalid_json: Expecting ',' delimiter: line 2 column 12 (char 19)",
            False,
        ),
        ('{"a":"\\ud800"}', {"a": "\ufffd"}, None, False),
        ('{"a":1,"a":2}', {"a": 2}, None, False),
        (
            "\ufeff{}",
            {},
            "invalid_json: Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 (char 0)",
            False,
        ),
    ],
)
def test_final_arguments(raw: str, arguments: Any, error: str | None, repaired: bool) -> None:
    got = parse_final_arguments(raw)
    assert same(got[0], arguments)
    assert got[1:] == (error, repaired)


def test_final_arguments_errors_carry_the_preview() -> None:
    raw = '{"a": "x", "b": [1, 2], "c": tru'
    arguments, error, repaired = parse_final_arguments(raw)
    assert arguments == parse_partial_json(raw) == {"a": "x", "b": [1, 2]}
    assert error is not None and error.startswith("invalid_json: ")
    assert not repaired


def test_final_arguments_adversarial() -> None:
    # Each completes in well under a second: linear, C-speed where it counts.
    for opener in ("[", '{"a":', '{"a":['):
        arguments, error, _ = parse_final_arguments(opener * 100_000)
        assert error is not None and "Nesting deeper than 512 levels" in error
    closed = '{"a":' + "[" * 100_000 + "]" * 100_000 + "}"
    assert "Nesting deeper" in (parse_final_arguments(closed)[1] or "")
    big = "x" * 10_000_000
    assert parse_final_arguments('{"a": "' + big + '"}') == ({"a": big}, None, False)
    arguments, error, _ = parse_final_arguments('{"a": "' + big)
    assert arguments == {"a": big} and error is not None
    lines = "\n" * 10_000_000
    assert parse_final_arguments('{"a": "' + lines + '"}') == ({"a": lines}, None, True)
    slashes = "\\q" * 1_000_000
    assert parse_final_arguments('{"a": "' + slashes + '"}') == ({"a": slashes}, None, True)
    assert parse_final_arguments('{"a": "' + "\\" * 2_000_001 + '"}')[1] is not None
    assert parse_final_arguments('{"a": "' + "\\ud800" * 100_000 + '"}') == (
        {"a": "\ufffd" * 100_000},
        None,
        False,
    )
    assert parse_final_arguments('{"a": "\ud800"}') == ({"a": "\ufffd"}, None, False)
    many = '{"a": [' + ",".join(['"x\ny"'] * 200_000) + "]}"
    assert parse_final_arguments(many) == ({"a": ["x\ny"] * 200_000}, None, True)
    dupes = "{" + ",".join(f'"k": {n}' for n in range(100_000)) + "}"
    assert parse_final_arguments(dupes) == ({"k": 99_999}, None, False)
    digits = '{"a": 1, "b": ' + "9" * 10_000 + "}"
    assert parse_final_arguments(digits) == (
        {"a": 1},
        "invalid_json: Integer with more than 4300 digits: line 1 column 15 (char 14)",
        False,
    )


def naive_repair(raw: str) -> str:
    """A character walk implementing partial-json.md §3.2, as the reference."""
    out: list[str] = []
    i, inside = 0, False
    escapes = {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
    while i < len(raw):
        c = raw[i]
        if not inside:
            inside = c == '"'
            out.append(c)
        elif c == '"':
            inside = False
            out.append(c)
        elif c == "\\":
            following = raw[i + 1 : i + 2]
            if following and following in '"\\/bfnrt':
                out.append(raw[i : i + 2])
                i += 2
                continue
            if following == "u" and re.fullmatch("[0-9a-fA-F]{4}", raw[i + 2 : i + 6]):
                out.append(raw[i : i + 6])
                i += 6
                continue
            out.append("\\\\")
        elif ord(c) < 0x20:
            out.append(escapes.get(c, f"\\u{ord(c):04x}"))
        else:
            out.append(c)
        i += 1
    return "".join(out)


@settings(max_examples=500, deadline=None)
@given(st.text(st.sampled_from(list('\\\\""ab\n\tu0D{}\x00\x01 \ue000\ue001')), max_size=20))
def test_repair_matches_reference(raw: str) -> None:
    assert repair_json(raw) == naive_repair(raw)


@SETTINGS
@given(json_ish)
def test_final_arguments_never_raise(raw: str) -> None:
    arguments, error, repaired = parse_final_arguments(raw)
    assert isinstance(arguments, dict)
    assert surrogate_free(arguments)
    if error is not None:
        assert not repaired
        assert error == "not_an_object" or error.startswith("invalid_json: ")
        if error != "not_an_object":
            assert same(arguments, parse_partial_json(raw))
    elif not repaired and raw.strip(" \t\n\r"):
        assert same(arguments, without_surrogates(json.loads(raw)))


@SETTINGS
@given(object_texts())
def test_final_arguments_of_valid_objects(case: tuple[dict[str, Any], str]) -> None:
    _, text = case
    arguments, error, repaired = parse_final_arguments(text)
    assert (error, repaired) == (None, False)
    assert same(arguments, json.loads(text))


# ---------------------------------------------------------------------------
# _json


@SETTINGS
@given(json_values | st.floats() | st.lists(st.floats()))
def test_dumps_compact_is_json_dumps(value: Any) -> None:
    assert dumps_compact(value) == json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def test_dumps_compact_floats_and_order() -> None:
    value = {"z": [1e16, 1e-7, 0.1, -0.0, 1.0, 2.5e300], "a": "é\u2028", "m": 10**30}
    assert dumps_compact(value) == (
        '{"z":[1e+16,1e-07,0.1,-0.0,1.0,2.5e+300],"a":"é\u2028","m":1000000000000000000000000000000}'
    )


def _has_float(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_has_float(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_float(v) for v in value)
    return isinstance(value, float)


_finite = st.floats(allow_nan=False, allow_infinity=False)


@SETTINGS
@given(json_values | _finite | st.lists(_finite))
def test_dumps_bytes_writes_what_dumps_compact_writes_floats_aside(value: Any) -> None:
    expected = dumps_compact(value).encode()
    written = dumps_bytes(value)
    assert same(json.loads(written), json.loads(expected))  # floats: the same numbers
    if not _has_float(value):
        assert written == expected


def test_dumps_bytes_writes_what_orjson_refuses_as_the_standard_library_does() -> None:
    value = {"big": 10**30, "small": -(2**64), "keys": {1: "a", None: "b"}}
    assert dumps_bytes(value) == dumps_compact(value).encode()
    assert dumps_bytes(value) == (
        b'{"big":1000000000000000000000000000000,"small":-18446744073709551616,'
        b'"keys":{"1":"a","null":"b"}}'
    )


@SETTINGS
@given(json_values, st.sampled_from([{}, {"ensure_ascii": False}, {"indent": 1}]))
def test_loads_matches_json_loads(value: Any, options: dict[str, Any]) -> None:
    text = json.dumps(value, **options)
    expected = json.loads(text)
    assert same(loads(text), expected)
    assert same(loads(text.encode()), expected)
    assert same(loads(bytearray(text.encode())), expected)


@pytest.mark.parametrize(
    "text",
    [
        "2",
        "-9223372036854775809",
        "18446744073709551616",
        str(-(2**200)),
        "9" * 4300,
        "-0",
        "1E400",
    ],
)
def test_loads_numbers(text: str) -> None:
    assert same(loads(text), json.loads(text))
    assert same(loads(f'{{"n": [{text}]}}'), json.loads(f'{{"n": [{text}]}}'))


@SETTINGS
@given(json_ish)
def test_loads_agrees_with_json_loads_or_rejects(text: str) -> None:
    try:
        expected = json.loads(text)
    except ValueError:
        expected = JSONDecodeError
    except RecursionError:  # pragma: no cover - texts here are short
        return
    try:
        got = loads(text)
    except JSONDecodeError:
        got = JSONDecodeError
    if expected is not JSONDecodeError:
        assert same(got, without_surrogates(expected))
    else:
        assert got is JSONDecodeError


@pytest.mark.parametrize(
    "text",
    [
        "NaN",
        "[Infinity]",
        '{"a": -Infinity}',
        "{",
        '{"a":1}}',
        "[1,]",
        "01",
        '"\x01"',
        "",
        " ",
        "\ufeff{}",
    ],
)
def test_loads_rejects(text: str) -> None:
    with pytest.raises(JSONDecodeError) as info:
        loads(text)
    assert isinstance(info.value, json.JSONDecodeError)  # catchable as the stdlib's
    assert isinstance(info.value, ValueError)
    if not text.startswith("\ufeff"):  # bytes may start with a BOM, as for json.loads
        with pytest.raises(JSONDecodeError):
            loads(text.encode())


def test_loads_rejects_invalid_utf8() -> None:
    with pytest.raises(JSONDecodeError):
        loads(b'{"a": "\xff"}')


def test_loads_bytes_like_json_loads() -> None:
    assert loads('{"a": 1}'.encode("utf-16")) == {"a": 1}
    assert loads(b'\xef\xbb\xbf{"a": 1}') == {"a": 1}


def test_loads_surrogates_become_replacement_characters() -> None:
    assert loads('"\\ud800"') == "\ufffd"
    assert loads('{"\\udc00": ["\\ud83d\\ude00", "\\ud83dx"]}') == {"\ufffd": ["😀", "\ufffdx"]}
    assert loads('["\ud800"]') == ["\ufffd"]  # raw surrogates in a str
    assert loads('{"\\ud800": 1, "\\ud801": 2}') == {"\ufffd": 2}


def test_loads_depth() -> None:
    for depth in (200, 300, MAX_DEPTH):
        text = "[" * depth + "]" * depth
        assert loads(text) == json.loads(text)
        assert loads("{" + '"a":{' * (depth - 1) + "}" * depth)
    for text in ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "[" * 100_000, '{"a":' * 100_000):
        with pytest.raises(JSONDepthError) as info:
            loads(text)
        assert info.value.pos == MAX_DEPTH * (1 if text[0] == "[" else 5)
    assert loads('["[[[[", {"a": "]]]"}]', max_depth=2) == ["[[[[", {"a": "]]]"}]
    with pytest.raises(JSONDepthError):
        loads("[[[1]]]", max_depth=2)
    assert loads("[[[1]]]", max_depth=3) == [[[1]]]
    with pytest.raises(JSONDepthError):
        loads(b"[[1]]", max_depth=1)
    with pytest.raises(JSONDepthError):
        loads("[]", max_depth=0)
    assert loads("1", max_depth=0) == 1


def test_loads_huge_integer() -> None:
    with pytest.raises(JSONDecodeError, match="Integer with more than"):
        loads("[" + "9" * 10_000 + "]")
