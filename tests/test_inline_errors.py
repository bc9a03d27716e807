"""Malformed and truncated calls: reported with their raw text, nothing invented.

Reference §2.5, §2.6, §6.8. Every case is checked whole, per character and
under random splits, like the dialect samples.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from streamnorm.events import Done
from streamnorm.inline import (
    CallArgs,
    CallClose,
    ParseError,
    ParserOutput,
    TextPiece,
    get_parser,
)
from streamnorm.messages import StopReason, TextBlock, ToolCallBlock

from .test_inline_samples import Call, fold, random_splits, run_stream, upstream

D = "｜DSML｜"
CUT = 'Writing it.\n<tool_call>\n{"name": "write", "arguments": {"content": "Filing'


@dataclass(frozen=True)
class Case:
    id: str
    dialect: str
    source: str
    text: str
    calls: tuple[Call, ...]
    errors: tuple[tuple[str, str | None], ...]  # kind, raw (None: not checked)
    reasoning: str = ""
    options: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.id


CASES = [
    # -- truncated inside a string value: call incomplete, raw since the opener
    Case(
        "hermes-cut-in-string",
        "hermes",
        CUT,
        "Writing it.\n",
        (("write", '{"content": "Filing', "incomplete"),),
        (("unclosed_tool_call", CUT[len("Writing it.\n") :]),),
    ),
    Case(
        "qwen3coder-cut-in-value",
        "qwen3_coder",
        "<tool_call>\n<function=write_file>\n<parameter=content>\nline 1\nline",
        "",
        (("write_file", '{"content": "line 1\\nline', "incomplete"),),
        (
            (
                "unclosed_tool_call",
                "<tool_call>\n<function=write_file>\n<parameter=content>\nline 1\nline",
            ),
        ),
    ),
    Case(
        "glm-cut-in-value",
        "glm45",
        "<tool_call>f\n<arg_key>q</arg_key>\n<arg_value>hel",
        "",
        (("f", '{"q": "hel', "incomplete"),),
        (("unclosed_tool_call", "<tool_call>f\n<arg_key>q</arg_key>\n<arg_value>hel"),),
    ),
    Case(
        "mistral-cut-in-args",
        "mistral",
        'Ok.[TOOL_CALLS]write[ARGS]{"content": "ab',
        "Ok.",
        (("write", '{"content": "ab', "incomplete"),),
        (("unclosed_tool_call", '[TOOL_CALLS]write[ARGS]{"content": "ab'),),
    ),
    Case(
        "llama3-cut-in-args",
        "llama3_json",
        '<|python_tag|>{"name": "w", "parameters": {"c": "a\\"b',
        "",
        (("w", '{"c": "a\\"b', "incomplete"),),
        (("unclosed_tool_call", '<|python_tag|>{"name": "w", "parameters": {"c": "a\\"b'),),
    ),
    Case(
        "pythonic-cut-in-call",
        "pythonic",
        '[get_weather(city="Paris"), write(c="ab',
        "",
        (("get_weather", '{"city": "Paris"}', None), ("write", "{", "incomplete")),
        (("unclosed_tool_call", ', write(c="ab'),),
    ),
    Case(
        "deepseek-cut-in-args",
        "deepseek_v3",
        '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{"a": [1, 2',
        "",
        (("f", '{"a": [1, 2', "incomplete"),),
        (("unclosed_tool_call", None),),
    ),
    Case(
        "kimi-cut-in-args",
        "kimi_k2",
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0"
        '<|tool_call_argument_begin|>{"a": "x',
        "",
        (("f", '{"a": "x', "incomplete"),),
        (("unclosed_tool_call", None),),
    ),
    Case(
        "harmony-cut-in-call",
        "harmony",
        '<|channel|>commentary to=functions.f <|constrain|>json<|message|>{"a": "x',
        "",
        (("f", '{"a": "x', "incomplete"),),
        (("unclosed_tool_call", None),),
    ),
    # -- an opener that never got a name: no call
    Case(
        "hermes-unnamed-cut",
        "hermes",
        'Hi <tool_call>\n{"na',
        "Hi ",
        (),
        (("unclosed_tool_call", '<tool_call>\n{"na'),),
    ),
    Case(
        "hermes-unnamed-cut-as-text",
        "hermes",
        'Hi <tool_call>\n{"na',
        'Hi <tool_call>\n{"na',
        (),
        (),
        options={"on_malformed": "text"},
    ),
    Case(
        "mistral-name-cut",
        "mistral",
        "[TOOL_CALLS]get_wea",
        "",
        (),
        (("unclosed_tool_call", "[TOOL_CALLS]get_wea"),),
    ),
    # -- closed blocks that yield no call
    Case(
        "hermes-no-name",
        "hermes",
        'Before <tool_call>{"tool": "x", "arguments": {}}</tool_call> after',
        "Before  after",
        (),
        (("malformed_tool_call", '<tool_call>{"tool": "x", "arguments": {}}</tool_call>'),),
    ),
    Case(
        "hermes-not-json",
        "hermes",
        "<tool_call>{name: f}</tool_call>",
        "",
        (),
        (("malformed_tool_call", "<tool_call>{name: f}</tool_call>"),),
    ),
    Case(
        "hermes-not-json-as-text",
        "hermes",
        "<tool_call>{name: f}</tool_call>",
        "<tool_call>{name: f}</tool_call>",
        (),
        (),
        options={"on_malformed": "text"},
    ),
    Case(
        "hermes-unbalanced-arguments",
        "hermes",
        '<tool_call>{"name": "f", "arguments": {"a": [1}</tool_call>Next.',
        "Next.",
        (("f", '{"a": [1}', "incomplete"),),
        (("malformed_tool_call", None),),
    ),
    Case(
        "hermes-junk-after-call",
        "hermes",
        '<tool_call>{"name": "f", "arguments": {}} trailing</tool_call>',
        "",
        (("f", "{}", None),),
        (("malformed_tool_call", "trailing"),),
    ),
    Case(
        "deepseek-bad-header",
        "deepseek_v31",
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜><｜tool▁sep｜>{}<｜tool▁call▁end｜>"
        "<｜tool▁calls▁end｜>",
        "",
        (),
        (
            (
                "malformed_tool_call",
                "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜><｜tool▁sep｜>{}<｜tool▁call▁end｜>",
            ),
        ),
    ),
    Case(
        "harmony-bad-header",
        "harmony",
        "<|channel|>final <|foo|><|message|>Hi.<|return|>",
        "Hi.",
        (),
        (("malformed_header", "<|channel|>final <|foo|>"),),
    ),
    # -- values that do not fit their schema type
    Case(
        "qwen3coder-invalid-integer",
        "qwen3_coder",
        "<tool_call>\n<function=get_weather>\n<parameter=days>\nmany\n</parameter>\n"
        "</function>\n</tool_call>",
        "",
        (("get_weather", '{"days": "many"}', None),),
        (("invalid_parameter_value", "many"),),
        options={"tools": {"get_weather": {"properties": {"days": {"type": "integer"}}}}},
    ),
    Case(
        "pythonic-non-literal",
        "pythonic",
        "[f(a=1, b=os.getcwd(), 2)]",
        "",
        (("f", '{"a": 1, "b": "os.getcwd()"}', None),),
        (("invalid_parameter_value", "b=os.getcwd()"), ("invalid_parameter_value", "2")),
    ),
    # -- DeepSeek V3.2 DSML
    Case(
        "dsml-cut-in-string-value",
        "deepseek_v32",
        f'Ok.<{D}function_calls>\n<{D}invoke name="w">\n'
        f'<{D}parameter name="n" string="false">2</{D}parameter>\n'
        f'<{D}parameter name="c" string="true">line 1\nli',
        "Ok.",
        (("w", '{"n": 2, "c": "line 1\\nli', "incomplete"),),
        (
            (
                "unclosed_tool_call",
                f'<{D}function_calls>\n<{D}invoke name="w">\n'
                f'<{D}parameter name="n" string="false">2</{D}parameter>\n'
                f'<{D}parameter name="c" string="true">line 1\nli',
            ),
        ),
    ),
    Case(
        "dsml-cut-in-opener",
        "deepseek_v32",
        f"Hi <{D}function_calls>\n<{D}inv",
        "Hi ",
        (),
        (("unclosed_tool_call", f"<{D}function_calls>\n<{D}inv"),),
    ),
    Case(
        "dsml-cut-in-opener-as-text",
        "deepseek_v32",
        f"Hi <{D}function_calls>\n<{D}inv",
        f"Hi <{D}function_calls>\n<{D}inv",
        (),
        (),
        options={"on_malformed": "text"},
    ),
    Case(
        "dsml-missing-block-close",
        "deepseek_v32",
        f'<{D}function_calls>\n<{D}invoke name="f">\n'
        f'<{D}parameter name="a" string="true">x</{D}parameter>\n</{D}invoke>\n',
        "",
        (("f", '{"a": "x"}', None),),
        (("missing_close_marker", ""),),
    ),
    Case(
        "dsml-json-value-not-json",
        "deepseek_v32",
        f'<{D}function_calls><{D}invoke name="f">'
        f'<{D}parameter name="n" string="false">three</{D}parameter>'
        f"</{D}invoke></{D}function_calls>",
        "",
        (("f", '{"n": "three"}', None),),
        (("invalid_parameter_value", "three"),),
    ),
    Case(
        "dsml-junk-in-invoke",
        "deepseek_v32",
        f'<{D}function_calls><{D}invoke name="f">junk</{D}invoke></{D}function_calls>Next.',
        "Next.",
        (("f", "{", "incomplete"),),
        (
            ("malformed_tool_call", f'<{D}function_calls><{D}invoke name="f">'),
            ("malformed_tool_call", f"junk</{D}invoke>"),
        ),
    ),
    Case(
        "dsml-invoke-without-name",
        "deepseek_v32",
        f'<{D}function_calls><{D}invoke name=""></{D}invoke></{D}function_calls>',
        "",
        (),
        (
            (
                "malformed_tool_call",
                f'<{D}function_calls><{D}invoke name=""></{D}invoke></{D}function_calls>',
            ),
        ),
    ),
    # -- Granite
    Case(
        "granite-cut-in-args",
        "granite",
        'Ok.<|tool_call|>[{"name": "w", "arguments": {"c": "a\\"b',
        "Ok.",
        (("w", '{"c": "a\\"b', "incomplete"),),
        (("unclosed_tool_call", '<|tool_call|>[{"name": "w", "arguments": {"c": "a\\"b'),),
    ),
    Case(
        "granite-list-not-closed",
        "granite",
        '<tool_call>[{"name": "f", "arguments": {}}',
        "",
        (("f", "{}", None),),
        (("missing_close_marker", ""),),
    ),
    Case(
        "granite-no-name",
        "granite",
        '<function_call> {"tool": "f", "arguments": {}} Then text.',
        " Then text.",
        (),
        (("malformed_tool_call", '<function_call> {"tool": "f", "arguments": {}}'),),
    ),
    Case(
        "granite-unbalanced-cut-by-next-call",
        "granite",
        '<function_call> {"name": "a", "arguments": {"x": [1}'
        '<function_call> {"name": "b", "arguments": {}}',
        "",
        (("a", '{"x": [1}', "incomplete"), ("b", "{}", None)),
        (("malformed_tool_call", '<function_call> {"name": "a", "arguments": {"x": [1}'),),
    ),
    Case(
        "granite-unnamed-cut",
        "granite",
        'Hi <tool_call>[{"na',
        "Hi ",
        (),
        (("unclosed_tool_call", '<tool_call>[{"na'),),
    ),
    # -- MiniMax M2: a cut inside the invoke header is a cut call, not text
    Case(
        "minimax-m2-cut-in-invoke-opener",
        "minimax_m2",
        "Hi <minimax:tool_call>\n<inv",
        "Hi ",
        (),
        (("unclosed_tool_call", "<minimax:tool_call>\n<inv"),),
    ),
    Case(
        "minimax-m2-cut-in-invoke-opener-as-text",
        "minimax_m2",
        "Hi <minimax:tool_call>\n<inv",
        "Hi <minimax:tool_call>\n<inv",
        (),
        (),
        options={"on_malformed": "text"},
    ),
    Case(
        "minimax-m2-cut-before-name-quote",
        "minimax_m2",
        "<minimax:tool_call>\n<invoke name=",
        "",
        (),
        (("unclosed_tool_call", "<minimax:tool_call>\n<invoke name="),),
    ),
    Case(
        "minimax-m2-prose-mention",
        "minimax_m2",
        "Use <minimax:tool_call> tags; <minimax:tool_call> <i>too</i>.",
        "Use <minimax:tool_call> tags; <minimax:tool_call> <i>too</i>.",
        (),
        (),
    ),
    # -- unknown tool: reported, the call kept
    Case(
        "hermes-unknown-tool",
        "hermes",
        '<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>',
        "",
        (("rm_rf", "{}", None),),
        (("unknown_tool", "rm_rf"),),
        options={"tools": [{"type": "function", "function": {"name": "ls"}}]},
    ),
]


# -- JSON call lists, read by one shared reader for mistral (legacy form),
# phi4_mini and granite: a bad entry costs only itself, and the list's
# brackets and separators never reach the text (reference §2.5, §2.6).
A = '{"name": "a", "arguments": {"x": 1}}'
B = '{"name": "b", "arguments": {}}'
U = '{"arguments": {"y": 2}}'  # an entry without a name
CALL_A: Call = ("a", '{"x": 1}', None)
CALL_B: Call = ("b", "{}", None)
LIST_OPENERS = {"mistral": "[TOOL_CALLS] ", "phi4_mini": "functools", "granite": "<tool_call>"}
AS_TEXT = {"on_malformed": "text"}


def whole_list_cases(closed: Callable[..., Case]) -> list[Case]:
    """A whole call list with bad entries among good ones: the same cases for
    a dialect's bare list and for a list inside a tag block, ``closed``
    being the dialect's case factory that adds what follows the list."""
    return [
        closed("unnamed-first", f"[{U}, {A}]", "Hi ", (CALL_A,), (("malformed_tool_call", U),)),
        closed("unnamed-first-as-text", f"[{U}, {A}]", f"Hi {U}", (CALL_A,), (), options=AS_TEXT),
        closed(
            "unnamed-middle",
            f"[{A}, {U}, {B}]",
            "Hi ",
            (CALL_A, CALL_B),
            (("malformed_tool_call", U),),
        ),
        closed(
            "unnamed-middle-as-text",
            f"[{A}, {U}, {B}]",
            f"Hi {U}",
            (CALL_A, CALL_B),
            (),
            options=AS_TEXT,
        ),
        closed("unnamed-last", f"[{A},{U}]", "Hi ", (CALL_A,), (("malformed_tool_call", U),)),
        closed("unnamed-last-as-text", f"[{A},{U}]", f"Hi {U}", (CALL_A,), (), options=AS_TEXT),
        closed(
            "not-objects",
            f'[{A}, 1, "s]x", null, {B}]',
            "Hi ",
            (CALL_A, CALL_B),
            (
                ("malformed_tool_call", "1"),
                ("malformed_tool_call", '"s]x"'),
                ("malformed_tool_call", "null"),
            ),
        ),
        closed(
            "unreadable-entry",
            f'[{A}, {{"name": 5, "arguments": {{"z": "}}]"}}}}, {B}]',
            "Hi ",
            (CALL_A, CALL_B),
            (("malformed_tool_call", '{"name": 5, "arguments": {"z": "}]"}}'),),
        ),
        closed(
            "entry-broken-after-name",
            f'[{A}, {{"name": "c" "arguments": {{}}}}, {B}]',
            "Hi ",
            (CALL_A, ("c", "", "incomplete"), CALL_B),
            (("malformed_tool_call", '{"name": "c" "arguments": {}}'),),
        ),
    ]


