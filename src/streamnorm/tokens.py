"""Counting a request's input tokens: the provider's own count, or a local estimate.

Three APIs count a request exactly on the server, at an endpoint of their
own: Anthropic ``POST /v1/messages/count_tokens``, the
OpenAI Responses API ``POST /v1/responses/input_tokens`` and Gemini
``POST /v1beta/models/{model}:countTokens``. :func:`count_request` builds
that request and :func:`read_count` reads its answer, sans-IO like the rest
of the codec: the caller sends the bytes. Chat Completions has no such
endpoint.

Everywhere else (and offline) :func:`estimate_tokens` estimates: characters
of text per token, calibrated per API family against the input tokens real
responses reported, plus a fixed cost per message, per tool definition and
per image. No tokenizer is downloaded or bundled; docs/requests.md gives the
estimate's measured error.

:func:`count_tokens` joins the two: with a ``send`` callable it asks the
provider (where the API has a count endpoint), without one it estimates, and
its :class:`TokenCount` says which.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ._json import dumps_compact, loads
from .apis import ApiName, resolve_spoken_api
from .codec import encode_request
from .messages import (
    AssistantMessage,
    DocumentBlock,
    ImageBlock,
    Message,
    ProviderBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserContent,
)
from .request import ProviderTool, Request, Tool, WireRequest

__all__ = [
    "COUNT_APIS",
    "TokenCount",
    "count_request",
    "count_tokens",
    "estimate_tokens",
    "read_count",
]

#: The APIs with a count endpoint of their own.
COUNT_APIS = ("anthropic-messages", "openai-responses", "google-generative-ai")


@dataclass(frozen=True, slots=True)
class _Rates:
    """One API family's estimate: characters per token and fixed costs."""

    chars_per_token: float
    per_message: int
    per_tool: int
    base: int
    tools_prompt: int = 0


#: Calibrated against the input tokens the fixtures' responses report
#: (docs/requests.md, "Counting tokens").
_RATES = {
    # 346: the tool-use system prompt Anthropic documents for Claude 4 models.
    "anthropic-messages": _Rates(3.5, 4, 8, 8, 346),
    "openai-responses": _Rates(5.0, 3, 8, 8),
    "openai-completions": _Rates(4.0, 3, 8, 5),
    "google-generative-ai": _Rates(5.0, 0, 4, 3),
}
#: Tokens counted for one image (its size is not read): about what a
#: 1,000 × 1,000 picture costs on each of the three providers.
_IMAGE_TOKENS = 1_000
#: Base64 characters per token of a binary document sent inline (a PDF page
#: of about 100 kB costs some 1,500 tokens).
_BASE64_CHARS_PER_TOKEN = 90


@dataclass(frozen=True, slots=True)
class TokenCount:
    """A request's input tokens; ``exact`` when the provider counted them
    (``source`` is then the API whose endpoint did), else a local estimate
    (``source`` ``"estimate"``)."""

    input_tokens: int
    exact: bool
    source: str


#: The body fields each count endpoint takes; the rest of a generation
#: request (``max_tokens``, ``stream``, sampling …) is refused or ignored there.
_COUNT_FIELDS = {
    "anthropic-messages": frozenset(
        {"model", "messages", "system", "tools", "tool_choice", "thinking", "mcp_servers"}
    ),
    "openai-responses": frozenset(
        {
            "model",
            "input",
            "instructions",
            "tools",
            "tool_choice",
            "parallel_tool_calls",
            "reasoning",
            "text",
            "truncation",
            "conversation",
            "previous_response_id",
        }
    ),
}
_COUNT_PATHS = {
    "anthropic-messages": "/v1/messages/count_tokens",
    "openai-responses": "/v1/responses/input_tokens",
}


def count_request(request: Request, api: ApiName, *, provider: str | None = None) -> WireRequest:
    """The request that asks ``api``'s own server to count ``request``'s input
    tokens (sans-IO: send it with the API's credential, then :func:`read_count`).

    The body is ``encode_request``'s, less what the count endpoint does not
    take; Gemini's wraps it as ``generateContentRequest``. Raises
    ``ValueError`` for an API without a count endpoint (Chat Completions).
    """
    name = resolve_spoken_api(api)
    if name not in COUNT_APIS:
        raise ValueError(f"api: {name} has no token count endpoint (use estimate_tokens)")
    wire = encode_request(replace(request, stream=False), name, provider=provider)
    headers = dict(wire.headers)
    if name == "google-generative-ai":
        model = wire.path.split("/models/", 1)[1].split(":", 1)[0]
        body = {"generateContentRequest": {"model": f"models/{model}", **wire.body}}
        return WireRequest("POST", f"/v1beta/models/{model}:countTokens", headers, body)
    fields = _COUNT_FIELDS[name]
    body = {k: v for k, v in wire.body.items() if k in fields}
    return WireRequest("POST", _COUNT_PATHS[name], headers, body)


