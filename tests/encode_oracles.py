"""The official SDKs as readers of encoded bytes: each turns one byte stream
of its api into a :class:`View` (what a user of that SDK ends up with), and
:func:`expected` says, from a canonical message, what that view must be.

The expectations are written here from the wire tables of encoding.md §6
and §7, not taken from the encoders, so that a wrong mapping in an encoder
shows up as a difference.
"""

from __future__ import annotations

import base64
import functools
import json
import warnings
from dataclasses import dataclass, field
from typing import Any

import anthropic
import google.genai as genai
import httpx
import httpx2  # the anthropic and openai SDKs are built on it (httpx's API)
import jiter
import openai
from google.genai import errors as genai_errors
from google.genai import types as genai_types
from openai.lib.streaming.chat import ChatCompletionStreamState

from streamnorm import AssistantMessage, StopReason, TextBlock, ThinkingBlock, ToolCallBlock


@dataclass
class View:
    """Text, thinking, tool calls ``(id, name, arguments)``, stop value,
    usage ``(input, output, cache read, cache write, reasoning)`` and the
    error the SDK raised (its class name), if any."""

    text: str = ""
    thinking: str = ""
    calls: list[tuple[str | None, str, Any]] = field(default_factory=list)
    stop: str | None = None
    usage: tuple[int, int, int, int, int] = (0, 0, 0, 0, 0)
    error: str | None = None


def arguments(text: str) -> Any:
    """Argument text as a client reads it: strict JSON, or for a call cut off
    by the end of the turn, the partial parse (jiter, trailing strings kept)."""
    try:
        return json.loads(text)
    except ValueError:
        return jiter.from_json(text.encode(), partial_mode="trailing-strings")


def _response(data: bytes, module: Any) -> Any:
    return module.Response(200, headers={"content-type": "text/event-stream"}, content=data)


# ---------------------------------------------------------------------------
# anthropic: client.messages.stream()


def anthropic_view(data: bytes) -> View:
    transport = httpx2.MockTransport(lambda request: _response(data, httpx2))
    client = anthropic.Anthropic(
        api_key="x", http_client=httpx2.Client(transport=transport), max_retries=0
    )
    view = View()
    try:
        with client.messages.stream(
            model="m", max_tokens=1024, messages=[{"role": "user", "content": "hi"}]
        ) as stream:
            message = stream.get_final_message()
    except anthropic.APIStatusError as exc:
        view.error = type(exc).__name__
        return view
    for block in message.content:
        if block.type == "text":
            view.text += block.text
        elif block.type == "thinking":
            view.thinking += block.thinking
        elif block.type == "tool_use":
            view.calls.append((block.id, block.name, block.input))
    view.stop = message.stop_reason
    u = message.usage
    details = getattr(u, "output_tokens_details", None)
    thinking = (details.get("thinking_tokens") if isinstance(details, dict) else None) or getattr(
        details, "thinking_tokens", 0
    )
    view.usage = (
        u.input_tokens or 0,
        u.output_tokens or 0,
        u.cache_read_input_tokens or 0,
        u.cache_creation_input_tokens or 0,
        thinking or 0,
    )
    return view


# ---------------------------------------------------------------------------
# openai: chat.completions.create(stream=True) + ChatCompletionStreamState


def _openai_client(data: bytes) -> openai.OpenAI:
    transport = httpx2.MockTransport(lambda request: _response(data, httpx2))
    return openai.OpenAI(
        api_key="x",
        base_url="http://sdk.test/v1",
        http_client=httpx2.Client(transport=transport),
        max_retries=0,
    )


