"""Hand-written model outputs per dialect, with their golden parse, and helpers.

Each :class:`Sample` is a realistic output of one model family and what the
parser must make of it: text, reasoning, calls (name, raw arguments, error)
and error kinds. The dialect tests feed every sample whole, one character at
a time and under random re-splitting, and compare with these goldens.
"""

from __future__ import annotations

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
