"""How a request proves who sends it, per auth scheme (docs/hosts.md).

Key schemes put a key in the header the host reads (``x-api-key``,
``Authorization: Bearer``, ``x-goog-api-key``, Azure's ``api-key``). The
cloud schemes use each cloud's own library, each an optional extra and
imported only when used: AWS SigV4 through botocore's signer with the
standard credential chain (``streamnorm[aws]``), Google OAuth access tokens
through google-auth's Application Default Credentials (``streamnorm[google]``),
Azure Entra ID tokens through azure-identity (``streamnorm[azure]``).

Keys and tokens go only into the headers returned here: never into an
error, a log line or a ``repr``. The secrets a cloud signer uses that no
configuration names (the tokens it mints, the AWS secret key and session
token of the credential chain) are listed by :func:`minted_secrets`, so that
whatever echoes a request (an upstream's error, a log line) can cut them out.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from .table import AuthScheme

__all__ = [
    "KEY_HEADERS",
    "Signer",
    "auth_headers",
    "azure_entra",
    "google_oauth",
    "kept_signer",
    "minted_secrets",
    "sigv4",
]

#: A signer: ``(method, url, headers, body) -> headers to add``.
Signer = Callable[[str, str, Mapping[str, str], bytes], Mapping[str, str]]

#: The header each key scheme puts the key in, and the key's prefix there.
KEY_HEADERS: dict[str, tuple[str, str]] = {
    "x-api-key": ("x-api-key", ""),
    "bearer": ("authorization", "Bearer "),
    "x-goog-api-key": ("x-goog-api-key", ""),
    "api-key": ("api-key", ""),
}

#: How many minted secrets are remembered (the newest): a token is refreshed
#: about hourly, so this covers many hours of every kept signer.
_MINTED_LIMIT = 64


class _Minted:
    """The secrets the signers used, newest last, at most ``limit``."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._values: dict[str, None] = {}

    def add(self, *values: str | None) -> None:
        for value in values:
            if value and value not in self._values:
                self._values[value] = None
                if len(self._values) > self._limit:
                    del self._values[next(iter(self._values))]

    def values(self) -> tuple[str, ...]:
        return tuple(self._values)


_MINTED = _Minted(_MINTED_LIMIT)


def minted_secrets() -> tuple[str, ...]:
    """The secrets the cloud signers of this process have used so far (the
    newest :data:`_MINTED_LIMIT`): OAuth and Entra access tokens, the AWS
    secret key and session token SigV4 signed with. For redaction only."""
    return _MINTED.values()


_GOOGLE_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
_AZURE_SCOPE = "https://cognitiveservices.azure.com/.default"


def _missing(extra: str, package: str) -> ImportError:
    return ImportError(
        f"{package} is needed for this host's auth: pip install 'streamnorm[{extra}]'"
    )


def sigv4(region: str, *, service: str = "bedrock", credentials: Any = None) -> Signer:
    """A SigV4 signer for ``service`` in ``region``; ``credentials`` (a
    botocore ``Credentials``) default to the standard AWS chain
    (environment, shared files, SSO, instance and container roles)."""
    try:
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.session import get_session
    except ImportError:  # pragma: no cover - botocore is a test dependency
        raise _missing("aws", "botocore") from None
    creds = credentials if credentials is not None else get_session().get_credentials()
    if creds is None:
        raise ValueError("sigv4: no AWS credentials found (environment, ~/.aws, or a role)")

    def sign(method: str, url: str, headers: Mapping[str, str], body: bytes) -> Mapping[str, str]:
        request = AWSRequest(method=method, url=url, data=body, headers=dict(headers))
        frozen = creds.get_frozen_credentials()
        _MINTED.add(frozen.secret_key, frozen.token)
        SigV4Auth(frozen, service, region).add_auth(request)
        return {k: v for k, v in request.headers.items() if k.lower() not in _lower(headers)}

    return sign


def _lower(headers: Mapping[str, str]) -> set[str]:
    return {k.lower() for k in headers}


def google_oauth(credentials: Any = None) -> Signer:
    """A bearer signer with a Google OAuth access token: ``credentials`` (a
    google-auth ``Credentials``) or Application Default Credentials,
    refreshed when expired."""
    try:
        import google.auth
        import google.auth.transport.requests
    except ImportError:
        raise _missing("google", "google-auth") from None
    creds = credentials
    if creds is None:
        creds, _ = google.auth.default(scopes=[_GOOGLE_SCOPE])

    def sign(method: str, url: str, headers: Mapping[str, str], body: bytes) -> Mapping[str, str]:
        if not creds.valid:
            creds.refresh(google.auth.transport.requests.Request())
        _MINTED.add(creds.token)
        return {"authorization": f"Bearer {creds.token}"}

    return sign


def azure_entra(credential: Any = None) -> Signer:
    """A bearer signer with a Microsoft Entra ID token for Azure OpenAI:
    ``credential`` (an azure-identity ``TokenCredential``) or
    ``DefaultAzureCredential``."""
    cred = credential
    if cred is None:
        try:
            from azure.identity import DefaultAzureCredential  # type: ignore[import-not-found]
        except ImportError:
            raise _missing("azure", "azure-identity") from None
        cred = DefaultAzureCredential()

    def sign(method: str, url: str, headers: Mapping[str, str], body: bytes) -> Mapping[str, str]:
        token = cred.get_token(_AZURE_SCOPE).token
        _MINTED.add(token)
        return {"authorization": f"Bearer {token}"}

    return sign


def auth_headers(scheme: AuthScheme, key: str | None) -> dict[str, str]:
    """The header of a key scheme; empty for ``none`` or no key."""
    if scheme not in KEY_HEADERS or not key:
        return {}
    header, prefix = KEY_HEADERS[scheme]
    return {header: prefix + key}


@functools.lru_cache(maxsize=32)
def kept_signer(scheme: AuthScheme, region: str | None = None) -> Signer | None:
    """The signer of a cloud scheme, made once and kept (credentials read
    and tokens refreshed as they expire, not per request); None for a key
    scheme. ``region`` is SigV4's."""
    if scheme == "sigv4":
        if not region:
            raise ValueError("sigv4: no region (host_params.region)")
        return sigv4(region)
    if scheme == "google-oauth":
        return google_oauth()
    if scheme == "azure-entra":
        return azure_entra()
    return None
