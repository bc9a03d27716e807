"""The building blocks: marker scanner, JSON readers, schema typing, literals,
``ParserOutput`` views and the registry."""

from __future__ import annotations

import json

import pytest

from streamnorm.inline import (
    CallArgs,
    CallClose,
    CallOpen,
    ParseError,
    ParserOutput,
    ReasoningPiece,
    TextPiece,
    ToolCallParser,
    get_parser,
    parser_names,
)
from streamnorm.inline.jsonargs import DONE, STOPPED, RawValue, StringDecoder
from streamnorm.inline.literals import NotALiteral, literal_from_source
from streamnorm.inline.scanner import (
    BOUND,
    END,
    MORE,
    NONE,
    MarkerSet,
    expect_after_ws,
)
from streamnorm.inline.schema import ToolSchemas, convert_value

from .test_inline_dsml_granite import D as DSML
from .test_inline_dsml_granite import dsml_call
from .test_inline_samples import fold

# --------------------------------------------------------------------------
# Marker scanner


def test_find_holds_only_a_possible_marker_prefix() -> None:
    ms = MarkerSet(["<tool_call>", "</think>"])
    assert ms.find("hello <tool", 0, False) == (6, None)
    assert ms.find("a < b", 0, False) == (5, None)  # `<` followed by space: released
    assert ms.find("a <", 0, False) == (2, None)
    assert ms.find("a </thi", 0, False) == (2, None)
    assert ms.find("a </thi", 0, True) == (7, None)  # final: nothing held
    assert ms.find("x<tool_call>y", 0, False) == (1, "<tool_call>")


def test_complete_marker_that_prefixes_a_longer_one_waits() -> None:
    ms = MarkerSet(["<invoke name=", '<invoke name="'])
    assert ms.find("<invoke name=", 0, False) == (0, None)
    assert ms.find("<invoke name=", 0, True) == (0, "<invoke name=")
    assert ms.find("<invoke name=x", 0, False) == (0, "<invoke name=")
    assert ms.find('<invoke name="', 0, False) == (0, '<invoke name="')
    both = MarkerSet(["<tool_call>", "<tool_calls>"])
    assert both.find("<tool_call", 0, False) == (0, None)
    assert both.find("<tool_calls>", 0, False) == (0, "<tool_calls>")
    assert both.find("<tool_call>", 0, False) == (0, "<tool_call>")


def test_at_and_expect_after_ws() -> None:
    ms = MarkerSet(["</tool_call>"])
    assert ms.at("</tool", 0, False) == MORE
    assert ms.at("</x", 0, False) == NONE
    assert ms.at("</tool_call>", 0, False) == "</tool_call>"
    opts = ("<parameter=", "</function>")
    assert expect_after_ws("\n <param", 0, False, opts) == (MORE, 2)
    assert expect_after_ws("\n</function>", 0, False, opts) == (1, 1)
    assert expect_after_ws("\n x", 0, False, opts) == (NONE, 2)
    assert expect_after_ws("  ", 0, True, opts) == (END, 2)
    assert expect_after_ws(" " * 100 + "<parameter=", 0, False, opts)[0] == BOUND


def test_held_input_stays_bounded() -> None:
    """What a parser holds between pushes is bounded whatever the input: the
    structural reason the work is linear (no timing here; see benchmarks)."""
    for name, unit in [
        ("hermes", "a <b <tool_c"),
        ("qwen3_coder", "x</parameter> y <"),
        ("deepseek_v3", "z <｜tool▁calls"),
        ("harmony", "w <|chan"),
        ("deepseek_v32", "v <｜DSML｜function_ca"),
        ("granite", "u <respons <function_c"),
    ]:
        p = get_parser(name)
        for c in unit * 2000:
            p.push_text(c)
            cur = p._text.cur  # type: ignore[attr-defined]
            assert len(cur.buf) - cur.pos <= 600
        p.finish()
    # Inside a long argument value nothing accumulates either.
    p = get_parser("hermes")
    p.push_text('<tool_call>{"name": "w", "arguments": {"content": "')
    for c in 'abc\\n\\"' * 5000:
        p.push_text(c)
        cur = p._text.cur  # type: ignore[attr-defined]
        assert len(cur.buf) - cur.pos <= 2


# --------------------------------------------------------------------------
# JSON readers


def test_raw_value_ends_and_stops() -> None:
    v = RawValue()
    assert v.scan('{"a": "}", "b": [1, {"c": 2}]} tail', 0, False) == (30, DONE)
    v = RawValue(MarkerSet(["</tool_call>"]))
    assert v.scan('{"a": [1</tool_call>', 0, False) == (8, STOPPED)
    v = RawValue(MarkerSet(["</tool_call>"]))
    assert v.scan('{"a": "</tool_call>"}', 0, False) == (21, DONE)  # inside a string
    v = RawValue()
    j, status = v.scan('{"a": "x\\', 0, False)
    assert (j, status) == (8, MORE)  # the lone backslash is held


