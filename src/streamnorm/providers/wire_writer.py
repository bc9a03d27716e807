"""What every stream encoder shares: SSE framing, derived ids, the issuer of
opaque state, and the dispatch of canonical events to one API's writer.

An encoder is sans-IO (encoding.md §0): :meth:`WireEncoder.feed` takes one
canonical event and returns the bytes it completes; no clock, no randomness.
Ids the target needs and the source did not give are derived by hashing, so
the same events always encode to the same bytes.
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from .._json import dumps_bytes
from ..envelope import Issuer, wrap, wrap_bytes
from ..events import (
    BlockEnd,
    Done,
    Error,
    Event,
    NormalizationError,
    PromptProgress,
    Start,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    UsageUpdate,
)
from ..messages import AssistantMessage, ContentBlock, StopReason, TextBlock, ToolCallBlock, Usage

__all__ = [
    "Carrier",
    "ProviderMismatchWarning",
    "WireEncoder",
    "derive_id",
    "error_class",
    "frame",
    "issuer_of",
    "raw_stop",
]


def frame(payload: Any, event: str | None = None, *, crlf: bool = False) -> bytes:
    """One SSE event: an optional ``event:`` line, one ``data:`` line, a blank
    line. JSON never holds a raw line break, so one ``data:`` line suffices."""
    end = b"\r\n" if crlf else b"\n"
    data = b"data: " + dumps_bytes(payload) + end + end
    if event is None:
        return data
    return b"event: " + event.encode() + end + data


def derive_id(prefix: str, *parts: object, length: int = 24) -> str:
    """``prefix`` + ``length`` hex digits of SHA-256 over ``parts``: the same
    inputs give the same id (encoding.md §0, §8)."""
    seed = "\0".join(str(p) for p in parts).encode("utf-8", "replace")
    return prefix + hashlib.sha256(seed).hexdigest()[:length]


def error_class(code: str | None, reason: str) -> str:
    """``rate_limit``, ``overloaded`` or ``server``: what kind of failure an
    ``Error`` was, for the target's own error type (encoding.md §10.1)."""
    text = f"{code or ''} {reason}".lower()
    if "rate" in text or "429" in text or "resource_exhausted" in text:
        return "rate_limit"
    if "overload" in text or "529" in text or "503" in text or "unavailable" in text:
        return "overloaded"
    return "server"


class Carrier:
    """Who issued the opaque state in a stream, and how it travels to the
    target (encoding.md §9): as it is for the same api, else in an envelope."""

    __slots__ = ("issuer", "target")

    def __init__(self, target: str, issuer: Issuer | None = None) -> None:
        self.target = target
        self.issuer = issuer or Issuer(target)

    @property
    def foreign(self) -> bool:
        return self.issuer.api != self.target

    def carry(self, kind: str, signature: Any, *, as_bytes: bool = False) -> str | None:
        """The value for the target's field. Same issuer: the signature itself
        (None stays None). Foreign: an envelope, also for ``None`` (thinking
        without a signature still names its issuer)."""
        if not self.foreign:
            return signature if isinstance(signature, str) else None
        if signature is None and kind not in ("thinking", "redacted"):
            return None
        writer: Callable[[Issuer, str, Any], str] = wrap_bytes if as_bytes else wrap
        return writer(self.issuer, kind, signature)


