"""The host a response came from: kept here for the imports that name this
module; the knowledge lives in :mod:`streamnorm.hosts.identity`."""

from __future__ import annotations

from ..hosts.identity import (
    WELL_KNOWN_HOSTS,
    provider_for_host,
    provider_for_response,
    provider_for_url,
    with_provider,
)

__all__ = [
    "WELL_KNOWN_HOSTS",
    "provider_for_host",
    "provider_for_response",
    "provider_for_url",
    "with_provider",
]
