"""Kimi K2 call sections — ``kimi_k2``.

::

    <|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0
    <|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|><|tool_calls_section_end|>

The header is the call id (``CallOpen.id``); the name is the header without
``functions.`` and ``:<n>`` (names may contain ``-``). K2-Thinking may open
the section before ``</think>``, which is why ``calls_in_reasoning`` defaults
to ``"extract"`` here.
"""

from __future__ import annotations

import re

from .base import ParserOptions, ToolCallParser
from .engine import InlineParser
from .tokens import TokenGrammar, token_openers

__all__ = ["K2"]

_INDEX = re.compile(r":\d+$")


def _header(text: str) -> tuple[str | None, str] | None:
    call_id = text.strip()
    name = _INDEX.sub("", call_id)
    if name.startswith("functions."):
        name = name[len("functions.") :]
    return (call_id, name) if name and not any(c.isspace() for c in name) else None


K2 = TokenGrammar(
    ("<|tool_calls_section_begin|>", "<|tool_call_section_begin|>"),
    "<|tool_calls_section_end|>",
    "<|tool_call_begin|>",
    ("<|tool_call_argument_begin|>",),
    "<|tool_call_end|>",
    _header,
)


def kimi_k2(options: ParserOptions) -> ToolCallParser:
    return InlineParser(options, token_openers(K2))
