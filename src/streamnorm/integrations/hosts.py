"""The host a response came from, recorded as the message's ``provider``.

Opaque state (signatures, encrypted reasoning, provider blocks) is only valid
for the host that issued it, and ``sanitize_messages_for_target`` keeps it
only when the message's ``provider`` is the target's: a message without one
is from an unknown host and keeps nothing opaque. The HTTP adapters know the
host they talked to, so they record it unless the caller names the provider:
well-known API hosts by their provider name (``api.anthropic.com`` →
``anthropic``), any other host by its lower-cased hostname, so two gateways
or two Azure resources are never taken for one another.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from ..options import NormalizerOptions

__all__ = ["WELL_KNOWN_HOSTS", "provider_for_host", "provider_for_url", "with_provider"]

#: API hosts whose provider name the rest of streamnorm uses (sanitize's
#: targets and id rules). A host not listed is its own provider.
WELL_KNOWN_HOSTS: dict[str, str] = {
    "api.anthropic.com": "anthropic",
    "api.openai.com": "openai",
    "generativelanguage.googleapis.com": "google",
    "api.mistral.ai": "mistral",
    "openrouter.ai": "openrouter",
    "api.deepseek.com": "deepseek",
    "api.x.ai": "xai",
    "api.moonshot.ai": "moonshot",
}


def provider_for_host(host: str | None) -> str | None:
    """The provider name of ``host``: a well-known API's name, else the
    lower-cased hostname itself; ``None`` for no host."""
    name = (host or "").strip().lower().rstrip(".")
    if not name:
        return None
    return WELL_KNOWN_HOSTS.get(name, name)


def provider_for_url(url: object) -> str | None:
    """The provider name of the host in ``url`` (a string, ``httpx.URL``,
    ``yarl.URL`` …); ``None`` when it has no host or does not parse."""
    if url is None:
        return None
    try:
        host = urlsplit(str(url)).hostname
    except ValueError:
        return None
    return provider_for_host(host)


def with_provider(options: NormalizerOptions, url: object) -> NormalizerOptions:
    """``options`` for the normalizer with ``provider`` set to the host of
    ``url``, unless the caller gave a provider (theirs always wins)."""
    out = options.copy()
    if out.get("provider") is None:
        provider = provider_for_url(url)
        if provider is not None:
            out["provider"] = provider
    return out
