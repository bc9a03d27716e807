"""``MessageBuilder``: the one accumulator behind every provider decoder.

A provider decoder translates one wire event into a few calls here ("open
block *key* as a tool call named x", "append this to *key*'s arguments",
"usage is now …", "the provider stopped with end_turn"). The builder alone
owns what follows from those facts:

* canonical indices — dense, in order of first appearance, whatever the wire
  keys are (Anthropic ``index``, Responses ``output_index``, …);
* per-block buffers, signatures, citations and tool-call argument buffers;
* the ``Usage`` last emitted and the stop-reason mapping;
* the terminal rules: every block gets exactly one ``BlockEnd``, open blocks
  are ended in index order before the single terminal event, nothing is
  emitted after it;
* event emission, into :attr:`events`, which the caller drains.

Cost: every call is O(size of its own arguments) except the block-end work,
which parses a tool call's arguments once (O(len(arguments))) — so a whole
stream costs O(bytes). Nothing re-scans accumulated text per delta.

A builder made with ``keep_content=False`` keeps no content at all (text,
reasoning, tool arguments, provider-block content, citations): for a caller
that reads a stream only to count it, whose memory must not grow with the
answer (the gateway relaying bytes it does not change). Its events still
carry their deltas; its message has the blocks' kinds, ids and names, the
usage, stop reason and error, and empty content.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable, Mapping
from dataclasses import replace
from typing import Any

from ._json import dumps_compact
from .events import (
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
    _TextDelta,
    text_delta,
    thinking_delta,
    tool_call_delta,
    usage_update,
)
from .hosts.identity import provider_for_response
from .messages import (
    AssistantMessage,
    ContentBlock,
    ProviderBlock,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    Usage,
)
from .partial_json import ArgsOp, ArgumentBuffer, parse_final_arguments, parse_partial_json

__all__ = [
    "CallIdFactory",
    "MergedEntries",
    "MessageBuilder",
    "Pieces",
    "StopTable",
    "synthetic_call_id",
]

#: A wire API's stop values: canonical reason, or ``None`` for values that
#: mean "the generation failed" and end the stream with ``Error(upstream)``.
StopTable = Mapping[str, StopReason | None]

_TEXT, _THINKING, _TOOL, _PROVIDER = "text", "thinking", "toolcall", "provider"
#: A position held for a block that opens later (:meth:`MessageBuilder.reserve`).
_RESERVED = "reserved"
#: Stop reasons under which a tool call still open at the end was cut off.
_CUT = (StopReason.LENGTH, StopReason.ERROR, StopReason.ABORTED)

#: Makes the id of a tool call that has none: ``(response_id, position)``.
CallIdFactory = Callable[[str | None, int], str]


def synthetic_call_id(response_id: str | None, position: int) -> str:
    """The id of a tool call that ended without one (providers.md §0.6):
    ``call_<h>_<n>``, ``h`` the first 8 hex digits of SHA-256 of the response
    id and ``n`` the call's position among the message's tool calls;
    ``call_<n>`` without a response id. Deterministic: no clock, no randomness."""
    if response_id:
        h = hashlib.sha256(response_id.encode("utf-8", "replace")).hexdigest()[:8]
        return f"call_{h}_{position}"
    return f"call_{position}"


class _Block:
    """Mutable state of one content block until it ends."""

    __slots__ = (
        "args",
        "citations",
        "client_tool",
        "data",
        "default_args",
        "ended",
        "final",
        "id",
        "index",
        "kind",
        "merged",
        "name",
        "parts",
        "provider_kind",
        "redacted",
        "refusal",
        "signature",
        "texts",
        "tool_position",
    )

    def __init__(self, index: int, kind: str, keep: bool) -> None:
        self.index = index
        self.kind = kind
        # text / thinking fragments; provider JSON input
        self.parts = Pieces() if keep else _Dropped()
        self.texts: dict[str, Pieces] | None = None  # provider string fields appended to
        self.merged: dict[str, MergedEntries] | None = None  # provider list fields merged into
        self.signature: str | None = None
        self.citations: list[Any] = []
        self.refusal = False
        self.redacted = False
        self.id: str | None = None
        self.name = ""
        self.args: ArgumentBuffer | None = None
        self.default_args: str | None = None
        self.tool_position = -1
        self.provider_kind = ""
        self.data: dict[str, Any] = {}
        self.client_tool = False
        self.ended = False
        self.final: ContentBlock | None = None


#: Fragments are joined every this many, so that a text costs about its own
#: size however small its pieces are (a list of 100-character strings takes
#: ~1.6x their text, of 10-character ones ~6x).
_FOLD_PARTS = 2048


class Pieces:
    """A string that arrives in pieces: :meth:`append` is O(len(piece)) and
    :meth:`text` joins once, on demand, keeping the join (a second call costs
    nothing until more pieces come). Every character is copied at most once
    by a fold and once by the final join, so a whole text costs O(its length)
    however many pieces it comes in."""

    __slots__ = ("fold_at", "folded", "parts")

    def __init__(self, first: str = "") -> None:
        self.parts: list[str] = [first] if first else []
        self.folded = 0  # parts[:folded] are joined runs of pieces
        self.fold_at = _FOLD_PARTS  # folded + _FOLD_PARTS: when to fold again

    def append(self, piece: str) -> None:
        # (Inlined in MessageBuilder.append_text, the hot path: keep in step.)
        self.parts.append(piece)
        if len(self.parts) >= self.fold_at:
            self.fold()

    def fold(self) -> None:
        """Join the pieces after the last joined run into one string."""
        parts = self.parts
        start = min(self.folded, len(parts))
        parts[start:] = ["".join(parts[start:])]
        self._folded(start + 1)

    def text(self) -> str:
        parts = self.parts
        if len(parts) > 1:
            parts[:] = ["".join(parts)]
            self._folded(1)
        return parts[0] if parts else ""

    def _folded(self, count: int) -> None:
        self.folded = count
        self.fold_at = count + _FOLD_PARTS

    def __bool__(self) -> bool:
        return bool(self.parts)


#: Pieces a builder that keeps no content holds before letting them go.
_DROP_PARTS = 64


class _Dropped(Pieces):
    """Pieces not kept (a builder that keeps no content): every
    :data:`_DROP_PARTS` appends they are let go, by the fold that would
    have joined them (so the builder's hot paths are the same)."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__()
        self.fold_at = _DROP_PARTS

    def fold(self) -> None:
        self.parts.clear()

    def text(self) -> str:
        self.parts.clear()
        return ""


class _ArgumentLength(ArgumentBuffer):
    """The arguments of a tool call whose text is not kept (a builder that
    keeps no content): their length only; read, they are empty."""

    __slots__ = ()

    def append(self, fragment: str) -> int:
        self._length += len(fragment)
        return self._length

    def partial(self, end: int, start: int | None = None) -> dict[str, Any]:
        return {}

    def ops(self, start: int, end: int) -> tuple[ArgsOp, ...]:
        return ()


class MergedEntries:
    """A list of JSON objects whose entries arrive in pieces, merged by their
    ``index`` (OpenRouter ``reasoning_details``, Groq ``executed_tools``).

    A later entry with the index of an earlier one merges into it: a non-null
    field replaces the earlier value, except that a string in one of
    ``text_fields`` is appended to the earlier string (as :class:`Pieces`, so
    that a long text streamed in many entries costs O(its length)). An entry
    without an integer index is a new entry. :meth:`entries` and :meth:`json`
    join on demand; :meth:`json` is kept until the next merge."""

    __slots__ = ("_entries", "_json", "_pieces", "_positions", "_text_fields")

    def __init__(self, text_fields: frozenset[str] = frozenset()) -> None:
        self._entries: list[dict[str, Any]] = []
        self._positions: dict[int, int] = {}
        self._pieces: dict[tuple[int, str], Pieces] = {}  # text fields not joined yet
        self._text_fields = text_fields
        self._json: str | None = None

    def merge(self, entry: Mapping[str, Any]) -> None:
        """O(size of ``entry``), amortised."""
        self._json = None
        index = entry.get("index")
        position = self._positions.get(index) if type(index) is int else None
        if position is None:
            if type(index) is int:
                self._positions[index] = len(self._entries)
            self._entries.append(dict(entry))
            return
        current = self._entries[position]
        for field, value in entry.items():
            if (
                field in self._text_fields
                and isinstance(value, str)
                and isinstance(current.get(field), str)
            ):
                pieces = self._pieces.get((position, field))
                if pieces is None:
                    pieces = self._pieces[position, field] = Pieces(current[field])
                pieces.append(value)
            elif value is not None:
                current[field] = value
                self._pieces.pop((position, field), None)

    def entries(self) -> list[dict[str, Any]]:
        """The merged list (shared, not a copy: read it, don't keep it)."""
        for (position, field), pieces in self._pieces.items():
            self._entries[position][field] = pieces.text()
        self._pieces.clear()
        return self._entries

    def json(self) -> str:
        """The merged list serialised compactly (a signature)."""
        if self._json is None:
            self._json = dumps_compact(self.entries())
        return self._json

    def __bool__(self) -> bool:
        return bool(self._entries)


class MessageBuilder:
    """Accumulates one assistant message and emits canonical events.

    ``api`` names the wire API, ``model`` the model the caller asked for,
    ``stop_table`` the api's stop values. ``blocks_end_implicitly`` is true
    for wire APIs without a per-block end (Chat Completions): their tool
    calls end at the terminal without being presumed cut off. ``call_id``
    makes the ids of tool calls that have none (never one already used in
    the message). ``provider`` names the host; without it, the host the
    stream's response id proves (``hosts.identity.provider_for_response``)
    is recorded, on ``Start`` and on the message. ``keep_content`` False:
    no content is kept (the module docstring), only what counts it.
    """

    def __init__(
        self,
        api: str,
        *,
        model: str | None = None,
        provider: str | None = None,
        stop_table: StopTable,
        blocks_end_implicitly: bool = False,
        call_id: CallIdFactory = synthetic_call_id,
        keep_content: bool = True,
    ) -> None:
        self.api = api
        self._keep = keep_content
        self.provider = provider
        self.events: list[Event] = []
        self.closed = False
        self._requested_model = model
        self._reported_model: str | None = None
        self._response_id: str | None = None
        self._started = False
        self._early: list[Event] = []  # diagnostics from before Start
        self._stop_table = stop_table
        self._implicit_end = blocks_end_implicitly
        self._blocks: list[_Block] = []
        self._keys: dict[Hashable, _Block] = {}
        self._merged: dict[Hashable, MergedEntries] = {}  # lists held for the decoder
        self._tool_calls = 0
        self._call_id = call_id
        self._used_ids: set[str] = set()
        self._usage = Usage(reported=False)  # until the provider reports usage
        self._raw_stop: str | None = None
        self._stop_override: StopReason | None = None
        self._stop_error_reason: str | None = None
        self._final: AssistantMessage | None = None

    # ------------------------------------------------------------------
    # Identity

    def start(self, model: str | None = None, response_id: str | None = None) -> None:
        """The stream identified itself. The first non-empty values win; ``Start``
        is emitted once, at the first call (or before the first content)."""
        if model and self._reported_model is None:
            self._reported_model = model
        if response_id and self._response_id is None:
            self._response_id = response_id
            if self.provider is None:  # the caller's name wins; else what the id proves
                self.provider = provider_for_response(self.api, response_id)
        if not self._started:
            self._emit_start()

    def _emit_start(self) -> None:
        self._started = True
        self.events.append(
            Start(
                self.api,
                self._reported_model or self._requested_model,
                self._response_id,
                self.provider,
            )
        )
        if self._early:
            self.events.extend(self._early)
            self._early = []

    def _ensure_started(self) -> None:
        if not self._started:
            self._emit_start()
            self.diagnostic("missing_start", "content arrived before the stream identified itself")

    @property
    def started(self) -> bool:
        return self._started

    # ------------------------------------------------------------------
    # Blocks

    def _open(self, key: Hashable, kind: str) -> _Block:
        self._ensure_started()
        old = self._keys.get(key)
        if old is not None and old.kind == _RESERVED:
            old.kind = kind
            return old
        if old is not None and not old.ended:
            self.diagnostic("duplicate_block_start", f"block {key!r} opened while still open")
            self._end(old)
        block = _Block(len(self._blocks), kind, self._keep)
        self._blocks.append(block)
        self._keys[key] = block
        return block

    def reserve(self, key: Hashable) -> None:
        """Hold the next index for a block that opens (or is placed) under
        ``key`` later, so that it keeps its place among blocks that stream
        first. A position never claimed is left out of the content."""
        if key not in self._keys:
            block = _Block(len(self._blocks), _RESERVED, self._keep)
            self._blocks.append(block)
            self._keys[key] = block

    def has(self, key: Hashable) -> bool:
        """Whether ``key`` names a block that was opened."""
        return key in self._keys

    def is_open(self, key: Hashable) -> bool:
        block = self._keys.get(key)
        return block is not None and not block.ended

    def kind(self, key: Hashable) -> str | None:
        """``"text"``, ``"thinking"``, ``"toolcall"``, ``"provider"``, or None."""
        block = self._keys.get(key)
        return block.kind if block is not None else None

    def open_text(
        self,
        key: Hashable,
        *,
        text: str = "",
        refusal: bool = False,
        citations: tuple[Any, ...] | list[Any] = (),
        signature: str | None = None,
    ) -> None:
        block = self._open(key, _TEXT)
        block.refusal = refusal
        if self._keep:
            block.citations.extend(citations)
        block.signature = signature or None
        if text:
            self.append_text(key, text)

    def open_thinking(
        self,
        key: Hashable,
        *,
        text: str = "",
        signature: str | None = None,
        redacted: bool = False,
    ) -> None:
        block = self._open(key, _THINKING)
        block.redacted = redacted
        if redacted:
            block.signature = signature or None
            return
        if text or signature:
            self._thinking(block, text, signature or None)

    def open_tool_call(
        self,
        key: Hashable,
        *,
        id: str | None = None,
        name: str | None = None,
        signature: str | None = None,
        synthesize_id: bool = False,
    ) -> None:
        """Open a client tool call and emit its opening ``ToolCallDelta``.

        ``synthesize_id`` is for wire APIs that never carry ids: the id is
        made now, so that every delta has it."""
        block = self._open(key, _TOOL)
        block.args = ArgumentBuffer() if self._keep else _ArgumentLength()
        block.tool_position = self._tool_calls
        self._tool_calls += 1
        block.id = id or (self._synthetic_id(block) if synthesize_id else None)
        if block.id:
            self._used_ids.add(block.id)
        block.name = name or ""
        block.signature = signature or None
        self.events.append(tool_call_delta(block.index, block.id, block.name, "", block.args, 0))

    def open_provider(
        self,
        key: Hashable,
        kind: str,
        data: Mapping[str, Any],
        *,
        client_tool: bool = False,
    ) -> None:
        """Open a provider-specific block, emitted only at its end.
        ``client_tool`` marks blocks the client executes (they count as tool
        calls for the stop reason)."""
        block = self._open(key, _PROVIDER)
        block.provider_kind = kind
        block.data = dict(data)
        block.client_tool = client_tool

    def _get(self, key: Hashable, what: str) -> _Block | None:
        block = self._keys.get(key)
        if block is None or block.ended:
            self.diagnostic(
                "delta_for_unknown_block", f"{what} for block {key!r}, which is not open"
            )
            return None
        return block

    def append_text(self, key: Hashable, delta: str) -> None:
        block = self._keys.get(key)
        if block is not None and block.kind == _TEXT and not block.ended and delta:
            # The hot path of every text-heavy stream: two appends. (Pieces.append,
            # inlined: the call alone is ~2 % of a text event.)
            pieces = block.parts
            parts = pieces.parts
            parts.append(delta)
            if len(parts) >= pieces.fold_at:
                pieces.fold()
            event = _TextDelta()  # (text_delta, inlined: the call is 1 % of a text event)
            event.index = block.index
            event.delta = delta
            event.__class__ = TextDelta
            self.events.append(event)
            return
        block = self._get(key, "text")
        if block is None or not delta:
            return
        if block.kind != _TEXT:
            self.diagnostic("unknown_delta", f"text for a {block.kind} block", delta)
            return
        block.parts.append(delta)
        self.events.append(text_delta(block.index, delta))

    def append_thinking(self, key: Hashable, delta: str, *, signature: str | None = None) -> None:
        """Append reasoning text. A non-empty ``signature`` that changes the
        block's replaces it and is announced on the same ``ThinkingDelta``."""
        block = self._keys.get(key)
        if (
            block is not None
            and block.kind == _THINKING
            and delta
            and not (signature or block.ended or block.redacted)
        ):  # the hot path of reasoning streams
            block.parts.append(delta)
            self.events.append(thinking_delta(block.index, delta, None))
            return
        block = self._get(key, "thinking")
        if block is None or not (delta or signature):
            return
        if block.kind != _THINKING or block.redacted:
            self.diagnostic("unknown_delta", f"thinking for a {block.kind} block", delta)
            return
        self._thinking(block, delta, signature or None)

    # Appends keyed by the wire's own part key: the block opens at the first
    # append under a key never used (has() false); after that they are the
    # plain appends, with their diagnostics for a block that has ended.

    def text(self, key: Hashable, delta: str, *, refusal: bool = False) -> None:
        """Append text to the text block ``key``, opened (``refusal`` marking a
        refusal) if no block was ever opened under ``key``, even for an empty
        ``delta``."""
        if key not in self._keys:
            self.open_text(key, refusal=refusal)
        self.append_text(key, delta)

    def thinking(self, key: Hashable, delta: str, *, signature: str | None = None) -> None:
        """Append reasoning text to the thinking block ``key``, opened with the
        text and ``signature`` if no block was ever opened under ``key``. On an
        existing block a non-empty ``signature`` is set after the text, with
        its own ``ThinkingDelta`` when it changes (:meth:`set_signature`)."""
        if key not in self._keys:
            self.open_thinking(key, text=delta, signature=signature)
            return
        self.append_thinking(key, delta)
        if signature:
            self.set_signature(key, signature)

    def tool_call(
        self,
        key: Hashable,
        *,
        id: str | None = None,
        name: str | None = None,
        synthesize_id: bool = False,
    ) -> None:
        """The tool call ``key``: opened (:meth:`open_tool_call`) if no block was
        ever opened under ``key``, else given this id and name
        (:meth:`set_tool_identity`)."""
        if key not in self._keys:
            self.open_tool_call(key, id=id, name=name, synthesize_id=synthesize_id)
        else:
            self.set_tool_identity(key, id, name)

    def _thinking(self, block: _Block, delta: str, signature: str | None) -> None:
        if delta:
            block.parts.append(delta)
        if signature is not None and signature != block.signature:
            block.signature = signature
        else:
            signature = None
        if delta or signature is not None:
            self.events.append(thinking_delta(block.index, delta, signature))

    def set_signature(
        self, key: Hashable, signature: str | None, *, onto_last_delta: bool = False
    ) -> None:
        """Replace the block's signature (an empty value sets nothing). A
        thinking block announces the change with ``ThinkingDelta("", sig)``;
        with ``onto_last_delta``, on the block's own unsigned ``ThinkingDelta``
        instead when that is the newest event not yet drained (for a relay
        that drains after every event it forwards, so the merge cannot depend
        on chunking)."""
        block = self._get(key, "signature")
        if block is None or not signature:
            return
        if block.kind != _THINKING:
            block.signature = signature
            return
        last = self.events[-1] if self.events and onto_last_delta else None
        if (
            isinstance(last, ThinkingDelta)
            and last.index == block.index
            and last.signature is None
            and signature != block.signature
        ):
            block.signature = signature
            self.events[-1] = thinking_delta(block.index, last.delta, signature)
        else:
            self._thinking(block, "", signature)

    def set_text_details(
        self,
        key: Hashable,
        *,
        signature: str | None = None,
        citations: tuple[Any, ...] = (),
        refusal: bool = False,
    ) -> None:
        """What a finished text block of a relayed stream says about the text
        it carried: its signature, citations and refusal mark."""
        block = self._keys.get(key)
        if block is not None and block.kind == _TEXT and not block.ended:
            block.signature = signature
            block.citations[:] = citations
            block.refusal = refusal

    def signature(self, key: Hashable) -> str | None:
        block = self._keys.get(key)
        return block.signature if block is not None else None

    def append_arguments(self, key: Hashable, fragment: str) -> None:
        """Append argument text: a ``ToolCallDelta`` for a tool call; plain
        accumulation (parsed into ``data["input"]`` at the end) for a
        provider block. An empty fragment does nothing."""
        block = self._keys.get(key)
        if block is not None and block.args is not None and fragment and not block.ended:
            # The hot path of tool-heavy streams.
            args = block.args
            end = args.append(fragment)
            self.events.append(
                tool_call_delta(block.index, block.id, block.name, fragment, args, end)
            )
            return
        block = self._get(key, "arguments")
        if block is None or not fragment:
            return
        if block.kind == _PROVIDER:
            block.parts.append(fragment)
        elif block.args is not None:
            end = block.args.append(fragment)
            self.events.append(
                tool_call_delta(block.index, block.id, block.name, fragment, block.args, end)
            )
        else:
            self.diagnostic("unknown_delta", f"arguments for a {block.kind} block", fragment)

    def set_default_arguments(self, key: Hashable, raw: str) -> None:
        """Arguments known whole up front (Anthropic eager ``input``): emitted
        as one ``ToolCallDelta`` at block end, unless deltas arrived."""
        block = self._keys.get(key)
        if block is not None and block.kind == _TOOL:
            block.default_args = raw

    def set_tool_identity(
        self, key: Hashable, id: str | None = None, name: str | None = None
    ) -> None:
        """First non-empty id and name win; a different later name is ignored
        with ``tool_name_changed``."""
        block = self._keys.get(key)
        if block is None or block.kind != _TOOL:
            return
        if id and not block.id:
            block.id = id
            self._used_ids.add(id)
        if name:
            if not block.name:
                block.name = name
            elif name != block.name:
                self.diagnostic("tool_name_changed", f"{block.name!r} → {name!r}", name)

    def add_citation(self, key: Hashable, citation: Any) -> None:
        block = self._get(key, "citation")
        if block is not None and self._keep:
            block.citations.append(citation)

    def citation_count(self, key: Hashable) -> int:
        block = self._keys.get(key)
        return len(block.citations) if block is not None else 0

    def append_provider_text(self, key: Hashable, field: str, text: str) -> None:
        """Append to a string field of a provider block's data (``None`` counts
        as ""). The pieces are joined once, when the block is frozen; a field
        holding something else than a string is left alone (``unknown_delta``)."""
        block = self._get(key, "provider text")
        if block is None or block.kind != _PROVIDER or not self._keep:
            return
        if block.texts is None:
            block.texts = {}
        pieces = block.texts.get(field)
        if pieces is None:
            current = block.data.get(field)
            if current is not None and not isinstance(current, str):
                kind = type(current).__name__
                self.diagnostic("unknown_delta", f"text for the {kind} {field!r} of a block", text)
                return
            pieces = block.texts[field] = Pieces(current or "")
        pieces.append(text)

    def provider_entries(self, key: Hashable, kind: str, field: str, entries: list[Any]) -> None:
        """Entries of the list ``field`` of provider block ``key`` (opened as
        ``kind`` if no block was ever opened under ``key``), merged by index
        into the entries before them (:class:`MergedEntries`); entries that
        are not objects are skipped. O(size of the entries)."""
        if key not in self._keys:
            self.open_provider(key, kind, {})
        block = self._keys[key]
        if block.kind != _PROVIDER or block.ended:
            self.diagnostic("unknown_delta", f"{field} for a {block.kind} block")
            return
        if not self._keep:
            return
        if block.merged is None:
            block.merged = {}
        merged = block.merged.get(field)
        if merged is None:
            merged = block.merged[field] = MergedEntries()
        for entry in entries:
            if isinstance(entry, dict):
                merged.merge(entry)

    def merge_entry(
        self, name: Hashable, entry: Mapping[str, Any], *, text_fields: frozenset[str] = frozenset()
    ) -> None:
        """An entry of the list ``name`` held for the decoder (a signature made
        of entries that arrive in pieces), merged by index
        (:class:`MergedEntries`; ``text_fields`` are given by the first call)."""
        if not self._keep:
            return
        merged = self._merged.get(name)
        if merged is None:
            merged = self._merged[name] = MergedEntries(text_fields)
        merged.merge(entry)

    def merged_json(self, name: Hashable) -> str:
        """The list ``name`` as merged so far, serialised compactly (``[]`` when
        nothing was merged); joined only when it changed since the last call."""
        merged = self._merged.get(name)
        return merged.json() if merged is not None else "[]"

    def set_provider_data(self, key: Hashable, data: Mapping[str, Any]) -> None:
        block = self._keys.get(key)
        if block is not None and block.kind == _PROVIDER and not block.ended:
            block.data = dict(data)
            block.texts = None

    def set_client_tool(self, key: Hashable, client_tool: bool) -> None:
        """Whether a provider block is executed by the client (counts as a tool
        call for the stop reason), when that is known only after it opened."""
        block = self._keys.get(key)
        if block is not None and block.kind == _PROVIDER:
            block.client_tool = client_tool

    def reconcile(self, key: Hashable, full: str, mismatch_kind: str | None) -> None:
        """A ``*.done`` value for the block's text, thinking or arguments.

        Equal to what streamed: nothing. Extends it: the missing suffix is
        emitted as a normal delta. Differs: the value wins in the block, with
        ``NormalizationError(mismatch_kind)`` unless that is None; deltas already
        emitted are not retracted. O(len(full)). Without content kept
        there is nothing to compare: nothing is done."""
        block = self._keys.get(key)
        if block is None or block.ended or not self._keep:
            return
        current = self._text_of(block)
        if full == current:
            return
        if full.startswith(current):
            suffix = full[len(current) :]
            if block.kind == _TEXT:
                self.append_text(key, suffix)
            elif block.kind == _THINKING:
                self.append_thinking(key, suffix)
            else:
                self.append_arguments(key, suffix)
            return
        if mismatch_kind is not None:
            self.diagnostic(
                mismatch_kind, f"block {block.index}: final value differs from the deltas", full
            )
        if block.args is not None:
            block.args = ArgumentBuffer()
            block.args.append(full)
        else:
            block.parts = Pieces(full)

    def text_of(self, key: Hashable) -> str:
        block = self._keys.get(key)
        return self._text_of(block) if block is not None else ""

    @staticmethod
    def _text_of(block: _Block) -> str:
        if block.args is not None:
            return block.args.text()
        return block.parts.text()

    def end_block(self, key: Hashable, *, error: str | None = None) -> None:
        """``BlockEnd`` for the block (once; later calls do nothing). ``error``
        says why a tool call's arguments cannot be whole (``"incomplete"``,
        or a parser's reason): they are then a best-effort preview."""
        block = self._keys.get(key)
        if block is None:
            self.diagnostic(
                "delta_for_unknown_block", f"end of block {key!r}, which was never opened"
            )
        elif not block.ended:
            self._end(block, error=error)

    def place(self, key: Hashable, final: ContentBlock) -> None:
        """A block finished elsewhere (a relayed stream), ended here exactly as
        it is: the block open (or reserved) under ``key``, else a new one at
        the next index. Its ``BlockEnd`` is emitted once; nothing is parsed
        or reported again."""
        block = self._keys.get(key)
        if block is None or block.ended:
            block = self._open(key, _kind_of(final))
        elif block.kind == _RESERVED:
            block.kind = _kind_of(final)
        if isinstance(final, ToolCallBlock):
            self._used_ids.add(final.id)
        block.ended = True
        block.final = final
        self.events.append(BlockEnd(block.index, final))

    def backfill_signature(self, key: Hashable, signature: str, detail: str) -> None:
        """Data for a block that has already ended (from a terminal response):
        its final state changes, its ``BlockEnd`` is not repeated."""
        block = self._keys.get(key)
        if block is None or not block.ended or block.final is None or block.signature == signature:
            return
        block.signature = signature
        block.final = self._freeze(block, error=None, report=False)
        self.diagnostic("backfilled_from_completed", detail)

    def backfill_citations(self, key: Hashable, citations: list[Any] | tuple[Any, ...]) -> None:
        """Citations for a text block that arrive after its text (metadata sent
        at the end of the response): appended while the block is open; for a
        block that has already ended, its final state changes and its
        ``BlockEnd`` is not repeated."""
        block = self._keys.get(key)
        if block is None or block.kind != _TEXT or not citations or not self._keep:
            return
        block.citations.extend(citations)
        if block.ended:
            block.final = self._freeze(block, error=None, report=False)
            self.diagnostic("backfilled_from_completed", f"citations for block {block.index}")

    def _end(self, block: _Block, *, error: str | None = None) -> None:
        if (
            block.kind == _TOOL
            and block.args is not None
            and not len(block.args)
            and block.default_args
        ):
            end = block.args.append(block.default_args)
            self.events.append(
                ToolCallDelta(
                    block.index, block.id, block.name, block.default_args, block.args, end
                )
            )
        block.ended = True
        block.final = self._freeze(block, error=error, report=True)
        self.events.append(BlockEnd(block.index, block.final))

    def _synthetic_id(self, block: _Block) -> str:
        """``call_id`` of the block's position, moved on past ids already in
        use; the id is kept on the block, so it is made once."""
        position = block.tool_position
        made = self._call_id(self._response_id, position)
        while made in self._used_ids:
            position += 1
            made = self._call_id(self._response_id, position)
        self._used_ids.add(made)
        block.id = made
        return made

    def _freeze(self, block: _Block, *, error: str | None, report: bool) -> ContentBlock:
        """The block's final (or, with ``report`` False, snapshot) state."""
        if not self._keep:
            return self._hollow(block, error)
        if block.kind == _TEXT:
            return TextBlock(
                self._text_of(block), block.signature, tuple(block.citations), block.refusal
            )
        if block.kind == _THINKING:
            return ThinkingBlock(self._text_of(block), block.signature, block.redacted)
        if block.kind == _TOOL:
            raw = self._text_of(block)
            if error is not None:
                arguments = parse_partial_json(raw)
            else:
                arguments, error, repaired = parse_final_arguments(raw)
                if report and repaired:
                    self.diagnostic("repaired_arguments", f"block {block.index}", raw)
                if report and error:
                    self.diagnostic("invalid_tool_arguments", f"block {block.index}: {error}", raw)
            return ToolCallBlock(
                block.id or self._synthetic_id(block),
                block.name,
                arguments,
                raw,
                block.signature,
                error,
            )
        data = block.data
        if block.texts:
            data = {**data, **{name: pieces.text() for name, pieces in block.texts.items()}}
        if block.merged:
            data = {**data, **{name: merged.entries() for name, merged in block.merged.items()}}
        if block.parts:
            raw = block.parts.text()
            value, failure, _ = parse_final_arguments(raw)
            if report and failure:
                self.diagnostic("invalid_json", f"block {block.index} input: {failure}", raw)
            data = {**data, "input": value}
        return ProviderBlock(self.api, block.provider_kind, data)

    def _hollow(self, block: _Block, error: str | None) -> ContentBlock:
        """A block's final state without its content (none was kept): its
        kind, and a tool call's id, name and ``error``."""
        if block.kind == _TEXT:
            return TextBlock("", None, (), block.refusal)
        if block.kind == _THINKING:
            return ThinkingBlock("", None, block.redacted)
        if block.kind == _TOOL:
            call_id = block.id or self._synthetic_id(block)
            return ToolCallBlock(call_id, block.name, {}, "", None, error)
        return ProviderBlock(self.api, block.provider_kind, {})

    # ------------------------------------------------------------------
    # Usage, stop reason, diagnostics

    def set_usage(self, usage: Usage) -> None:
        """A cumulative usage snapshot; ``UsageUpdate`` when the counts changed."""
        old = self._usage
        # (Output counts change most often: compared first, without a call.)
        changed = usage.output_tokens != old.output_tokens or usage != old
        self._usage = usage
        if changed and not self.closed:
            if not self._started:
                self._ensure_started()
            self.events.append(usage_update(usage))

    @property
    def usage(self) -> Usage:
        return self._usage

    def set_stop_reason(
        self,
        raw: str,
        *,
        mapped: StopReason | None = None,
        error_reason: str | None = None,
    ) -> None:
        """Record the provider's stop value (the last one wins). ``mapped``
        overrides the api's table; ``error_reason`` is the provider's text for
        an error-like value."""
        self._raw_stop = raw
        self._stop_override = mapped
        self._stop_error_reason = error_reason

    @property
    def stop_seen(self) -> bool:
        return self._raw_stop is not None

    def progress(self, processed: int, total: int, cached: int, time_ms: float) -> None:
        self._ensure_started()
        self.events.append(PromptProgress(processed, total, cached, time_ms))

    def diagnostic(self, kind: str, detail: str, raw: str | None = None) -> None:
        """A ``NormalizationError``. ``Start`` is always the first event: one
        raised before the stream identified itself follows its ``Start``, or
        precedes the terminal ``Error`` when there is none."""
        if self.closed:
            return
        if self._started:
            self.events.append(NormalizationError(kind, detail, raw))
        else:
            self._early.append(NormalizationError(kind, detail, raw))

    # ------------------------------------------------------------------
    # Terminal

    def finish(self) -> None:
        """The api's terminal signal arrived: ``Done``, or ``Error(upstream)``
        when the stop value means the generation failed."""
        if self.closed:
            return
        self._ensure_started()  # a Done always follows a Start
        raw = self._raw_stop
        if self._stop_override is not None:
            reason: StopReason | None = self._stop_override
        elif raw is None:
            self.diagnostic("missing_stop_reason", "the stream ended without a stop reason")
            reason = StopReason.STOP
        elif raw in self._stop_table:
            reason = self._stop_table[raw]
        else:
            self.diagnostic("unknown_stop_reason", f"unknown stop reason {raw!r}", raw)
            reason = StopReason.STOP
        if reason is None:
            self.fail("upstream", self._stop_error_reason or raw or "error", raw)
            return
        self._end_open(cut=reason is StopReason.LENGTH)
        if reason is StopReason.STOP and any(
            b.kind == _TOOL or b.client_tool for b in self._blocks
        ):
            reason = StopReason.TOOL_USE
        self._close(reason, None)
        assert self._final is not None
        self.events.append(Done(self._final))

    def fail(
        self,
        kind: str,
        reason: str,
        code: str | None = None,
        retry_after: float | None = None,
        *,
        error_type: str | None = None,
    ) -> None:
        """End with ``Error(kind)``: everything received so far is kept, open
        blocks are ended (open tool calls as ``incomplete``). ``retry_after``
        is the wait the provider's error body named, if any; ``error_type``
        the provider's type beside its code."""
        if self.closed:
            return
        if not self._started:
            self._emit_start()  # Start is first, also before an error alone
        self._end_open(cut=True)
        stop = StopReason.ABORTED if kind == "aborted" else StopReason.ERROR
        self._close(stop, reason)
        assert self._final is not None
        if code is not None or error_type is not None:
            self._final = replace(self._final, error_code=code, error_type=error_type)
        error = Error(
            kind, reason, code, self._final, retry_after=retry_after, error_type=error_type
        )
        self.events.append(error)

    def conclude(self, message: AssistantMessage, error: Error | None = None) -> None:
        """End with the terminal of a relayed stream of canonical events
        (``message`` from its ``Done``, or its ``Error``): identity, usage and
        stop reason are that message's, the content is this builder's. Open
        blocks end as at any terminal (tool calls as ``incomplete`` when the
        stream was cut), ``stop`` with tool calls becomes ``tool_use``."""
        if self.closed:
            return
        if self._early:
            self.events.extend(self._early)
            self._early = []
        stop = message.stop_reason
        self._end_open(cut=error is not None or stop in _CUT)
        if stop is StopReason.STOP and any(b.kind == _TOOL for b in self._blocks):
            stop = StopReason.TOOL_USE
        self._final = replace(message, content=self._content(), stop_reason=stop)
        self.closed = True
        if error is None:
            self.events.append(Done(self._final))
        else:
            self.events.append(replace(error, message=self._final))

    def _end_open(self, *, cut: bool) -> None:
        for block in self._blocks:
            if not block.ended and block.kind != _RESERVED:
                incomplete = block.kind == _TOOL and (cut or not self._implicit_end)
                self._end(block, error="incomplete" if incomplete else None)

    def _close(self, stop: StopReason, error: str | None) -> None:
        self._final = self._message(stop, error)
        self.closed = True

    def _content(self) -> tuple[ContentBlock, ...]:
        return tuple(
            b.final if b.final is not None else self._freeze(b, error=None, report=False)
            for b in self._blocks
            if b.kind != _RESERVED
        )

    def _message(self, stop: StopReason, error: str | None) -> AssistantMessage:
        return AssistantMessage(
            content=self._content(),
            api=self.api,
            model=self._requested_model or self._reported_model,
            stop_reason=stop,
            raw_stop_reason=self._raw_stop,
            usage=self._usage,
            response_id=self._response_id,
            provider=self.provider,
            response_model=self._reported_model,
            error=error,
        )

    @property
    def message(self) -> AssistantMessage:
        """The final message after the terminal event; before it, a snapshot
        of everything so far (open blocks as they stand)."""
        if self._final is not None:
            return self._final
        return self._message(StopReason.STOP, None)


def _kind_of(block: ContentBlock) -> str:
    if isinstance(block, TextBlock):
        return _TEXT
    if isinstance(block, ThinkingBlock):
        return _THINKING
    if isinstance(block, ToolCallBlock):
        return _TOOL
    return _PROVIDER
