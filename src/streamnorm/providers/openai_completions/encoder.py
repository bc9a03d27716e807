"""``openai-completions``: canonical events → Chat Completions chunks, and the
non-streaming ``chat.completion`` JSON (encoding.md §3).

Each delta field is its own channel (``content``, ``reasoning_content``,
``tool_calls[i]``), so canonical blocks need no ordering here. Tool calls are
numbered densely in order of first appearance; ``id``, ``type`` and ``name``
go only on a call's first entry. Usage goes once, on a last chunk without
choices, because the SDK replaces its usage with every chunk's.

Foreign text and tool-call signatures ride on one more ``reasoning_details``
entry, a ``turn`` envelope, before the finish chunk.

Thinking signatures travel in OpenRouter's ``reasoning_details``, whole, in
one chunk at the block's end. A reader takes thinking text from those entries
when the chunk has no ``reasoning_content``, so the last reasoning fragment of
a block is held back one event and sent beside them.
"""

from __future__ import annotations

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
    raw_stop,
    turn_signatures,
)
from .extra_content import google_extra

__all__ = ["CompletionsEncoder", "encode_response"]

API = "openai-completions"

FINISH_VALUES: dict[StopReason, str] = {
    StopReason.STOP: "stop",
    StopReason.TOOL_USE: "tool_calls",
    StopReason.LENGTH: "length",
    StopReason.CONTENT_FILTER: "content_filter",
    StopReason.PAUSE: "stop",
}

ERROR_TYPES = {
    "rate_limit": ("rate_limit_exceeded", "rate_limit_error"),
    "overloaded": ("server_overloaded", "server_error"),
    "server": ("server_error", "server_error"),
}

_DONE = b"data: [DONE]\n\n"


def wire_usage(usage: Usage) -> dict[str, Any]:
    """Canonical usage as Chat Completions counts it (encoding.md §7)."""
    prompt = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
    details: dict[str, Any] = {"cached_tokens": usage.cache_read_tokens}
    if usage.cache_write_tokens:
        details["cache_write_tokens"] = usage.cache_write_tokens
    return {
        "prompt_tokens": prompt,
        "completion_tokens": usage.output_tokens,
        "total_tokens": prompt + usage.output_tokens,
        "prompt_tokens_details": details,
        "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
    }


def reasoning_details(block: ThinkingBlock, carrier: Carrier, position: int) -> list[Any] | None:
    """The ``reasoning_details`` that carry a thinking block's signature: the
    source's own list for the same api, else one encrypted entry holding the
    envelope; None when there is nothing to carry."""
    if not carrier.foreign:
        if block.signature is None:
            return None
        try:
            details = loads(block.signature)
        except ValueError:
            details = None
        if isinstance(details, list):
            return details
        kind = "encrypted" if block.redacted else "text"
        return [{"type": f"reasoning.{kind}", "data": block.signature, "index": position}]
    kind = "redacted" if block.redacted else "thinking"
    envelope = carrier.carry(kind, block.signature)
    return [
        {"type": "reasoning.encrypted", "data": envelope, "format": "unknown", "index": position}
    ]


def turn_entry(
    carrier: Carrier,
    thinking: int,
    texts: list[TextBlock],
    calls: list[ToolCallBlock],
    refusal: bool,
) -> dict[str, Any] | None:
    """The ``reasoning_details`` entry that carries the foreign text and
    tool-call signatures of a turn: positions as a Chat message is read back
    (its thinking entries, one text, a refusal, the calls)."""
    placed: list[tuple[int, ContentBlock]] = []
    signed = [t for t in texts if t.signature]
    if signed:
        placed.append((thinking, signed[-1]))  # Chat has one text per message
    first_call = thinking + (1 if texts else 0) + (1 if refusal else 0)
    placed += [(first_call + k, call) for k, call in enumerate(calls)]
    entries = turn_signatures(placed, carrier)
    if entries is None:
        return None
    envelope = carrier.carry("turn", entries)
    return {"type": "reasoning.encrypted", "data": envelope, "format": "unknown", "index": thinking}


def finish_value(message: AssistantMessage) -> str:
    value = raw_stop(message, API, FINISH_VALUES)
    if message.api != API and value == "tool_calls" and not message.tool_calls:
        return "stop"
    return value