def cut_list_cases(case: Callable[..., Case], op: str) -> list[Case]:
    """A call list cut by the end of the input (a length stop): the same
    cases for a dialect's bare list and for a list inside a tag block,
    ``case`` being the dialect's case factory and ``op`` its opener."""
    return [
        case(
            "cut-after-unnamed",
            f"[{A}, {U}",
            "Hi ",
            (CALL_A,),
            (("malformed_tool_call", U), ("missing_close_marker", "")),
        ),
        case(
            "cut-after-number",
            f"[{A}, 12",
            "Hi ",
            (CALL_A,),
            (("malformed_tool_call", "12"), ("missing_close_marker", "")),
        ),
        case(
            "cut-in-unnamed",
            f'[{A}, {{"argu',
            "Hi ",
            (CALL_A,),
            (("unclosed_tool_call", '{"argu'),),
        ),
        case(
            "cut-in-unnamed-as-text", f'[{A}, {{"argu', 'Hi {"argu', (CALL_A,), (), options=AS_TEXT
        ),
        case("cut-in-string", f'[{A}, "s]', "Hi ", (CALL_A,), (("unclosed_tool_call", '"s]'),)),
        case(
            "cut-no-call",
            f'[{U}, {{"na',
            "Hi ",
            (),
            (("unclosed_tool_call", f'{op}[{U}, {{"na'),),
        ),
        case("cut-no-call-as-text", f'[{U}, {{"na', f'Hi {op}[{U}, {{"na', (), (), options=AS_TEXT),
        case(
            "cut-after-call",
            f"[{U}, {A}",
            "Hi ",
            (CALL_A,),
            (("malformed_tool_call", U), ("missing_close_marker", "")),
        ),
        case("cut-after-bracket", "[ ", "Hi ", (), (("unclosed_tool_call", f"{op}[ "),)),
    ]