def read_count(body: bytes | str | Mapping[str, Any], api: ApiName) -> int:
    """The input tokens in a count endpoint's answer (``input_tokens``, or
    Gemini's ``totalTokens``); ``ValueError`` when the body holds none (an
    error body among them)."""
    name = resolve_spoken_api(api)
    data = loads(body) if isinstance(body, (bytes, bytearray, str)) else body
    key = "totalTokens" if name == "google-generative-ai" else "input_tokens"
    value = data.get(key) if isinstance(data, Mapping) else None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{key}: the count answer carries no token count")
    return value


def count_tokens(
    request: Request,
    api: ApiName,
    model: str | None = None,
    *,
    send: Callable[[WireRequest], bytes] | None = None,
    provider: str | None = None,
) -> TokenCount:
    """``request``'s input tokens on a model behind ``api`` (``model``
    replaces the request's).

    With ``send`` (a callable that performs a :class:`WireRequest` against
    the API's base URL, credential added, and returns the answer's body) and
    an API that has a count endpoint, the provider counts; otherwise the
    local estimate answers, and ``exact`` is False.
    """
    name = resolve_spoken_api(api)
    if model is not None:
        request = replace(request, model=model)
    if send is None or name not in COUNT_APIS:
        return TokenCount(estimate_tokens(request, name), False, "estimate")
    wire = count_request(request, name, provider=provider)
    return TokenCount(read_count(send(wire), name), True, name)


def estimate_tokens(request: Request, api: ApiName = "openai-responses") -> int:
    """A local estimate of ``request``'s input tokens for a model behind ``api``."""
    rates = _RATES[resolve_spoken_api(api)]
    chars = 0
    fixed = rates.base
    system = request.system
    if system is not None:
        chars += len(system) if isinstance(system, str) else sum(len(b.text) for b in system)
        fixed += rates.per_message
    for message in request.messages:
        text, tokens = _message_size(message)
        chars += text
        fixed += rates.per_message + tokens
    for tool in request.tools:
        chars += len(dumps_compact(_tool_text(tool)))
        fixed += rates.per_tool
    if request.tools:
        fixed += rates.tools_prompt
    return fixed + math.ceil(chars / rates.chars_per_token)


def _tool_text(tool: Tool | ProviderTool) -> Any:
    if isinstance(tool, ProviderTool):
        return tool.data
    return [tool.name, tool.description, tool.parameters]


def _message_size(message: Message) -> tuple[int, int]:
    """(characters of text, tokens of media) of one message."""
    if isinstance(message, AssistantMessage):
        return sum(_assistant_chars(b) for b in message.content), 0
    content = message.content
    if isinstance(content, str):
        size = (len(content), 0)
    else:
        sizes = [_user_size(b) for b in content]
        size = (sum(s[0] for s in sizes), sum(s[1] for s in sizes))
    if isinstance(message, ToolResultMessage):
        return size[0] + len(message.tool_call_id), size[1]
    return size


def _assistant_chars(block: object) -> int:
    if isinstance(block, TextBlock):
        return len(block.text)
    if isinstance(block, ThinkingBlock):
        return len(block.thinking)
    if isinstance(block, ToolCallBlock):
        return len(block.name) + len(block.raw_arguments or dumps_compact(block.arguments))
    if isinstance(block, ProviderBlock):
        return len(dumps_compact(block.data))
    return 0


def _user_size(block: UserContent) -> tuple[int, int]:
    if isinstance(block, TextBlock):
        return len(block.text), 0
    if isinstance(block, ImageBlock):
        return 0, _IMAGE_TOKENS
    if isinstance(block, DocumentBlock):
        inline = len(block.data or "")
        if block.mime_type.startswith("text/"):
            return inline, 0
        return 0, inline // _BASE64_CHARS_PER_TOKEN
    return len(dumps_compact(block.data)), 0
