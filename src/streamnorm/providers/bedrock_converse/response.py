"""``bedrock-converse-stream`` non-streaming responses: a ``Converse`` answer
(``{"output": {"message": …}, "stopReason", "usage", "metrics"}``) or a
Bedrock error body → ``AssistantMessage``.

The body is replayed to the ConverseStream decoder as the events its
streaming form carries (``messageStart``; per block a start where the stream
has one, its content as one delta, a stop; ``messageStop``; ``metadata``),
so both forms share one mapping of blocks, signatures, usage and stop reasons.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..._json import dumps_compact
from ...events import Event
from ...messages import AssistantMessage
from ..base import as_dict, as_list
from ..codecbase import drive
from .decoder import BedrockConverseDecoder, error_event

__all__ = ["decode_response"]

Payload = tuple[str, dict[str, Any]]

#: The response's fields that are not its stream's ``metadata`` event.
_NOT_METADATA = ("output", "stopReason", "additionalModelResponseFields")


def _block(index: int, block: dict[str, Any]) -> list[Payload]:
    """The stream events of one whole content block."""
    at = {"contentBlockIndex": index}
    stop = ("contentBlockStop", at)

    def delta(value: dict[str, Any]) -> Payload:
        return ("contentBlockDelta", {**at, "delta": value})

    if "text" in block:
        return [delta({"text": block["text"]}), stop]
    if "toolUse" in block:
        tool = as_dict(block["toolUse"])
        head = {k: v for k, v in tool.items() if k != "input"}
        arguments = dumps_compact(tool.get("input", {}))
        return [
            ("contentBlockStart", {**at, "start": {"toolUse": head}}),
            delta({"toolUse": {"input": arguments}}),
            stop,
        ]
    if "reasoningContent" in block:
        return [*_reasoning(as_dict(block["reasoningContent"]), delta), stop]
    if "citationsContent" in block:
        cited = as_dict(block["citationsContent"])
        text = "".join(str(as_dict(p).get("text", "")) for p in as_list(cited.get("content")))
        citations = [delta({"citation": c}) for c in as_list(cited.get("citations"))]
        return [delta({"text": text}), *citations, stop]
    if "toolResult" in block:
        result = as_dict(block["toolResult"])
        content = as_list(result.get("content"))
        return [
            ("contentBlockStart", {**at, "start": {"toolResult": result}}),
            delta({"toolResult": content}),
            stop,
        ]
    return [("contentBlockStart", {**at, "start": block}), stop]


def _reasoning(
    content: dict[str, Any], delta: Callable[[dict[str, Any]], Payload]
) -> list[Payload]:
    """A reasoning block's deltas: its text then its signature, or its
    redacted blob."""
    if "redactedContent" in content:
        return [delta({"reasoningContent": {"redactedContent": content["redactedContent"]}})]
    text = as_dict(content.get("reasoningText"))
    out = [delta({"reasoningContent": {"text": text.get("text", "")}})]
    if text.get("signature"):
        out.append(delta({"reasoningContent": {"signature": text["signature"]}}))
    return out


def _events(body: Mapping[str, Any]) -> list[Payload]:
    error = error_event(dict(body))
    if error is not None:
        return [error]
    message = as_dict(as_dict(body.get("output")).get("message"))
    events: list[Payload] = [("messageStart", {"role": message.get("role", "assistant")})]
    for index, block in enumerate(as_list(message.get("content"))):
        events += _block(index, as_dict(block))
    stop = {"stopReason": body.get("stopReason")}
    if "additionalModelResponseFields" in body:
        stop["additionalModelResponseFields"] = body["additionalModelResponseFields"]
    events.append(("messageStop", stop))
    rest = {k: v for k, v in body.items() if k not in _NOT_METADATA}
    events.append(("metadata", {"usage": {}, **rest}))
    return events


def decode_response(
    body: Mapping[str, Any],
    *,
    model: str | None = None,
    provider: str | None = None,
    events: list[Event] | None = None,
) -> AssistantMessage:
    """The message of a Converse response body (or a Bedrock error body)."""
    return drive(
        BedrockConverseDecoder, _events(body), model=model, provider=provider, events=events
    )
