"""``anthropic-messages``: the Anthropic Messages streaming API (providers.md §1).

Blocks are keyed by the wire ``index``. Dispatch is on the payload's
``type``, not the SSE event name, because proxies strip ``event:`` lines; the
event name ``error`` is the one exception.
"""

from __future__ import annotations

from typing import Any

from ..._json import dumps_compact
from ...builder import MessageBuilder
from ...errors import error_type_of
from ...messages import StopReason, Usage
from ..base import ERROR_WORDS, Decoder, as_dict, as_int, as_list, as_str, error_of, wire_key

__all__ = ["AnthropicDecoder"]

STOP_TABLE: dict[str, StopReason | None] = {
    "end_turn": StopReason.STOP,
    "stop_sequence": StopReason.STOP,
    "max_tokens": StopReason.LENGTH,
    "model_context_window_exceeded": StopReason.LENGTH,
    "tool_use": StopReason.TOOL_USE,
    "pause_turn": StopReason.PAUSE,
    "refusal": StopReason.CONTENT_FILTER,
    "sensitive": StopReason.CONTENT_FILTER,
    "error": None,
}

#: Iteration types billed to the message's own model (providers.md §1.4).
_BILLED_ITERATIONS = frozenset(("message", "compaction"))


def to_usage(raw: dict[str, Any]) -> Usage:
    reasoning = as_int(as_dict(raw.get("output_tokens_details")).get("thinking_tokens"))
    iterations = [
        it
        for it in (as_dict(i) for i in as_list(raw.get("iterations")))
        if as_str(it.get("type")) in _BILLED_ITERATIONS
    ]
    source = iterations or [raw]
    return Usage.of(
        input_tokens=sum(as_int(u.get("input_tokens")) for u in source),
        output_tokens=sum(as_int(u.get("output_tokens")) for u in source),
        cache_read_tokens=sum(as_int(u.get("cache_read_input_tokens")) for u in source),
        cache_write_tokens=sum(as_int(u.get("cache_creation_input_tokens")) for u in source),
        reasoning_tokens=reasoning,
        raw=raw,
    )


class AnthropicDecoder(Decoder):
    api = "anthropic-messages"
    stop_table = STOP_TABLE
    closing_words = (b"message_stop", *ERROR_WORDS)

    def __init__(self, builder: MessageBuilder, choice: int = 0) -> None:
        super().__init__(builder, choice)
        self._usage: dict[str, Any] = {}

    def handle(self, event: str, payload: dict[str, Any]) -> None:
        kind = payload.get("type")
        if kind == "content_block_delta" and event != "error":  # most events: first
            try:  # the commonest event of all, in one step (subscripts: the fewest steps)
                delta = payload["delta"]
                if delta["type"] == "text_delta":
                    text, index = delta["text"], payload["index"]
                    if type(text) is str and type(index) is int:
                        self.builder.append_text(index, text)
                        return
            except (KeyError, TypeError):  # a malformed delta: _delta says what is wrong
                pass
            self._delta(payload.get("index"), as_dict(payload.get("delta")))
        elif event == "error" or kind == "error":
            error = as_dict(payload.get("error"))
            reason, code = error_of(error, default="error event", codes=("type",))
            self.builder.fail("upstream", reason, code, error_type=error_type_of(error))
        elif kind == "content_block_start":
            self._start_block(payload.get("index"), as_dict(payload.get("content_block")))
        elif kind == "content_block_stop":
            self.builder.end_block(wire_key(payload.get("index")))
        elif kind == "message_start":
            message = as_dict(payload.get("message"))
            self.builder.start(
                as_str(message.get("model")) or None, as_str(message.get("id")) or None
            )
            self._merge_usage(as_dict(message.get("usage")))
        elif kind == "message_delta":
            stop = as_dict(payload.get("delta")).get("stop_reason")
            if isinstance(stop, str):
                self.builder.set_stop_reason(stop)
            self._merge_usage(as_dict(payload.get("usage")))
        elif kind == "message_stop":
            self.builder.finish()
        # ping and unknown event types: nothing.

    def _merge_usage(self, usage: dict[str, Any]) -> None:
        """Overwrite only the fields present and non-null (proxies and older
        models send only ``output_tokens`` in ``message_delta``)."""
        present = {k: v for k, v in usage.items() if v is not None}
        if not present:
            return
        self._usage = {**self._usage, **present}
        self.builder.set_usage(to_usage(self._usage))

    def _start_block(self, index: Any, block: dict[str, Any]) -> None:
        key = wire_key(index)
        kind = as_str(block.get("type"))
        b = self.builder
        if kind == "text":
            b.open_text(
                key, text=as_str(block.get("text")), citations=as_list(block.get("citations"))
            )
        elif kind == "thinking":
            b.open_thinking(
                key, text=as_str(block.get("thinking")), signature=as_str(block.get("signature"))
            )
        elif kind == "redacted_thinking":
            b.open_thinking(key, signature=as_str(block.get("data")), redacted=True)
        elif kind == "tool_use":
            b.open_tool_call(key, id=as_str(block.get("id")), name=as_str(block.get("name")))
            eager = block.get("input")
            if isinstance(eager, dict) and eager:
                b.set_default_arguments(key, dumps_compact(eager))
        else:
            # Server tools, MCP, tool results, compaction and unknown blocks:
            # kept verbatim for replay. An empty start ``input`` is filled from
            # ``input_json_delta``s by the builder.
            b.open_provider(key, kind or "unknown", block)

    def _delta(self, index: Any, delta: dict[str, Any]) -> None:
        key = wire_key(index)
        kind = delta.get("type")
        b = self.builder
        if kind == "text_delta":
            b.append_text(key, as_str(delta.get("text")))
        elif kind == "thinking_delta":
            b.append_thinking(key, as_str(delta.get("thinking")))
        elif kind == "input_json_delta":
            b.append_arguments(key, as_str(delta.get("partial_json")))
        elif kind == "signature_delta":
            b.set_signature(key, as_str(delta.get("signature")))
        elif kind == "citations_delta":
            b.add_citation(key, delta.get("citation"))
        elif kind == "compaction_delta":
            b.append_provider_text(key, "content", as_str(delta.get("content")))
        elif not b.is_open(key):
            b.diagnostic("delta_for_unknown_block", f"delta for block {index!r}, which is not open")
        else:
            b.diagnostic("unknown_delta", f"unknown delta type {kind!r}", dumps_compact(delta))
