"""One classification of failed streams and responses, whatever the provider.

Every provider words the same failures its own way: Anthropic's
``overloaded_error`` and ``rate_limit_error``, OpenAI's ``invalid_api_key``
and ``context_length_exceeded``, Gemini's ``RESOURCE_EXHAUSTED`` and
``UNAVAILABLE``, an HTTP status where a client saw one. :func:`classify`
turns what an :class:`~streamnorm.events.Error` carries (its kind, the
provider's code and type, the HTTP status when known, the provider's message) into one
:data:`CATEGORIES` name, and :func:`is_retryable` says whether trying the same
request again later can succeed. ``Error.category`` and ``Error.retryable``
are these two; ``Error.code`` stays the provider's own.

Context overflow has no common code: each provider says it in its own words,
listed in :data:`CONTEXT_OVERFLOW` (docs/events.md gives each provider's).
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import Any

__all__ = [
    "CATEGORIES",
    "CONTEXT_OVERFLOW",
    "aws_error_type",
    "body_retry_after",
    "classify",
    "error_code",
    "error_type_of",
    "is_retryable",
    "retry_after_of",
]

#: The canonical categories, from the most specific.
CATEGORIES = (
    "context_overflow",
    "rate_limit",
    "overloaded",
    "auth",
    "quota",
    "permission",
    "not_found",
    "invalid_request",
    "content_filter",
    "server",
    "timeout",
    "truncated",
    "protocol",
    "limit",
    "aborted",
    "unknown",
)

#: Categories where the same request may succeed when tried again later.
_RETRYABLE = frozenset(("rate_limit", "overloaded", "server", "timeout", "truncated"))

#: How each provider says that the prompt does not fit the model's context:
#: Anthropic "prompt is too long: 208000 tokens > 200000 maximum" (and
#: "input length and `max_tokens` exceed context limit"), OpenAI and the
#: OpenAI-compatible hosts "This model's maximum context length is …" with
#: code ``context_length_exceeded``, Gemini "The input token count (…) exceeds
#: the maximum number of tokens allowed (…)", Bedrock "Input is too long for
#: requested model" / "too many input tokens", llama.cpp "the request exceeds
#: the available context size", Mistral "… too large for model with … maximum
#: context length", Groq "Please reduce the length of the messages", xAI
#: "maximum prompt length is …", Cohere "too many tokens".
CONTEXT_OVERFLOW = re.compile(
    "|".join(
        (
            r"prompt is too long",
            r"exceed context limit",
            r"maximum context length",
            r"context[_ ]length[_ ]exceeded",
            r"exceeds? the maximum number of tokens",
            r"input token count .* exceeds",
            r"input is too long",
            r"too many input tokens",
            r"exceeds the (available )?context (size|window)",
            r"reduce the length of the messages",
            r"maximum prompt length",
            r"too many tokens",
            r"exceed_context_size",
        )
    ),
    re.IGNORECASE,
)

#: A cut stream whose reason names a timeout (``ReadTimeout``, an idle limit).
_TIMEOUT = re.compile(r"time(d )?out", re.IGNORECASE)

#: Provider codes and types (lower case) by category.
_CODES: dict[str, str] = {
    "rate_limit_error": "rate_limit",
    "rate_limit_exceeded": "rate_limit",
    "resource_exhausted": "rate_limit",
    "throttlingexception": "rate_limit",
    "too_many_requests": "rate_limit",
    "overloaded_error": "overloaded",
    "unavailable": "overloaded",
    "server_is_overloaded": "overloaded",
    "serviceunavailableexception": "overloaded",
    "insufficient_quota": "quota",
    "billing_error": "quota",
    "authentication_error": "auth",
    "invalid_api_key": "auth",
    "unauthenticated": "auth",
    "permission_error": "permission",
    "permission_denied": "permission",
    "accessdeniedexception": "permission",
    "not_found_error": "not_found",
    "model_not_found": "not_found",
    "not_found": "not_found",
    "resourcenotfoundexception": "not_found",
    "invalid_request_error": "invalid_request",
    "invalid_argument": "invalid_request",
    "failed_precondition": "invalid_request",
    "validationexception": "invalid_request",
    "request_too_large": "invalid_request",
    "content_filter": "content_filter",
    "content_policy_violation": "content_filter",
    "api_error": "server",
    "server_error": "server",
    "internal": "server",
    "internal_server_error": "server",
    "internalserverexception": "server",
    "modelstreamerrorexception": "server",
    "timeout_error": "timeout",
    "deadline_exceeded": "timeout",
    "modeltimeoutexception": "timeout",
}

#: HTTP statuses by category (5xx not listed here are ``server``).
_STATUSES: dict[int, str] = {
    400: "invalid_request",
    401: "auth",
    403: "permission",
    404: "not_found",
    408: "timeout",
    409: "invalid_request",
    413: "invalid_request",
    422: "invalid_request",
    429: "rate_limit",
    503: "overloaded",
    504: "timeout",
    529: "overloaded",
}

#: Error kinds that are not the provider's word: the category is the kind.
_OWN_KINDS = frozenset(("truncated", "protocol", "limit", "aborted"))


def classify(
    kind: str,
    code: str | None,
    reason: str,
    status: int | None = None,
    error_type: str | None = None,
) -> str:
    """The category of an error: the provider's words for a context
    overflow first, then its code, then its type (for a code no table
    lists, such as OpenAI's ``invalid_image_url``), then the HTTP status,
    then the kind."""
    if kind in _OWN_KINDS:
        return "timeout" if kind == "truncated" and _TIMEOUT.search(reason) else kind
    if CONTEXT_OVERFLOW.search(reason) or (code and CONTEXT_OVERFLOW.search(code)):
        return "context_overflow"
    for word in (code, error_type):
        by_word = _CODES.get(word.lower()) if word else None
        if by_word is not None:
            return by_word
    if status is not None:
        return _STATUSES.get(status) or ("server" if status >= 500 else "unknown")
    if code is not None and code.isdigit():
        return classify(kind, None, reason, int(code))
    return "unknown"


def is_retryable(category: str) -> bool:
    """Whether the same request may succeed later (rate limits, overload,
    server failures, timeouts, a cut connection); a bad request, bad
    credentials or an overflowing prompt will fail again as it is."""
    return category in _RETRYABLE


def error_code(error: Any) -> str | None:
    """The provider's own code of a wire error object: its most specific
    word, OpenAI's ``code`` (``invalid_api_key``) over its ``type``
    (``invalid_request_error``), Gemini's ``status`` (``RESOURCE_EXHAUSTED``)
    over its numeric ``code``; a number only when no word is given."""
    if not isinstance(error, Mapping):
        return None
    for field in ("code", "type", "status"):
        value = error.get(field)
        if isinstance(value, str) and value:
            return value
    number = error.get("code")
    if isinstance(number, int) and not isinstance(number, bool):
        return str(number)
    return None


def error_type_of(error: Any) -> str | None:
    """The provider's type of a wire error object, its ``type`` field
    (OpenAI's ``invalid_request_error`` beside the code ``invalid_api_key``,
    Anthropic's ``overloaded_error``); None when it names none."""
    value = error.get("type") if isinstance(error, Mapping) else None
    return value if isinstance(value, str) and value else None


#: Google's ``google.rpc.RetryInfo`` delay: a decimal number of seconds, "s".
_DURATION = re.compile(r"\s*(\d+(?:\.\d*)?)s\s*")


def body_retry_after(error: Any) -> float | None:
    """The wait an error body names: Gemini's ``details`` entry of type
    ``google.rpc.RetryInfo`` with ``retryDelay`` (``"26s"``). None when the
    body names none."""
    details = error.get("details") if isinstance(error, Mapping) else None
    if not isinstance(details, list):
        return None
    for detail in details:
        if isinstance(detail, Mapping) and str(detail.get("@type", "")).endswith("RetryInfo"):
            delay = detail.get("retryDelay")
            match = _DURATION.fullmatch(delay) if isinstance(delay, str) else None
            if match is not None:
                return float(match.group(1))
    return None


def aws_error_type(headers: Mapping[str, str]) -> str | None:
    """The exception an AWS service names in its ``x-amzn-ErrorType``
    header (``ValidationException:http://…`` → ``ValidationException``);
    Bedrock names it there and not in the error body. None without one."""
    lower = {k.lower(): v for k, v in headers.items()}
    return lower.get("x-amzn-errortype", "").partition(":")[0].strip() or None


def retry_after_of(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds to wait before retrying, as the response said: OpenAI's
    ``retry-after-ms``, else ``Retry-After`` in seconds or as an HTTP date.
    None when the response did not say (or said it unreadably)."""
    lower = {k.lower(): v for k, v in headers.items()}
    millis = _number(lower.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000
    value = lower.get("retry-after")
    if value is None:
        return None
    seconds = _number(value)
    if seconds is not None:
        return seconds
    try:
        when = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError):
        return None
    return max(when - (time.time() if now is None else now), 0.0)


def _number(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value.strip())
    except ValueError:
        return None
    return number if number >= 0 and number == number and number != float("inf") else None
