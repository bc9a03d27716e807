"""``openai-responses``: the OpenAI Responses streaming API (providers.md §2).

Output items are keyed by ``output_index``; the parts of a message item by
``(output_index, content_index)``, one ``TextBlock`` each. A reasoning item is
one ``ThinkingBlock`` whose summary and reasoning-text parts are joined by a
blank line. Never "the current item": items interleave, and hosts change
item ids between ``output_item.done`` and ``response.completed``.

Dispatch is on the payload's ``type`` (some hosts send no ``event:`` lines);
the SSE event name ``error`` always means an error. Tool progress events are
ignored: every item's final state arrives with ``output_item.done``, or with
the terminal response, from which items that never finished are completed.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, ClassVar

from ..._json import dumps_compact
from ...builder import MessageBuilder
from ...errors import error_type_of
from ...messages import StopReason, Usage
from ..base import ERROR_WORDS, Decoder, as_dict, as_int, as_list, as_str, error_of
from .wire import client_call_id, output_call_id
from .wire import item_signature as _signature

__all__ = ["OpenAIResponsesDecoder", "to_usage"]

#: Raw values are ``response.status``, or for ``incomplete`` the
#: ``incomplete_details.reason`` (providers.md §5).
STOP_TABLE: dict[str, StopReason | None] = {
    "completed": StopReason.STOP,
    "incomplete": StopReason.LENGTH,
    "max_output_tokens": StopReason.LENGTH,
    "length": StopReason.LENGTH,
    "content_filter": StopReason.CONTENT_FILTER,
    "failed": None,
}

_TEXT_PARTS = {"output_text": "text", "refusal": "refusal"}

_SUMMARY, _CONTENT = "summary", "content"

Key = Hashable


def to_usage(raw: dict[str, Any]) -> Usage:
    """A Responses ``usage`` object as canonical ``Usage`` (providers.md §2.5):
    cached reads and cache writes are both part of ``input_tokens``."""
    details = as_dict(raw.get("input_tokens_details"))
    cached = as_int(details.get("cached_tokens"))
    written = as_int(details.get("cache_write_tokens"))
    return Usage.of(
        input_tokens=max(0, as_int(raw.get("input_tokens")) - cached - written),
        output_tokens=as_int(raw.get("output_tokens")),
        cache_read_tokens=cached,
        cache_write_tokens=written,
        reasoning_tokens=as_int(as_dict(raw.get("output_tokens_details")).get("reasoning_tokens")),
        raw=raw,
    )


class _Item:
    """What the decoder remembers of one output item (keys, not content)."""

    __slots__ = ("done", "encrypted", "part_chars", "part_keys", "parts", "type")

    def __init__(self, kind: str) -> None:
        self.type = kind
        self.done = False
        self.encrypted = False  # the streamed ``output_item.done`` had encrypted_content
        #: Blocks of a message item, in the order they opened.
        self.part_keys: list[Key] = []
        #: Reasoning parts seen, in order (a dict as an ordered set), and the
        #: characters appended for the latest one (after its separator): where
        #: it starts in the block, counted without reading the block's text.
        self.parts: dict[tuple[str, int], None] = {}
        self.part_chars = 0


def _item_key(output_index: Key) -> Key:
    return ("item", output_index)


def offered_names(tools: Any) -> frozenset[str] | None:
    """The names of the tools a response says the client offered (its
    ``tools``, nested ``tools`` of a namespace included); None when the
    response lists none, so that nothing can be judged from them."""
    names: set[str] = set()
    pending = list(as_list(tools))
    if not pending:
        return None
    while pending:
        tool = as_dict(pending.pop())
        if isinstance(tool.get("name"), str):
            names.add(tool["name"])
        pending.extend(as_list(tool.get("tools")))
    return frozenset(names)


def _index(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class OpenAIResponsesDecoder(Decoder):
    api = "openai-responses"
    stop_table = STOP_TABLE
    closing_words = (
        b"response.completed",
        b"response.incomplete",
        b"response.failed",
        *ERROR_WORDS,
    )

    _handlers: ClassVar[dict[str, Callable[[OpenAIResponsesDecoder, dict[str, Any]], None]]]

    def __init__(self, builder: MessageBuilder, choice: int = 0) -> None:
        super().__init__(builder, choice)
        self._items: dict[Key, _Item] = {}
        self._last_part: Key = None  # the key _text_key gave last (its block was opened)
        self._by_id: dict[str, Key] = {}
        #: Items that wait for the client (``wire.client_call_id``), by call
        #: id, and the call ids whose output came in this response.
        self._client_calls: dict[str, Key] = {}
        self._answered: set[str] = set()
        #: Names of the tools the client offered, when the response lists
        #: them: a call of any other name is one the server ran (xAI's
        #: x_search runs as ``custom_tool_call`` items).
        self._offered: frozenset[str] | None = None

    def handle(self, event: str, payload: dict[str, Any]) -> None:
        kind = payload.get("type")
        if kind == "response.output_text.delta" and event != "error":
            # The commonest event of all, here rather than in the handler table.
            delta = payload.get("delta")
            self.builder.append_text(self._text_key(payload), delta if type(delta) is str else "")
            return
        if event == "error" or kind == "error":
            self._error(payload)
            return
        handler = self._handlers.get(kind) if type(kind) is str else None
        if handler is not None:
            handler(self, payload)
        # Tool progress events and unknown types: nothing.

    # ------------------------------------------------------------------
    # Response lifecycle

    def _identify(self, response: dict[str, Any]) -> None:
        self.builder.start(
            as_str(response.get("model")) or None, as_str(response.get("id")) or None
        )
        if self._offered is None:
            self._offered = offered_names(response.get("tools"))

    def _usage(self, response: dict[str, Any]) -> None:
        usage = response.get("usage")
        if isinstance(usage, dict):
            self.builder.set_usage(to_usage(usage))

    def _lifecycle(self, payload: dict[str, Any]) -> None:
        response = as_dict(payload.get("response"))
        self._identify(response)
        self._usage(response)

    def _terminal(self, payload: dict[str, Any]) -> None:
        """``response.completed`` / ``response.incomplete``: backfill, usage,
        stop reason, ``Done``."""
        response = as_dict(payload.get("response"))
        self._identify(response)
        self._backfill(as_list(response.get("output")))
        self._usage(response)
        default = "incomplete" if payload.get("type") == "response.incomplete" else "completed"
        status = as_str(response.get("status")) or default
        raw = status
        if status == "incomplete":
            raw = as_str(as_dict(response.get("incomplete_details")).get("reason")) or status
        reason, _ = error_of(as_dict(response.get("error")), default="")
        self.builder.set_stop_reason(raw, error_reason=reason or None)
        self.builder.finish()

    def _failed(self, payload: dict[str, Any]) -> None:
        response = as_dict(payload.get("response"))
        self._identify(response)
        self._usage(response)
        error = as_dict(response.get("error"))
        reason, code = error_of(error, default="response failed")
        self.builder.set_stop_reason(as_str(response.get("status")) or "failed")
        self.builder.fail("upstream", reason, code, error_type=error_type_of(error))

    def _error(self, payload: dict[str, Any]) -> None:
        """``error``: code and message at the top level or under ``error``."""
        top_reason, top_code = error_of(payload, default="", codes=("code",))
        error = as_dict(payload.get("error"))
        reason, code = error_of(error, default="error event")
        kind = error_type_of(error)  # the payload's own type is the event's, "error"
        self.builder.fail("upstream", top_reason or reason, top_code or code, error_type=kind)

    # ------------------------------------------------------------------
    # Output items

    def _output_index(self, payload: dict[str, Any], item: dict[str, Any] | None = None) -> Key:
        """The block key of an event's item: ``output_index``; for hosts that
        omit it, the output index seen with the same item id (or the id itself)."""
        index = _index(payload.get("output_index"))
        if index is not None:
            return index
        item_id = as_str(item.get("id") if item is not None else payload.get("item_id"))
        if item_id in self._by_id:
            return self._by_id[item_id]
        if item is not None and item_id:
            return ("id", item_id)
        return repr(payload.get("output_index"))

    def _item_added(self, payload: dict[str, Any]) -> None:
        item = as_dict(payload.get("item"))
        self._open_item(self._output_index(payload, item), item)

    def _item_done(self, payload: dict[str, Any]) -> None:
        item = as_dict(payload.get("item"))
        self._complete_item(self._output_index(payload, item), item)

    def _open_item(self, index: Key, item: dict[str, Any]) -> _Item:
        b = self.builder
        kind = as_str(item.get("type")) or "unknown"
        old = self._items.get(index)
        if old is not None and not old.done and old.part_keys:
            # A message's parts; other kinds are ended (and reported) by the builder.
            b.diagnostic("duplicate_block_start", f"output item {index!r} added while still open")
            for key in old.part_keys:
                b.end_block(key)
        state = self._items[index] = _Item(kind)
        item_id = as_str(item.get("id"))
        if item_id:
            self._by_id[item_id] = index
        key = _item_key(index)
        if kind == "message":
            pass  # its parts open with content_part.added, their first delta, or at done
        elif kind == "reasoning":
            b.open_thinking(key)
        elif kind == "function_call":
            b.open_tool_call(
                key, id=as_str(item.get("call_id")) or None, name=as_str(item.get("name")) or None
            )
            eager = item.get("arguments")
            if isinstance(eager, str):
                b.append_arguments(key, eager)
        else:
            b.open_provider(key, kind, item)
            self._classify(key, item)
        return state

    def _classify(self, key: Key, item: dict[str, Any]) -> None:
        """Whether a provider item waits for the client (``wire.py``): it
        counts as a tool call until its output arrives in the same response."""
        call_id = client_call_id(item)
        name = item.get("name")
        if self._offered is not None and isinstance(name, str) and name not in self._offered:
            call_id = None  # a named tool the client never offered: the server ran it
        if call_id is not None:
            self._client_calls[call_id] = key
        self.builder.set_client_tool(key, call_id is not None and call_id not in self._answered)
        answered = output_call_id(item)
        if answered is not None:
            self._answered.add(answered)
            call_key = self._client_calls.get(answered)
            if call_key is not None:
                self.builder.set_client_tool(call_key, False)

    def _complete_item(self, index: Key, item: dict[str, Any]) -> None:
        """``output_item.done`` (or the terminal response's copy of the item):
        reconcile, sign and end its blocks. An item still ``incomplete`` is
        left to the terminal event, which marks an open tool call as cut off."""
        b = self.builder
        state = self._items.get(index)
        if state is None:
            state = self._open_item(index, item)
        if state.done:
            return
        state.done = True
        key = _item_key(index)
        kind = state.type
        if kind == "message":
            self._complete_message(index, state, item)
        elif kind == "reasoning":
            self._complete_reasoning(key, state, item)
        elif kind == "function_call":
            b.set_tool_identity(
                key, id=as_str(item.get("call_id")) or None, name=as_str(item.get("name")) or None
            )
            arguments = as_str(item.get("arguments"))
            if arguments:
                b.reconcile(key, arguments, "arguments_mismatch")
            signature = _signature({"id": item.get("id"), "namespace": item.get("namespace")})
            b.set_signature(key, signature)
            if item.get("status") == "incomplete":
                return
        elif b.kind(key) == "provider":
            b.set_provider_data(key, item)
            self._classify(key, item)
        for part_key in state.part_keys:
            b.end_block(part_key)
        if kind != "message":
            b.end_block(key)

    def _complete_message(self, index: Key, state: _Item, item: dict[str, Any]) -> None:
        b = self.builder
        signature = _signature({"id": item.get("id"), "phase": item.get("phase")})
        for content_index, raw in enumerate(as_list(item.get("content"))):
            part = as_dict(raw)
            part_type = as_str(part.get("type")) or "unknown"
            key = ("part", index, content_index)
            field = _TEXT_PARTS.get(part_type)
            if field is None:
                if not b.has(key):
                    b.open_provider(key, part_type, part)
                    state.part_keys.append(key)
                else:
                    b.set_provider_data(key, part)
                continue
            if not b.has(key):
                b.open_text(key, refusal=part_type == "refusal")
                state.part_keys.append(key)
            if b.kind(key) != "text":
                continue
            text = as_str(part.get(field))
            if text:
                b.reconcile(key, text, "text_mismatch")
            if not b.citation_count(key):
                for annotation in as_list(part.get("annotations")):
                    b.add_citation(key, annotation)
            b.set_signature(key, signature)

    def _complete_reasoning(self, key: Key, state: _Item, item: dict[str, Any]) -> None:
        b = self.builder
        texts = [
            as_str(as_dict(part).get("text"))
            for field in (_SUMMARY, _CONTENT)
            for part in as_list(item.get(field))
        ]
        full = "\n\n".join(texts)
        if full:
            b.reconcile(key, full, "text_mismatch")
        state.encrypted = bool(as_str(item.get("encrypted_content")))
        b.set_signature(key, dumps_compact(item))

    def _backfill(self, output: list[Any]) -> None:
        """The terminal response's ``output``: items never done are completed,
        items never streamed are opened and ended, and encrypted reasoning
        missing from a streamed item reaches its signature. An item is found
        by its id where the stream gave one (its ``output_index`` need not be
        its position in ``output``), else by its position."""
        for position, raw in enumerate(output):
            item = as_dict(raw)
            if not item:
                continue
            index = self._by_id.get(as_str(item.get("id")), position)
            state = self._items.get(index)
            if state is None or not state.done:
                if state is None or state.type == item.get("type"):
                    self._complete_item(index, item)
            elif (
                state.type == "reasoning"
                and not state.encrypted
                and as_str(item.get("encrypted_content"))
                and item.get("type") == "reasoning"
            ):
                state.encrypted = True
                self.builder.backfill_signature(
                    _item_key(index), dumps_compact(item), f"output_index {index}"
                )

    # ------------------------------------------------------------------
    # Message parts

    def _text_key(self, payload: dict[str, Any], refusal: bool = False) -> Key:
        """The block of a message part, opened if this is its first event
        (Azure sends text deltas before ``content_part.added``)."""
        index = payload.get("output_index")
        if type(index) is not int:  # (bool is not int here, as in _index)
            index = self._output_index(payload)
        part = payload.get("content_index")
        key = ("part", index, part if type(part) is int else 0)
        if key == self._last_part:  # (the part of the event before: opened already)
            return self._last_part
        self._last_part = key
        if not self.builder.has(key):
            state = self._items.get(index)
            if state is None:
                state = self._items[index] = _Item("message")
            self.builder.open_text(key, refusal=refusal)
            state.part_keys.append(key)
        return key

    def _part_added(self, payload: dict[str, Any]) -> None:
        part = as_dict(payload.get("part"))
        part_type = as_str(part.get("type"))
        index = self._output_index(payload)
        state = self._items.get(index)
        if part_type == "reasoning_text" or (state is not None and state.type == "reasoning"):
            self._reasoning_text(payload, _CONTENT, as_str(part.get("text")))
            return
        key = ("part", index, _index(payload.get("content_index")) or 0)
        if self.builder.has(key):
            return
        if state is None:
            state = self._items[index] = _Item("message")
        field = _TEXT_PARTS.get(part_type)
        if field is None:
            self.builder.open_provider(key, part_type or "unknown", part)
        else:
            self.builder.open_text(
                key,
                text=as_str(part.get(field)),
                refusal=part_type == "refusal",
                citations=as_list(part.get("annotations")),
            )
        state.part_keys.append(key)

    def _refusal_delta(self, payload: dict[str, Any]) -> None:
        self.builder.append_text(
            self._text_key(payload, refusal=True), as_str(payload.get("delta"))
        )

    def _text_done(self, payload: dict[str, Any]) -> None:
        text = as_str(payload.get("text"))
        if text:
            self.builder.reconcile(self._text_key(payload), text, "text_mismatch")

    def _refusal_done(self, payload: dict[str, Any]) -> None:
        text = as_str(payload.get("refusal"))
        if text:
            self.builder.reconcile(self._text_key(payload, refusal=True), text, "text_mismatch")

    def _annotation(self, payload: dict[str, Any]) -> None:
        annotation = payload.get("annotation")
        if annotation is not None:
            self.builder.add_citation(self._text_key(payload), annotation)

    # ------------------------------------------------------------------
    # Reasoning

    def _reasoning_part(
        self, payload: dict[str, Any], part_kind: str
    ) -> tuple[Key, _Item | None, tuple[str, int]]:
        """The reasoning block, its item (None when that is not an open
        reasoning item: the builder reports what does not fit) and the part
        this event belongs to, started if new: a part after the item's first
        is preceded by a blank line."""
        index = self._output_index(payload)
        key = _item_key(index)
        field = "summary_index" if part_kind == _SUMMARY else "content_index"
        part = (part_kind, _index(payload.get(field)) or 0)
        state = self._items.get(index)
        if state is None:
            state = self._items[index] = _Item("reasoning")
            self.builder.open_thinking(key)
        if state.type != "reasoning" or state.done:
            return key, None, part
        if part not in state.parts:
            if state.parts:
                self.builder.append_thinking(key, "\n\n")
            state.parts[part] = None
            state.part_chars = 0
        return key, state, part

    def _reasoning_text(self, payload: dict[str, Any], part_kind: str, text: str) -> None:
        key, state, _ = self._reasoning_part(payload, part_kind)
        self.builder.append_thinking(key, text)
        if state is not None:
            state.part_chars += len(text)

    def _summary_part_added(self, payload: dict[str, Any]) -> None:
        self._reasoning_text(payload, _SUMMARY, as_str(as_dict(payload.get("part")).get("text")))

    def _summary_delta(self, payload: dict[str, Any]) -> None:
        self._reasoning_text(payload, _SUMMARY, as_str(payload.get("delta")))

    def _reasoning_delta(self, payload: dict[str, Any]) -> None:
        self._reasoning_text(payload, _CONTENT, as_str(payload.get("delta")))

    def _reasoning_done(self, payload: dict[str, Any], part_kind: str) -> None:
        """A part's final text; checked when it is the latest part of the block."""
        text = as_str(payload.get("text"))
        key, state, part = self._reasoning_part(payload, part_kind)
        if not text or state is None or next(reversed(state.parts)) != part:
            return
        current = self.builder.text_of(key)
        self.builder.reconcile(
            key, current[: len(current) - state.part_chars] + text, "text_mismatch"
        )
        state.part_chars = len(text)

    def _summary_done(self, payload: dict[str, Any]) -> None:
        self._reasoning_done(payload, _SUMMARY)

    def _reasoning_text_done(self, payload: dict[str, Any]) -> None:
        self._reasoning_done(payload, _CONTENT)

    # ------------------------------------------------------------------
    # Function-call arguments

    def _arguments_key(self, payload: dict[str, Any]) -> Key | None:
        index = payload.get("output_index")
        key = _item_key(index if type(index) is int else self._output_index(payload))
        kind = self.builder.kind(key)
        if kind is None or kind == "toolcall":
            return key  # an unknown block is reported by the builder
        self.builder.diagnostic("unknown_delta", f"function-call arguments for a {kind} block")
        return None

    def _arguments_delta(self, payload: dict[str, Any]) -> None:
        key = self._arguments_key(payload)
        if key is not None:
            self.builder.append_arguments(key, as_str(payload.get("delta")))

    def _arguments_done(self, payload: dict[str, Any]) -> None:
        arguments = as_str(payload.get("arguments"))
        key = self._arguments_key(payload)
        if key is not None and arguments:
            self.builder.reconcile(key, arguments, "arguments_mismatch")


OpenAIResponsesDecoder._handlers = {
    "response.created": OpenAIResponsesDecoder._lifecycle,
    "response.queued": OpenAIResponsesDecoder._lifecycle,
    "response.in_progress": OpenAIResponsesDecoder._lifecycle,
    "response.completed": OpenAIResponsesDecoder._terminal,
    "response.incomplete": OpenAIResponsesDecoder._terminal,
    "response.failed": OpenAIResponsesDecoder._failed,
    "response.output_item.added": OpenAIResponsesDecoder._item_added,
    "response.output_item.done": OpenAIResponsesDecoder._item_done,
    "response.content_part.added": OpenAIResponsesDecoder._part_added,
    "response.output_text.done": OpenAIResponsesDecoder._text_done,
    "response.output_text.annotation.added": OpenAIResponsesDecoder._annotation,
    "response.refusal.delta": OpenAIResponsesDecoder._refusal_delta,
    "response.refusal.done": OpenAIResponsesDecoder._refusal_done,
    "response.reasoning_summary_part.added": OpenAIResponsesDecoder._summary_part_added,
    "response.reasoning_summary_text.delta": OpenAIResponsesDecoder._summary_delta,
    "response.reasoning_summary_text.done": OpenAIResponsesDecoder._summary_done,
    "response.reasoning_text.delta": OpenAIResponsesDecoder._reasoning_delta,
    "response.reasoning_text.done": OpenAIResponsesDecoder._reasoning_text_done,
    "response.function_call_arguments.delta": OpenAIResponsesDecoder._arguments_delta,
    "response.function_call_arguments.done": OpenAIResponsesDecoder._arguments_done,
}