def list_cases(dialect: str, op: str) -> list[Case]:
    """The same list shapes for each dialect; ``op`` is its list opener."""
    # `[TOOL_CALLS]` counts only before `[{` (prose may mention the token):
    # a list that starts otherwise stays text there.
    prose_rule = dialect == "mistral"

    def case(
        name: str,
        body: str,
        text: str,
        calls: tuple[Call, ...],
        errors: tuple[tuple[str, str | None], ...],
        **options: Any,
    ) -> Case:
        return Case(
            f"{dialect}-list-{name}", dialect, "Hi " + op + body, text, calls, errors, **options
        )

    def unconfirmed(name: str, body: str) -> Case:
        return case(name, body, "Hi " + op + body, (), ())

    def closed(
        name: str,
        body: str,
        text: str,
        calls: tuple[Call, ...],
        errors: tuple[tuple[str, str | None], ...],
        **options: Any,
    ) -> Case:
        return case(name, body + " bye", text + " bye", calls, errors, **options)

    cases = [
        *whole_list_cases(closed),
        case(
            "no-call",
            f"[{U}, 2] bye",
            "Hi  bye",
            (),
            (("malformed_tool_call", f"{op}[{U}, 2]"),),
        ),
        case("no-call-as-text", f"[{U}, 2] bye", f"Hi {op}[{U}, 2] bye", (), (), options=AS_TEXT),
        # -- the same cut by the end of the input (a length stop)
        *cut_list_cases(case, op),
    ]
    if prose_rule:
        cases += [unconfirmed("empty", "[] bye"), unconfirmed("number-first", f"[1, {A}] bye")]
    else:
        cases += [
            case("empty", "[] bye", "Hi  bye", (), (("malformed_tool_call", f"{op}[]"),)),
            case("empty-as-text", "[] bye", f"Hi {op}[] bye", (), (), options=AS_TEXT),
            case(
                "number-first",
                f"[1, {A}] bye",
                "Hi  bye",
                (CALL_A,),
                (("malformed_tool_call", "1"),),
            ),
        ]
    return cases


