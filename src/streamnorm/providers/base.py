"""What every provider decoder is: a translator from wire JSON to builder calls.

A decoder sees one parsed SSE payload at a time, plus its own small key
tables; it never emits events itself (the :class:`MessageBuilder` does).
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..builder import MessageBuilder, StopTable

#: The closing words (``Decoder.closing_words``) of an error, in any SSE api:
#: its ``event:`` line, or an ``"error"`` key or value in its payload.
ERROR_WORDS = (b'"error"', b"event: error", b"event:error")

__all__ = [
    "ERROR_WORDS",
    "MAX_COUNT",
    "ChoiceTracker",
    "Decoder",
    "as_counts",
    "as_dict",
    "as_int",
    "as_list",
    "as_str",
    "error_of",
    "wire_key",
]


class Decoder:
    """Base of the provider decoders.

    Class attributes describe the wire API as data: ``stop_table`` maps its
    stop values; ``blocks_end_implicitly`` says the wire has no per-block end;
    ``done_at_eof_after_stop`` says end of input after a stop value is a normal
    end (Chat Completions without ``[DONE]``, Gemini), not a truncation;
    ``last_event_has_stop`` says nothing follows the event that carries the
    stop value (Gemini: its last chunk has the finish reason and the usage);
    ``framing`` names the framing of `streamnorm.framing` the api arrives in
    (``sse``, ``eventstream``, ``ndjson``), ``alt_framings`` any other it may
    arrive in (Gemini without ``alt=sse``: ``json-array``); ``closing_words``
    are byte strings one of which is in every event, as the api's servers
    write it, that can end the stream or fail it (its terminal event, an
    error, the event a Gemini answer settles at): a reader that wants only
    the end and the accounting of a stream whose bytes go on unchanged may
    put off parsing bytes that hold none (the gateway's passthrough). Empty:
    no such promise, every chunk is read as it comes.
    """

    api: ClassVar[str]
    stop_table: ClassVar[StopTable]
    blocks_end_implicitly: ClassVar[bool] = False
    done_at_eof_after_stop: ClassVar[bool] = False
    last_event_has_stop: ClassVar[bool] = False
    framing: ClassVar[str] = "sse"
    alt_framings: ClassVar[tuple[str, ...]] = ()
    closing_words: ClassVar[tuple[bytes, ...]] = ()

    def __init__(self, builder: MessageBuilder, choice: int = 0) -> None:
        self.builder = builder
        self.choice = choice
        self.choices = ChoiceTracker(choice)

    @classmethod
    def reads(cls, framing: str | None) -> bool:
        """Whether this api arrives in ``framing``."""
        return framing == cls.framing or framing in cls.alt_framings

    def handle(self, event: str, payload: dict[str, Any]) -> None:
        """Translate one payload; ``event`` is the SSE event name."""
        raise NotImplementedError

    def done_marker(self) -> None:
        """``data: [DONE]``. Ignored unless the api says otherwise."""

    def end_of_input(self) -> None:
        """The bytes ended; the builder is still open, so no terminal signal came."""
        if self.done_at_eof_after_stop and self.builder.stop_seen:
            self.builder.finish()
        else:
            self.builder.fail("truncated", "the stream ended before its terminal event")


class ChoiceTracker:
    """Whether the choice (or candidate) a caller selected ever appeared, and
    which others did: a selected choice that never appears is an error, never
    an empty ``Done``. Choice 0 is every stream's default and ends normally
    when a stream carries no choice at all."""

    __slots__ = ("_others", "selected", "selected_seen")

    def __init__(self, selected: int) -> None:
        self.selected = selected
        self.selected_seen = False
        self._others: set[int] = set()

    @property
    def others_seen(self) -> bool:
        """Whether a choice other than the selected one arrived."""
        return bool(self._others)

    def saw(self, index: Any) -> None:
        """A choice other than the selected one arrived (O(1))."""
        if type(index) is int and len(self._others) < 64:
            self._others.add(index)

    def check(self, builder: MessageBuilder, what: str) -> None:
        """At the terminal: fail the stream when the selected choice never came."""
        if self.selected == 0 or self.selected_seen or builder.closed:
            return
        had = ", ".join(map(str, sorted(self._others))) or "none"
        builder.fail(
            "protocol", f"{what} {self.selected} never appeared; the stream had {what}s: {had}"
        )


# Defensive accessors: wire JSON may carry any type in any field. Each returns
# the value when it has the expected type, else the neutral default.


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_str(value: Any) -> str:
    return value if isinstance(value, str) else ""


#: Token counts at or above this are junk: summed into ``Usage`` they could
#: otherwise grow past what ``str(int)`` may convert (``sys.int_info``).
MAX_COUNT = 2**63


def as_int(value: Any) -> int:
    """A non-negative token count; bools, floats and junk (including counts
    of 2**63 and more) count as 0."""
    return value if type(value) is int and 0 < value < MAX_COUNT else 0


def as_counts(*values: Any) -> tuple[int, ...]:
    """`as_int` of each value. For a usage object sent with every chunk: the
    values are nearly always valid already, and one loop of checks says so."""
    for value in values:
        if type(value) is not int or not 0 <= value < MAX_COUNT:
            return tuple(map(as_int, values))
    return values


def _code(value: Any) -> str | None:
    """An error code as text: a non-empty string, or an integer (not a bool)."""
    if isinstance(value, str):
        return value or None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def error_of(
    value: Any, *, default: str = "error", codes: tuple[str, ...] = ("code", "type")
) -> tuple[str, str | None]:
    """``(message, code)`` of a wire error object, the one reading of every
    ``{"error": …}`` shape (stream events, HTTP error bodies, failed
    responses): the object's ``message``, or the value itself when it is a
    string, else ``default``; the code is the first of the fields ``codes``
    (in the api's order of preference) holding a non-empty string or an
    integer, else None."""
    error = as_dict(value)
    message = as_str(error.get("message")) or (value if isinstance(value, str) else "")
    code = None
    for field in codes:
        code = _code(error.get(field))
        if code is not None:
            break
    return message or default, code


def wire_key(index: Any) -> Any:
    """A wire ``index`` as a block key: an int as it is, any other JSON value
    (junk) as its repr, so that it is hashable and still keys consistently."""
    return index if type(index) is int else repr(index)
