"""DeepSeek V3/R1 (``deepseek_v3``) and V3.1 (``deepseek_v31``) call sections.

V3 / R1::

    <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather
    ```json
    {"city": "Paris"}
    ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>

V3.1: ``<｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris"}<｜tool▁call▁end｜>``
— no type prefix, no fence. The markers use U+FF5C ``｜`` and U+2581 ``▁``.
Misspelt section openers of distilled and quantised models are accepted. R1
and V3.1 thinking mode prefill ``<think>``: use ``start_in_reasoning=True``.
"""

from __future__ import annotations

from .base import ParserOptions, ToolCallParser, register
from .engine import InlineParser
from .tokens import TokenGrammar, token_openers

__all__ = ["V3", "V31"]

SEP = "<｜tool▁sep｜>"
_SECTION_OPENS = (
    "<｜tool▁calls▁begin｜>",
    "<｜tool_calls_begin｜>",
    "<｜tool calls begin｜>",
    "<｜tool\\_calls\\_begin｜>",
    "<｜tool▁calls｜>",
)
_SECTION_CLOSE = "<｜tool▁calls▁end｜>"
_CALL_OPEN = "<｜tool▁call▁begin｜>"
_CALL_CLOSE = "<｜tool▁call▁end｜>"


def _v3_header(text: str) -> tuple[str | None, str] | None:
    """``function<｜tool▁sep｜>NAME``: the separator is required, the type is not checked."""
    _, sep, name = text.rpartition(SEP)
    name = name.strip()
    return (None, name) if sep and name and not any(c.isspace() for c in name) else None


def _v31_header(text: str) -> tuple[str | None, str] | None:
    name = text.strip()
    return (None, name) if name and not any(c.isspace() for c in name) else None


V3 = TokenGrammar(
    _SECTION_OPENS,
    _SECTION_CLOSE,
    _CALL_OPEN,
    ("\n", "```", "{"),
    _CALL_CLOSE,
    _v3_header,
    header_keep=("```", "{"),
)
V31 = TokenGrammar(_SECTION_OPENS, _SECTION_CLOSE, _CALL_OPEN, (SEP,), _CALL_CLOSE, _v31_header)


def _v3(options: ParserOptions) -> ToolCallParser:
    return InlineParser(options, token_openers(V3))


def _v31(options: ParserOptions) -> ToolCallParser:
    return InlineParser(options, token_openers(V31))


register("deepseek_v3", _v3, aliases=("deepseek_r1",), reasoning="think")
register("deepseek_v31", _v31, aliases=("deepseek_v3.1",), reasoning="think")
