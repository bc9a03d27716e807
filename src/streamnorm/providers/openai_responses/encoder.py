"""``openai-responses``: canonical events → Responses SSE, and the
non-streaming ``response`` JSON (encoding.md §4).

Every canonical block is one output item at its own ``output_index``, in the
order the blocks first send something: text a ``message`` item with one
``output_text`` part, thinking a ``reasoning`` item with one summary part,
a tool call a ``function_call`` item, a provider block of this api its
stored item. Items are added when their first content arrives and done at
their ``BlockEnd``; the terminal event lists every final item.

The SDK requires a message or reasoning item to keep the id it was added
with, and canonical events name a Responses item's id only at its end: those
items carry ids derived from the response id and output index. A function
call may be added without an id, so its source id survives.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._json import loads
from ...events import BlockEnd, Error, TextDelta, ThinkingDelta, ToolCallDelta
from ...messages import (
    AssistantMessage,
    ContentBlock,
    ProviderBlock,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    Usage,
)
from ..wire_writer import (
    Carrier,
    WireEncoder,
    derive_id,
    error_class,
    frame,
    issuer_of,
    turn_signatures,
)
from .response import resource_fields

__all__ = ["ResponsesEncoder", "encode_response"]

API = "openai-responses"

#: Canonical reasons that end a response as ``incomplete``, with the reason.
INCOMPLETE: dict[StopReason, str] = {
    StopReason.LENGTH: "max_output_tokens",
    StopReason.CONTENT_FILTER: "content_filter",
}

ERROR_CODES = {
    "rate_limit": "rate_limit_exceeded",
    "overloaded": "server_error",
    "server": "server_error",
}


def error_code(code: str | None, reason: str, *, same: bool) -> str:
    """The ``error.code`` of a failed response: the same issuer's own code,
    another's (or none) the error class's."""
    return code if same and code else ERROR_CODES[error_class(code, reason)]


def wire_usage(usage: Usage) -> dict[str, Any]:
    """Canonical usage as Responses counts it (encoding.md §7)."""
    return {
        "input_tokens": usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens,
        "input_tokens_details": {
            "cached_tokens": usage.cache_read_tokens,
            "cache_write_tokens": usage.cache_write_tokens,
        },
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
        "total_tokens": usage.total_tokens,
    }


#: Statuses of a Responses answer that are not an end with a reason: a
#: background response read while ``queued`` / ``in_progress``, or cancelled.
OWN_STATUSES = frozenset(("queued", "in_progress", "cancelled"))


def status_of(message: AssistantMessage) -> tuple[str, str | None]:
    """``(status, incomplete reason)`` for the terminal response."""
    raw = message.raw_stop_reason
    if message.api == API and raw is not None and raw in OWN_STATUSES:
        return raw, None
    if message.api == API and raw and raw not in ("completed", "incomplete", "failed"):
        return "incomplete", raw
    reason = INCOMPLETE.get(message.stop_reason)
    return ("incomplete", reason) if reason else ("completed", None)


def _signature_fields(signature: str | None) -> dict[str, Any]:
    """The item fields a same-issuer text or call signature holds."""
    if not signature:
        return {}
    try:
        fields = loads(signature)
    except ValueError:
        return {}
    return fields if isinstance(fields, dict) else {}


class Items:
    """Final output items of canonical blocks (shared by the stream and the
    non-streaming response). ``item_id`` names the item at an output index."""

    def __init__(self, carrier: Carrier, response_id: str) -> None:
        self.carrier = carrier
        self.response_id = response_id

    def item_id(self, prefix: str, output_index: int) -> str:
        return derive_id(prefix, self.response_id, output_index)

    def message(
        self, block: TextBlock, output_index: int, item_id: str | None = None
    ) -> dict[str, Any]:
        kind, field = ("refusal", "refusal") if block.refusal else ("output_text", "text")
        part: dict[str, Any] = {"type": kind, field: block.text}
        if kind == "output_text":
            part["annotations"] = [] if self.carrier.foreign else list(block.citations)
        item: dict[str, Any] = {
            "type": "message",
            "id": item_id or self.item_id("msg_", output_index),
            "role": "assistant",
            "status": "completed",
            "content": [part],
        }
        if not self.carrier.foreign:
            fields = _signature_fields(block.signature)
            if item_id is None and isinstance(fields.get("id"), str):
                item["id"] = fields["id"]
            if isinstance(fields.get("phase"), str):
                item["phase"] = fields["phase"]
        return item

    def reasoning(
        self, block: ThinkingBlock, output_index: int, item_id: str | None = None
    ) -> dict[str, Any]:
        own = item_id or self.item_id("rs_", output_index)
        if not self.carrier.foreign and block.signature:
            original = _signature_fields(block.signature)
            if original.get("type") == "reasoning":
                return {**original, "id": item_id or original.get("id") or own}
        summary = [{"type": "summary_text", "text": block.thinking}] if block.thinking else []
        item: dict[str, Any] = {"type": "reasoning", "id": own, "summary": summary}
        kind = "redacted" if block.redacted else "thinking"
        encrypted = self.carrier.carry(kind, block.signature)
        if encrypted:
            item["encrypted_content"] = encrypted
        return item

    def function_call(self, block: ToolCallBlock, output_index: int) -> dict[str, Any]:
        fields = {} if self.carrier.foreign else _signature_fields(block.signature)
        item: dict[str, Any] = {
            "type": "function_call",
            "id": fields.get("id") or self.item_id("fc_", output_index),
            "call_id": block.id,
            "name": block.name,
            "arguments": block.raw_arguments or "{}",
            "status": "incomplete" if block.error == "incomplete" else "completed",
        }
        if isinstance(fields.get("namespace"), str):
            item["namespace"] = fields["namespace"]
        return item

    def turn_carrier(
        self, placed: list[tuple[int, ContentBlock]], output_index: int
    ) -> dict[str, Any] | None:
        """The reasoning item that carries the foreign text and call
        signatures of ``placed`` (output index, block), or None."""
        entries = turn_signatures(placed, self.carrier)
        if entries is None:
            return None
        return {
            "type": "reasoning",
            "id": self.item_id("rs_", output_index),
            "summary": [],
            "encrypted_content": self.carrier.carry("turn", entries),
        }

    def item(self, block: ContentBlock, output_index: int) -> dict[str, Any] | None:
        """The final item of a block, or None for one Responses cannot carry."""
        if isinstance(block, TextBlock):
            return self.message(block, output_index)
        if isinstance(block, ThinkingBlock):
            return self.reasoning(block, output_index)
        if isinstance(block, ToolCallBlock):
            return self.function_call(block, output_index)
        if isinstance(block, ProviderBlock) and block.api == API:
            # The item as received; an item that lost its type keeps the kind
            # it was read as, since every Responses item has one.
            return {"type": block.kind, **block.data}
        return None


def response_body(
    response_id: str,
    model: str,
    created: int,
    output: list[dict[str, Any]],
    message: AssistantMessage | None,
    request: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``response`` object: in progress (``message`` None) or terminal.
    ``request`` (the client's Responses body) gives the options it echoes."""
    body: dict[str, Any] = {
        "id": response_id,
        "object": "response",
        "created_at": created,
        "completed_at": None,
        "model": model,
        "status": "in_progress",
        "output": output,
        "error": None,
        "incomplete_details": None,
        "usage": None,
        **resource_fields(request),
    }
    if message is not None:
        if message.stop_reason in (StopReason.ERROR, StopReason.ABORTED):
            body["status"] = "failed"
            text = message.error or "error"
            code = error_code(message.error_code, text, same=message.api == API)
            body["error"] = {"code": code, "message": text}
        else:
            status, reason = status_of(message)
            body["status"] = status
            body["completed_at"] = created if status == "completed" else None
            if reason is not None:
                body["incomplete_details"] = {"reason": reason}
        body["usage"] = wire_usage(message.usage)
    return body