def test_raw_value_scalar_ends_at_a_stop_marker() -> None:
    """A scalar is complete where a stop marker begins; a character that only
    might begin one is held, and one that does not is part of the scalar."""
    stop = MarkerSet(["[TOOL_CALLS]"])
    assert RawValue(stop).scan("123[TOOL_CALLS]g", 0, False) == (3, DONE)
    assert RawValue(stop).scan("123[TOOL", 0, False) == (3, MORE)
    assert RawValue(stop).scan("123[TOOL", 0, True) == (8, DONE)
    assert RawValue(stop).scan("1[2] ", 0, False) == (3, DONE)
    assert RawValue().scan("123[TOOL_CALLS]", 0, False) == (14, DONE)  # no stop: up to `]`


def test_raw_value_resumes_inside_open_containers() -> None:
    """``depth`` finds the end of a container another reader began."""
    assert RawValue(depth=1).scan('"}" x} tail', 0, False) == (6, DONE)
    assert RawValue(depth=2).scan("1}, [2]} tail", 0, False) == (8, DONE)
    v = RawValue(MarkerSet(["<tool_call>"]), depth=1)
    assert v.scan("x <tool_call>", 0, False) == (2, STOPPED)


def test_string_decoder_holds_cut_escapes_and_pairs() -> None:
    d = StringDecoder()
    assert d.scan("ab\\u00", 0, False) == (2, "ab", False)
    assert d.scan('\\u00e9"', 0, False) == (7, "é", True)
    assert d.scan("\\ud83d", 0, False) == (0, "", False)
    assert d.scan('\\ud83d\\ude00"', 0, False) == (13, "😀", True)
    assert d.scan('\\ud83dx"', 0, False) == (8, "\ufffdx", True)
    assert d.scan('\\q"', 0, False) == (3, "\\q", True)


# --------------------------------------------------------------------------
# Schema typing and literals


def test_convert_value_by_schema() -> None:
    assert convert_value("3", ("integer",)) == ("3", True)
    assert convert_value("3", ("string",)) == ('"3"', True)
    assert convert_value("TRUE", ("boolean",)) == ("true", True)
    assert convert_value("None", ("null", "string")) == ("null", True)
    assert convert_value("x", ("null", "integer", "string")) == ('"x"', True)
    assert convert_value("[1, 'a']", ("array",)) == ('[1, "a"]', True)
    assert convert_value('{"k": 1}', ("object",)) == ('{"k": 1}', True)
    assert convert_value("NaN", None) == ('"NaN"', True)
    assert convert_value("1.5", None) == ("1.5", True)
    assert convert_value("many", ("integer",)) == ('"many"', False)


def test_tool_schemas_formats() -> None:
    openai = [{"type": "function", "function": {"name": "f", "parameters": {"properties": {}}}}]
    assert ToolSchemas.of(openai).knows("f")  # type: ignore[union-attr]
    bare = ToolSchemas.of({"g": {"properties": {"n": {"type": ["integer", "null"]}}}})
    assert bare is not None and bare.param_types("g", "n") == ("null", "integer")
    anyof = ToolSchemas.of({"h": {"properties": {"v": {"anyOf": [{"type": "string"}, {}]}}}})
    assert anyof is not None and anyof.param_types("h", "v") == ("string",)


def test_literals_never_evaluate() -> None:
    assert literal_from_source("[1, -2.5, {'a': (True, None)}, null]") == [
        1,
        -2.5,
        {"a": [True, None]},
        None,
    ]
    for src in ["__import__('os').system('x')", "a + 1", "f()", "b'x'", "float('inf')"]:
        with pytest.raises(NotALiteral):
            literal_from_source(src)


# --------------------------------------------------------------------------
# Output views and registry


def test_parser_output_views_and_concat() -> None:
    a = ParserOutput((TextPiece("hi "), CallOpen(0, None, "f"), CallArgs(0, '{"a"')))
    b = ParserOutput((CallArgs(0, ": 1}"), CallClose(0), ReasoningPiece("r")))
    c = ParserOutput((ParseError("k", "d", "raw"),))
    total = ParserOutput.concat([a, b, c])
    assert total == a + b + c
    assert total.text == "hi " and total.reasoning == "r"
    (call,) = total.calls
    assert (call.name, call.arguments, call.error, call.closed) == ("f", '{"a": 1}', None, True)
    assert [e.kind for e in total.errors] == ["k"]
    assert not ParserOutput()


