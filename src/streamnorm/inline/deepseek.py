"""DeepSeek calls: V3/R1 (``deepseek_v3``), V3.1 (``deepseek_v31``), V3.2 DSML (``deepseek_v32``).

V3 / R1::

    <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather
    ```json
    {"city": "Paris"}
    ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>

V3.1: ``<｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris"}<｜tool▁call▁end｜>``
— no type prefix, no fence. The markers use U+FF5C ``｜`` and U+2581 ``▁``.
Misspelt section openers of distilled and quantised models are accepted. R1
and V3.1 thinking mode prefill ``<think>``: use ``start_in_reasoning=True``.

V3.2 (and V4) write DSML, XML calls under a ``｜DSML｜`` tag prefix::

    <｜DSML｜function_calls>
    <｜DSML｜invoke name="get_weather">
    <｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>
    <｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>
    </｜DSML｜invoke>
    </｜DSML｜function_calls>

read by the shared XML block reader (:class:`.tagged.TagBlock`). A parameter
declares its own type: ``string="true"`` is raw text, streamed as it
arrives; ``string="false"`` a JSON value (any type but a string), converted
when the parameter closes. Without the attribute the tool schema decides.
Accepted spellings: ASCII ``|`` bars, doubled bars (``<||DSML||``),
``<｜DSML｜/x>`` closers, and V4's ``tool_calls`` section name.
"""

from __future__ import annotations

import re

from .base import ParserOptions, ToolCallParser
from .engine import InlineParser
from .scanner import body_starts
from .tagged import TagDialect, tag_parser
from .tokens import TokenGrammar, token_openers
from .xmlargs import XmlGrammar

__all__ = ["DSML", "V3", "V31"]

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


def deepseek_v3(options: ParserOptions) -> ToolCallParser:
    return InlineParser(options, token_openers(V3))


def deepseek_v31(options: ParserOptions) -> ToolCallParser:
    return InlineParser(options, token_openers(V31))


# --------------------------------------------------------------------------
# V3.2 / V4 DSML

_DSML_PREFIXES = ("｜DSML｜", "|DSML|", "｜｜DSML｜｜", "||DSML||")
_DSML_SECTIONS = ("function_calls", "tool_calls")  # V3.2, V4


def _dsml_opens(*tails: str) -> tuple[str, ...]:
    """``<PREFIX tail`` for every prefix spelling."""
    return tuple(f"<{p}{t}" for t in tails for p in _DSML_PREFIXES)


def _dsml_closes(*names: str) -> tuple[str, ...]:
    """``</PREFIX name>`` and ``<PREFIX/name>`` for every prefix spelling."""
    return tuple(c for n in names for p in _DSML_PREFIXES for c in (f"</{p}{n}>", f"<{p}/{n}>"))


_STRING_ATTR = re.compile(r'(?:^|\s)string\s*=\s*"?\s*(true|false)\b', re.IGNORECASE)
# ``string="false"``: a JSON value, tried as each non-string type (schema
# order, which also takes Python spellings such as ``False``), then as any
# JSON value (a quoted JSON string).
_JSON_VALUE = ("null", "boolean", "integer", "number", "array", "object", "json")


def _dsml_param(text: str) -> tuple[str, tuple[str, ...] | None] | None:
    """``KEY" string="true`` (the text up to the tag's final ``">``) → the key and
    the type the ``string`` attribute declares (``None`` without the attribute)."""
    key, _, attrs = text.partition('"')
    key = key.strip()
    if not key:
        return None
    m = _STRING_ATTR.search(attrs)
    if m is None:
        return key, None
    return key, ("string",) if m.group(1).lower() == "true" else _JSON_VALUE


DSML = XmlGrammar(
    func_open=_dsml_opens('invoke name="'),
    name_end='">',
    param_open=_dsml_opens('parameter name="'),
    key_end='">',
    value_open="",
    param_close=_dsml_closes("parameter"),
    func_close=_dsml_closes("invoke"),
    block_close=_dsml_closes(*_DSML_SECTIONS),
    param_header=_dsml_param,
)
_DSML_BLOCK = TagDialect(
    _dsml_opens(*(f"{n}>" for n in _DSML_SECTIONS)), DSML.block_close, json=False, xml=DSML
)
#: V3.2 / V4: DSML ``invoke``/``parameter`` tags inside a function-calls section.
deepseek_v32 = tag_parser(_DSML_BLOCK, body_starts(*DSML.func_open, cut_at_end=True))
