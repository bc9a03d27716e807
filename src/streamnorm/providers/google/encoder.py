"""``google-generative-ai``: canonical events → ``streamGenerateContent``
SSE chunks, and the non-streaming ``GenerateContentResponse`` (encoding.md §5).

Every chunk is a whole ``GenerateContentResponse`` with one candidate; text
and thought deltas are one part each, as Gemini streams them. A signature
known only at a block's end goes on a closing empty part of that block. Tool
calls go out whole at their ``BlockEnd``: the Gemini API streams each
``functionCall`` as one part (``partialArgs`` exist only on Vertex, for
clients that ask). Usage rides on every chunk once known; the last chunk
carries the finish reason and, for the same issuer, the candidate metadata.

Another issuer's reasoning does not ride on thought parts: Gemini clients
drop those from their history (Gemini CLI) or drop a signature on an empty
one (the AI SDK). Real Gemini signs the ``functionCall`` part and the last
part of the turn, and clients keep those: so a foreign thinking block's text
goes out as thought parts for display, and the block itself (text and
signature) waits in a ``turn`` envelope on the next ``functionCall`` part, or
on the turn's last part when no call follows (encoding.md §9).
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from ...envelope import wrap_bytes
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
from ..wire_writer import Carrier, WireEncoder, derive_id, error_class, frame, issuer_of, raw_stop

__all__ = ["GoogleEncoder", "encode_response"]

API = "google-generative-ai"

FINISH_VALUES: dict[StopReason, str] = {
    StopReason.STOP: "STOP",
    StopReason.TOOL_USE: "STOP",
    StopReason.LENGTH: "MAX_TOKENS",
    StopReason.CONTENT_FILTER: "SAFETY",
    StopReason.PAUSE: "STOP",
}

ERRORS = {
    "rate_limit": (429, "RESOURCE_EXHAUSTED"),
    "overloaded": (503, "UNAVAILABLE"),
    "server": (500, "INTERNAL"),
}

#: Provider blocks that are candidate fields, not parts.
_CANDIDATE_FIELDS = ("groundingMetadata", "urlContextMetadata")


def wire_usage(usage: Usage) -> dict[str, Any]:
    """Canonical usage as ``usageMetadata`` (encoding.md §7): cache writes
    have no field and count as prompt tokens."""
    out: dict[str, Any] = {
        "promptTokenCount": usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens,
        "candidatesTokenCount": max(0, usage.output_tokens - usage.reasoning_tokens),
        "totalTokenCount": usage.total_tokens,
    }
    if usage.reasoning_tokens:
        out["thoughtsTokenCount"] = usage.reasoning_tokens
    if usage.cache_read_tokens:
        out["cachedContentTokenCount"] = usage.cache_read_tokens
    return out


def thought_signature(carrier: Carrier, kind: str, signature: str | None) -> str | None:
    """The ``thoughtSignature`` value: an envelope for a foreign issuer; the
    issuer's own as it is — unless it is not standard base64, which the SDK
    rejects for the whole stream: then it goes in an envelope too."""
    value = carrier.carry(kind, signature, as_bytes=True)
    if value is None or carrier.foreign or _is_base64(value):
        return value
    return wrap_bytes(carrier.issuer, kind, value)


def _is_base64(value: str) -> bool:
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def parts_of(block: ContentBlock, carrier: Carrier) -> list[dict[str, Any]]:
    """A whole block as parts (its text in one part, the signature on it)."""
    if isinstance(block, TextBlock):
        part: dict[str, Any] = {"text": block.text}
        signature = thought_signature(carrier, "text", block.signature)
    elif isinstance(block, ThinkingBlock):
        part = {"text": block.thinking, "thought": True}
        kind = "redacted" if block.redacted else "thinking"
        signature = thought_signature(carrier, kind, block.signature)
    elif isinstance(block, ToolCallBlock):
        part = {"functionCall": {"id": block.id, "name": block.name, "args": dict(block.arguments)}}
        signature = thought_signature(carrier, "toolcall", block.signature)
    elif block.api == API and block.kind not in _CANDIDATE_FIELDS:
        return [dict(block.data)]
    else:
        return []
    if signature:
        part["thoughtSignature"] = signature
    return [part]


def held_entry(position: int, block: ThinkingBlock) -> list[Any]:
    """A foreign thinking block as a ``turn`` entry that restores it whole:
    ``[position, kind, signature, text]``."""
    kind = "redacted" if block.redacted else "thinking"
    return [position, kind, block.signature, block.thinking]


def carried(carrier: Carrier, held: list[list[Any]], position: int, block: ContentBlock) -> str:
    """The ``turn`` envelope for the part of ``block`` at ``position``: the
    held thinking blocks, and the block's own signature."""
    entries = list(held)
    if isinstance(block, (TextBlock, ToolCallBlock)) and block.signature:
        kind = "text" if isinstance(block, TextBlock) else "toolcall"
        entries.append([position, kind, block.signature])
    return wrap_bytes(carrier.issuer, "turn", entries)


def foreign_parts(blocks: list[ContentBlock], carrier: Carrier) -> list[dict[str, Any]]:
    """Another issuer's turn as parts: thinking text unsigned, the thinking
    blocks in a ``turn`` envelope on the next ``functionCall`` part, or on
    the last text part (module doc)."""
    parts: list[dict[str, Any]] = []
    held: list[list[Any]] = []
    last: tuple[int, ContentBlock] | None = None  # the last part's block and position
    for block in blocks:
        position = len(parts)
        if isinstance(block, ThinkingBlock):
            held.append(held_entry(position, block))
            parts.append({"text": block.thinking, "thought": True})
            last = None
            continue
        out = parts_of(block, carrier)
        if not out:
            continue
        if held and isinstance(block, ToolCallBlock):
            out[0]["thoughtSignature"] = carried(carrier, held, position, block)
            held = []
        parts += out
        last = (position, block) if isinstance(block, TextBlock) else None
    if held:
        if last is None:
            last = (len(parts), TextBlock(""))
            parts.append({"text": ""})
        parts[last[0]]["thoughtSignature"] = carried(carrier, held, *last)
    return parts