class WireEncoder:
    """Base of the four stream encoders: event dispatch and the shared state.

    Subclasses implement the ``on_*`` hooks; each returns the bytes to send
    (possibly ``b""``). After the terminal event further events give ``b""``;
    ``feed`` after :meth:`close` raises (a programming error).
    """

    api: ClassVar[str]

    def __init__(
        self,
        *,
        model: str | None = None,
        response_id: str | None = None,
        created: int = 0,
        provider: str | None = None,
    ) -> None:
        self.model = model
        self.provider = provider  # the host the events came from (envelope issuer)
        self.response_id = response_id
        self.created = created
        self.source_api = self.api
        self.source_id: str | None = None
        self.carrier = Carrier(self.api)
        self.usage = Usage()
        self.started = False
        self.terminated = False
        self.closed = False

    # -- dispatch -----------------------------------------------------------

    def feed(self, event: Event) -> bytes:
        if self.closed:
            raise RuntimeError("feed() after close()")
        if self.terminated:
            return b""
        if type(event) is TextDelta:  # (dispatch's first case, taken here: a call less)
            return self.on_text(event)
        return self.dispatch(event)

    def dispatch(self, event: Event) -> bytes:
        """One event to its hook (also for events an encoder held back)."""
        cls = type(event)
        if cls is TextDelta:
            return self.on_text(event)  # type: ignore[arg-type]
        if cls is ToolCallDelta:
            return self.on_tool(event)  # type: ignore[arg-type]
        if cls is ThinkingDelta:
            return self.on_thinking(event)  # type: ignore[arg-type]
        if cls is BlockEnd:
            return self.on_block_end(event)  # type: ignore[arg-type]
        if cls is UsageUpdate:
            self.usage = event.usage  # type: ignore[union-attr]
            return self.on_usage()
        if cls is Start:
            return self._start(event)  # type: ignore[arg-type]
        if cls is Done:
            self.terminated = True
            self._learn(event.message)  # type: ignore[union-attr]
            return self.on_done(event.message)  # type: ignore[union-attr]
        if cls is Error:
            self.terminated = True
            if event.kind == "aborted":  # type: ignore[union-attr]
                return b""  # the client went away: nothing more to say (encoding.md §6)
            self._learn(event.message)  # type: ignore[union-attr]
            return self.on_error(event)  # type: ignore[arg-type]
        if cls in (PromptProgress, NormalizationError):
            return b""
        raise TypeError(f"not a canonical event: {event!r}")

    def close(self) -> bytes:
        """End of the events. Without a terminal event the target hears of a
        truncated stream through its own error event."""
        if self.closed:
            return b""
        out = b""
        if not self.terminated:
            out = self.feed(
                Error(
                    "truncated",
                    "the stream ended before its terminal event",
                    None,
                    self.snapshot(),
                )
            )
        self.closed = True
        return out

    def _start(self, event: Start) -> bytes:
        if self.started:
            return b""
        self.started = True
        self.source_api = event.api
        self.source_id = event.response_id
        self.provider = issuing_provider(self.provider, event.provider)
        self.carrier = Carrier(self.api, Issuer(event.api, self.provider, event.model))
        if self.model is None:
            self.model = event.model
        if self.response_id is None:
            self.response_id = self.target_id(event.response_id)
        return self.on_start()

    def _learn(self, message: AssistantMessage) -> None:
        """A terminal event without a ``Start`` before it still names its source."""
        if not self.started:
            self._start(Start(message.api, message.model, message.response_id, message.provider))
        self.usage = message.usage

    def snapshot(self) -> AssistantMessage:
        """An empty message of the source, for an ``Error`` made by :meth:`close`."""
        return AssistantMessage(
            (), self.source_api, self.model, StopReason.ERROR, None, self.usage, self.source_id
        )

    # -- ids ----------------------------------------------------------------

    id_prefix: ClassVar[str] = ""

    def target_id(self, source_id: str | None) -> str:
        """The response id the client sees: the source's own for the same api
        or when it already has the target's prefix, else one derived from it."""
        if source_id and (self.source_api == self.api or source_id.startswith(self.id_prefix)):
            return source_id
        return derive_id(self.id_prefix, self.api, source_id or "")

    def same_issuer(self, message: AssistantMessage | None = None) -> bool:
        api = message.api if message is not None else self.source_api
        return api == self.api

    # -- hooks ----------------------------------------------------------------

    def on_start(self) -> bytes:
        return b""

    def opening(self) -> bytes:
        """The opening event a target sends before any content, once the
        source has named itself and if it has not gone out yet (see
        :meth:`StreamEncoder.opening`); ``b""`` for targets without one."""
        return b""

    def on_text(self, event: TextDelta) -> bytes:
        raise NotImplementedError

    def on_thinking(self, event: ThinkingDelta) -> bytes:
        raise NotImplementedError

    def on_tool(self, event: ToolCallDelta) -> bytes:
        raise NotImplementedError

    def on_block_end(self, event: BlockEnd) -> bytes:
        raise NotImplementedError

    def on_usage(self) -> bytes:
        return b""

    def on_done(self, message: AssistantMessage) -> bytes:
        raise NotImplementedError

    def on_error(self, event: Error) -> bytes:
        raise NotImplementedError


class ProviderMismatchWarning(UserWarning):
    """An encoder was told one provider for events that name another."""


def issuing_provider(given: str | None, named: str | None) -> str | None:
    """The host to name as issuer: the caller's ``given`` one when there is
    one (it wins), else the one the events ``named``. When both are given and
    differ (case aside), a :class:`ProviderMismatchWarning` says so: the
    envelopes then name the caller's host, and sanitize returns the state to
    that host only."""
    if given is None:
        return named
    if named is not None and given.strip().lower() != named.strip().lower():
        warnings.warn(
            f"provider={given!r} was given for events from provider {named!r}; "
            f"opaque state is labelled as issued by {given!r}",
            ProviderMismatchWarning,
            stacklevel=4,
        )
    return given


def issuer_of(message: AssistantMessage) -> Issuer:
    """Who issued a message's opaque state: its api, host and model."""
    return Issuer(message.api, message.provider, message.response_model or message.model)


def turn_signatures(
    blocks: list[tuple[int, ContentBlock]], carrier: Carrier
) -> list[list[Any]] | None:
    """The entries of a ``turn`` envelope (encoding.md §9): ``[position,
    kind, signature]`` of the foreign text and tool-call signatures among
    ``blocks`` (position in the client's turn, carriers not counted; block),
    or None when there are none. The envelope rides on one extra empty
    thinking block / reasoning item / ``reasoning_details`` entry after the
    blocks it signs: streamed, a text or call signature is known only at
    its block's end, after the block has gone out."""
    if not carrier.foreign:
        return None
    entries: list[list[Any]] = []
    for position, block in blocks:
        if isinstance(block, (TextBlock, ToolCallBlock)) and block.signature:
            kind = "text" if isinstance(block, TextBlock) else "toolcall"
            entries.append([position, kind, block.signature])
    return entries or None


def raw_stop(message: AssistantMessage, api: str, table: Mapping[StopReason, str]) -> str:
    """The target's stop value: the source's own when it is the same api
    (exact), else the canonical reason through ``table`` (encoding.md §6)."""
    if message.api == api and message.raw_stop_reason:
        return message.raw_stop_reason
    return table.get(message.stop_reason, table[StopReason.STOP])
