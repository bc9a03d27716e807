"""Arbitrary text built from marker fragments, JSON and prose: every parser
must give the same result for any split of the same input, never raise, and
keep every call well formed (one open, one close, arguments only in between).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamnorm.inline import CallArgs, CallClose, CallOpen, ParserOutput, get_parser

from .test_inline_samples import fold, split_at

DIALECTS = [
    "hermes",
    "qwen3_coder",
    "glm45",
    "mistral",
    "llama3_json",
    "pythonic",
    "deepseek_v3",
    "deepseek_v31",
    "deepseek_v32",
    "kimi_k2",
    "harmony",
    "minimax_m2",
    "minimax",
    "seed_oss",
    "internlm",
    "phi4_mini",
    "granite",
    "think",
]

TOKENS = [
    # markers of every dialect, whole and cut
    "<tool_call>",
    "</tool_call>",
    "<tool_",
    "<think>",
    "</think>",
    "<function=f>",
    "</function>",
    "<parameter=a>",
    "</parameter>",
    "<arg_key>k</arg_key>",
    "<arg_value>",
    "</arg_value>",
    "[TOOL_CALLS]",
    "[ARGS]",
    "[THINK]",
    "[/THINK]",
    "<|python_tag|>",
    "<|eom_id|>",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁sep｜>",
    "<｜tool▁call▁end｜>",
    "<｜tool▁calls▁end｜>",
    "<|tool_calls_section_begin|>",
    "<|tool_call_begin|>",
    "functions.f:0",
    "<|tool_call_argument_begin|>",
    "<|tool_call_end|>",
    "<|tool_calls_section_end|>",
    "<|channel|>",
    "analysis",
    "final",
    " to=functions.g",
    "<|message|>",
    "<|end|>",
    "<|call|>",
    "<|start|>assistant",
    "<minimax:tool_call>",
    '<invoke name="f">',
    "</invoke>",
    "<tool_calls>",
    "</tool_calls>",
    "<seed:tool_call>",
    "</seed:tool_call>",
    "<seed:think>",
    "functools",
    "<|action_start|><|plugin|>",
    "<|action_end|>",
    "<｜DSML｜function_calls>",
    "</｜DSML｜function_calls>",
    '<｜DSML｜invoke name="f">',
    "</｜DSML｜invoke>",
    '<｜DSML｜parameter name="a" string="true">',
    '<｜DSML｜parameter name="b" string="false">',
    "</｜DSML｜parameter>",
    "<|DSML|/parameter>",
    "<||DSML||tool_calls>",
    "<｜DSML｜",
    "<|tool_call|>",
    "<function_call>",
    "<response>",
    "</response>",
    "```json",
    "```",
    # JSON and Python pieces
    '{"name": "f", "arguments": ',
    '{"a": "x\\"y"}',
    "{",
    "}",
    "[",
    "]",
    '"',
    "\\",
    ",",
    ":",
    "f(a=1)",
    "get(x='[')",
    "a(",
    "(",
    ")",
    # names and prose
    "f",
    "get_x",
    " ",
    "\n",
    "\t",
    "\x1f",
    "hello",
    "é日",
    "<",
    "a < b",
]


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    dialect=st.sampled_from(DIALECTS),
    parts=st.lists(st.sampled_from(TOKENS), max_size=30),
    cuts=st.lists(st.integers(0, 400), max_size=12),
    data=st.data(),
)
def test_any_split_same_result(
    dialect: str, parts: list[str], cuts: list[int], data: st.DataObject
) -> None:
    text = "".join(parts)
    extract = data.draw(st.sampled_from(["extract", "literal"]))
    start = data.draw(st.booleans())
    options = {"calls_in_reasoning": extract, "start_in_reasoning": start}
    whole = fold(dialect, [text], **options)
    assert same(fold(dialect, split_at(text, cuts), **options), whole)
    per_char = fold(dialect, list(text), **options)
    assert same(per_char, whole)
    check_calls(whole)


def same(a: ParserOutput, b: ParserOutput) -> bool:
    """Equal results: the same pieces once adjacent prose pieces are merged."""
    return merged(a) == merged(b)


def merged(out: ParserOutput) -> tuple[tuple[object, ...], dict[int, str]]:
    result: list[object] = []
    args: dict[int, list[str]] = {}
    for p in out.pieces:
        if isinstance(p, CallArgs):
            args.setdefault(p.call, []).append(p.delta)
            continue
        if result and type(result[-1]) is type(p) and hasattr(p, "text"):
            prev = result.pop()
            result.append(type(p)(prev.text + p.text))  # type: ignore[attr-defined,call-arg]
        else:
            result.append(p)
    return tuple(result), {k: "".join(v) for k, v in args.items()}


def check_calls(out: ParserOutput) -> None:
    state: dict[int, str] = {}
    for p in out.pieces:
        if isinstance(p, CallOpen):
            assert p.call not in state
            state[p.call] = "open"
        elif isinstance(p, CallArgs):
            assert state.get(p.call) == "open"
        elif isinstance(p, CallClose):
            assert state.get(p.call) == "open"
            state[p.call] = "closed"
    assert all(v == "closed" for v in state.values())


@pytest.mark.parametrize("dialect", DIALECTS)
def test_empty_and_whitespace(dialect: str) -> None:
    assert get_parser(dialect).parse_all("") == ParserOutput()
    out = get_parser(dialect).parse_all(" \n ")
    assert out.text in ("", " \n ") and not out.calls


@pytest.mark.parametrize("dialect", ["llama3_json", "pythonic"])
@pytest.mark.parametrize("gap", [" ", "\n", "\x1f", "\t "])
def test_a_call_broken_by_a_stray_closer_reads_the_same_in_any_pieces(
    dialect: str, gap: str
) -> None:
    """``<|python_tag|>a( ]``: the text before the stray ``]`` belongs to the
    broken call whether it arrived with the ``]`` or before it."""
    text = f"<|python_tag|>a({gap}]"
    whole = fold(dialect, [text])
    assert same(fold(dialect, list(text)), whole)
    for cut in range(len(text) + 1):
        assert same(fold(dialect, [text[:cut], text[cut:]]), whole), cut
