"""Who a history is sent to, and who issued each assistant message.

A *target* is ``(provider, api, model)``. Signatures, redacted thinking,
encrypted reasoning and provider blocks are only valid for the party that
issued them, so every rule in this package first asks whether a message comes
from the *same issuer* as the target (``sanitize.md`` §2). The comparison is
kept here, in one place, as small tables and pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..apis import APIS, resolve_api, resolve_spoken_api
from ..messages import AssistantMessage, Message

__all__ = [
    "Target",
    "models_match",
    "normalize_model",
    "provider_in_history",
    "resolve_target",
    "same_issuer",
    "same_provider",
]

#: Providers that serve exactly one wire API, so ``api=None`` is unambiguous.
#: Every other host (OpenAI, Azure, OpenRouter, xAI, Vertex …) serves several.
SINGLE_API_PROVIDERS: dict[str, str] = {
    "anthropic": "anthropic-messages",
    "google": "google-generative-ai",
    "gemini": "google-generative-ai",
}

#: Mistral models are recognised by provider or by these words in the model
#: name, whatever the api: their servers validate ids the same way.
MISTRAL_PROVIDERS: frozenset[str] = frozenset({"mistral"})
MISTRAL_MODEL_WORDS: tuple[str, ...] = (
    "mistral",
    "magistral",
    "devstral",
    "ministral",
    "codestral",
    "pixtral",
)

#: Hosts that run Claude behind AWS Bedrock (same request rules as Anthropic).
BEDROCK_PROVIDERS: frozenset[str] = frozenset({"bedrock", "amazon-bedrock", "aws-bedrock"})

#: Dated snapshot suffixes: ``-20250929``, ``@20250929``, ``-2025-08-07``.
_SNAPSHOT = re.compile(r"(?:-\d{8}|@\d{8}|-\d{4}-\d{2}-\d{2})$")
_GEMINI_MAJOR = re.compile(r"^gemini-(\d+)")


@dataclass(frozen=True, slots=True)
class Target:
    """Where a history is about to be sent. ``provider`` is lower-cased."""

    provider: str
    api: str
    model: str

    @property
    def is_mistral(self) -> bool:
        """True for Mistral models on any api (provider or model name)."""
        name = self.model.lower()
        return self.provider in MISTRAL_PROVIDERS or any(w in name for w in MISTRAL_MODEL_WORDS)

    @property
    def is_bedrock(self) -> bool:
        return self.provider in BEDROCK_PROVIDERS

    @property
    def gemini_major(self) -> int | None:
        """The Gemini generation of a ``google-generative-ai`` target, else None."""
        if self.api != "google-generative-ai":
            return None
        name = normalize_model(self.model).rsplit("/", 1)[-1]
        m = _GEMINI_MAJOR.match(name)
        return int(m.group(1)) if m else None


def resolve_target(provider: str | None, model: str | None, api: str | None) -> Target:
    """Build a :class:`Target`; raise ``ValueError`` for a missing or unknown api.

    ``api`` takes the names and aliases of ``DESIGN.md`` §2 (``auto``,
    ``openai`` and the apis streamnorm only reads are not targets). Without
    ``api`` only a provider with a single wire api is accepted.
    """
    prov = (provider or "").strip().lower()
    if api is None:
        if prov not in SINGLE_API_PROVIDERS:
            raise ValueError(
                f"api is required for provider {provider!r}; valid apis: {', '.join(APIS)}"
            )
        resolved = SINGLE_API_PROVIDERS[prov]
    else:
        resolved = resolve_spoken_api(api)  # a read-only api is no target
    return Target(prov, resolved, (model or "").strip())


def normalize_model(name: str | None) -> str:
    """Lower-case, trimmed, without a leading ``models/``."""
    n = (name or "").strip().lower()
    return n[len("models/") :] if n.startswith("models/") else n


def models_match(a: str | None, b: str | None) -> bool:
    """Same model after normalisation; a dated suffix on one side only is ignored.

    ``claude-sonnet-4-5`` ≡ ``claude-sonnet-4-5-20250929``, but two different
    snapshots differ, and ``-latest`` is never stripped (it moves).
    """
    x, y = normalize_model(a), normalize_model(b)
    if not x or not y:
        return False
    if x == y:
        return True
    sx, sy = _SNAPSHOT.search(x), _SNAPSHOT.search(y)
    if sx and not sy:
        return x[: sx.start()] == y
    if sy and not sx:
        return y[: sy.start()] == x
    return False


def _api_of(name: str | None) -> str | None:
    try:
        return resolve_api(name) if isinstance(name, str) else None
    except ValueError:
        return None


def _provider_matches(provider: str | None, target: Target) -> bool:
    """Same host, case-insensitively. An unknown host (``None``, or a target
    without one) matches nothing: opaque state only goes back to the host
    that is known to have issued it (a proxy that reports ``gpt-5`` is not
    OpenAI)."""
    if provider is None or not target.provider:
        return False
    return provider.strip().lower() == target.provider


def same_provider(api: str | None, provider: str | None, target: Target) -> bool:
    """The weaker rule for provider blocks: same api and known, same provider,
    any model."""
    return _api_of(api) == target.api and _provider_matches(provider, target)


def same_issuer(message: AssistantMessage, target: Target) -> bool:
    """Whether ``target`` can verify what ``message`` carries (api, provider, model).

    The model may match either the requested name (``model``) or the name the
    stream reported (``response_model``), so proxies that relabel the model
    and providers that report dated snapshots keep same-model replay working.
    """
    return same_provider(message.api, message.provider, target) and (
        models_match(message.model, target.model)
        or models_match(message.response_model, target.model)
    )


def provider_in_history(messages: Iterable[Message], api: str, model: str | None) -> str | None:
    """The host of the newest assistant turn of ``api`` and ``model`` (either
    of its model names) that names one, or None.

    A history read from a host and sent on to the same api and model goes
    back to that host unless the caller says otherwise, so this is the
    target's provider when none is given: the opaque state of that host's
    turns is kept, every other issuer's is not.
    """
    for m in reversed(list(messages)):
        if not isinstance(m, AssistantMessage) or m.provider is None or _api_of(m.api) != api:
            continue
        if models_match(m.model, model) or models_match(m.response_model, model):
            return m.provider
    return None
