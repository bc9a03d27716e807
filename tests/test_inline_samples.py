"""Hand-written model outputs per dialect, with their golden parse, and helpers.

Each :class:`Sample` is a realistic output of one model family and what the
parser must make of it: text, reasoning, calls (name, raw arguments, error)
and error kinds. The dialect tests feed every sample whole, one character at
a time and under random re-splitting, and compare with these goldens.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from streamnorm.events import BlockEnd, Done, Event, Start, TextDelta
from streamnorm.inline import NormalizingStream, ParserOutput, get_parser
from streamnorm.messages import AssistantMessage, StopReason, TextBlock, Usage

Call = tuple[str, str, str | None]  # name, raw arguments, error


@dataclass(frozen=True)
class Sample:
    id: str
    dialect: str
    source: str
    text: str
    calls: tuple[Call, ...] = ()
    reasoning: str = ""
    errors: tuple[str, ...] = ()
    options: dict[str, Any] = field(default_factory=dict)
    # Substrings that must never appear in any output text (marker residue).
    residue: tuple[str, ...] = ()
    ids: tuple[str | None, ...] | None = None

    def __str__(self) -> str:
        return self.id


WEATHER_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": "integer"},
                    "metric": {"type": "boolean"},
                },
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            },
        },
    },
]

HERMES_RESIDUE = ("<tool_call", "tool_call>", "<think", "think>")

SAMPLES: list[Sample] = [
    # ---------------------------------------------------------------- hermes
    Sample(
        "hermes-text-two-calls-text",
        "hermes",
        'Let me check both cities.\n<tool_call>\n{"name": "get_weather", "arguments": '
        '{"city": "Paris", "unit": "c"}}\n</tool_call>\n<tool_call>\n{"arguments": '
        '{"city": "Zürich",  "note": "say \\"grüezi\\" \\u00e9"}, "name": "get_weather"}\n'
        "</tool_call>\nI will report back.",
        text="Let me check both cities.\n\nI will report back.",
        calls=(
            ("get_weather", '{"city": "Paris", "unit": "c"}', None),
            ("get_weather", '{"city": "Zürich",  "note": "say \\"grüezi\\" \\u00e9"}', None),
        ),
        residue=HERMES_RESIDUE,
    ),
    Sample(
        "hermes-three-calls-one-block-list",
        "hermes",
        '<tool_call>\n[{"name": "a", "arguments": {"x": [1, 2, {"y": "]}"}]}}, '
        '{"name": "b", "arguments": {}}, {"name": "c"}]\n</tool_call>',
        text="",
        calls=(("a", '{"x": [1, 2, {"y": "]}"}]}', None), ("b", "{}", None), ("c", "{}", None)),
        residue=HERMES_RESIDUE,
    ),
    Sample(
        "hermes-three-calls-back-to-back",
        "hermes",
        '<tool_call>{"name": "a", "arguments": {"k": 1}}</tool_call><tool_call>{"name": "b", '
        '"arguments": {}}</tool_call><tool_call>{"name": "c", "arguments": {"s": "日本語 🌍"}}'
        "</tool_call>",
        text="",
        calls=(("a", '{"k": 1}', None), ("b", "{}", None), ("c", '{"s": "日本語 🌍"}', None)),
        residue=HERMES_RESIDUE,
    ),
    Sample(
        "hermes-marker-in-prose",
        "hermes",
        "Wrap each call in a <tool_call> tag, like <tool_call>name</tool_call>; the "
        "</tool_call> tag ends it. Comparisons like a<b stay too.",
        text="Wrap each call in a <tool_call> tag, like <tool_call>name</tool_call>; the "
        "</tool_call> tag ends it. Comparisons like a<b stay too.",
    ),
    Sample(
        "hermes-fenced-json",
        "hermes",
        'Sure.\n<tool_call>\n```json\n{"name": "search", "arguments": {"q": "a\\nb"}}\n```\n'
        "</tool_call>",
        text="Sure.\n",
        calls=(("search", '{"q": "a\\nb"}', None),),
        residue=HERMES_RESIDUE,
    ),
    Sample(
        "hermes-double-encoded-arguments",
        "hermes",
        '<tool_call>\n{"name": "f", "arguments": "{\\"path\\": \\"C:\\\\\\\\tmp\\", '
        '\\"n\\": 2}"}\n</tool_call>',
        text="",
        calls=(("f", '{"path": "C:\\\\tmp", "n": 2}', None),),
        residue=HERMES_RESIDUE,
    ),
    Sample(
        "hermes-missing-final-close",
        "hermes",
        'Checking.\n<tool_call>\n{"name": "get_time", "arguments": {"tz": "UTC"}}\n',
        text="Checking.\n",
        calls=(("get_time", '{"tz": "UTC"}', None),),
        errors=("missing_close_marker",),
        residue=HERMES_RESIDUE,
    ),
    Sample(
        "hermes-think-then-call",
        "hermes",
        "<think>\nThe user wants weather. I should call get_weather.\n</think>\n\n"
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>',
        reasoning="\nThe user wants weather. I should call get_weather.\n",
        text="",
        calls=(("get_weather", '{"city": "Oslo"}', None),),
        residue=HERMES_RESIDUE,
    ),
    Sample(
        "hermes-rehearsed-call-in-think-literal",
        "hermes",
        '<think>\nI could write <tool_call>\n{"name": "get_weather", "arguments": {"city": '
        '"Rome"}}\n</tool_call> here.\n</think>\n\nOK.\n<tool_call>\n{"name": "get_weather", '
        '"arguments": {"city": "Rome"}}\n</tool_call>',
        reasoning='\nI could write <tool_call>\n{"name": "get_weather", "arguments": {"city": '
        '"Rome"}}\n</tool_call> here.\n',
        text="\n\nOK.\n",
        calls=(("get_weather", '{"city": "Rome"}', None),),
    ),
    Sample(
        "hermes-rehearsed-call-in-think-extract",
        "hermes",
        '<think>\nLet me call.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": '
        '"Rome"}}\n</tool_call>\n</think>\n\nDone.',
        reasoning="\nLet me call.\n",
        text="\n\nDone.",
        calls=(("get_weather", '{"city": "Rome"}', None),),
        errors=("stray_reasoning_close",),
        options={"calls_in_reasoning": "extract"},
        residue=HERMES_RESIDUE,
    ),
    Sample(
        "hermes-start-in-reasoning",
        "hermes",
        "Thinking without an opener.\n</think>\n\nThe answer is 4.",
        reasoning="Thinking without an opener.\n",
        text="\n\nThe answer is 4.",
        options={"start_in_reasoning": True},
        residue=HERMES_RESIDUE,
    ),
    Sample(
        "hermes-stray-close",
        "hermes",
        "</think>\n\nHello there.",
        text="\n\nHello there.",
        errors=("stray_reasoning_close",),
        residue=HERMES_RESIDUE,
    ),
    Sample(
        "hermes-think-mid-text-is-literal",
        "hermes",
        "Use <think> tags in HTML? No: <think> is not HTML.",
        text="Use <think> tags in HTML? No: <think> is not HTML.",
    ),
    Sample(
        "hermes-xml-body",
        "hermes",
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
        "</function>\n</tool_call>",
        text="",
        calls=(("get_weather", '{"city": "Paris"}', None),),
        residue=HERMES_RESIDUE,
    ),
    Sample(
        "hermes-empty-arguments-and-odd-whitespace",
        "hermes",
        '<tool_call>\n{ "name" : "ping" , "arguments" :{  } }\n</tool_call>\n'
        '<tool_call>{"name":"pong","arguments":{"a" :1,\t"b":  [ ]}}</tool_call>',
        text="",
        calls=(("ping", "{  }", None), ("pong", '{"a" :1,\t"b":  [ ]}', None)),
        residue=HERMES_RESIDUE,
    ),
    Sample(
        "hermes-openai-style-nesting",
        "hermes",
        '<tool_call>{"type": "function", "function": {"name": "f", "arguments": {"a": 1}}}'
        "</tool_call>",
        text="",
        calls=(("f", '{"a": 1}', None),),
    ),
]

QWEN_FILE = (
    's = "</parameter>"\n'
    't = "</function>"  # a closer in code\n'
    'u = "</tool_call>"\n'
    'doc = """\n<parameter=x>1</parameter>\n</function>\nnot the end\n"""\n'
    "print(s, t, u, '日本')\n"
)
QWEN_RESIDUE = ("<tool_call", "tool_call>", "<function", "<parameter", "</parameter")

SAMPLES += [
    # ----------------------------------------------------------- qwen3_coder
    Sample(
        "qwen3coder-write-file-literal-closers",
        "qwen3_coder",
        "I'll create the file.\n<tool_call>\n<function=write_file>\n<parameter=path>\n"
        "tpl/gen.py\n</parameter>\n<parameter=content>\n" + QWEN_FILE + "</parameter>\n"
        "</function>\n</tool_call>\nDone — the file is written.",
        text="I'll create the file.\n\nDone — the file is written.",
        calls=(
            (
                "write_file",
                '{"path": "tpl/gen.py", "content": '
                + json.dumps(QWEN_FILE[:-1], ensure_ascii=False)
                + "}",
                None,
            ),
        ),
        options={"tools": WEATHER_TOOLS},
        residue=QWEN_RESIDUE,
    ),
    Sample(
        "qwen3coder-two-functions-typed",
        "qwen3_coder",
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nSão Paulo\n</parameter>\n"
        "<parameter=days>\n3\n</parameter>\n<parameter=metric>\nTrue\n</parameter>\n"
        "</function>\n<function=get_time>\n</function>\n</tool_call>",
        text="",
        calls=(
            ("get_weather", '{"city": "São Paulo", "days": 3, "metric": true}', None),
            ("get_time", "{}", None),
        ),
        errors=("unknown_tool",),
        options={"tools": WEATHER_TOOLS},
        residue=QWEN_RESIDUE,
    ),
    Sample(
        "qwen3coder-no-schema-conversion",
        "qwen3_coder",
        "<tool_call>\n<function=f>\n<parameter=n>\n-12.5\n</parameter>\n<parameter=obj>\n"
        '{"a": [1, true]}\n</parameter>\n<parameter=s>\n123 Main St\n</parameter>\n'
        "<parameter=multi>\n\nline one\n  line two\n\n</parameter>\n</function>\n</tool_call>",
        text="",
        calls=(
            (
                "f",
                '{"n": -12.5, "obj": {"a": [1, true]}, "s": "123 Main St", '
                '"multi": "\\nline one\\n  line two\\n"}',
                None,
            ),
        ),
        residue=QWEN_RESIDUE,
    ),
    Sample(
        "qwen3coder-implicit-close-and-bad-value",
        "qwen3_coder",
        "Checking.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n"
        "<parameter=days>\nthree\n</parameter>\n</function>\n</tool_call>",
        text="Checking.\n",
        calls=(("get_weather", '{"city": "Paris", "days": "three"}', None),),
        errors=("invalid_parameter_value",),
        options={"tools": WEATHER_TOOLS},
        residue=QWEN_RESIDUE,
    ),
    Sample(
        "qwen3coder-call-inside-reasoning",
        "qwen3_coder",
        "<think>\nThe user wants a file. Writing it now.\n<tool_call>\n<function=write_file>\n"
        "<parameter=path>\na.txt\n</parameter>\n<parameter=content>\nhi\n</parameter>\n"
        "</function>\n</tool_call>",
        reasoning="\nThe user wants a file. Writing it now.\n",
        text="",
        calls=(("write_file", '{"path": "a.txt", "content": "hi"}', None),),
        options={"tools": WEATHER_TOOLS},
        residue=QWEN_RESIDUE,
    ),
    Sample(
        "qwen3coder-marker-in-prose",
        "qwen3_coder",
        "Qwen3-Coder wraps calls in <tool_call> and <function=name> tags; "
        "a <parameter=x> holds a value.",
        text="Qwen3-Coder wraps calls in <tool_call> and <function=name> tags; "
        "a <parameter=x> holds a value.",
    ),
    # ------------------------------------------------------------------ glm45
    Sample(
        "glm45-text-and-calls",
        "glm45",
        "Checking both.\n<tool_call>get_weather\n<arg_key>city</arg_key>\n"
        "<arg_value>北京</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n"
        "</tool_call>\n<tool_call>get_time\n</tool_call>\nBack soon.",
        text="Checking both.\n\nBack soon.",
        calls=(("get_weather", '{"city": "北京", "days": 3}', None), ("get_time", "{}", None)),
        residue=("<tool_call", "arg_key", "arg_value"),
    ),
    Sample(
        "glm47-no-newlines",
        "glm47",
        "<think>Weather first.</think><tool_call>get_weather<arg_key>city</arg_key>"
        "<arg_value>Paris</arg_value><arg_key>note</arg_key><arg_value>a</arg_value> b"
        "</arg_value></tool_call><tool_call>get_time</tool_call>",
        reasoning="Weather first.",
        text="",
        calls=(
            ("get_weather", '{"city": "Paris", "note": "a</arg_value> b"}', None),
            ("get_time", "{}", None),
        ),
        residue=("<tool_call", "arg_key", "<think"),
    ),
    Sample(
        "glm45-marker-in-prose",
        "glm45",
        "GLM writes <tool_call> blocks with <arg_key> tags.",
        text="GLM writes <tool_call> blocks with <arg_key> tags.",
    ),
    # ---------------------------------------------------------------- mistral
    Sample(
        "mistral-v11-two-calls",
        "mistral",
        'Let me look.[TOOL_CALLS]get_weather[ARGS]{"city": "Paris", "unit": "°C"}'
        "[TOOL_CALLS]get_time[ARGS] {}",
        text="Let me look.",
        calls=(("get_weather", '{"city": "Paris", "unit": "°C"}', None), ("get_time", "{}", None)),
        residue=("[TOOL", "CALLS]", "[ARGS", "ARGS]"),
    ),
    Sample(
        "mistral-legacy-list",
        "mistral",
        '[TOOL_CALLS] [{"name": "add", "arguments": {"a": 1, "b": 2}}, '
        '{"name": "mul", "arguments": {"a": 3, "b": [4]}}]',
        text="",
        calls=(("add", '{"a": 1, "b": 2}', None), ("mul", '{"a": 3, "b": [4]}', None)),
        residue=("[TOOL", "CALLS]"),
    ),
    Sample(
        "mistral-think-call-text",
        "mistral",
        '[THINK]The user asks 2+3.[/THINK]I will compute.[TOOL_CALLS]add{"a": 2, "b": 3}'
        " Then I report.",
        reasoning="The user asks 2+3.",
        text="I will compute. Then I report.",
        calls=(("add", '{"a": 2, "b": 3}', None),),
        residue=("[TOOL", "[THINK", "THINK]"),
    ),
    Sample(
        "mistral-call-id-and-prose-mention",
        "mistral",
        "The [TOOL_CALLS] token marks calls.[TOOL_CALLS]f[CALL_ID]a1b2c3d4e[ARGS]{}",
        text="The [TOOL_CALLS] token marks calls.",
        calls=(("f", "{}", None),),
        ids=("a1b2c3d4e",),
    ),
    # ------------------------------------------------------------ llama3_json
    Sample(
        "llama3-python-tag-two-calls",
        "llama3_json",
        '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}; '
        '{"name": "get_time", "parameters": {}}<|eom_id|>',
        text="",
        calls=(("get_weather", '{"city": "Paris"}', None), ("get_time", "{}", None)),
        residue=("<|python_tag|>", "<|eom", "<|"),
    ),
    Sample(
        "llama3-bare-json-at-start",
        "llama3_json",
        '\n{"type": "function", "name": "search", "arguments": {"q": "naïve \\"quotes\\""}}',
        text="\n",
        calls=(("search", '{"q": "naïve \\"quotes\\""}', None),),
    ),
    Sample(
        "llama3-json-in-prose",
        "llama3_json",
        'The call looks like {"name": "x", "parameters": {}} and <|python_tag|> starts code.',
        text='The call looks like {"name": "x", "parameters": {}} and <|python_tag|> starts code.',
    ),
    Sample(
        "llama3-builtin",
        "llama3_json",
        "<|python_tag|>brave_search.call(query=\"weather in Paris, 'today'\")<|eom_id|>",
        text="",
        calls=(("brave_search", '{"query": "weather in Paris, \'today\'"}', None),),
    ),
    # ---------------------------------------------------------------- pythonic
    Sample(
        "pythonic-list",
        "pythonic",
        "[get_weather(city=\"San Francisco\", unit='c', days=3), get_time(), "
        'a.b.lookup(ids=[1, 2], opts={\'deep\': True, "n": None}, s="日本)")]',
        text="",
        calls=(
            ("get_weather", '{"city": "San Francisco", "unit": "c", "days": 3}', None),
            ("get_time", "{}", None),
            (
                "a.b.lookup",
                '{"ids": [1, 2], "opts": {"deep": true, "n": null}, "s": "日本)"}',
                None,
            ),
        ),
    ),
    Sample(
        "pythonic-wrapped-llama4",
        "pythonic",
        '<|python_start|>[search(q="a, b", flag=false)]<|python_end|>',
        text="",
        calls=(("search", '{"q": "a, b", "flag": false}', None),),
        residue=("<|python",),
    ),
    Sample(
        "pythonic-prose-lists",
        "pythonic",
        "Calls look like [f(x=1)]; a list [1, 2] or [see(docs)] stays text.",
        text="Calls look like [f(x=1)]; a list [1, 2] or [see(docs)] stays text.",
    ),
    # -------------------------------------------------------------- deepseek
    Sample(
        "deepseek-v3-two-calls",
        "deepseek_v3",
        "Let me check.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>"
        'get_weather\n```json\n{"city": "Paris"}\n```<｜tool▁call▁end｜>\n'
        "<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_time\n```json\n{}\n```"
        "<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        text="Let me check.",
        calls=(("get_weather", '{"city": "Paris"}', None), ("get_time", "{}", None)),
        residue=("<｜", "｜>", "```"),
    ),
    Sample(
        "deepseek-r1-prefilled-think-misspelt",
        "deepseek_v3",
        "The user wants weather.\n</think>\n\n<｜tool_calls_begin｜><｜tool▁call▁begin｜>"
        'function<｜tool▁sep｜>get_weather\n```json\n{"city": "Lyon"}\n```'
        "<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        reasoning="The user wants weather.\n",
        text="",
        calls=(("get_weather", '{"city": "Lyon"}', None),),
        options={"start_in_reasoning": True},
        residue=("<｜", "｜>"),
    ),
    Sample(
        "deepseek-v31-call",
        "deepseek_v31",
        "Sure.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>"
        '{"city": "Paris", "q": "<｜x"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        text="Sure.",
        calls=(("get_weather", '{"city": "Paris", "q": "<｜x"}', None),),
    ),
    Sample(
        "deepseek-v3-prose-mentions-and-text-after",
        "deepseek_v3",
        "Use <｜tool▁call▁begin｜> carefully.\nThen <｜tool▁calls▁begin｜> too."
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{}\n```"
        "<｜tool▁call▁end｜><｜tool▁calls▁end｜> Done.",
        text="Use <｜tool▁call▁begin｜> carefully.\nThen <｜tool▁calls▁begin｜> too. Done.",
        calls=(("f", "{}", None),),
    ),
    Sample(
        "deepseek-v31-thinking-mode",
        "deepseek_v31",
        "Need <｜tool▁call▁begin｜> syntax? No.</think>Checking.<｜tool▁calls▁begin｜>"
        '<｜tool▁call▁begin｜>a<｜tool▁sep｜>{"x": 1}<｜tool▁call▁end｜>'
        "<｜tool▁call▁begin｜>b<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        reasoning="Need <｜tool▁call▁begin｜> syntax? No.",
        text="Checking.",
        calls=(("a", '{"x": 1}', None), ("b", "{}", None)),
        options={"start_in_reasoning": True},
    ),
    # ------------------------------------------------------------------ kimi
    Sample(
        "kimi-k2-thinking-section-before-close",
        "kimi_k2",
        "<think>I need the weather. <|tool_calls_section_begin|><|tool_call_begin|>"
        'functions.get_weather:0<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|>'
        "<|tool_call_begin|>functions.get-time:1<|tool_call_argument_begin|>{}"
        "<|tool_call_end|><|tool_calls_section_end|></think>",
        reasoning="I need the weather. ",
        text="",
        calls=(("get_weather", '{"city": "Paris"}', None), ("get-time", "{}", None)),
        errors=("stray_reasoning_close",),
        ids=("functions.get_weather:0", "functions.get-time:1"),
        residue=("<|", "|>"),
    ),
    Sample(
        "kimi-k2-text-call-text",
        "kimi_k2",
        "Looking it up.<|tool_calls_section_begin|> <|tool_call_begin|> functions.search:7 "
        '<|tool_call_argument_begin|> {"q": "日本"} <|tool_call_end|> <|tool_calls_section_end|>'
        " Also, <|tool_calls_section_begin|> is the marker.",
        text="Looking it up. Also, <|tool_calls_section_begin|> is the marker.",
        calls=(("search", '{"q": "日本"}', None),),
        ids=("functions.search:7",),
    ),
    # --------------------------------------------------------------- harmony
    Sample(
        "harmony-analysis-call-final",
        "harmony",
        "<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant<|channel|>"
        'commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}'
        "<|call|>\n<|channel|>final<|message|>It is sunny.<|return|>",
        reasoning="Need the weather.",
        text="It is sunny.",
        calls=(("get_weather", '{"city":"Paris"}', None),),
        residue=("<|", "|>", "analysis", "commentary"),
    ),
    Sample(
        "harmony-recipient-first-and-analysis-call",
        "harmony",
        "<|channel|>analysis<|message|>Search first.<|end|><|start|>assistant to=browser.search"
        '<|channel|>analysis code<|message|>{"query": "x"}<|call|><|start|>assistant'
        "<|channel|>commentary<|message|>Let me also check.<|end|><|start|>assistant"
        '<|channel|>commentary to=functions.lookup json<|message|>{"id": 1}<|call|>',
        reasoning="Search first.",
        text="Let me also check.",
        calls=(("browser.search", '{"query": "x"}', None), ("lookup", '{"id": 1}', None)),
        residue=("<|", "|>"),
    ),
    Sample(
        "harmony-final-mentions-token",
        "harmony",
        "<|channel|>final<|message|>The <|channel|> token starts a header.<|return|>",
        text="The <|channel|> token starts a header.",
    ),
    # ------------------------------------------------- other block dialects
    Sample(
        "jamba-array",
        "jamba",
        'Sure.\n<tool_calls>[{"name": "get_weather", "arguments": {"city": "Paris"}}, '
        '{"name": "get_time", "arguments": {}}]</tool_calls>',
        text="Sure.\n",
        calls=(("get_weather", '{"city": "Paris"}', None), ("get_time", "{}", None)),
        residue=("<tool_calls", "tool_calls>"),
    ),
    Sample(
        "minimax-m1-lines",
        "minimax",
        "<think>\nTwo lookups.\n</think>\n<tool_calls>\n"
        '{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
        '{"name": "get_time", "arguments": {}}\n</tool_calls>',
        reasoning="\nTwo lookups.\n",
        text="",
        calls=(("get_weather", '{"city": "Paris"}', None), ("get_time", "{}", None)),
        residue=("<tool_calls", "<think"),
    ),
    Sample(
        "minimax-m2-interleaved",
        "minimax_m2",
        "<think>Weather needed.</think>\nChecking.<minimax:tool_call>\n"
        '<invoke name="get_weather">\n<parameter name="city">Paris</parameter>\n'
        '<parameter name="days">2</parameter>\n</invoke>\n</minimax:tool_call>'
        "<think>Got it.</think>It is sunny.",
        reasoning="Weather needed.Got it.",
        text="\nChecking.It is sunny.",
        calls=(("get_weather", '{"city": "Paris", "days": 2}', None),),
        options={"tools": WEATHER_TOOLS},
        residue=("<minimax", "<invoke", "<parameter", "<think"),
    ),
    Sample(
        "seed-oss",
        "seed_oss",
        "<seed:think>Budget: 512 tokens. <seed:cot_budget_reflect>used 10</seed:cot_budget_reflect>"
        "</seed:think>Let me check.<seed:tool_call>\n<function=get_weather>\n"
        "<parameter=city>\nParis\n</parameter>\n</function>\n</seed:tool_call>",
        reasoning="Budget: 512 tokens. <seed:cot_budget_reflect>used 10</seed:cot_budget_reflect>",
        text="Let me check.",
        calls=(("get_weather", '{"city": "Paris"}', None),),
        residue=("<seed:tool", "<function", "</seed:think"),
    ),
    Sample(
        "internlm-plugin",
        "internlm",
        "I will search.<|action_start|><|plugin|>\n"
        '{"name": "search", "parameters": {"q": "InternLM"}}<|action_end|>',
        text="I will search.",
        calls=(("search", '{"q": "InternLM"}', None),),
        residue=("<|action", "<|plugin"),
    ),
    Sample(
        "phi4-functools",
        "phi4_mini",
        ' functools[{"name": "f", "arguments": {"s": "a]b"}}, {"name": "g", "arguments": {}}]'
        " and `import functools` stays.",
        text="  and `import functools` stays.",
        calls=(("f", '{"s": "a]b"}', None), ("g", "{}", None)),
    ),
    Sample(
        "delimited-nemotron",
        "delimited",
        'Calling.<TOOLCALL>[{"name": "f", "arguments": {"x": 1}}]</TOOLCALL>',
        text="Calling.",
        calls=(("f", '{"x": 1}', None),),
        options={"open": "<TOOLCALL>", "close": "</TOOLCALL>"},
        residue=("TOOLCALL",),
    ),
    # ------------------------------------------------------------------ think
    Sample(
        "think-only",
        "think",
        "<think>\nStep 1: add.\nStep 2: done.\n</think>\n\nThe sum is 5. Use <think> tags? No.",
        reasoning="\nStep 1: add.\nStep 2: done.\n",
        text="\n\nThe sum is 5. Use <think> tags? No.",
        residue=("<think>\n", "</think>"),
    ),
]


# DeepSeek V3.2 DSML, in its canonical spelling and the accepted variants.
D, DA, DD = "｜DSML｜", "|DSML|", "||DSML||"
DSML_RESIDUE = ("DSML", "<think", "think>")
DSML_FILE = f'x = "</{D}parameter>"\ny = \'</{D}invoke>\'  # closers in code\nprint(x, y, "日本")\n'
GRANITE_RESIDUE = ("tool_call", "function_call", "<response", "response>", "<think", "think>")

SAMPLES += [
    # --------------------------------------------------------- deepseek_v32
    Sample(
        "dsml-text-two-calls-typed",
        "deepseek_v32",
        f"Let me check both.\n\n<{D}function_calls>\n"
        f'<{D}invoke name="get_weather">\n'
        f'<{D}parameter name="city" string="true">Paris</{D}parameter>\n'
        f'<{D}parameter name="days" string="false">3</{D}parameter>\n'
        f"</{D}invoke>\n"
        f'<{D}invoke name="get_weather">\n'
        f'<{D}parameter name="city" string="true">Zürich "Old Town"</{D}parameter>\n'
        f'<{D}parameter name="metric" string="false">true</{D}parameter>\n'
        f"</{D}invoke>\n"
        f"</{D}function_calls>",
        text="Let me check both.\n\n",
        calls=(
            ("get_weather", '{"city": "Paris", "days": 3}', None),
            ("get_weather", '{"city": "Zürich \\"Old Town\\"", "metric": true}', None),
        ),
        residue=DSML_RESIDUE,
    ),
    Sample(
        "dsml-v4-ascii-bars-slash-closers",
        "dsml",
        f"<{DA}tool_calls>\n"
        f'<{DA}invoke name="search">\n'
        f'<{DA}parameter name="query" string="true">DSML spec<{DA}/parameter>\n'
        f'<{DA}parameter name="filters" string="false">{{"lang": ["en", "zh"], "max": 5}}'
        f"<{DA}/parameter>\n"
        f"<{DA}/invoke>\n"
        f"<{DA}/tool_calls>",
        text="",
        calls=(
            ("search", '{"query": "DSML spec", "filters": {"lang": ["en", "zh"], "max": 5}}', None),
        ),
        residue=DSML_RESIDUE,
    ),
    Sample(
        "dsml-doubled-bars-think-json-values",
        "deepseek_v32",
        "<think>\nThe user wants a report.\n</think>\n\n"
        f"<{DD}function_calls>"
        f'<{DD}invoke name="report">'
        f'<{DD}parameter name="ids" string="false">[1, 2, 3]</{DD}parameter>'
        f'<{DD}parameter name="owner" string="false">null</{DD}parameter>'
        f'<{DD}parameter name="ratio" string="false">-0.5e3</{DD}parameter>'
        f'<{DD}parameter name="title" string="true">  padded  </{DD}parameter>'
        f"</{DD}invoke>"
        f'<{DD}invoke name="ping"></{DD}invoke>'
        f"</{DD}function_calls>",
        reasoning="\nThe user wants a report.\n",
        text="",
        calls=(
            (
                "report",
                '{"ids": [1, 2, 3], "owner": null, "ratio": -0.5e3, "title": "  padded  "}',
                None,
            ),
            ("ping", "{}", None),
        ),
        residue=DSML_RESIDUE,
    ),
    Sample(
        "dsml-write-file-literal-closers",
        "deepseek_v32",
        f"Writing it.\n<{D}function_calls>\n"
        f'<{D}invoke name="write_file">\n'
        f'<{D}parameter name="path" string="true">gen.py</{D}parameter>\n'
        f'<{D}parameter name="content" string="true">{DSML_FILE}</{D}parameter>\n'
        f"</{D}invoke>\n"
        f"</{D}function_calls>\nDone.",
        text="Writing it.\n\nDone.",
        calls=(
            (
                "write_file",
                '{"path": "gen.py", "content": '
                + json.dumps(DSML_FILE[:-1], ensure_ascii=False)
                + "}",
                None,
            ),
        ),
        options={"tools": WEATHER_TOOLS},
    ),
    Sample(
        "dsml-tag-type-beats-schema",
        "deepseek_v32",
        f"<{D}function_calls>\n"
        f'<{D}invoke name="get_weather">\n'
        f'<{D}parameter name="days" string="true">3</{D}parameter>\n'
        f'<{D}parameter name="city">4</{D}parameter>\n'
        f'<{D}parameter name="metric">TRUE</{D}parameter>\n'
        f"</{D}invoke>\n"
        f"</{D}function_calls>",
        text="",
        calls=(("get_weather", '{"days": "3", "city": "4", "metric": true}', None),),
        options={"tools": WEATHER_TOOLS},
        residue=DSML_RESIDUE,
    ),
    Sample(
        "dsml-thinking-mode-prefilled",
        "deepseek_v32",
        f"Weather for Oslo; call the tool.</think><{D}function_calls>"
        f'<{D}invoke name="get_weather">'
        f'<{D}parameter name="city" string="true">Oslo</{D}parameter>'
        f"</{D}invoke></{D}function_calls>",
        reasoning="Weather for Oslo; call the tool.",
        text="",
        calls=(("get_weather", '{"city": "Oslo"}', None),),
        options={"start_in_reasoning": True},
        residue=DSML_RESIDUE,
    ),
    Sample(
        "dsml-prose-mentions",
        "deepseek_v32",
        f"Calls start with <{D}function_calls> and each <{D}invoke name=…> holds "
        f"parameters; <{DA}tool_calls> in V4.",
        text=f"Calls start with <{D}function_calls> and each <{D}invoke name=…> holds "
        f"parameters; <{DA}tool_calls> in V4.",
    ),
    # --------------------------------------------------------------- granite
    Sample(
        "granite-3.0-special-token-list",
        "granite",
        '<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}, '
        '{"arguments": {"q": "]} \\"x\\" é"}, "name": "search"}]',
        text="",
        calls=(
            ("get_weather", '{"city": "Paris"}', None),
            ("search", '{"q": "]} \\"x\\" é"}', None),
        ),
        residue=GRANITE_RESIDUE,
    ),
    Sample(
        "granite-3.1-text-then-list",
        "granite3",
        'I will look that up.\n<tool_call>[{"name": "get_weather", "arguments": '
        '{"city": "Paris",  "days": 2}}]',
        text="I will look that up.\n",
        calls=(("get_weather", '{"city": "Paris",  "days": 2}', None),),
        residue=GRANITE_RESIDUE,
    ),
    Sample(
        "granite-20b-fc-repeated",
        "granite",
        'Checking both. <function_call> {"name": "get_weather", "arguments": {"city": "Paris"}}'
        ' <function_call> {"name": "get_time", "arguments": {"tz": "<function_call>"}}'
        ' <function_call> {"name": "ping"}',
        text="Checking both. ",
        calls=(
            ("get_weather", '{"city": "Paris"}', None),
            ("get_time", '{"tz": "<function_call>"}', None),
            ("ping", "{}", None),
        ),
    ),
    Sample(
        "granite-3.3-think-response",
        "granite",
        "<think>The user greets me. Reply politely.</think>\n"
        "<response>Hello! How can I help?</response>",
        reasoning="The user greets me. Reply politely.",
        text="Hello! How can I help?",
        residue=GRANITE_RESIDUE,
    ),
    Sample(
        "granite-3.3-think-response-then-call",
        "granite",
        "<think>Need the weather.</think><response>Let me check.</response>\n"
        '<tool_call>[{"name": "get_weather", "arguments": {"city": "Lyon"}}]',
        reasoning="Need the weather.",
        text="Let me check.",
        calls=(("get_weather", '{"city": "Lyon"}', None),),
        residue=GRANITE_RESIDUE,
    ),
    Sample(
        "granite-prose-mentions",
        "granite",
        "Granite writes <tool_call> or <function_call> tags, and wraps answers in "
        "<response> … </response>; a <think> here is text.",
        text="Granite writes <tool_call> or <function_call> tags, and wraps answers in "
        "<response> … </response>; a <think> here is text.",
    ),
]


# --------------------------------------------------------------------------
# Helpers


def fold(parser_name: str, chunks: Iterable[str], **options: Any) -> ParserOutput:
    """Push ``chunks`` one by one, then finish; the concatenated output."""
    p = get_parser(parser_name, **options)
    outs = [p.push_text(c) for c in chunks]
    outs.append(p.finish())
    return ParserOutput.concat(outs)


def split_at(text: str, cuts: Iterable[int]) -> list[str]:
    points = sorted({c for c in cuts if 0 < c < len(text)})
    out, prev = [], 0
    for c in points:
        out.append(text[prev:c])
        prev = c
    out.append(text[prev:])
    return out


def random_splits(text: str, n: int, seed: int) -> Iterable[list[str]]:
    rng = random.Random(seed)
    for _ in range(n):
        k = rng.randint(1, max(1, len(text) // 3))
        yield split_at(text, (rng.randint(1, max(1, len(text) - 1)) for _ in range(k)))


def summary(out: ParserOutput) -> tuple[str, str, tuple[Call, ...], tuple[str, ...]]:
    calls = tuple((c.name, c.arguments, c.error) for c in out.calls)
    return out.text, out.reasoning, calls, tuple(e.kind for e in out.errors)


def golden(sample: Sample) -> tuple[str, str, tuple[Call, ...], tuple[str, ...]]:
    return sample.text, sample.reasoning, sample.calls, sample.errors


def upstream(
    chunks: Sequence[str],
    *,
    stop: StopReason = StopReason.STOP,
    response_id: str | None = "resp_1",
    api: str = "openai-completions",
    usage: Usage | None = None,
) -> list[Event]:
    """A canonical upstream stream whose one text block arrives as ``chunks``."""
    text = "".join(chunks)
    usage = usage or Usage.of(10, 20)
    message = AssistantMessage(
        (TextBlock(text),), api, "test-model", stop, stop.value, usage, response_id
    )
    events: list[Event] = [Start(api, "test-model", response_id)]
    events += [TextDelta(0, c) for c in chunks if c]
    events += [BlockEnd(0, TextBlock(text)), Done(message)]
    return events


def run_stream(parser_name: str, events: Iterable[Event], **options: Any) -> list[Event]:
    return list(NormalizingStream(events, get_parser(parser_name, **options)))
