"""The wire API names and their aliases (DESIGN.md §2), in one place."""

from __future__ import annotations

from typing import Literal, cast

__all__ = [
    "ALIASES",
    "APIS",
    "READ_ONLY_APIS",
    "ApiName",
    "KnownApiName",
    "WireApi",
    "resolve_api",
    "resolve_spoken_api",
]

#: A canonical wire API name, as a type (``tests/test_entry_points.py`` keeps
#: it equal to the names :func:`resolve_api` returns).
WireApi = Literal[
    "anthropic-messages",
    "openai-responses",
    "openai-completions",
    "google-generative-ai",
    "bedrock-converse-stream",
    "bedrock-invoke-stream",
    "ollama-chat",
    "cohere-chat",
]

#: Every name an ``api`` argument accepts: a wire API, an alias, or
#: ``"auto"``/``"openai"`` (detected from the first event). Kept equal to the
#: names :func:`resolve_api` lists by the same test.
KnownApiName = Literal[
    WireApi, "anthropic", "google", "gemini", "bedrock", "ollama", "cohere", "auto", "openai"
]

#: The type of every ``api`` argument (the stream entry points, the request
#: codec, the encoders): one of :data:`KnownApiName` (which editors offer), or
#: any ``str`` read from a config file or a command line, checked at run time
#: by :func:`resolve_api` (an unknown name raises ``ValueError`` listing the
#: valid ones, a value that is not a ``str`` raises ``TypeError``).
ApiName = KnownApiName | str

#: The four wire APIs, in the order the docs list them.
APIS: tuple[WireApi, ...] = (
    "anthropic-messages",
    "openai-responses",
    "openai-completions",
    "google-generative-ai",
)

#: Wire APIs that streamnorm reads but does not yet speak (no request codec,
#: no encoders, no samples): valid wherever a stream is normalized.
READ_ONLY_APIS: tuple[WireApi, ...] = (
    "bedrock-converse-stream",
    "bedrock-invoke-stream",
    "ollama-chat",
    "cohere-chat",
)

#: Short names accepted wherever an api name is.
ALIASES: dict[str, str] = {
    "anthropic": "anthropic-messages",
    "google": "google-generative-ai",
    "gemini": "google-generative-ai",
    "bedrock": "bedrock-converse-stream",
    "ollama": "ollama-chat",
    "cohere": "cohere-chat",
}


def resolve_api(name: ApiName, *, allow_auto: bool = False) -> WireApi | Literal["auto"]:
    """Return the canonical api for ``name`` (an api or an alias).

    With ``allow_auto``, ``"auto"`` and ``"openai"`` resolve to ``"auto"``
    (detected from the first event). Anything else raises ``ValueError``
    listing the valid names: an unknown api is a programming error. A
    ``str`` read from elsewhere (a config file, a command line) becomes an
    api name the entry points' types accept this way.
    """
    if not isinstance(name, str):
        raise TypeError(f"api must be a str naming a wire api, not {type(name).__name__}")
    key = name.strip().lower()
    if key in APIS or key in READ_ONLY_APIS:
        return key
    if key in ALIASES:
        return cast("WireApi", ALIASES[key])
    if allow_auto and key in ("auto", "openai"):
        return "auto"
    valid = [*APIS, *READ_ONLY_APIS, *ALIASES, *(("auto", "openai") if allow_auto else ())]
    raise ValueError(f"unknown api {name!r}; valid names: {', '.join(valid)}")


def resolve_spoken_api(name: ApiName) -> WireApi:
    """:func:`resolve_api` for what writes an api (the request codec, the
    encoders, a gateway upstream): one of :data:`APIS`. A read-only api
    raises ``ValueError`` saying that it is only read."""
    api = resolve_api(name)
    if api in APIS:
        return api
    raise ValueError(
        f"unknown api {name!r} for requests and encoding: streamnorm reads {api} streams "
        f"but does not write them; valid names: {', '.join(APIS)}"
    )
