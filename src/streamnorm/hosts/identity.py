"""The host a response came from, recorded as the message's ``provider``.

Opaque state (signatures, encrypted reasoning, provider blocks) is only valid
for the host that issued it, and ``sanitize_messages_for_target`` keeps it
only when the message's ``provider`` is the target's: a message without one
is from an unknown host and keeps nothing opaque. The HTTP adapters know the
host they talked to, so they record it unless the caller names the provider:
well-known API hosts by their provider name (``api.anthropic.com`` →
``anthropic``), any other host by its lower-cased hostname, so two gateways
or two Azure resources are never taken for one another. Hosts that serve one
provider under many names (Vertex AI's regional endpoints, Bedrock's
regions) are that provider.

A stream often names its issuer itself: :func:`provider_for_response` reads
what an id proves (Anthropic's own, Vertex and Bedrock message ids), and the
normalizer records it when nobody named the provider.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from ..options import NormalizerOptions

__all__ = [
    "WELL_KNOWN_HOSTS",
    "provider_for_host",
    "provider_for_response",
    "provider_for_url",
    "with_provider",
]

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


#: Hosts named by a pattern: every region of one provider is that provider.
HOST_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?:[a-z0-9-]+-)?aiplatform\.googleapis\.com"), "vertex"),
    (re.compile(r"bedrock-runtime(?:-fips)?\.[a-z0-9-]+\.amazonaws\.com"), "bedrock"),
)

#: Message-id prefixes of Anthropic's Messages API on other clouds.
ANTHROPIC_ID_PREFIXES: tuple[tuple[str, str], ...] = (
    ("msg_vrtx_", "vertex"),
    ("msg_bdrk_", "bedrock"),
)
#: Anthropic's own message ids: ``msg_01`` and 22 base58 characters.
_ANTHROPIC_OWN_ID = re.compile(r"msg_01[1-9A-HJ-NP-Za-km-z]{22}")
#: Apis whose message ids are Anthropic's (Bedrock's Invoke wraps its events).
_ANTHROPIC_ID_APIS = frozenset({"anthropic-messages", "bedrock-invoke-stream"})


def provider_for_host(host: str | None) -> str | None:
    """The provider name of ``host``: a well-known API's name, else the
    lower-cased hostname itself; ``None`` for no host."""
    name = (host or "").strip().lower().rstrip(".")
    if not name:
        return None
    if name in WELL_KNOWN_HOSTS:
        return WELL_KNOWN_HOSTS[name]
    for pattern, provider in HOST_PATTERNS:
        if pattern.fullmatch(name):
            return provider
    return name


def provider_for_response(api: str, response_id: str | None) -> str | None:
    """The host a stream's own response id proves, or None.

    Only what an id shows for certain: Anthropic's Messages API on Vertex AI
    (``msg_vrtx_…``) and Bedrock (``msg_bdrk_…``), and Anthropic's own API
    (``msg_01`` followed by 22 base58 characters). Model names and other ids
    prove nothing (compatible hosts and proxies reuse them), so they give None.
    """
    if api not in _ANTHROPIC_ID_APIS or not response_id:
        return None
    for prefix, provider in ANTHROPIC_ID_PREFIXES:
        if response_id.startswith(prefix):
            return provider
    return "anthropic" if _ANTHROPIC_OWN_ID.fullmatch(response_id) else None


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