CASES += [c for d, op in LIST_OPENERS.items() for c in list_cases(d, op)]
CASES += [
    # A call opener between entries, or right after a scalar entry, ends the list.
    Case(
        "granite-list-cut-by-next-opener",
        "granite",
        f"<tool_call>[{A}, 1<tool_call>[{B}]",
        "",
        (CALL_A, CALL_B),
        (("malformed_tool_call", "1"), ("missing_close_marker", "")),
    ),
    # An entry left open (its object never closed) ends at the next opener.
    Case(
        "phi4-mini-open-entry-cut-by-next-opener",
        "phi4_mini",
        f"functools[{A[:-1]}, functools[{B}]",
        "",
        (CALL_A, CALL_B),
        (("malformed_tool_call", f"functools[{A[:-1]}, "), ("missing_close_marker", "")),
    ),
    Case(
        "mistral-list-cut-by-next-opener",
        "mistral",
        f"[TOOL_CALLS] [{A}, [TOOL_CALLS] [{B}]",
        "",
        (CALL_A, CALL_B),
        (("missing_close_marker", ""),),
    ),
    Case(
        "mistral-scalar-arguments-end-at-next-opener",
        "mistral",
        "[TOOL_CALLS]f[ARGS]123[TOOL_CALLS]g[ARGS]{}",
        "",
        (("f", "123", None), ("g", "{}", None)),
        (),
    ),
]


