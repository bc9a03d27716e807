"""Small example streams shipped with the package, one per wire API.

All four record the same turn — the user asks for the weather in Paris; the
assistant thinks, says it will look it up and calls ``get_weather`` — so
their canonical results line up (``streamnorm demo`` shows it):

* ``anthropic-messages``: thinking with ``signature_delta``, text, ``tool_use``
  with ``input_json_delta`` fragments, ``ping``, ``message_delta`` usage;
* ``openai-responses``: a reasoning item with a summary and encrypted content,
  a message item, a ``function_call`` item, usage in ``response.completed``;
* ``openai-completions``: ``reasoning_content``, content, ``tool_calls``
  fragments, a ``finish_reason`` chunk, a trailing usage chunk and ``[DONE]``;
* ``google-generative-ai``: ``thought`` parts, text parts, a whole
  ``functionCall`` with ``thoughtSignature``, ``usageMetadata`` on every
  chunk, CRLF framing.

Every stream reports the same billed usage (100 input, 20 cache read, 64
output of which 28 reasoning), each in its provider's own arithmetic.

>>> from streamnorm import samples
>>> samples.names()
('anthropic-messages', 'openai-responses', 'openai-completions', 'google-generative-ai')
>>> samples.read("gemini")[:6]
b'data: '
"""

from __future__ import annotations

from importlib import resources

__all__ = ["names", "read", "resolve"]

_NAMES: tuple[str, ...] = (
    "anthropic-messages",
    "openai-responses",
    "openai-completions",
    "google-generative-ai",
)

_ALIASES: dict[str, str] = {
    "anthropic": "anthropic-messages",
    "responses": "openai-responses",
    "completions": "openai-completions",
    "chat": "openai-completions",
    "google": "google-generative-ai",
    "gemini": "google-generative-ai",
}


def names() -> tuple[str, ...]:
    """The samples' names: the four wire APIs, in the order the docs use."""
    return _NAMES


def resolve(name: str) -> str:
    """The sample name for ``name`` (a wire api or a short alias such as
    ``gemini`` or ``chat``). Raises ``ValueError`` listing the names."""
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    if key not in _NAMES:
        valid = ", ".join([*_NAMES, *_ALIASES])
        raise ValueError(f"unknown sample {name!r}; valid names: {valid}")
    return key


def read(name: str) -> bytes:
    """The raw bytes of one sample stream, exactly as a server would send them."""
    resource = resources.files(__name__).joinpath(f"{resolve(name)}.sse")
    return resource.read_bytes()