def test_registry() -> None:
    names = parser_names()
    for required in [
        "passthrough",
        "think",
        "hermes",
        "qwen3_coder",
        "mistral",
        "llama3_json",
        "pythonic",
        "deepseek_v3",
        "deepseek_v31",
        "kimi_k2",
        "glm45",
        "glm47",
        "harmony",
        "deepseek_v32",
        "granite",
    ]:
        assert required in names
        assert isinstance(get_parser(required), ToolCallParser)
    for alias in [
        "qwen",
        "qwen2.5",
        "qwen3",
        "qwen3.5",
        "magistral",
        "llama",
        "gpt_oss",
        "kimi",
        "dsml",
        "granite3",
    ]:
        assert isinstance(get_parser(alias), ToolCallParser)
    with pytest.raises(ValueError, match="hermes"):
        get_parser("nope")
    with pytest.raises(TypeError):
        get_parser("hermes", colour="red")  # type: ignore[call-arg]
    with pytest.raises(ValueError):
        get_parser("hermes", calls_in_reasoning="sometimes")
    with pytest.raises(ValueError):
        get_parser("hermes", reasoning="banana")


def test_custom_reasoning_markers_compose_with_calls() -> None:
    src = '◁think▷plan◁/think▷Ok.<tool_call>{"name": "f", "arguments": {}}</tool_call>'
    out = get_parser("hermes", reasoning=("◁think▷", "◁/think▷")).parse_all(src)
    assert (out.reasoning, out.text) == ("plan", "Ok.")
    assert [c.name for c in out.calls] == ["f"]
    off = get_parser("hermes", reasoning=None).parse_all("<think>x</think>y")
    assert off.text == "<think>x</think>y"


def test_interleaved_reasoning() -> None:
    src = "<think>a</think>Text.<think>b</think>More."
    out = get_parser("think", interleaved_reasoning=True).parse_all(src)
    pieces = [(type(p).__name__, p.text) for p in out.pieces if hasattr(p, "text")]
    assert pieces == [
        ("ReasoningPiece", "a"),
        ("TextPiece", "Text."),
        ("ReasoningPiece", "b"),
        ("TextPiece", "More."),
    ]
    plain = get_parser("think").parse_all(src)
    assert plain.text == "Text.<think>b</think>More."


def test_start_in_reasoning_without_close_stays_reasoning() -> None:
    out = get_parser("deepseek_v31", start_in_reasoning=True).parse_all("still thinking")
    assert (out.reasoning, out.text) == ("still thinking", "")


#: Three calls, whole call per push, for dialects of different families.
THREE_CALLS = {
    "hermes": [
        '<tool_call>{"name": "a", "arguments": {"x": 1}}</tool_call>',
        '<tool_call>{"name": "b", "arguments": {}}</tool_call>',
        '<tool_call>{"name": "c", "arguments": {"y": "z"}}</tool_call>',
    ],
    "deepseek_v32": [
        f"<{DSML}function_calls>\n",
        dsml_call("a", ("x", "1", "false")),
        dsml_call("b"),
        dsml_call("c", ("y", "z", "true")),
        f"</{DSML}function_calls>",
    ],
    "granite": [
        '<function_call> {"name": "a", "arguments": {"x": 1}}',
        ' <function_call> {"name": "b", "arguments": {}}',
        ' <function_call> {"arguments": {"y": "z"}, "name": "c"}',
    ],
}


@pytest.mark.parametrize("dialect", sorted(THREE_CALLS))
def test_three_calls_in_one_push_and_one_push_per_call(dialect: str) -> None:
    """Reference §6.2: whole calls per delta, or all of them in one."""
    calls = THREE_CALLS[dialect]
    whole = fold(dialect, ["".join(calls)])
    each = fold(dialect, calls)
    assert whole.calls == each.calls
    assert [(c.name, c.arguments) for c in whole.calls] == [
        ("a", '{"x": 1}'),
        ("b", "{}"),
        ("c", '{"y": "z"}'),
    ]


def test_argument_bytes_kept_as_generated() -> None:
    args = '{"z": 1,   "a": "\\u00e9 é \\"q\\"",\n "m": [ ]}'
    out = get_parser("hermes").parse_all(
        '<tool_call>{"name": "f", "arguments": ' + args + "}</tool_call>"
    )
    assert out.calls[0].arguments == args
    assert list(json.loads(args)) == ["z", "a", "m"]


def test_every_dialect_is_one_row_of_the_table() -> None:
    from streamnorm.inline import DIALECTS
    from streamnorm.inline.base import ParserKeywords
    from streamnorm.inline.registry import _by_name

    assert parser_names() == [d.name for d in DIALECTS]
    for dialect in DIALECTS:
        options: ParserKeywords = (
            {"open": "<c>", "close": "</c>"} if dialect.name == "delimited" else {}
        )
        for key in (dialect.name, *dialect.aliases):
            parser = get_parser(key, **options)
            assert isinstance(parser, ToolCallParser), key
    with pytest.raises(ValueError, match="'hermes' listed twice"):
        _by_name((DIALECTS[2], DIALECTS[2]))