# -- The same for the JSON bodies of tag blocks (hermes, jamba, minimax), read
# by the same entry reader: a JSON list, or a sequence of objects.
BLOCKS = {
    "hermes": ("<tool_call>", "</tool_call>"),
    "jamba": ("<tool_calls>", "</tool_calls>"),
    "minimax": ("<tool_calls>", "</tool_calls>"),
}


def block_cases(dialect: str, op: str, close: str) -> list[Case]:
    """List and sequence shapes inside one block; ``op``/``close`` its markers."""

    def case(
        name: str,
        body: str,
        text: str,
        calls: tuple[Call, ...],
        errors: tuple[tuple[str, str | None], ...],
        **options: Any,
    ) -> Case:
        return Case(
            f"{dialect}-block-{name}", dialect, "Hi " + op + body, text, calls, errors, **options
        )

    def closed(
        name: str,
        body: str,
        text: str,
        calls: tuple[Call, ...],
        errors: tuple[tuple[str, str | None], ...],
        **options: Any,
    ) -> Case:
        return case(name, body + close + " bye", text + " bye", calls, errors, **options)

    whole = f"{op}[{U}, 2]{close}"
    cases = [
        # -- a JSON list
        *whole_list_cases(closed),
        closed("number-first", f"[1, {A}]", "Hi ", (CALL_A,), (("malformed_tool_call", "1"),)),
        closed(
            "entry-cut-by-close",
            f'[{A}, {{"name": "c", "arguments": {{"q": [1}}',
            "Hi ",
            (CALL_A, ("c", '{"q": [1}', "incomplete")),
            (("malformed_tool_call", '{"name": "c", "arguments": {"q": [1}'),),
        ),
        closed("no-call", f"[{U}, 2]", "Hi ", (), (("malformed_tool_call", whole),)),
        closed("no-call-as-text", f"[{U}, 2]", f"Hi {whole}", (), (), options=AS_TEXT),
        closed("empty", "[]", "Hi ", (), (("malformed_tool_call", f"{op}[]{close}"),)),
        closed("empty-as-text", "[]", f"Hi {op}[]{close}", (), (), options=AS_TEXT),
        # -- a sequence of objects (one per line, as MiniMax M1 writes them)
        closed("seq-unnamed-first", f"{U}\n{A}\n", "Hi ", (CALL_A,), (("malformed_tool_call", U),)),
        closed(
            "seq-unnamed-first-as-text", f"{U}\n{A}\n", f"Hi {U}", (CALL_A,), (), options=AS_TEXT
        ),
        closed(
            "seq-unnamed-middle",
            f"{A}\n{U}\n{B}",
            "Hi ",
            (CALL_A, CALL_B),
            (("malformed_tool_call", U),),
        ),
        closed(
            "seq-unnamed-middle-as-text",
            f"{A}\n{U}\n{B}",
            f"Hi {U}",
            (CALL_A, CALL_B),
            (),
            options=AS_TEXT,
        ),
        closed("seq-unnamed-last", f"{A}\n{U}", "Hi ", (CALL_A,), (("malformed_tool_call", U),)),
        closed(
            "seq-not-objects",
            f'{A}\n1\n"s"\n{B},\n{{"name": 5}}\n',
            "Hi ",
            (CALL_A, CALL_B),
            (("malformed_tool_call", '1\n"s"'), ("malformed_tool_call", '{"name": 5}')),
        ),
        closed(
            "seq-text-between",
            f"{A}\nand then\n{B}",
            "Hi ",
            (CALL_A, CALL_B),
            (("malformed_tool_call", "and then"),),
        ),
        closed(
            "seq-text-between-as-text",
            f"{A}\nand then\n{B}",
            "Hi and then",
            (CALL_A, CALL_B),
            (),
            options=AS_TEXT,
        ),
        closed(
            "seq-no-call",
            f"{U}\n{U}",
            "Hi ",
            (),
            (("malformed_tool_call", f"{op}{U}\n{U}{close}"),),
        ),
        # -- cut by the end of the input (a length stop)
        *cut_list_cases(case, op),
        case(
            "seq-cut-in-unnamed",
            f'{A}\n{{"argu',
            "Hi ",
            (CALL_A,),
            (("unclosed_tool_call", '{"argu'),),
        ),
        case(
            "seq-cut-after-unnamed",
            f"{A}\n{U}\n",
            "Hi ",
            (CALL_A,),
            (("malformed_tool_call", U), ("missing_close_marker", "")),
        ),
        case(
            "seq-cut-in-text",
            f"{A}\nand th",
            "Hi ",
            (CALL_A,),
            (("malformed_tool_call", "and th"), ("missing_close_marker", "")),
        ),
    ]
    if dialect == "hermes":  # only `<tool_call>` is confirmed by a fence
        cases.append(
            closed(
                "fenced-list",
                f"```json\n[{U}, {A}]\n```",
                "Hi ",
                (CALL_A,),
                (("malformed_tool_call", U),),
            )
        )
    return cases