def encode_response(
    message: AssistantMessage,
    *,
    model: str | None = None,
    created: int = 0,
    request: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The non-streaming ``response`` (encoding.md §4.3); ``request`` is the
    client's Responses body, whose options the object echoes."""
    source = message.response_id
    if source and (message.api == API or source.startswith("resp_")):
        response_id = source
    else:
        response_id = derive_id("resp_", API, source or "")
    items = Items(Carrier(API, issuer_of(message)), response_id)
    output: list[dict[str, Any]] = []
    placed: list[tuple[int, ContentBlock]] = []
    for block in message.content:
        item = items.item(block, len(output))
        if item is not None:
            placed.append((len(output), block))
            output.append(item)
    carrier = items.turn_carrier(placed, len(output))
    if carrier is not None:
        output.append(carrier)
    return response_body(
        response_id, model or message.model or "", created, output, message, request
    )


class _Item:
    __slots__ = ("call_id", "id", "index", "kind", "name", "pending", "started")

    def __init__(self, index: int, kind: str, item_id: str) -> None:
        self.index = index  # output_index
        self.kind = kind
        self.id = item_id
        self.call_id: str | None = None
        self.name = ""
        self.pending: list[str] = []  # argument text held until call_id and name are known
        self.started = False


class ResponsesEncoder(WireEncoder):
    api = API
    id_prefix = "resp_"

    def __init__(self, *, request: Mapping[str, Any] | None = None, **options: Any) -> None:
        super().__init__(**options)
        self._request = request
        self._sequence = 0
        self._items: dict[int, _Item] = {}  # canonical index → item
        self._next = 0
        self._output: list[tuple[int, dict[str, Any]]] = []  # (output_index, final item)
        self._writer: Items | None = None
        self._placed: list[tuple[int, ContentBlock]] = []  # for the turn carrier

    @property
    def writer(self) -> Items:
        if self._writer is None:
            self._writer = Items(self.carrier, self.response_id or "")
        return self._writer

    def _event(self, kind: str, payload: dict[str, Any]) -> bytes:
        payload = {"type": kind, "sequence_number": self._sequence, **payload}
        self._sequence += 1
        return frame(payload, kind)

    def _response(self, message: AssistantMessage | None = None) -> dict[str, Any]:
        output = [item for _, item in sorted(self._output, key=lambda pair: pair[0])]
        return response_body(
            self.response_id or "",
            self.model or "",
            self.created,
            output if message else [],
            message,
            self._request,
        )

    def on_start(self) -> bytes:
        response = self._response()
        return self._event("response.created", {"response": response}) + self._event(
            "response.in_progress", {"response": response}
        )

    def _add(self, index: int, kind: str, prefix: str) -> _Item:
        item = self._items[index] = _Item(self._next, kind, "")
        self._next += 1
        item.id = self.writer.item_id(prefix, item.index)
        return item

    # -- text -----------------------------------------------------------------

    def on_text(self, event: TextDelta) -> bytes:
        item = self._items.get(event.index)
        out = b""
        if item is None:
            item = self._add(event.index, "message", "msg_")
            added = {
                "type": "message",
                "id": item.id,
                "role": "assistant",
                "status": "in_progress",
                "content": [],
            }
            out = self._event(
                "response.output_item.added", {"output_index": item.index, "item": added}
            )
            part = {"type": "output_text", "text": "", "annotations": []}
            out += self._event("response.content_part.added", self._where(item, part=part))
        return out + self._event(
            "response.output_text.delta", self._where(item, delta=event.delta, logprobs=[])
        )

    @staticmethod
    def _where(item: _Item, **fields: Any) -> dict[str, Any]:
        return {"item_id": item.id, "output_index": item.index, "content_index": 0, **fields}

    @staticmethod
    def _summary(item: _Item, **fields: Any) -> dict[str, Any]:
        return {"item_id": item.id, "output_index": item.index, "summary_index": 0, **fields}

    # -- thinking ---------------------------------------------------------------

    def on_thinking(self, event: ThinkingDelta) -> bytes:
        if not event.delta:
            return b""
        item = self._items.get(event.index)
        out = b""
        if item is None:
            item = self._add(event.index, "reasoning", "rs_")
            added = {"type": "reasoning", "id": item.id, "summary": []}
            out = self._event(
                "response.output_item.added", {"output_index": item.index, "item": added}
            )
            part = {"type": "summary_text", "text": ""}
            out += self._event(
                "response.reasoning_summary_part.added", self._summary(item, part=part)
            )
        return out + self._event(
            "response.reasoning_summary_text.delta", self._summary(item, delta=event.delta)
        )

    # -- tool calls ---------------------------------------------------------------

    def on_tool(self, event: ToolCallDelta) -> bytes:
        item = self._items.get(event.index)
        if item is None:
            item = self._add(event.index, "function_call", "fc_")
        item.call_id = item.call_id or event.id
        item.name = item.name or event.name
        if event.raw_json_delta:
            item.pending.append(event.raw_json_delta)
        if not item.started and not (item.call_id and item.name):
            return b""
        return self._send_call(item)

    def _send_call(self, item: _Item) -> bytes:
        out = b""
        if not item.started:
            item.started = True
            added: dict[str, Any] = {
                "type": "function_call",
                "call_id": item.call_id,
                "name": item.name,
                "arguments": "",
                "status": "in_progress",
            }
            if self.carrier.foreign:
                added["id"] = item.id
            out = self._event(
                "response.output_item.added", {"output_index": item.index, "item": added}
            )
        delta = "".join(item.pending)
        item.pending = []
        if delta:
            payload = {"item_id": item.id, "output_index": item.index, "delta": delta}
            out += self._event("response.function_call_arguments.delta", payload)
        return out

    # -- block ends -----------------------------------------------------------------

    def on_block_end(self, event: BlockEnd) -> bytes:
        block = event.block
        item = self._items.get(event.index)
        if isinstance(block, ToolCallBlock):
            if item is None:
                item = self._add(event.index, "function_call", "fc_")
            item.call_id, item.name = item.call_id or block.id, item.name or block.name
            if not block.raw_arguments:
                item.pending.append("{}")  # a call without arguments: its empty object
            out = self._send_call(item)
            final = self.writer.function_call(block, item.index)
            if not self.carrier.foreign:
                item.id = final["id"]
            done = {
                "item_id": item.id,
                "output_index": item.index,
                "arguments": block.raw_arguments,
            }
            out += self._event("response.function_call_arguments.done", done)
            return out + self._done(item.index, final, block)
        if item is None:
            return self._whole(event.index, block)
        if isinstance(block, TextBlock):
            final = self.writer.message(block, item.index, item.id)
            part = final["content"][0]
            out = self._event(
                "response.output_text.done", self._where(item, text=block.text, logprobs=[])
            )
            out += self._event("response.content_part.done", self._where(item, part=part))
            return out + self._done(item.index, final, block)
        assert isinstance(block, ThinkingBlock)
        final = self.writer.reasoning(block, item.index, item.id)
        part = {"type": "summary_text", "text": block.thinking}
        out = self._event(
            "response.reasoning_summary_text.done", self._summary(item, text=block.thinking)
        )
        out += self._event("response.reasoning_summary_part.done", self._summary(item, part=part))
        return out + self._done(item.index, final)

    def _whole(self, index: int, block: ContentBlock) -> bytes:
        """A block nothing streamed: its item added and done at once."""
        output_index = self._next
        final = self.writer.item(block, output_index)
        if final is None:
            return b""
        self._next += 1
        self._items[index] = _Item(output_index, final["type"], str(final.get("id", "")))
        added = final
        if final.get("type") == "message" and isinstance(final.get("content"), list):
            added = {**final, "status": "in_progress", "content": []}
        out = self._event(
            "response.output_item.added", {"output_index": output_index, "item": added}
        )
        if added is not final:
            for part in final["content"]:
                payload = {
                    "item_id": final.get("id", ""),
                    "output_index": output_index,
                    "content_index": 0,
                }
                out += self._event("response.content_part.added", {**payload, "part": part})
                out += self._event("response.content_part.done", {**payload, "part": part})
        return out + self._done(output_index, final, block)

    def _done(
        self, output_index: int, final: dict[str, Any], block: ContentBlock | None = None
    ) -> bytes:
        self._output.append((output_index, final))
        if block is not None:
            self._placed.append((output_index, block))
        return self._event(
            "response.output_item.done", {"output_index": output_index, "item": final}
        )

    # -- terminal ---------------------------------------------------------------------

    def _carrier(self) -> bytes:
        final = self.writer.turn_carrier(self._placed, self._next)
        if final is None:
            return b""
        self._next += 1
        added = {"output_index": self._next - 1, "item": final}
        return self._event("response.output_item.added", added) + self._done(self._next - 1, final)

    def on_done(self, message: AssistantMessage) -> bytes:
        out = self._carrier()
        response = self._response(message)
        kind = "response.incomplete" if response["status"] == "incomplete" else "response.completed"
        return out + self._event(kind, {"response": response})

    def on_error(self, event: Error) -> bytes:
        """``error`` then ``response.failed``. The same issuer's code is its
        own, another's the error class's. An error with the same issuer's
        type goes out as OpenAI sends one, the code, type and message under
        ``error`` (the event's own ``type`` is ``error``); else they are at the
        top level, as the API reference writes them."""
        same = self.same_issuer(event.message)
        code = error_code(event.code, event.reason, same=same)
        error: dict[str, Any] = {"code": code, "message": event.reason, "param": None}
        if same and event.error_type:
            error = {"error": {"type": event.error_type, **error}}
        out = self._carrier() + self._event("error", error)
        response = self._response(event.message)
        response["error"] = {"code": code, "message": event.reason}
        return out + self._event("response.failed", {"response": response})