def completions_view(data: bytes) -> View:
    state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
    view = View()
    stream = _openai_client(data).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for chunk in stream:
                state.handle_chunk(chunk)
    except openai.APIError as exc:
        view.error = type(exc).__name__
        return view
    snapshot = state.current_completion_snapshot
    choice = snapshot.choices[0]
    message = choice.message
    view.text = (message.content or "") + (message.refusal or "")
    view.thinking = (message.model_extra or {}).get("reasoning_content") or ""
    for call in message.tool_calls or []:
        view.calls.append((call.id, call.function.name, arguments(call.function.arguments)))
    view.stop = choice.finish_reason
    u = snapshot.usage
    if u is not None:
        cached = u.prompt_tokens_details.cached_tokens or 0 if u.prompt_tokens_details else 0
        written = getattr(u.prompt_tokens_details, "cache_write_tokens", None) or 0
        details = u.completion_tokens_details
        reasoning = (details.reasoning_tokens or 0) if details else 0
        view.usage = (
            u.prompt_tokens - cached - written,
            u.completion_tokens,
            cached,
            written,
            reasoning,
        )
    return view


# ---------------------------------------------------------------------------
# openai: responses.stream()


def responses_view(data: bytes) -> View:
    view = View()
    response = None
    try:
        with _openai_client(data).responses.stream(model="m", input="hi") as stream:
            for event in stream:
                if event.type in ("response.completed", "response.incomplete", "response.failed"):
                    response = event.response
            if response is not None and response.status == "completed":
                response = stream.get_final_response()
    except openai.APIError as exc:  # an error event in OpenAI's own form
        view.error = type(exc).__name__
        return view
    assert response is not None, "no terminal event"
    if response.status == "failed":
        view.error = "failed"
        return view
    for item in response.output:
        if item.type == "message":
            for part in item.content:
                view.text += part.text if part.type == "output_text" else part.refusal
        elif item.type == "reasoning":
            view.thinking += "\n\n".join(
                [s.text for s in item.summary] + [c.text for c in item.content or []]
            )
        elif item.type == "function_call":
            view.calls.append((item.call_id, item.name, arguments(item.arguments)))
    details = response.incomplete_details
    view.stop = details.reason if details is not None else response.status
    u = response.usage
    if u is not None:
        cached = u.input_tokens_details.cached_tokens
        written = u.input_tokens_details.cache_write_tokens or 0
        view.usage = (
            u.input_tokens - cached - written,
            u.output_tokens,
            cached,
            written,
            u.output_tokens_details.reasoning_tokens,
        )
    return view


# ---------------------------------------------------------------------------
# google-genai: models.generate_content_stream()


#: The bytes the google-genai client below answers its next request with.
_GOOGLE_REPLY = [b""]


@functools.cache
def _google_client() -> genai.Client:
    """One client for every read, answering with ``_GOOGLE_REPLY``: building
    a google-genai client loads the CA bundle three times (60 ms, more than
    most reads), and the client keeps nothing from one request to the next."""
    transport = httpx.MockTransport(lambda request: _response(_GOOGLE_REPLY[0], httpx))
    options = genai_types.HttpOptions(client_args={"transport": transport})
    return genai.Client(api_key="key", http_options=options)


def google_view(data: bytes) -> View:
    _GOOGLE_REPLY[0] = data
    client = _google_client()
    view = View()
    chunks = []
    try:
        for chunk in client.models.generate_content_stream(model="gemini-2.5-flash", contents="hi"):
            chunks.append(chunk)
    except genai_errors.APIError as exc:
        view.error = type(exc).__name__
        return view
    usage = None
    for chunk in chunks:
        usage = chunk.usage_metadata or usage
        for candidate in chunk.candidates or []:
            view.stop = candidate.finish_reason.value if candidate.finish_reason else view.stop
            for part in (candidate.content.parts if candidate.content else None) or []:
                if part.thought_signature is not None:
                    base64.b64encode(part.thought_signature)  # decoded from valid base64
                if part.function_call is not None:
                    fc = part.function_call
                    view.calls.append((fc.id, fc.name or "", fc.args or {}))
                elif part.text is not None and part.thought:
                    view.thinking += part.text
                elif part.text is not None:
                    view.text += part.text
    if usage is not None:
        cached = usage.cached_content_token_count or 0
        reasoning = usage.thoughts_token_count or 0
        view.usage = (
            (usage.prompt_token_count or 0) - cached,
            (usage.candidates_token_count or 0) + reasoning,
            cached,
            0,
            reasoning,
        )
    return view