CASES += [c for d, (op, close) in BLOCKS.items() for c in block_cases(d, op, close)]


def check(case: Case, chunks: list[str]) -> None:
    out = fold(case.dialect, chunks, **case.options)
    assert out.text == case.text
    assert out.reasoning == case.reasoning
    assert tuple((c.name, c.arguments, c.error) for c in out.calls) == case.calls
    assert all(c.closed for c in out.calls)
    assert len(out.errors) == len(case.errors), out.errors
    for got, (kind, raw) in zip(out.errors, case.errors, strict=True):
        assert got.kind == kind
        if raw is not None:
            assert got.raw == raw


@pytest.mark.parametrize("case", CASES, ids=str)
def test_whole_per_char_and_split(case: Case) -> None:
    check(case, [case.source])
    check(case, list(case.source))
    for chunks in random_splits(case.source, 200, seed=7):
        check(case, chunks)


def test_parse_all_equals_push_and_finish() -> None:
    for case in CASES:
        a = get_parser(case.dialect, **case.options).parse_all(case.source)
        p = get_parser(case.dialect, **case.options)
        b = p.push_text(case.source) + p.finish()
        assert a == b


def test_finish_twice_and_push_after_finish_raise() -> None:
    p = get_parser("hermes")
    p.finish()
    with pytest.raises(RuntimeError):
        p.finish()
    with pytest.raises(RuntimeError):
        p.push_text("x")