def candidate_fields(blocks: list[ContentBlock], carrier: Carrier) -> dict[str, Any]:
    """Same-issuer candidate metadata: grounding blocks and the citations of
    the last text block."""
    if carrier.foreign:
        return {}
    out: dict[str, Any] = {}
    texts = [b for b in blocks if isinstance(b, TextBlock)]
    if texts and texts[-1].citations:
        out["citationMetadata"] = {"citationSources": list(texts[-1].citations)}
    for block in blocks:
        if (
            isinstance(block, ProviderBlock)
            and block.api == API
            and block.kind in _CANDIDATE_FIELDS
        ):
            out[block.kind] = dict(block.data)
    return out


def _response_id(message: AssistantMessage) -> str:
    if message.response_id:
        return message.response_id
    return derive_id("", API, "")


def encode_response(message: AssistantMessage, *, model: str | None = None) -> dict[str, Any]:
    """The non-streaming ``GenerateContentResponse`` (encoding.md §5.3)."""
    carrier = Carrier(API, issuer_of(message))
    if carrier.foreign:
        parts = foreign_parts(list(message.content), carrier)
    else:
        parts = [part for block in message.content for part in parts_of(block, carrier)]
    candidate: dict[str, Any] = {
        "content": {"role": "model", "parts": parts},
        "finishReason": raw_stop(message, API, FINISH_VALUES),
        "index": 0,
    }
    candidate.update(candidate_fields(list(message.content), carrier))
    return {
        "candidates": [candidate],
        "usageMetadata": wire_usage(message.usage),
        "modelVersion": model or message.model or "",
        "responseId": _response_id(message),
    }


class GoogleEncoder(WireEncoder):
    api = API
    id_prefix = ""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._usage_known = False
        self._ended: list[ContentBlock] = []
        self._parts = 0  # blocks a client reads back from the parts sent so far
        self._held: list[list[Any]] = []  # foreign thinking waiting for a part to ride on

    def target_id(self, source_id: str | None) -> str:
        return source_id or derive_id("", API, "")

    def _chunk(self, parts: list[dict[str, Any]], **candidate: Any) -> bytes:
        payload: dict[str, Any] = {
            "candidates": [{"content": {"role": "model", "parts": parts}, **candidate, "index": 0}]
        }
        if self._usage_known:
            payload["usageMetadata"] = wire_usage(self.usage)
        payload["modelVersion"] = self.model or ""
        payload["responseId"] = self.response_id
        return frame(payload, crlf=True)

    def on_usage(self) -> bytes:
        self._usage_known = True
        return b""

    def on_text(self, event: TextDelta) -> bytes:
        return self._chunk([{"text": event.delta}])

    def on_thinking(self, event: ThinkingDelta) -> bytes:
        return self._chunk([{"text": event.delta, "thought": True}]) if event.delta else b""

    def on_tool(self, event: ToolCallDelta) -> bytes:
        return b""  # the call goes out whole at its end (module doc)

    def on_block_end(self, event: BlockEnd) -> bytes:
        block = event.block
        self._ended.append(block)
        position = self._parts
        self._parts += 1
        if isinstance(block, ThinkingBlock) and self.carrier.foreign:
            self._held.append(held_entry(position, block))
            return b""
        if isinstance(block, (ToolCallBlock, ProviderBlock)):
            parts = parts_of(block, self.carrier)
            if not parts:
                self._parts -= 1
                return b""
            if self._held and isinstance(block, ToolCallBlock):
                parts[0]["thoughtSignature"] = carried(self.carrier, self._held, position, block)
                self._held = []
            return self._chunk(parts)
        if isinstance(block, ThinkingBlock):
            kind = "redacted" if block.redacted else "thinking"
            signature = thought_signature(self.carrier, kind, block.signature)
            if not signature and block.thinking:
                return b""
            closing: dict[str, Any] = {"text": "", "thought": True}
        else:
            signature = thought_signature(self.carrier, "text", block.signature)
            if not signature and block.text:
                return b""
            closing = {"text": ""}
        if signature:
            closing["thoughtSignature"] = signature
        return self._chunk([closing])

    def _last_part(self) -> dict[str, Any]:
        """The turn's closing empty part; it carries the held thinking when
        no call came to (module doc)."""
        last: dict[str, Any] = {"text": ""}
        if self._held:
            last["thoughtSignature"] = carried(self.carrier, self._held, self._parts, TextBlock(""))
            self._held = []
        return last

    def on_done(self, message: AssistantMessage) -> bytes:
        self.usage, self._usage_known = message.usage, True
        fields = candidate_fields(self._ended, self.carrier)
        finish = raw_stop(message, API, FINISH_VALUES)
        return self._chunk([self._last_part()], finishReason=finish, **fields)

    def on_error(self, event: Error) -> bytes:
        out = self._chunk([self._last_part()]) if self._held else b""
        return out + self._error(event)

    def _error(self, event: Error) -> bytes:
        code, status = ERRORS[error_class(event.code, event.reason)]
        if self.same_issuer(event.message) and event.code and event.code.isupper():
            status = event.code
        return frame(
            {"error": {"code": code, "message": event.reason, "status": status}}, crlf=True
        )
