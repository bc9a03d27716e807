"""IBM Granite 3.x calls — ``granite``.

::

    <|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}]     (3.0)
    <tool_call>[{"name": "get_weather", "arguments": {"city": "Paris"}}]       (3.1)
    <function_call> {"name": "get_weather", "arguments": {"city": "Paris"}}    (20B-FC)

There is no close marker: the body is a JSON list of call objects, or one
call object, and ends at the bracket that closes it — the legacy Mistral
body, read by :class:`.mistral.MistralSection`. 20B-FC repeats
``<function_call>`` once per call. An opener counts only when ``[`` or ``{``
follows, so prose that mentions it stays text.

Granite 3.2/3.3 write ``<think>…</think><response>…</response>`` as plain
text: ``<think>`` is reasoning, and ``<response>`` wraps the answer; its
markers are consumed (see the answer wrappers of :mod:`.engine`). Granite 4
writes Hermes blocks (``hermes``).
"""

from __future__ import annotations

from .base import ParserOptions, ToolCallParser
from .calls import SectionContext
from .engine import InlineParser, Opener
from .mistral import MistralSection
from .scanner import MarkerSet, body_starts

__all__: list[str] = []

_OPENERS = ("<|tool_call|>", "<tool_call>", "<function_call>")
_STOP = MarkerSet(_OPENERS)
_RESPONSE = ("<response>", "</response>")


def _section(ctx: SectionContext, _marker: str) -> MistralSection:
    return MistralSection(ctx, _STOP)


_CONFIRM = body_starts("[", "{")
_OPENER_LIST = tuple(Opener(m, _section, _CONFIRM) for m in _OPENERS)


def granite(options: ParserOptions) -> ToolCallParser:
    return InlineParser(options, _OPENER_LIST, answer=_RESPONSE)