def markup(dialect: str, body: str) -> str:
    """``body`` inside the dialect's call markup: after a list opener, or
    between a block's markers."""
    if dialect in BLOCKS:
        op, close = BLOCKS[dialect]
        return op + body + close
    return LIST_OPENERS[dialect] + body


ENTRY_DIALECTS = sorted([*LIST_OPENERS, *BLOCKS])


@pytest.mark.parametrize("dialect", ENTRY_DIALECTS)
def test_list_entry_before_the_first_call_comes_first(dialect: str) -> None:
    """An unnamed entry ahead of the list's first call is reported (or becomes
    text) before that call opens, in source order, for any split."""
    src = "Hi " + markup(dialect, f"[{U}, {A}]") + " bye"
    for options, want in (
        ({}, [TextPiece, ParseError, "a", TextPiece]),
        (AS_TEXT, [TextPiece, "a", TextPiece]),
    ):
        for chunks in [[src], list(src), *random_splits(src, 50, seed=3)]:
            order: list[object] = []
            for p in fold(dialect, chunks, **options).pieces:
                kind: object = getattr(p, "name", type(p))
                framing = isinstance(p, (CallArgs, CallClose))
                if not framing and (not order or order[-1] != kind):
                    order.append(kind)
            assert order == want, chunks


@pytest.mark.parametrize("dialect", ENTRY_DIALECTS)
def test_list_cut_by_length_through_the_stream(dialect: str) -> None:
    """Reference §6.8: a list cut inside an unnamed entry keeps its whole calls,
    reports the cut entry, leaks no list framing, and the stop reason stays."""
    op = BLOCKS[dialect][0] if dialect in BLOCKS else LIST_OPENERS[dialect]
    src = "Hi " + op + f'[{A}, {U}, {{"na'
    events = run_stream(dialect, upstream(list(src), stop=StopReason.LENGTH))
    done = events[-1]
    assert isinstance(done, Done)
    assert done.message.stop_reason == StopReason.LENGTH
    content = done.message.content
    assert "".join(b.text for b in content if isinstance(b, TextBlock)) == "Hi "
    calls = [(b.name, b.raw_arguments, b.error) for b in content if isinstance(b, ToolCallBlock)]
    assert calls == [CALL_A]


@pytest.mark.parametrize("dialect", ENTRY_DIALECTS)
def test_long_list_in_small_chunks(dialect: str) -> None:
    """A long list of good and bad entries, fed three characters at a time:
    every good entry is a call and every bad one its own error, and once a
    call has opened the raw text kept for error reports never spans more
    than the entry being read (what keeps the work linear)."""
    entries = [A, U, "7", B] * 300
    src = "Hi " + markup(dialect, "[" + ", ".join(entries) + "]") + " bye"
    p = get_parser(dialect)
    outs = []
    longest = 0
    for i in range(0, len(src), 3):
        outs.append(p.push_text(src[i : i + 3]))
        log = p._text.cur.log  # type: ignore[attr-defined]
        if log is not None and i > 200:
            longest = max(longest, len("".join(log)))
    outs.append(p.finish())
    out = ParserOutput.concat(outs)
    assert out.text == "Hi  bye"
    assert [(c.name, c.arguments, c.error) for c in out.calls] == [CALL_A, CALL_B] * 300
    assert [e.raw for e in out.errors] == [U, "7"] * 300
    assert longest <= max(len(e) for e in entries) + 4
