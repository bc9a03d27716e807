"""Opaque reasoning state of one issuer, carried through another API's field.

A gateway that serves a client of API A from an upstream of API B hands the
client B's opaque state (a signature, an encrypted reasoning item, a thought
signature) in a field of A that the client sends back verbatim. The envelope
records who issued it, so that the next request, once decoded, is a
same-issuer turn again (encoding.md §9).

Two spellings of the same JSON ``{"i": [api, provider, model], "k": kind,
"s": signature}``:

* text fields: ``"snv1." + base64url(json)`` (no padding);
* Gemini ``thoughtSignature`` (bytes on the wire, base64 in JSON):
  ``base64(b"snv1\\0" + json)``, so the field stays valid standard base64.

``kind`` is ``thinking``, ``redacted``, ``text``, ``toolcall`` or ``turn``
(the signatures of several blocks of one turn, ``s`` a list of
``[position, kind, signature]``). Unwrapping never raises: anything that is
not a well-formed envelope is an ordinary signature and gives ``None``.
Cost: O(n) in the length of the value.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any

from ._json import dumps_compact, loads

__all__ = ["KINDS", "Envelope", "Issuer", "unwrap", "wrap", "wrap_bytes"]

_TEXT_PREFIX = "snv1."
_BYTES_PREFIX = b"snv1\0"
#: The standard-base64 spelling of ``_BYTES_PREFIX`` starts with these
#: characters; a cheap test before decoding a long Gemini signature.
_BYTES_B64_START = base64.b64encode(_BYTES_PREFIX)[:4].decode()

KINDS = frozenset(("thinking", "redacted", "text", "toolcall", "turn"))


@dataclass(frozen=True, slots=True)
class Issuer:
    """Who produced a piece of opaque state: the API, the host, the model."""

    api: str
    provider: str | None = None
    model: str | None = None


@dataclass(frozen=True, slots=True)
class Envelope:
    """An unwrapped envelope: the issuer, what kind of state, the original."""

    issuer: Issuer
    kind: str
    signature: Any


def _payload(issuer: Issuer, kind: str, signature: Any) -> str:
    if kind not in KINDS:
        raise ValueError(f"envelope kind must be one of {sorted(KINDS)}, not {kind!r}")
    return dumps_compact(
        {"i": [issuer.api, issuer.provider, issuer.model], "k": kind, "s": signature}
    )


def wrap(issuer: Issuer, kind: str, signature: Any) -> str:
    """The envelope for a text field (an Anthropic signature, a Responses
    ``encrypted_content``, a Chat Completions dialect field)."""
    raw = _payload(issuer, kind, signature).encode()
    return _TEXT_PREFIX + base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def wrap_bytes(issuer: Issuer, kind: str, signature: Any) -> str:
    """The envelope for a Gemini ``thoughtSignature``: standard base64 of
    bytes, as the field requires."""
    raw = _BYTES_PREFIX + _payload(issuer, kind, signature).encode()
    return base64.b64encode(raw).decode()


def unwrap(value: Any) -> Envelope | None:
    """The envelope in ``value`` (either spelling), or None when it is not one."""
    if not isinstance(value, str):
        return None
    try:
        if value.startswith(_TEXT_PREFIX):
            body = value[len(_TEXT_PREFIX) :]
            raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
        elif value.startswith(_BYTES_B64_START):
            decoded = base64.b64decode(value, validate=True)
            if not decoded.startswith(_BYTES_PREFIX):
                return None
            raw = decoded[len(_BYTES_PREFIX) :]
        else:
            return None
        data = loads(raw)
    except (ValueError, binascii.Error):
        return None
    return _envelope(data)


def _envelope(data: Any) -> Envelope | None:
    if not isinstance(data, dict) or data.get("k") not in KINDS:
        return None
    issuer = data.get("i")
    if not (isinstance(issuer, list) and len(issuer) == 3 and isinstance(issuer[0], str)):
        return None
    if not all(part is None or isinstance(part, str) for part in issuer[1:]):
        return None
    return Envelope(Issuer(issuer[0], issuer[1], issuer[2]), data["k"], data.get("s"))
