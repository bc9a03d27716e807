"""The wire API names and their aliases (DESIGN.md §2), in one place."""

from __future__ import annotations

__all__ = ["ALIASES", "APIS", "READ_ONLY_APIS", "resolve_api"]

#: The four wire APIs, in the order the docs list them.
APIS: tuple[str, ...] = (
    "anthropic-messages",
    "openai-responses",
    "openai-completions",
    "google-generative-ai",
)

#: Wire APIs that streamnorm reads but does not yet speak (no request codec,
#: no encoders, no samples): valid wherever a stream is normalized.
READ_ONLY_APIS: tuple[str, ...] = (
    "bedrock-converse-stream",
    "bedrock-invoke-stream",
)

#: Short names accepted wherever an api name is.
ALIASES: dict[str, str] = {
    "anthropic": "anthropic-messages",
    "google": "google-generative-ai",
    "gemini": "google-generative-ai",
    "bedrock": "bedrock-converse-stream",
}


def resolve_api(name: str, *, allow_auto: bool = False) -> str:
    """Return the canonical api for ``name`` (an api or an alias).

    With ``allow_auto``, ``"auto"`` and ``"openai"`` resolve to ``"auto"``
    (detected from the first event). Anything else raises ``ValueError``
    listing the valid names: an unknown api is a programming error.
    """
    key = name.strip().lower() if isinstance(name, str) else name
    if key in APIS or key in READ_ONLY_APIS:
        return key
    if key in ALIASES:
        return ALIASES[key]
    if allow_auto and key in ("auto", "openai"):
        return "auto"
    valid = [*APIS, *READ_ONLY_APIS, *ALIASES, *(("auto", "openai") if allow_auto else ())]
    raise ValueError(f"unknown api {name!r}; valid names: {', '.join(valid)}")
