"""Inline tool calls and reasoning: ``NormalizingStream`` and ``ToolCallParser``.

Open-weight models write tool calls and reasoning as markup inside their text.
``NormalizingStream(events, get_parser(name, **options))`` lifts them into
canonical blocks. Reference: docs/inline-tool-calls.md.
"""

from .base import (
    CallArgs,
    CallClose,
    CallOpen,
    ParsedCall,
    ParseError,
    ParserOptions,
    ParserOutput,
    Piece,
    ReasoningPiece,
    TextPiece,
    ToolCallParser,
)
from .registry import DIALECTS, Dialect, get_parser, parser_names
from .stream import NormalizingStream

__all__ = [
    "DIALECTS",
    "CallArgs",
    "CallClose",
    "CallOpen",
    "Dialect",
    "NormalizingStream",
    "ParseError",
    "ParsedCall",
    "ParserOptions",
    "ParserOutput",
    "Piece",
    "ReasoningPiece",
    "TextPiece",
    "ToolCallParser",
    "get_parser",
    "parser_names",
]
