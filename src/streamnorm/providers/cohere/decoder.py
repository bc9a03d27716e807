"""``cohere-chat``: Cohere's v2 ``/v2/chat`` streaming API.

SSE events whose payload ``type`` names them (dispatch is on the payload, as
for Anthropic, so proxies that strip ``event:`` lines change nothing):

* ``message-start`` — the response id;
* ``content-start`` / ``content-delta`` / ``content-end`` with ``index`` —
  a text block (a ``thinking`` content item of reasoning models: a thinking
  block), keyed by that index;
* ``tool-plan-delta`` — the plan the model writes before its calls: one
  thinking block, ended when another block opens;
* ``tool-call-start`` / ``tool-call-delta`` / ``tool-call-end`` with
  ``index`` — a tool call whose arguments stream as text;
* ``citation-start`` — a citation (the wire object verbatim) of the text
  block open at that point, or of the last text block; ``citation-end``
  carries nothing;
* ``message-end`` — ``finish_reason`` and ``usage``: the terminal signal.
  ``ERROR`` ends the stream with ``Error(upstream)`` whose code is the
  ``error_type`` and reason the ``error`` text; a ``data: [DONE]`` after it
  is ignored.

Usage: the billed units are the canonical counts (DESIGN.md §4 counts what
the provider bills); ``tokens`` (what the model saw) stays in ``raw``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, ClassVar

from ...builder import MessageBuilder
from ...messages import StopReason, Usage
from ..base import Decoder, as_dict, as_int, as_str, wire_key

__all__ = ["CohereDecoder"]

STOP_TABLE: dict[str, StopReason | None] = {
    "COMPLETE": StopReason.STOP,
    "STOP_SEQUENCE": StopReason.STOP,
    "MAX_TOKENS": StopReason.LENGTH,
    "TOOL_CALL": StopReason.TOOL_USE,
    "TIMEOUT": None,
    "ERROR": None,
}

_PLAN = "tool_plan"


def to_usage(raw: dict[str, Any]) -> Usage:
    billed = as_dict(raw.get("billed_units"))
    return Usage.of(
        input_tokens=as_int(billed.get("input_tokens")),
        output_tokens=as_int(billed.get("output_tokens")),
        raw=raw,
    )


def _delta_message(payload: dict[str, Any]) -> dict[str, Any]:
    return as_dict(as_dict(payload.get("delta")).get("message"))


class CohereDecoder(Decoder):
    api = "cohere-chat"
    stop_table = STOP_TABLE
    _handlers: ClassVar[dict[str, Callable[[CohereDecoder, dict[str, Any]], None]]]

    def __init__(self, builder: MessageBuilder, choice: int = 0) -> None:
        super().__init__(builder, choice)
        self._last_text: Hashable | None = None  # the text block citations belong to

    def handle(self, event: str, payload: dict[str, Any]) -> None:
        handler = self._handlers.get(as_str(payload.get("type")))
        if handler is not None:
            handler(self, payload)

    def _message_start(self, payload: dict[str, Any]) -> None:
        self.builder.start(None, as_str(payload.get("id")) or None)

    def _open(self, key: Hashable) -> None:
        """A block opens: the tool plan, if it is open, is over."""
        if key != _PLAN and self.builder.is_open(_PLAN):
            self.builder.end_block(_PLAN)

    def _content_start(self, payload: dict[str, Any]) -> None:
        key = ("content", wire_key(payload.get("index")))
        self._open(key)
        content = as_dict(_delta_message(payload).get("content"))
        if content.get("type") == "thinking":
            self.builder.open_thinking(key, text=as_str(content.get("thinking")))
        else:
            self.builder.open_text(key, text=as_str(content.get("text")))
            self._last_text = key

    def _content_delta(self, payload: dict[str, Any]) -> None:
        key = ("content", wire_key(payload.get("index")))
        content = as_dict(_delta_message(payload).get("content"))
        if self.builder.kind(key) == "thinking":
            self.builder.append_thinking(key, as_str(content.get("thinking")))
        else:
            self.builder.append_text(key, as_str(content.get("text")))

    def _end(self, payload: dict[str, Any], kind: str) -> None:
        self.builder.end_block((kind, wire_key(payload.get("index"))))

    def _tool_plan_delta(self, payload: dict[str, Any]) -> None:
        text = as_str(_delta_message(payload).get("tool_plan"))
        self.builder.thinking(_PLAN, text)

    def _tool_call_start(self, payload: dict[str, Any]) -> None:
        key = ("tool", wire_key(payload.get("index")))
        self._open(key)
        call = as_dict(_delta_message(payload).get("tool_calls"))
        function = as_dict(call.get("function"))
        self.builder.open_tool_call(
            key, id=as_str(call.get("id")) or None, name=as_str(function.get("name")) or None
        )
        self.builder.append_arguments(key, as_str(function.get("arguments")))

    def _tool_call_delta(self, payload: dict[str, Any]) -> None:
        call = as_dict(_delta_message(payload).get("tool_calls"))
        fragment = as_str(as_dict(call.get("function")).get("arguments"))
        self.builder.append_arguments(("tool", wire_key(payload.get("index"))), fragment)

    def _citation_start(self, payload: dict[str, Any]) -> None:
        citation = _delta_message(payload).get("citations")
        key = self._last_text
        if not isinstance(citation, dict) or key is None:
            self.builder.diagnostic("unknown_delta", "a citation without a text block")
        elif self.builder.is_open(key):
            self.builder.add_citation(key, citation)
        else:
            self.builder.backfill_citations(key, [citation])

    def _message_end(self, payload: dict[str, Any]) -> None:
        delta = as_dict(payload.get("delta"))
        usage = delta.get("usage")
        if isinstance(usage, dict) and usage:
            self.builder.set_usage(to_usage(usage))
        reason = as_str(delta.get("finish_reason"))
        if reason in ("ERROR", "TIMEOUT"):
            self.builder.set_stop_reason(reason)
            error = as_str(delta.get("error")) or reason
            self.builder.fail("upstream", error, as_str(delta.get("error_type")) or reason)
            return
        if reason:
            self.builder.set_stop_reason(reason)
        self.builder.finish()


CohereDecoder._handlers = {
    "message-start": CohereDecoder._message_start,
    "content-start": CohereDecoder._content_start,
    "content-delta": CohereDecoder._content_delta,
    "content-end": lambda self, payload: self._end(payload, "content"),
    "tool-plan-delta": CohereDecoder._tool_plan_delta,
    "tool-call-start": CohereDecoder._tool_call_start,
    "tool-call-delta": CohereDecoder._tool_call_delta,
    "tool-call-end": lambda self, payload: self._end(payload, "tool"),
    "citation-start": CohereDecoder._citation_start,
    "message-end": CohereDecoder._message_end,
}
