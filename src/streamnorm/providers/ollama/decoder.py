"""``ollama-chat``: Ollama's native ``/api/chat`` and ``/api/generate`` streams.

Newline-delimited JSON (framing ``ndjson``), one object per line:
``message.thinking`` / ``message.content`` deltas (``/api/generate``:
``thinking`` / ``response`` at the top level), ``message.tool_calls`` as
complete calls, and a last object with ``done: true``, ``done_reason`` and the
counts (``prompt_eval_count``, ``eval_count``). That object is the terminal
signal; a stream cut before it is truncated. A line ``{"error": "…"}`` is an
upstream error. Ollama sends no response id: a call without ``id`` gets the
builder's deterministic ``call_<n>``.

Text and thinking arrive as runs: a delta of the other kind ends the open
block and starts a new one, so that interleaved runs keep their order.
"""

from __future__ import annotations

from typing import Any

from ..._json import dumps_compact
from ...builder import MessageBuilder
from ...messages import StopReason, Usage
from ..base import Decoder, as_dict, as_int, as_list, as_str, error_of

__all__ = ["OllamaDecoder"]

STOP_TABLE: dict[str, StopReason | None] = {
    "stop": StopReason.STOP,
    "length": StopReason.LENGTH,
    # A request with an empty prompt only loads or unloads the model.
    "load": StopReason.STOP,
    "unload": StopReason.STOP,
}

#: The fields of the final object that are usage: counts and durations (ns).
_USAGE_FIELDS = (
    "prompt_eval_count",
    "eval_count",
    "total_duration",
    "load_duration",
    "prompt_eval_duration",
    "eval_duration",
)


def to_usage(payload: dict[str, Any]) -> Usage:
    raw = {k: payload[k] for k in _USAGE_FIELDS if k in payload}
    return Usage.of(
        input_tokens=as_int(payload.get("prompt_eval_count")),
        output_tokens=as_int(payload.get("eval_count")),
        raw=raw,
    )


class OllamaDecoder(Decoder):
    api = "ollama-chat"
    framing = "ndjson"
    stop_table = STOP_TABLE

    def __init__(self, builder: MessageBuilder, choice: int = 0) -> None:
        super().__init__(builder, choice)
        self._blocks = 0  # block keys 0, 1, 2 … in the order they open
        self._current: tuple[int, str] | None = None  # the open run: (key, kind)

    def handle(self, event: str, payload: dict[str, Any]) -> None:
        builder = self.builder
        if "error" in payload:
            builder.fail("upstream", error_of(payload["error"], codes=())[0])
            return
        builder.start(as_str(payload.get("model")) or None)
        message = as_dict(payload.get("message"))
        self._run("thinking", message.get("thinking", payload.get("thinking")))
        self._run("text", message.get("content", payload.get("response")))
        calls = as_list(message.get("tool_calls"))
        if calls:
            self._end_run()
            for call in calls:
                self._tool_call(as_dict(call))
        if payload.get("done") is True:
            self._finish(payload)

    def _run(self, kind: str, delta: Any) -> None:
        if not isinstance(delta, str) or not delta:
            return
        builder = self.builder
        if self._current is None or self._current[1] != kind:
            self._end_run()
            key = self._new_key()
            self._current = (key, kind)
            if kind == "text":
                builder.open_text(key)
            else:
                builder.open_thinking(key)
        key = self._current[0]
        if kind == "text":
            builder.append_text(key, delta)
        else:
            builder.append_thinking(key, delta)

    def _end_run(self) -> None:
        if self._current is not None:
            self.builder.end_block(self._current[0])
            self._current = None

    def _new_key(self) -> int:
        self._blocks += 1
        return self._blocks - 1

    def _tool_call(self, call: dict[str, Any]) -> None:
        """A complete call: ``function.arguments`` is an object (a string
        from some versions is taken as the raw JSON text)."""
        function = as_dict(call.get("function"))
        key = self._new_key()
        self.builder.open_tool_call(
            key,
            id=as_str(call.get("id")) or None,
            name=as_str(function.get("name")) or None,
            synthesize_id=True,
        )
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            self.builder.append_arguments(key, arguments)
        elif arguments is not None:
            self.builder.append_arguments(key, dumps_compact(arguments))
        self.builder.end_block(key)

    def _finish(self, payload: dict[str, Any]) -> None:
        builder = self.builder
        self._end_run()
        builder.set_usage(to_usage(payload))
        reason = payload.get("done_reason")
        if isinstance(reason, str) and reason:
            builder.set_stop_reason(reason)
        builder.finish()
