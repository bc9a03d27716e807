"""Parsers without a call dialect: ``passthrough`` and ``think``.

``think`` extracts ``<think>…</think>`` reasoning (or the markers chosen with
``reasoning=``) and nothing else; every tool dialect composes the same
reasoning rules with its calls through :class:`engine.InlineParser`.
``passthrough`` parses nothing: text stays text, reasoning stays reasoning.
"""

from __future__ import annotations

from .base import ParserOptions, ToolCallParser
from .engine import InlineParser

__all__: list[str] = []


def plain(options: ParserOptions) -> ToolCallParser:
    return InlineParser(options)
