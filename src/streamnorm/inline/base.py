"""Parser pieces, ``ParserOutput``, the ``ToolCallParser`` protocol and its options.

A parser turns model text into an ordered sequence of *pieces*: text,
reasoning, the three stages of a tool call (open, argument bytes, close) and
non-fatal errors. Pieces come out in source order, so a consumer that applies
them one after the other rebuilds the message in the order the model wrote it.

Every dialect is named in one table, :mod:`.registry`; ``get_parser`` builds
one from a name and the options of :class:`ParserOptions`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, Protocol, TypedDict, runtime_checkable

__all__ = [
    "CallArgs",
    "CallClose",
    "CallOpen",
    "ParseError",
    "ParsedCall",
    "ParserFactory",
    "ParserOptions",
    "ParserOutput",
    "Piece",
    "ReasoningPiece",
    "TextPiece",
    "ToolCallParser",
]


@dataclass(frozen=True, slots=True)
class TextPiece:
    """Answer text."""

    text: str


@dataclass(frozen=True, slots=True)
class ReasoningPiece:
    """Reasoning text."""

    text: str


@dataclass(frozen=True, slots=True)
class CallOpen:
    """Call number ``call`` starts; its name is known. ``id`` is the id the
    model wrote (Kimi), else ``None``."""

    call: int
    id: str | None
    name: str


@dataclass(frozen=True, slots=True)
class CallArgs:
    """The next bytes of call ``call``'s argument text (JSON)."""

    call: int
    delta: str


@dataclass(frozen=True, slots=True)
class CallClose:
    """Call ``call`` ended. ``error`` is ``None`` or ``"incomplete"``."""

    call: int
    error: str | None = None


@dataclass(frozen=True, slots=True)
class ParseError:
    """Something could not be interpreted; ``raw`` keeps the input concerned."""

    kind: str
    detail: str
    raw: str


Piece = TextPiece | ReasoningPiece | CallOpen | CallArgs | CallClose | ParseError


@dataclass(frozen=True, slots=True)
class ParsedCall:
    """One call as seen through :attr:`ParserOutput.calls`."""

    call: int
    id: str | None
    name: str
    arguments: str
    error: str | None
    closed: bool


@dataclass(frozen=True, slots=True)
class ParserOutput:
    """The pieces one push (or ``finish()``) completed, in source order.

    The views fold the pieces; ``a + b`` concatenates two outputs, so the
    outputs of successive pushes fold into the result of the whole input.
    """

    pieces: tuple[Piece, ...] = ()

    def __add__(self, other: ParserOutput) -> ParserOutput:
        return ParserOutput(self.pieces + other.pieces)

    def __bool__(self) -> bool:
        return bool(self.pieces)

    @classmethod
    def concat(cls, outputs: Iterable[ParserOutput]) -> ParserOutput:
        """Fold many outputs; linear in the number of pieces."""
        pieces: list[Piece] = []
        for o in outputs:
            pieces.extend(o.pieces)
        return cls(tuple(pieces))

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.pieces if isinstance(p, TextPiece))

    @property
    def reasoning(self) -> str:
        return "".join(p.text for p in self.pieces if isinstance(p, ReasoningPiece))

    @property
    def calls(self) -> tuple[ParsedCall, ...]:
        opened: dict[int, tuple[str | None, str]] = {}
        args: dict[int, list[str]] = {}
        closed: dict[int, str | None] = {}
        for p in self.pieces:
            if isinstance(p, CallOpen):
                opened[p.call] = (p.id, p.name)
                args.setdefault(p.call, [])
            elif isinstance(p, CallArgs):
                args.setdefault(p.call, []).append(p.delta)
            elif isinstance(p, CallClose):
                closed[p.call] = p.error
        return tuple(
            ParsedCall(
                n,
                opened[n][0],
                opened[n][1],
                "".join(args.get(n, ())),
                closed.get(n),
                n in closed,
            )
            for n in sorted(opened)
        )

    @property
    def errors(self) -> tuple[ParseError, ...]:
        return tuple(p for p in self.pieces if isinstance(p, ParseError))


@runtime_checkable
class ToolCallParser(Protocol):
    """Lifts tool calls and reasoning out of one stream's text.

    ``push_text`` takes answer text, ``push_reasoning`` reasoning the server
    already separated; each returns the pieces the new input completes.
    ``finish()`` is called once, at the end; it flushes what is held and
    closes what is open. ``parse_all(text)`` is ``push_text(text)`` plus
    ``finish()`` on a fresh parser: the same code, so streaming and one-shot
    results cannot drift apart.
    """

    def push_text(self, text: str) -> ParserOutput: ...

    def push_reasoning(self, text: str) -> ParserOutput: ...

    def finish(self) -> ParserOutput: ...

    def parse_all(self, text: str) -> ParserOutput: ...


# --------------------------------------------------------------------------
# Options

ReasoningOption = str | tuple[str, str] | None

CALLS_IN_REASONING = ("extract", "literal")
ON_MALFORMED = ("error", "text")


@dataclass(frozen=True, slots=True)
class ParserOptions:
    """Options every parser accepts (reference: inline-tool-calls.md §3.2).

    ``reasoning`` is ``None``, ``"think"``, ``"bracket"``, ``"seed"`` or an
    ``(open, close)`` pair; ``tools`` is a list of OpenAI-style tool
    definitions or a ``{name: json_schema}`` mapping. ``open``, ``close``
    and ``body`` configure the ``delimited`` parser.
    """

    tools: Sequence[Any] | Mapping[str, Any] | None = None
    reasoning: ReasoningOption = None
    start_in_reasoning: bool = False
    interleaved_reasoning: bool = False
    calls_in_reasoning: str = "literal"
    on_malformed: str = "error"
    require_call_at_start: bool = False
    # ``delimited`` only: the block markers and the body syntax.
    open: str | None = None
    close: str | None = None
    body: str = "json"

    def __post_init__(self) -> None:
        if self.body not in ("json", "xml"):
            raise ValueError("body must be 'json' or 'xml'")
        if self.calls_in_reasoning not in CALLS_IN_REASONING:
            raise ValueError(f"calls_in_reasoning must be one of {CALLS_IN_REASONING}")
        if self.on_malformed not in ON_MALFORMED:
            raise ValueError(f"on_malformed must be one of {ON_MALFORMED}")

    def updated(self, options: Mapping[str, Any]) -> ParserOptions:
        """These options with ``options`` applied; unknown names raise ``TypeError``."""
        known = {f.name for f in fields(self)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise TypeError(f"unknown parser option(s) {unknown}; valid: {sorted(known)}")
        return replace(self, **options)


class ParserKeywords(TypedDict, total=False):
    """:class:`ParserOptions` as ``get_parser``'s keyword arguments, for type
    checkers (``tests/test_entry_points.py`` keeps the two equal)."""

    tools: Sequence[Any] | Mapping[str, Any] | None
    reasoning: ReasoningOption
    start_in_reasoning: bool
    interleaved_reasoning: bool
    calls_in_reasoning: str
    on_malformed: str
    require_call_at_start: bool
    open: str | None
    close: str | None
    body: str


#: What every dialect's reader is: options in, a fresh parser out.
ParserFactory = Callable[[ParserOptions], ToolCallParser]
