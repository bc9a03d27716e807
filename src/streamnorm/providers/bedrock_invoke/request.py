"""Bedrock ``InvokeModel`` / ``InvokeModelWithResponseStream`` bodies for
Anthropic models (docs/bedrock.md): the Messages API body without ``model``
and ``stream`` (the path says both), with ``anthropic_version`` and the beta
flags as the body's ``anthropic_beta`` list (the host table's
``bedrock-invoke`` entry says so; :func:`streamnorm.hosts.place` applies it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ...hosts.table import HOSTS
from ...hosts.wire import place
from ...messages import Message
from ...request import Request, WireRequest
from ..anthropic import request as anthropic

__all__ = ["MEDIA", "decode_request", "encode_request", "validate_body"]

MEDIA = anthropic.MEDIA
HOST = HOSTS["bedrock-invoke"]


def encode_request(
    request: Request, messages: list[Message], provider: str | None = None
) -> WireRequest:
    """The Invoke request for ``request``: the Messages body placed on Bedrock."""
    wire = anthropic.encode_request(request, messages, provider or HOST.provider)
    own = (request.headers or {}).get(anthropic.API)
    if own:
        wire = replace(wire, headers={**wire.headers, **own})
    return place(wire, HOST, request.model, request.stream)


def decode_request(
    body: Mapping[str, Any], *, path: str | None = None, provider: str | None = None
) -> Request:
    """An Invoke body as a canonical request: the model and whether it
    streams from ``path``, the beta flags as the Messages API's header."""
    fields = dict(body)
    fields.pop("anthropic_version", None)
    betas = fields.pop("anthropic_beta", None)
    request = anthropic.decode_request(fields, path=path, provider=provider or HOST.provider)
    stream = (path or "").split("?", 1)[0].endswith("/invoke-with-response-stream")
    request = replace(request, stream=stream)
    if isinstance(betas, list) and betas:
        flags = ",".join(str(b) for b in betas)
        request = replace(request, headers={anthropic.API: {"anthropic-beta": flags}})
    return request


def validate_body(body: Mapping[str, Any]) -> list[str]:
    """The Messages API's rules (requests.md §9) for the body's conversation."""
    return anthropic.validate_body(body)
