"""Where each host is and how it is reached: the host table (base URLs,
paths per operation, auth schemes, required headers and body fields,
quirks), placing a request on a host, and who issued a response. Used by
the request codec, the :class:`~streamnorm.client.Client` and the gateway
alike (docs/hosts.md)."""

from .identity import provider_for_host, provider_for_response, provider_for_url, with_provider
from .table import AUTH_SCHEMES, HOSTS, AuthScheme, Host, Operation
from .wire import base_url, host_for, operation_path, place, url

__all__ = [
    "AUTH_SCHEMES",
    "HOSTS",
    "AuthScheme",
    "Host",
    "Operation",
    "base_url",
    "host_for",
    "operation_path",
    "place",
    "provider_for_host",
    "provider_for_response",
    "provider_for_url",
    "url",
    "with_provider",
]
