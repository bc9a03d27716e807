"""``bedrock-converse-stream``: AWS Bedrock ``ConverseStream`` (docs/bedrock.md).

The body is an AWS event stream (`streamnorm.eventstream`); each event
frame's ``:event-type`` is one member of the ``ConverseStreamOutput`` union
and its payload that member's JSON. Dispatch is on that name: the payloads
carry no type of their own. Blocks are keyed by ``contentBlockIndex``.

Text and reasoning blocks have no ``contentBlockStart``: they open with their
first delta. A block whose deltas are all empty (gpt-oss sends one empty
text delta) is never opened, so that the message holds no empty block, which
Bedrock and Anthropic both refuse on replay. The stream ends with
``messageStop`` (the stop reason) and then ``metadata`` (usage, latency,
guardrail trace): it is done when both have arrived.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from ..._json import dumps_compact
from ...builder import MessageBuilder
from ...errors import error_type_of
from ...messages import StopReason, Usage
from ..base import Decoder, as_dict, as_int, as_list, as_str, error_of

__all__ = ["STOP_TABLE", "BedrockConverseDecoder", "error_event", "fail_upstream"]

STOP_TABLE: dict[str, StopReason | None] = {
    "end_turn": StopReason.STOP,
    "stop_sequence": StopReason.STOP,
    "tool_use": StopReason.TOOL_USE,
    "max_tokens": StopReason.LENGTH,
    "model_context_window_exceeded": StopReason.LENGTH,
    "guardrail_intervened": StopReason.CONTENT_FILTER,
    "content_filtered": StopReason.CONTENT_FILTER,
    # The service could not turn the model's output into a message.
    "malformed_model_output": None,
    "malformed_tool_use": None,
}

#: ``toolUse`` types that are not client tool calls (Nova's code interpreter).
_CLIENT_TOOL_TYPES = frozenset(("", "tool_use"))


#: The APIs whose refused requests answer with Bedrock's JSON error body.
BEDROCK_APIS = frozenset(("bedrock-converse-stream", "bedrock-invoke-stream"))


def error_body(payload: dict[str, Any]) -> dict[str, Any] | None:
    """The error object of a Bedrock HTTP error body, the answer to a request
    refused before any frame: restJson1's ``{"message": …}`` (``Message`` in
    some services), the exception named in ``__type`` when the body names
    it (else only in the ``x-amzn-ErrorType`` header, which an adapter adds).
    None when ``payload`` is no such body."""
    message = payload.get("message", payload.get("Message"))
    if not isinstance(message, str) or not set(payload) <= {"message", "Message", "__type"}:
        return None
    name = as_str(payload.get("__type")).rpartition("#")[2].partition(":")[0]
    return {"message": message, "type": name} if name else {"message": message}


def error_event(body: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """A Bedrock error body as the exception frame that says the same in a
    stream (what :func:`fail_upstream` reads); None when it is no error body."""
    error = error_body(body)
    if error is None:
        return None
    return f"exception:{error.get('type', '')}", {"error": error}


def fail_upstream(builder: MessageBuilder, name: str, payload: dict[str, Any]) -> None:
    """An ``exception:<type>`` or ``error:<code>`` frame, whose payload
    `streamnorm.eventstream.EventStreamDecoder.feed_raw` makes
    ``{"error": {"type", "message", …}}``: the stream ends with
    ``Error(upstream)``, the type as ``code``."""
    kind, _, code = name.partition(":")
    error = as_dict(payload.get("error"))
    reason, _ = error_of(error, default=as_str(error.get("Message")), codes=())
    reason = reason or f"{code or 'unnamed'} {kind}"
    builder.fail("upstream", reason, code or None, error_type=error_type_of(error))


def to_usage(metadata: dict[str, Any]) -> Usage:
    """``metadata.usage`` in canonical form; ``raw`` is the whole metadata
    event (usage, ``metrics.latencyMs``, guardrail ``trace``, service tier)
    without its random padding field ``p``."""
    usage = as_dict(metadata.get("usage"))
    return Usage.of(
        input_tokens=as_int(usage.get("inputTokens")),
        output_tokens=as_int(usage.get("outputTokens")),
        cache_read_tokens=as_int(usage.get("cacheReadInputTokens")),
        cache_write_tokens=as_int(usage.get("cacheWriteInputTokens")),
        raw={k: v for k, v in metadata.items() if k != "p"},
    )


class BedrockConverseDecoder(Decoder):
    api = "bedrock-converse-stream"
    stop_table = STOP_TABLE
    framing = "eventstream"

    def __init__(self, builder: MessageBuilder, choice: int = 0) -> None:
        super().__init__(builder, choice)
        self._empty: set[Hashable] = set()  # blocks seen only with empty deltas
        self._data: dict[Hashable, dict[str, Any]] = {}  # toolResult / image block data
        self._metadata = False

    def handle(self, event: str, payload: dict[str, Any]) -> None:
        if event == "contentBlockDelta":  # most events: first
            key = _key(payload.get("contentBlockIndex"))
            delta = payload.get("delta")
            text = delta.get("text") if type(delta) is dict else None
            if type(text) is str and text:
                self.builder.text(key, text)  # the commonest event, in one step
            else:
                self._delta(key, as_dict(delta))
        elif event == "contentBlockStart":
            self._start(_key(payload.get("contentBlockIndex")), as_dict(payload.get("start")))
        elif event == "contentBlockStop":
            self._stop(_key(payload.get("contentBlockIndex")))
        elif event == "messageStart":
            self.builder.start()
        elif event == "messageStop":
            stop = payload.get("stopReason")
            self.builder.set_stop_reason(stop if isinstance(stop, str) else "")
            if self._metadata:
                self.builder.finish()
        elif event == "metadata":
            self.builder.set_usage(to_usage(payload))
            self._metadata = True
            if self.builder.stop_seen:
                self.builder.finish()
        elif ":" in event:
            fail_upstream(self.builder, event, payload)
        else:
            self.builder.diagnostic(
                "unknown_event", f"unknown event type {event!r}", dumps_compact(payload)
            )

    def _start(self, key: Hashable, start: dict[str, Any]) -> None:
        b = self.builder
        tool = start.get("toolUse")
        if isinstance(tool, dict):
            if as_str(tool.get("type")) in _CLIENT_TOOL_TYPES:
                b.open_tool_call(
                    key, id=as_str(tool.get("toolUseId")), name=as_str(tool.get("name"))
                )
            else:  # a server tool: kept verbatim, its input filled from the deltas
                b.open_provider(key, "toolUse", tool)
        elif isinstance(start.get("toolResult"), dict):
            self._open_data(key, "toolResult", {**start["toolResult"], "content": []})
        elif isinstance(start.get("image"), dict):
            self._open_data(key, "image", start["image"])
        else:
            b.open_provider(key, next(iter(start), "unknown"), start)

    def _open_data(self, key: Hashable, kind: str, data: dict[str, Any]) -> None:
        self._data[key] = data
        self.builder.open_provider(key, kind, data)

    def _delta(self, key: Hashable, delta: dict[str, Any]) -> None:
        b = self.builder
        if "text" in delta:
            text = as_str(delta["text"])
            if self._joins(key, bool(text)):
                b.text(key, text)
        elif "reasoningContent" in delta:
            self._reasoning(key, as_dict(delta["reasoningContent"]))
        elif "toolUse" in delta:
            fragment = as_str(as_dict(delta["toolUse"]).get("input"))
            if self._joins(key, bool(fragment)):
                b.tool_call(key)
                b.append_arguments(key, fragment)
        elif "toolResult" in delta:
            data = self._provider_data(key, "toolResult")
            if data is not None:
                data["content"].extend(as_list(delta["toolResult"]))
                b.set_provider_data(key, data)
        elif "citation" in delta:
            if not b.has(key):
                b.open_text(key)
            b.add_citation(key, delta["citation"])
        elif "image" in delta:
            data = self._provider_data(key, "image")
            if data is not None:
                data.update(as_dict(delta["image"]))
                b.set_provider_data(key, data)
        else:
            b.diagnostic("unknown_delta", "unknown delta type", dumps_compact(delta))

    def _joins(self, key: Hashable, content: bool) -> bool:
        """Whether a delta with (or without) content goes to block ``key``: it
        does when the block exists, or opens it with its first content; a
        delta without any before that is only remembered, so that its stop
        is expected."""
        if self.builder.has(key):
            return True
        if not content:
            self._empty.add(key)
        return content

    def _reasoning(self, key: Hashable, delta: dict[str, Any]) -> None:
        b = self.builder
        redacted = as_str(delta.get("redactedContent"))
        if redacted:
            if not b.has(key):
                b.open_thinking(key, signature=redacted, redacted=True)
            else:  # an opaque blob sent in pieces: the pieces joined
                b.set_signature(key, (b.signature(key) or "") + redacted)
            return
        text, signature = as_str(delta.get("text")), as_str(delta.get("signature"))
        if not self._joins(key, bool(text or signature)):
            return
        if text or not b.has(key):
            b.thinking(key, text)
        if signature:
            b.set_signature(key, signature)

    def _provider_data(self, key: Hashable, kind: str) -> dict[str, Any] | None:
        """The data of the ``kind`` block ``key``, opened if need be, for a
        delta to update in place (O(size of the delta)); None, with a
        diagnostic, when ``key`` is another kind of block."""
        data = self._data.get(key)
        if data is None and self.builder.has(key):
            self.builder.diagnostic("unknown_delta", f"a {kind} delta for another kind of block")
        elif data is None:
            self._open_data(key, kind, {"content": []} if kind == "toolResult" else {})
            data = self._data[key]
        return data

    def _stop(self, key: Hashable) -> None:
        self._data.pop(key, None)
        if self.builder.has(key) or key not in self._empty:
            self.builder.end_block(key)


def _key(index: Any) -> Hashable:
    """Wire ``contentBlockIndex`` as a block key; junk values still key consistently."""
    return index if type(index) is int else repr(index)
