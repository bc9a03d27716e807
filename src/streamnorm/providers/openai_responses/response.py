"""``openai-responses`` non-streaming responses (a ``Response`` object or an
error body) → ``AssistantMessage``.

A ``Response`` is exactly what the stream's terminal event carries: it is
replayed to the stream decoder as ``response.completed`` (``incomplete``,
``failed``), whose backfill completes every output item, so both forms share
one mapping of items, signatures, usage and stop reasons.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...events import Event
from ...messages import AssistantMessage
from ..codecbase import drive
from .decoder import OpenAIResponsesDecoder

__all__ = ["decode_response", "resource_fields"]

_TERMINAL = {"incomplete": "response.incomplete", "failed": "response.failed"}


def decode_response(
    body: Mapping[str, Any],
    *,
    model: str | None = None,
    provider: str | None = None,
    events: list[Event] | None = None,
) -> AssistantMessage:
    if "error" in body and body.get("object") != "response" and "output" not in body:
        return drive(
            OpenAIResponsesDecoder,
            [("error", dict(body))],
            model=model,
            provider=provider,
            events=events,
        )
    status = body.get("status")
    kind = _TERMINAL.get(status, "response.completed") if isinstance(status, str) else None
    event = {"type": kind or "response.completed", "response": dict(body)}
    return drive(
        OpenAIResponsesDecoder, [("message", event)], model=model, provider=provider, events=events
    )


#: Spec defaults of the request options a Responses object echoes (Open
#: Responses ``ResponseResource``: every one is required in the object).
_NUMBERS = {"temperature": 1.0, "top_p": 1.0, "presence_penalty": 0.0, "frequency_penalty": 0.0}
_OPTIONAL_INTS = ("max_output_tokens", "max_tool_calls")
_OPTIONAL_STRS = ("previous_response_id", "prompt_cache_key", "safety_identifier", "user")


def _function_tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    """A function tool as the object echoes it: every key present, None where unset."""
    return {
        **tool,
        "description": tool.get("description"),
        "parameters": tool.get("parameters"),
        "strict": tool.get("strict"),
    }


def _of_type(value: Any, kind: type | tuple[type, ...], default: Any) -> Any:
    if isinstance(value, bool) and kind is not bool:
        return default
    return value if isinstance(value, kind) else default


def resource_fields(request: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The fields of a ``response`` object that echo the request: the
    client's own values where it sent them (``request`` is its Responses
    body), the spec's defaults otherwise, so that an object built for any
    upstream carries everything the spec requires."""
    r = request or {}
    fields: dict[str, Any] = {k: _of_type(r.get(k), (int, float), v) for k, v in _NUMBERS.items()}
    fields.update({k: _of_type(r.get(k), int, None) for k in _OPTIONAL_INTS})
    fields.update({k: _of_type(r.get(k), str, None) for k in _OPTIONAL_STRS})
    reasoning = r.get("reasoning")
    text = r.get("text")
    tools = r.get("tools")
    fields.update(
        background=_of_type(r.get("background"), bool, False),
        instructions=_of_type(r.get("instructions"), (str, list), None),
        metadata=_of_type(r.get("metadata"), dict, {}),
        parallel_tool_calls=_of_type(r.get("parallel_tool_calls"), bool, True),
        reasoning=(
            {"effort": reasoning.get("effort"), "summary": reasoning.get("summary")}
            if isinstance(reasoning, dict)
            else None
        ),
        service_tier=_of_type(r.get("service_tier"), str, "default"),
        store=_of_type(r.get("store"), bool, True),
        text=text if isinstance(text, dict) and "format" in text else {"format": {"type": "text"}},
        tool_choice=_of_type(r.get("tool_choice"), (str, dict), "auto"),
        tools=[
            _function_tool(t) if t.get("type") == "function" else t
            for t in (tools if isinstance(tools, list) else ())
            if isinstance(t, dict)
        ],
        top_logprobs=_of_type(r.get("top_logprobs"), int, 0),
        truncation=_of_type(r.get("truncation"), str, "disabled"),
    )
    return fields
