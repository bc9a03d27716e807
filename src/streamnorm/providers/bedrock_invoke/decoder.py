"""``bedrock-invoke-stream``: AWS Bedrock ``InvokeModelWithResponseStream``
(docs/bedrock.md).

The body is an AWS event stream (`streamnorm.eventstream`) of ``chunk``
events whose JSON payload is ``{"bytes": <base64>}``; the decoded bytes are
one JSON event of the model vendor's own streaming API. For Claude those are
Anthropic Messages events, handed to the Anthropic decoder itself, so that
an Invoke stream gives the message the same answer gives on the Anthropic
API; the legacy Claude Text Completions chunk (``{"completion": …,
"stop_reason": …}``) is read here. Bedrock adds
``amazon-bedrock-invocationMetrics`` to the last inner event: what Bedrock
bills, it is the usage from then on.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from ... import _json
from ..._json import dumps_compact
from ...builder import MessageBuilder
from ...messages import Usage
from ..anthropic.decoder import STOP_TABLE, AnthropicDecoder
from ..base import Decoder, as_int, as_str
from ..bedrock_converse.decoder import fail_upstream

__all__ = ["BedrockInvokeDecoder", "with_metrics"]

_METRICS = "amazon-bedrock-invocationMetrics"
#: The one block of a legacy Text Completions stream.
_COMPLETION = "completion"


def with_metrics(usage: Usage, metrics: dict[str, Any]) -> Usage:
    """``usage`` with Bedrock's invocation metrics as its counts. A cache count
    the metrics leave out keeps the inner API's; reasoning, which Bedrock does
    not report, too. ``raw`` is the inner usage with the metrics beside it."""

    def count(name: str, default: int) -> int:
        return as_int(metrics[name]) if name in metrics else default

    return Usage.of(
        input_tokens=count("inputTokenCount", usage.input_tokens),
        output_tokens=count("outputTokenCount", usage.output_tokens),
        cache_read_tokens=count("cacheReadInputTokenCount", usage.cache_read_tokens),
        cache_write_tokens=count("cacheWriteInputTokenCount", usage.cache_write_tokens),
        reasoning_tokens=usage.reasoning_tokens,
        raw={**(usage.raw or {}), _METRICS: metrics},
    )


class BedrockInvokeDecoder(Decoder):
    api = "bedrock-invoke-stream"
    stop_table = STOP_TABLE
    framing = "eventstream"

    def __init__(self, builder: MessageBuilder, choice: int = 0) -> None:
        super().__init__(builder, choice)
        self._anthropic = AnthropicDecoder(builder, choice)

    def handle(self, event: str, payload: dict[str, Any]) -> None:
        if event == "chunk":
            inner = self._inner(payload)
            if inner is not None:
                self.inner_event(inner)
        elif ":" in event:
            fail_upstream(self.builder, event, payload)
        else:
            self.builder.diagnostic(
                "unknown_event", f"unknown event type {event!r}", dumps_compact(payload)
            )

    def _inner(self, payload: dict[str, Any]) -> dict[str, Any] | None:
        """The inner event of a chunk, or None with a diagnostic."""
        encoded = payload.get("bytes")
        if not isinstance(encoded, str):
            raw = dumps_compact(payload)
            self.builder.diagnostic("invalid_chunk", "a chunk without bytes", raw)
            return None
        try:
            inner = _json.loads(base64.b64decode(encoded, validate=True))
        except (binascii.Error, ValueError) as exc:
            self.builder.diagnostic("invalid_chunk", f"a chunk's bytes: {exc}", encoded)
            return None
        if not isinstance(inner, dict):
            self.builder.diagnostic("invalid_chunk", "a chunk's bytes are not a JSON object")
            return None
        return inner

    def inner_event(self, inner: dict[str, Any]) -> None:
        """One event of the vendor's API, as a chunk's bytes carry it."""
        kind = inner.get("type")
        legacy = not isinstance(kind, str) and _COMPLETION in inner
        if legacy:  # a Text Completions stream identifies itself with every chunk
            self.builder.start(as_str(inner.get("model")) or None)
        metrics = inner.get(_METRICS)
        if isinstance(metrics, dict):  # before the event: it may be the terminal one
            self.builder.set_usage(with_metrics(self.builder.usage, metrics))
        if isinstance(kind, str):
            self._anthropic.handle(kind, inner)
        elif legacy:
            self._completion(inner)
        else:
            self.builder.diagnostic(
                "unknown_event", "an inner event of an unknown API", dumps_compact(inner)
            )

    def _completion(self, chunk: dict[str, Any]) -> None:
        """A legacy Text Completions chunk: text, and on the last a stop reason."""
        b = self.builder
        text = as_str(chunk.get(_COMPLETION))
        if text:
            b.text(_COMPLETION, text)
        stop = chunk.get("stop_reason")
        if isinstance(stop, str):
            b.set_stop_reason(stop)
            b.finish()
