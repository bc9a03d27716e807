"""Inline tool calls and reasoning: ``NormalizingStream`` and ``ToolCallParser``.

Open-weight models write tool calls and reasoning as markup inside their text.
``NormalizingStream(events, get_parser(name, **options))`` lifts them into
canonical blocks. Reference: docs/inline-tool-calls.md.
"""

# The dialect modules register their parsers on import.
from . import deepseek, granite, harmony, kimi, llama, mistral, plain, tagged  # noqa: F401
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
    get_parser,
    parser_names,
)
from .stream import NormalizingStream

__all__ = [
    "CallArgs",
    "CallClose",
    "CallOpen",
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