READERS = {
    "anthropic-messages": anthropic_view,
    "openai-completions": completions_view,
    "openai-responses": responses_view,
    "google-generative-ai": google_view,
}

# ---------------------------------------------------------------------------
# What each SDK must end up with (encoding.md §6, §7)

STOP = {
    "anthropic-messages": {
        StopReason.STOP: "end_turn",
        StopReason.TOOL_USE: "tool_use",
        StopReason.LENGTH: "max_tokens",
        StopReason.CONTENT_FILTER: "refusal",
        StopReason.PAUSE: "pause_turn",
    },
    "openai-completions": {
        StopReason.STOP: "stop",
        StopReason.TOOL_USE: "tool_calls",
        StopReason.LENGTH: "length",
        StopReason.CONTENT_FILTER: "content_filter",
        StopReason.PAUSE: "stop",
    },
    "openai-responses": {
        StopReason.STOP: "completed",
        StopReason.TOOL_USE: "completed",
        StopReason.LENGTH: "max_output_tokens",
        StopReason.CONTENT_FILTER: "content_filter",
        StopReason.PAUSE: "completed",
    },
    "google-generative-ai": {
        StopReason.STOP: "STOP",
        StopReason.TOOL_USE: "STOP",
        StopReason.LENGTH: "MAX_TOKENS",
        StopReason.CONTENT_FILTER: "SAFETY",
        StopReason.PAUSE: "STOP",
    },
}

ERRORS = {
    "anthropic-messages": "APIStatusError",
    "openai-completions": "APIError",
    "openai-responses": "failed",
    "google-generative-ai": "ServerError",
}


def _error(message: AssistantMessage, target: str) -> str:
    """What the SDK of ``target`` reports for a failed turn: OpenAI's own
    Responses error with a type goes out in OpenAI's form (code and type
    under ``error``), on which the SDK raises ``APIError`` (encoding.md
    'Errors'); any other ends in ``response.failed``."""
    if target == "openai-responses" and message.api == target and message.error_type:
        return "APIError"
    return ERRORS[target]


def _anthropic_id(call_id: str) -> str:
    ok = all(c.isascii() and (c.isalnum() or c in "_-") for c in call_id) and call_id
    return (
        call_id
        if ok
        else "toolu_" + base64.urlsafe_b64encode(call_id.encode()).decode().rstrip("=")
    )


def expected(message: AssistantMessage, target: str, failed: bool) -> View:
    """What the SDK of ``target`` must read for ``message``."""
    if failed:
        return View(error=_error(message, target))
    view = View()
    for block in message.content:
        if isinstance(block, TextBlock):
            view.text += block.text
        elif isinstance(block, ThinkingBlock) and not block.redacted:
            view.thinking += block.thinking
        elif isinstance(block, ToolCallBlock):
            call_id = _anthropic_id(block.id) if target == "anthropic-messages" else block.id
            view.calls.append((call_id, block.name, json.loads(json.dumps(block.arguments))))
    same = message.api == target and message.raw_stop_reason
    if same and target != "openai-responses":
        view.stop = message.raw_stop_reason
    else:
        view.stop = STOP[target][message.stop_reason]
        if target == "anthropic-messages" and view.stop == "tool_use" and not message.tool_calls:
            view.stop = "end_turn"
        if target == "openai-completions" and view.stop == "tool_calls" and not message.tool_calls:
            view.stop = "stop"
    if target == "openai-responses" and same and message.raw_stop_reason != "completed":
        view.stop = message.raw_stop_reason
    u = message.usage
    view.usage = (
        u.input_tokens,
        u.output_tokens,
        u.cache_read_tokens,
        u.cache_write_tokens,
        u.reasoning_tokens,
    )
    if target == "google-generative-ai":  # no cache-write field: folded into the prompt
        view.usage = (
            u.input_tokens + u.cache_write_tokens,
            u.output_tokens,
            u.cache_read_tokens,
            0,
            u.reasoning_tokens,
        )
    return view