def encode_response(
    message: AssistantMessage, *, model: str | None = None, created: int = 0
) -> dict[str, Any]:
    """The non-streaming ``chat.completion`` (encoding.md §3.3)."""
    carrier = Carrier(API, issuer_of(message))
    text = "".join(b.text for b in message.content if isinstance(b, TextBlock) and not b.refusal)
    refusal = "".join(b.text for b in message.content if isinstance(b, TextBlock) and b.refusal)
    out: dict[str, Any] = {
        "role": "assistant",
        "content": text or None,
        "refusal": refusal or None,
    }
    urls = _own_extras(message, carrier, out)
    thinking = [b for b in message.content if isinstance(b, ThinkingBlock)]
    if thinking:
        _reasoning_fields(thinking, carrier, out)
    calls = [_response_call(call, carrier) for call in message.tool_calls]
    if calls:
        out["tool_calls"] = calls
    texts = [b for b in message.content if isinstance(b, TextBlock) and not b.refusal]
    own = _own_signature(texts, carrier)
    if own is not None:
        out["extra_content"] = google_extra(own)
    turn = turn_entry(carrier, len(thinking), texts, list(message.tool_calls), bool(refusal))
    if turn is not None:
        out.setdefault("reasoning_details", []).append(turn)
    choice = {"index": 0, "message": out, "finish_reason": finish_value(message), "logprobs": None}
    body = {
        "id": _response_id(message),
        "object": "chat.completion",
        "created": created,
        "model": model or message.model or "",
        "choices": [choice],
        "usage": wire_usage(message.usage),
    }
    if urls:
        body["citations"] = urls
    return body


def _response_call(call: ToolCallBlock, carrier: Carrier) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": call.raw_arguments or "{}"},
    }
    if call.signature and not carrier.foreign:
        out["extra_content"] = google_extra(call.signature)
    return out


def _own_signature(texts: list[TextBlock], carrier: Carrier) -> str | None:
    """The issuer's own signature of its text (Gemini behind Google's Chat
    endpoint), for the message's ``extra_content``; another issuer's travels
    in the turn envelope instead."""
    signed = [t.signature for t in texts if t.signature]
    return signed[-1] if signed and not carrier.foreign else None


def _own_extras(message: AssistantMessage, carrier: Carrier, out: dict[str, Any]) -> list[str]:
    """The issuer's own citations (as ``annotations``) and server-side tool
    runs (``executed_tools``) on ``out``; returns the bare citation URLs
    (Perplexity's top-level list). Another issuer's are not carried."""
    if carrier.foreign:
        return []
    citations = [c for b in message.content if isinstance(b, TextBlock) for c in b.citations]
    annotations = [c for c in citations if not _bare_url(c)]
    if annotations:
        out["annotations"] = annotations
    for block in message.content:
        if isinstance(block, ProviderBlock) and block.kind == "executed_tools":
            out["executed_tools"] = block.data.get("executed_tools", [])
    return [c["url"] for c in citations if _bare_url(c)]


def _reasoning_fields(thinking: list[ThinkingBlock], carrier: Carrier, out: dict[str, Any]) -> None:
    """``reasoning_content`` and the ``reasoning_details`` that carry the
    blocks' signatures."""
    out["reasoning_content"] = "".join(b.thinking for b in thinking)
    details = [
        entry
        for position, block in enumerate(thinking)
        for entry in reasoning_details(block, carrier, position) or ()
    ]
    if details:
        out["reasoning_details"] = details


def _bare_url(citation: Any) -> bool:
    """A citation that is only a URL (``{"type": "url", "url": …}``)."""
    return (
        isinstance(citation, dict)
        and citation.keys() == {"type", "url"}
        and citation["type"] == "url"
        and isinstance(citation["url"], str)
    )


def _response_id(message: AssistantMessage) -> str:
    source = message.response_id
    if source and (message.api == API or source.startswith("chatcmpl-")):
        return source
    return derive_id("chatcmpl-", API, source or "")


class _Call:
    __slots__ = ("id", "name", "number", "pending", "started")

    def __init__(self, number: int) -> None:
        self.number = number  # the wire ``index``: dense, in order of first appearance
        self.id: str | None = None
        self.name = ""
        self.pending: list[str] = []  # argument text held until id and name are known
        self.started = False


