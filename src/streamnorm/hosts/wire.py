"""A request placed on a host: its path, body and headers as that host wants
them, and the URL it goes to (docs/hosts.md).

The codec writes each API's request as that API's own service takes it;
:func:`place` turns it into what a host of that API takes (Claude on
Vertex: ``:streamRawPredict``, ``anthropic_version`` in the body, no
``model``; Azure: the deployment path with ``api-version``; Bedrock: the
model id in the path). :func:`base_url` and :func:`url` say where it goes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from string import Formatter
from urllib.parse import quote

from ..request import WireRequest
from .table import HOSTS, Host, Operation

__all__ = ["base_url", "host_for", "operation_path", "place", "url"]

#: Characters of a model name kept as they are in a path: Vertex's
#: ``claude-sonnet-4-5@20250929`` stays readable, Bedrock's ``…-v1:0`` and
#: ARNs (``:``, ``/``) are quoted, as the AWS SDKs do.
_MODEL_SAFE = "-_.~@"


def host_for(provider: str | None, api: str) -> Host | None:
    """The host ``provider`` names for ``api``: a host of the table by its
    name, or the first host of that provider whose bodies are ``api``'s
    (``vertex`` with ``anthropic-messages`` is ``vertex-anthropic``,
    ``bedrock`` with ``anthropic-messages`` is Bedrock Invoke). None for a
    provider the table does not know (its requests go out as the codec
    wrote them)."""
    if not provider:
        return None
    key = provider.strip().lower()
    named = HOSTS.get(key)
    if named is not None and named.api == api:
        return named
    return next((h for h in HOSTS.values() if h.provider == key and h.api == api), None)


def _params(
    host: Host, given: Mapping[str, str] | None, env: Mapping[str, str] | None
) -> dict[str, str]:
    """Each placeholder's value: given, else the first of its environment
    variables that is set, else the host's default."""
    out = dict(host.defaults)
    for name, variables in host.params.items():
        value = next((env[v] for v in variables if env is not None and env.get(v)), None)
        if value is not None:
            out[name] = value
    out.update(given or {})
    return out


def _fill(template: str, host: Host, values: Mapping[str, str], what: str) -> str:
    """``template`` with its placeholders filled; ``ValueError`` naming a
    missing one and where it may come from."""
    for _, name, _, _ in Formatter().parse(template):
        if name is not None and name not in values:
            where = ", ".join(host.params.get(name, ())) or "host_params"
            raise ValueError(
                f"{what}: {host.name} needs {{{name}}} (set {where}, or pass it in host_params)"
            )
    return template.format_map(values)


def operation_path(
    host: Host,
    operation: Operation,
    model: str | None,
    params: Mapping[str, str] | None = None,
) -> str | None:
    """The path of ``operation`` on ``host`` for ``model``, or None when the
    host takes the codec's own path."""
    template = host.count_path if operation == "count" else host.paths.get(operation)
    if template is None:
        return None
    if "{model}" in template and not model:
        raise ValueError(f"model: required for {host.name} (it is part of the path)")
    values = {**_params(host, params, None), "model": quote(model or "", safe=_MODEL_SAFE)}
    return _fill(template, host, values, "path")


def place(
    wire: WireRequest,
    host: Host,
    model: str | None,
    stream: bool,
    params: Mapping[str, str] | None = None,
) -> WireRequest:
    """``wire`` as ``host`` takes it: its path for the operation, its body
    fields set and refused ones removed, its header quirks applied."""
    headers = {k: v for k, v in wire.headers.items() if k not in host.drop_headers}
    body = {**{k: v for k, v in wire.body.items() if k not in host.drop}, **host.body}
    for header, key in host.header_to_body.items():
        flags = [f.strip() for f in wire.headers.get(header, "").split(",") if f.strip()]
        if flags:
            body[key] = flags
    path = operation_path(host, "stream" if stream else "whole", model, params) or wire.path
    return replace(wire, path=path, headers=headers, body=body)


def base_url(
    host: Host,
    params: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
) -> str:
    """Where ``host`` is: the first of its base-URL environment variables
    that is set, else its pattern filled from ``params``, the environment
    (``os.environ`` unless ``env`` is given) and its defaults."""
    env = os.environ if env is None else env
    override = next((env[v] for v in host.base_url_env if env.get(v)), None)
    if override is not None:
        return override.rstrip("/")
    filled = _fill(host.base_url, host, _params(host, params, env), "base_url")
    for old, new in host.rewrites:
        filled = filled.replace(old, new)
    return filled


def url(base: str, path: str) -> str:
    """``path`` under ``base``. A base that already ends with the path's
    first segment (``OPENAI_BASE_URL=…/v1`` and ``/v1/responses``) does
    not get it twice."""
    base = base.rstrip("/")
    first = "/" + path.lstrip("/").split("/", 1)[0]
    if "/" in path.lstrip("/") and base.endswith(first):
        base = base[: -len(first)]
    return base + path