class CompletionsEncoder(WireEncoder):
    api = API
    id_prefix = "chatcmpl-"

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._calls: dict[int, _Call] = {}
        self._held: dict[int, str] = {}  # the last reasoning fragment of each thinking block
        self._thinking_blocks = 0
        self._signed: dict[int, str] = {}  # signatures sent before their block's end
        self._texts: list[TextBlock] = []  # ended text blocks and calls, for the turn carrier
        self._ended_calls: list[ToolCallBlock] = []

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return frame(
            {
                "id": self.response_id,
                "object": "chat.completion.chunk",
                "created": self.created,
                "model": self.model or "",
                "system_fingerprint": None,
                "choices": [choice],
            }
        )

    def on_start(self) -> bytes:
        return self._chunk({"role": "assistant", "content": ""})

    def on_text(self, event: TextDelta) -> bytes:
        return self._chunk({"content": event.delta})

    def on_thinking(self, event: ThinkingDelta) -> bytes:
        if not event.delta:
            return self._early_signature(event)
        held = self._held.get(event.index)
        self._held[event.index] = event.delta
        return self._chunk({"reasoning_content": held}) if held else b""

    def _early_signature(self, event: ThinkingDelta) -> bytes:
        """A same-issuer signature of a block without text yet is sent when it
        comes, so the block keeps its place before later text; only when no
        entry holds text, which a reader would append again at the end."""
        if (
            self.carrier.foreign
            or event.signature is None
            or event.index in self._held
            or event.index in self._signed
        ):
            return b""
        block = ThinkingBlock("", event.signature)
        details = reasoning_details(block, self.carrier, self._thinking_blocks)
        if not details or any(
            isinstance(e, dict) and (e.get("text") or e.get("summary")) for e in details
        ):
            return b""
        self._signed[event.index] = event.signature
        return self._chunk({"reasoning_details": details})

    def on_tool(self, event: ToolCallDelta) -> bytes:
        call = self._calls.get(event.index)
        if call is None:
            call = self._calls[event.index] = _Call(len(self._calls))
        call.id = call.id or event.id
        call.name = call.name or event.name
        if event.raw_json_delta:
            call.pending.append(event.raw_json_delta)
        if not call.started and not (call.id and call.name):
            return b""
        return self._send(call)

    def _send(self, call: _Call, signature: str | None = None) -> bytes:
        """The call's pending arguments (its id and name first), and with
        ``signature`` its ``extra_content``."""
        arguments = "".join(call.pending)
        call.pending = []
        entry: dict[str, Any] = {"index": call.number}
        if not call.started:
            call.started = True
            entry.update(id=call.id, type="function")
            entry["function"] = {"name": call.name, "arguments": arguments}
        elif arguments:
            entry["function"] = {"arguments": arguments}
        elif signature is None:
            return b""
        if signature is not None:
            entry["extra_content"] = google_extra(signature)
        return self._chunk({"tool_calls": [entry]})

    def on_block_end(self, event: BlockEnd) -> bytes:
        block: ContentBlock = event.block
        if isinstance(block, ThinkingBlock):
            return self._end_thinking(event.index, block)
        if isinstance(block, ToolCallBlock):
            call = self._calls.get(event.index)
            if call is None:
                call = self._calls[event.index] = _Call(len(self._calls))
            call.id, call.name = call.id or block.id, call.name or block.name
            if not block.raw_arguments:
                call.pending.append("{}")  # a call without arguments: its empty object
            self._ended_calls.append(block)
            own = block.signature if not self.carrier.foreign else None
            return self._send(call, own or None)
        if isinstance(block, TextBlock):
            self._texts.append(block)
            own_fields: dict[str, Any] = {}
            if block.citations and not self.carrier.foreign:
                own_fields["annotations"] = list(block.citations)
            signature = _own_signature([block], self.carrier)
            if signature is not None:
                own_fields["extra_content"] = google_extra(signature)
            return self._chunk(own_fields) if own_fields else b""
        if block.api == API and block.kind == "executed_tools":
            return self._chunk({"executed_tools": block.data.get("executed_tools", [])})
        return b""

    def _end_thinking(self, index: int, block: ThinkingBlock) -> bytes:
        delta: dict[str, Any] = {}
        held = self._held.pop(index, "")
        if held:
            delta["reasoning_content"] = held
        details = reasoning_details(block, self.carrier, self._thinking_blocks)
        self._thinking_blocks += 1
        if details and self._signed.get(index) != block.signature:
            delta["reasoning_details"] = details
        return self._chunk(delta) if delta else b""

    def _carrier(self) -> bytes:
        turn = turn_entry(
            self.carrier, self._thinking_blocks, self._texts, self._ended_calls, False
        )
        return self._chunk({"reasoning_details": [turn]}) if turn is not None else b""

    def on_done(self, message: AssistantMessage) -> bytes:
        out = self._carrier() + self._chunk({}, finish_value(message))
        usage = frame(
            {
                "id": self.response_id,
                "object": "chat.completion.chunk",
                "created": self.created,
                "model": self.model or "",
                "system_fingerprint": None,
                "choices": [],
                "usage": wire_usage(message.usage),
            }
        )
        return out + usage + _DONE

    def on_error(self, event: Error) -> bytes:
        """The error chunk; it also carries the usage so far and, for the
        same issuer, the finish reason seen before the error (OpenRouter).
        The same issuer's code and type are its own (a type it did not send
        stays out); another's are the error class's."""
        message = event.message
        error: dict[str, Any] = {"message": event.reason}
        if self.same_issuer(message) and (event.code or event.error_type):
            if event.error_type:
                error["type"] = event.error_type
            error["code"] = event.code
        else:
            error["code"], error["type"] = ERROR_TYPES[error_class(event.code, event.reason)]
        payload: dict[str, Any] = {"error": error}
        if self.same_issuer(message) and message.raw_stop_reason:
            choice = {"index": 0, "delta": {}, "finish_reason": message.raw_stop_reason}
            payload["choices"] = [choice]
        if message.usage != Usage():
            payload["usage"] = wire_usage(message.usage)
        return self._carrier() + frame(payload)
