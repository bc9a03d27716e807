"""The gateway's configuration: upstreams, routes from model globs, limits.

A TOML file (``gateway.toml``) holds three parts::

    [gateway]
    keys_env = "STREAMNORM_GATEWAY_KEYS"   # comma-separated client keys
    max_body_bytes = 10485760
    max_concurrency = 256
    upstream_client = "builtin"            # or "aiohttp", "httpx"
    foreign_thinking = "tagged"            # "tagged", "text" or "drop"
    server_tools = "warn"                   # or "refuse" (see below)
    store = "responses.sqlite3"            # stored Responses: a SQLite file or postgresql:// URL
    store_ttl_seconds = 2592000            # 30 days
    store_max_bytes = 1073741824           # 1 GiB
    ledger = false                         # true: the usage ledger and the store's client keys
    ledger_retention_days = 400            # ledger rows older than this are deleted (32 at least)
    otel = false                           # true: OpenTelemetry spans and GenAI metrics
    max_head_bytes = 65536                 # request line and headers (431 beyond)
    head_timeout = 10                      # seconds to send them (408 beyond)
    body_timeout = 60                      # seconds to send the body (408 beyond)
    max_bytes_in_flight = 1073741824       # per worker: bodies held at once (503 beyond)
    max_stream_bytes = 134217728           # one upstream answer: its error event beyond
    max_stream_seconds = 3600              # one upstream answer: its error event beyond
    anthropic_betas = ["…"]                # anthropic-beta values passed to the upstream

    [upstreams.claude]
    api = "anthropic-messages"
    base_url = "https://api.anthropic.com"
    api_key_env = "ANTHROPIC_API_KEY"
    retries = 2                            # optional (retry.py): tries again before the
    backoff = 0.5                          #   first byte, after up to backoff·2ⁿ s (jittered)
    weight = 3                             # optional: balance the route's upstreams
    cooldown = 30                          # seconds last in line after 3 failures in a row (0: off)

    [[routes]]
    models = ["claude-*"]
    upstreams = ["claude"]
    foreign_thinking = "tagged"            # optional; else [gateway]'s, else "tagged"

An optional fourth part overrides or adds to the model catalog
(docs/models.md): limits, reasoning mode and prices of a model the bundled
snapshot lacks or has wrong, applied when the app is built::

    [models."house-model"]
    max_output_tokens = 8000
    prices = { input = 1.0, output = 2.0, as_of = "2026-01-01" }
    reasoning = { mode = "effort", efforts = ["low", "high"] }

Secrets never live in the file: it names the environment variables that hold
them, read once when the app is built. A client's model picks a route by the
first matching glob; the route's upstreams are tried in order. Every URL the
gateway ever calls is a configured ``base_url``, so a client cannot make it
call anywhere else.

``foreign_thinking`` says what a cross-API request does with reasoning an
upstream cannot verify (another issuer's, or an unknown host's): wrap it in
``<thinking>`` tags (the default), keep it as plain text, or drop it
(``sanitize.md``); every choice is reported in ``x-streamnorm-warnings``.

``server_tools`` says what happens to a client's server tool (web search,
code execution …) that a cross-API upstream has no like of: ``"warn"``
drops it and says so in the ``x-streamnorm-warnings`` response header and
the log line, ``"refuse"`` answers 400 in the client's API
(``providers.server_tools``).

Every mistake raises ``ValueError`` naming the key (``upstreams.claude.api``).
"""

from __future__ import annotations

import fnmatch
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..apis import APIS, resolve_api
from ..hosts.auth import minted_secrets
from ..hosts.identity import provider_for_url
from ..hosts.table import AUTH_SCHEMES, AuthScheme
from ..models import Prices, ReasoningSpec, override_model
from ..normalizer import DEFAULT_MAX_STREAM_BYTES
from ..providers.server_tools import SERVER_TOOL_POLICIES
from ..sanitize import DEFAULT_FOREIGN_THINKING, FOREIGN_THINKING_MODES, ForeignThinking
from .state.base import DEFAULT_MAX_BYTES, DEFAULT_TTL_SECONDS, Retention
from .state.ledger import DEFAULT_LEDGER_DAYS, MIN_LEDGER_DAYS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the gateway extra installs tomli on 3.10
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

__all__ = [
    "BEDROCK_APIS",
    "UPSTREAM_APIS",
    "UPSTREAM_CLIENTS",
    "GatewayConfig",
    "Route",
    "Upstream",
    "load_config",
    "parse_config",
    "store_of",
]

_GLOB_CHARS = frozenset("*?[")
_GATEWAY_KEYS = {
    "keys_env",
    "max_body_bytes",
    "max_concurrency",
    "upstream_client",
    "log_content",
    "foreign_thinking",
    "server_tools",
    "otel",
    "max_head_bytes",
    "head_timeout",
    "body_timeout",
    "max_bytes_in_flight",
    "max_stream_bytes",
    "max_stream_seconds",
    "anthropic_betas",
}
#: The ``anthropic-beta`` features a client may turn on through a same-API
#: route unless ``anthropic_betas`` says otherwise: those Claude Code and the
#: Anthropic SDKs send that change how an answer is streamed or how long it
#: may be, not what the operator's account may do.
DEFAULT_ANTHROPIC_BETAS = (
    "claude-code-20250219",
    "interleaved-thinking-2025-05-14",
    "fine-grained-tool-streaming-2025-05-14",
    "token-efficient-tools-2025-02-19",
    "output-128k-2025-02-19",
    "prompt-caching-2024-07-31",
    "context-management-2025-06-27",
    "effort-2025-11-24",
)
#: Bedrock's two request APIs (Converse and Invoke): an upstream may speak
#: them, no client does, so their routes are always translated.
BEDROCK_APIS = ("bedrock-converse-stream", "bedrock-invoke-stream")
#: The APIs an upstream may speak: the four front-door APIs and Bedrock's.
UPSTREAM_APIS = (*APIS, *BEDROCK_APIS)
#: The HTTP clients the gateway can call upstreams with (the first by default).
UPSTREAM_CLIENTS = ("builtin", "aiohttp", "httpx")
#: Longest an upstream answer may take by default, from its first byte: an
#: hour, well past any real answer, so that a trickling upstream cannot hold
#: a slot for ever.
DEFAULT_MAX_STREAM_SECONDS = 3600.0
_STORE_KEYS = {"store", "store_ttl_seconds", "store_max_bytes", "ledger", "ledger_retention_days"}


@dataclass(frozen=True, slots=True)
class Upstream:
    """One server the gateway forwards to.

    ``model`` replaces the client's model name when set. ``api_key`` is read
    from ``api_key_env`` when the configuration is loaded; it is excluded from
    ``repr`` so that it cannot reach a log by accident. An upstream whose
    variable is unset is skipped like an unreachable one (``missing_key``), so
    one file can name more hosts than a deployment has keys for. ``provider``
    defaults to the host of ``base_url`` (``hosts.identity``): it issues
    the opaque state of its answers, which sanitize returns to that host only.
    ``retries``, ``backoff``, ``weight`` and ``cooldown`` are ``retry.py``'s.
    ``auth`` names the auth scheme (``streamnorm.hosts``: ``sigv4``,
    ``google-oauth``, ``azure-entra``, or a key header such as ``api-key``)
    instead of the API's own key header; ``host_params`` fill the host's
    path (Azure's ``api_version``) and give SigV4 its ``region`` (else
    ``AWS_REGION``, read with the configuration). ``api`` is one of
    :data:`UPSTREAM_APIS`: a Bedrock upstream (Converse or Invoke) signs
    with ``sigv4`` unless it names ``auth`` or ``api_key_env`` (a Bedrock
    API key), and its ``provider`` is ``bedrock`` unless it names one.
    """

    name: str
    api: str
    base_url: str
    api_key_env: str | None = None
    model: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    timeout: float = 600.0
    connect_timeout: float = 10.0
    provider: str | None = None
    retries: int = 0
    backoff: float = 0.5
    weight: float | None = None
    cooldown: float = 0.0
    api_key: str | None = field(default=None, repr=False, compare=False)
    auth: AuthScheme | None = None
    host_params: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if self.provider is None:
            object.__setattr__(self, "provider", provider_for_url(self.base_url))

    @property
    def missing_key(self) -> bool:
        return self.api_key_env is not None and not self.api_key


@dataclass(frozen=True, slots=True)
class Route:
    """Model-name globs and the upstreams that serve them, in fallback order;
    ``foreign_thinking`` is what becomes of reasoning an upstream cannot verify."""

    models: tuple[str, ...]
    upstreams: tuple[Upstream, ...]
    foreign_thinking: ForeignThinking = DEFAULT_FOREIGN_THINKING

    def matches(self, model: str) -> bool:
        return any(fnmatch.fnmatchcase(model, glob) for glob in self.models)


@dataclass(frozen=True, slots=True)
class GatewayConfig:
    """Everything ``create_app`` needs; built by :func:`parse_config`.

    ``keys`` are the client keys (empty: no authentication);
    ``max_body_bytes`` bounds a request body (413 beyond it);
    ``max_concurrency`` bounds the requests one worker serves at once (429
    beyond it); ``upstream_client`` is the HTTP client upstreams are called
    with (``"builtin"``, the gateway's own, or ``"aiohttp"``, ``"httpx"``);
    ``log_content`` adds the request and response bodies to the log line
    (off by default: content stays out of logs); ``foreign_thinking`` is
    the routes' default for reasoning an upstream cannot verify. ``store``
    is where Responses answers are kept (a SQLite file, relative paths from the
    configuration file's folder, or a ``postgresql://`` URL; None: nothing
    is kept), ``store_retention`` how long and how much. ``ledger``: keep
    the usage ledger in the store and accept its client keys (``keys.py``).
    ``otel``: OpenTelemetry spans and metrics (``otel.py``).
    ``models`` holds the catalog overrides, by model name.

    The connection limits (docs/gateway.md, Reliability): ``max_head_bytes``
    bounds a request's line and headers, ``head_timeout`` the seconds a
    client may take to send them and ``body_timeout`` its body (a
    concurrency slot is taken only once the body is in);
    ``max_bytes_in_flight`` bounds the request and answer bodies one worker
    holds at once (503 to a request that would pass it).
    ``max_stream_bytes`` bounds the bytes of one streamed upstream answer,
    ``max_stream_seconds`` the time one upstream answer (streamed or not)
    takes from its first byte: past either the upstream is closed and the
    client gets its API's error (its error event once the stream has
    started; before, 504 for the time).
    ``anthropic_betas`` are the ``anthropic-beta`` values passed on to a
    same-API upstream; others are dropped with a warning.
    """

    routes: tuple[Route, ...]
    keys: frozenset[str] = field(default=frozenset(), repr=False)
    max_body_bytes: int = 10 * 1024 * 1024
    max_concurrency: int = 256
    upstream_client: str = UPSTREAM_CLIENTS[0]
    log_content: bool = False
    foreign_thinking: ForeignThinking = DEFAULT_FOREIGN_THINKING
    server_tools: str = "warn"
    store: str | None = None
    store_retention: Retention = field(default_factory=Retention)
    ledger: bool = False
    ledger_retention_days: int = DEFAULT_LEDGER_DAYS
    otel: bool = False
    models: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    max_head_bytes: int = 64 * 1024
    head_timeout: float = 10.0
    body_timeout: float = 60.0
    max_bytes_in_flight: int = 1024 * 1024 * 1024
    max_stream_bytes: int = DEFAULT_MAX_STREAM_BYTES
    max_stream_seconds: float = DEFAULT_MAX_STREAM_SECONDS
    anthropic_betas: frozenset[str] = frozenset(DEFAULT_ANTHROPIC_BETAS)

    def register_models(self) -> None:
        """Put the ``[models]`` overrides into the model catalog."""
        for name, fields in self.models:
            override_model(name, **fields)

    def route(self, model: str) -> Route | None:
        """The first route whose globs match ``model``; None: unknown model."""
        return next((r for r in self.routes if r.matches(model)), None)

    def listed_models(self) -> list[str]:
        """The model names the routes spell out (globs cannot be listed)."""
        seen: dict[str, None] = {}
        for route in self.routes:
            for glob in route.models:
                if not _GLOB_CHARS & set(glob):
                    seen.setdefault(glob, None)
        return list(seen)

    def secrets(self) -> list[str]:
        """Every key the gateway holds, for redaction: the configured ones,
        and those its cloud signers have used so far (tokens they minted,
        AWS secret keys and session tokens), which change as tokens expire:
        ask again rather than keep the list."""
        ups = {u.name: u for r in self.routes for u in r.upstreams}
        store_password = urlsplit(self.store).password if self.store else None
        held = (*self.keys, *(u.api_key for u in ups.values()), store_password)
        return [k for k in (*held, *minted_secrets()) if k]


def load_config(
    path: str | os.PathLike[str], env: Mapping[str, str] | None = None
) -> GatewayConfig:
    """Read a TOML file (see the module docstring) into a ``GatewayConfig``."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: not valid TOML: {exc}") from None
    return parse_config(data, env, base=Path(path).resolve().parent)


def store_of(path: str | os.PathLike[str]) -> str | None:
    """The ``gateway.store`` of a configuration file, without reading any
    secret (the key and usage commands run where the variables may be unset)."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: not valid TOML: {exc}") from None
    return _store(_table(data, "gateway", "gateway"), Path(path).resolve().parent)


def parse_config(
    data: Mapping[str, Any], env: Mapping[str, str] | None = None, *, base: Path | None = None
) -> GatewayConfig:
    """Build a ``GatewayConfig`` from parsed TOML; ``env`` defaults to os.environ;
    ``base`` is the folder a relative ``store`` path is taken from (default: cwd)."""
    env = os.environ if env is None else env
    _only(data, "", {"gateway", "upstreams", "routes", "models"})
    gateway = _table(data, "gateway", "gateway")
    _only(gateway, "gateway.", {*_GATEWAY_KEYS, *_STORE_KEYS})
    foreign = _foreign_thinking(gateway, "gateway.", DEFAULT_FOREIGN_THINKING)
    ups_table = _table(data, "upstreams", "upstreams")
    upstreams = {
        name: _upstream(name, _table(ups_table, name, f"upstreams.{name}"), env)
        for name in ups_table
    }
    routes_list = data.get("routes", [])
    if not isinstance(routes_list, list) or not routes_list:
        raise ValueError("routes: a non-empty array of [[routes]] tables is required")
    routes = tuple(_route(i, r, upstreams, foreign) for i, r in enumerate(routes_list))
    return GatewayConfig(
        routes=routes,
        keys=_keys(gateway, env),
        max_body_bytes=_positive_int(gateway, "max_body_bytes", "gateway.", 10 * 1024 * 1024),
        max_concurrency=_positive_int(gateway, "max_concurrency", "gateway.", 256),
        upstream_client=_choice(gateway, "upstream_client", "gateway.", UPSTREAM_CLIENTS),
        log_content=_bool(gateway, "log_content", "gateway.", False),
        foreign_thinking=foreign,
        server_tools=_choice(gateway, "server_tools", "gateway.", SERVER_TOOL_POLICIES),
        store=_store(gateway, base or Path.cwd()),
        ledger=_ledger(gateway),
        ledger_retention_days=_ledger_days(gateway),
        otel=_otel(gateway),
        store_retention=Retention(
            ttl_seconds=_positive_int(
                gateway, "store_ttl_seconds", "gateway.", DEFAULT_TTL_SECONDS
            ),
            max_bytes=_positive_int(gateway, "store_max_bytes", "gateway.", DEFAULT_MAX_BYTES),
        ),
        models=tuple(
            (name, _model(table, f"models.{name}."))
            for name, table in _table(data, "models", "models").items()
        ),
        max_head_bytes=_positive_int(gateway, "max_head_bytes", "gateway.", 64 * 1024),
        head_timeout=_positive_float(gateway, "head_timeout", "gateway.", 10.0),
        body_timeout=_positive_float(gateway, "body_timeout", "gateway.", 60.0),
        max_bytes_in_flight=_positive_int(
            gateway, "max_bytes_in_flight", "gateway.", 1024 * 1024 * 1024
        ),
        max_stream_bytes=_positive_int(
            gateway, "max_stream_bytes", "gateway.", DEFAULT_MAX_STREAM_BYTES
        ),
        max_stream_seconds=_positive_float(
            gateway, "max_stream_seconds", "gateway.", DEFAULT_MAX_STREAM_SECONDS
        ),
        anthropic_betas=frozenset(
            _names(gateway, "anthropic_betas", "gateway.", DEFAULT_ANTHROPIC_BETAS)
        ),
    )


def _store(gateway: Mapping[str, Any], base: Path) -> str | None:
    """Where Responses are kept: a PostgreSQL URL as it is, a file path made absolute."""
    location = _str(gateway, "store", "gateway.")
    if location is None or location.startswith(("postgresql://", "postgres://")):
        return location
    if "://" in location:
        raise ValueError(
            f"gateway.store: {location.split('://')[0]}:// is not a store; "
            "give a SQLite file path or a postgresql:// URL"
        )
    return str(base / Path(location).expanduser())


def _otel(gateway: Mapping[str, Any]) -> bool:
    """``otel`` needs the OpenTelemetry API (the ``otel`` extra)."""
    wanted = _bool(gateway, "otel", "gateway.", False)
    if wanted:
        try:
            import opentelemetry.trace  # noqa: F401
        except ImportError:
            raise ValueError(
                "gateway.otel: needs OpenTelemetry: pip install 'streamnorm[otel]'"
            ) from None
    return wanted


def _ledger(gateway: Mapping[str, Any]) -> bool:
    """``ledger`` lives in the store: true needs ``store``."""
    wanted = _bool(gateway, "ledger", "gateway.", False)
    if wanted and gateway.get("store") is None:
        raise ValueError("gateway.ledger: the ledger lives in the store; set gateway.store too")
    return wanted


def _ledger_days(gateway: Mapping[str, Any]) -> int:
    """Days of ledger rows kept: at least :data:`MIN_LEDGER_DAYS`, so a
    monthly budget always reads its whole month."""
    days = _positive_int(gateway, "ledger_retention_days", "gateway.", DEFAULT_LEDGER_DAYS)
    if days < MIN_LEDGER_DAYS:
        raise ValueError(
            f"gateway.ledger_retention_days: at least {MIN_LEDGER_DAYS} "
            "(a monthly budget reads back to the start of its month)"
        )
    return days


_MODEL_KEYS = {
    "provider",
    "context_window",
    "max_output_tokens",
    "input_modalities",
    "family",
    "as_of",
}


def _model(table: Any, where: str) -> Mapping[str, Any]:
    """One ``[models."name"]`` table, checked: every key a catalog field,
    prices and reasoning tables of known fields."""
    if not isinstance(table, Mapping):
        raise ValueError(f"{where[:-1]}: must be a table")
    _only(table, where, _MODEL_KEYS | {"prices", "reasoning"})
    for key in ("context_window", "max_output_tokens"):
        if key in table:
            _positive_int(table, key, where, 1)
    for key, known in (("prices", Prices), ("reasoning", ReasoningSpec)):
        sub = _table(table, key, f"{where}{key}")
        _only(sub, f"{where}{key}.", set(known.__dataclass_fields__) - {"tiers"})
    return dict(table)


def _upstream(name: str, table: Mapping[str, Any], env: Mapping[str, str]) -> Upstream:
    where = f"upstreams.{name}."
    _only(
        table,
        where,
        {
            "api",
            "base_url",
            "api_key_env",
            "model",
            "headers",
            "timeout",
            "connect_timeout",
            "provider",
            *_RETRY_KEYS,
            "auth",
            "host_params",
        },
    )
    api_name = _str(table, "api", where, required=True)
    assert api_name is not None
    api = _upstream_api(api_name, where)
    base_url = _str(table, "base_url", where, required=True)
    assert base_url is not None
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query:
        raise ValueError(f"{where}base_url: {base_url!r} must be an http(s) URL without a query")
    key_env = _str(table, "api_key_env", where)
    key = (env.get(key_env) or None) if key_env else None
    headers = _str_table(table, "headers", where)
    auth = _auth(table, where)
    bedrock = api in BEDROCK_APIS
    if bedrock and auth is None and key_env is None:
        auth = "sigv4"  # Bedrock's own scheme; an API key (api_key_env) goes as Bearer
    host_params = dict(_str_table(table, "host_params", where))
    if auth == "sigv4":
        host_params = _with_region(host_params, env, where)
    return Upstream(
        name=name,
        api=api,
        base_url=base_url.rstrip("/"),
        api_key_env=key_env,
        model=_str(table, "model", where),
        headers=tuple((k.lower(), v) for k, v in headers.items()),
        timeout=_positive_float(table, "timeout", where, 600.0),
        connect_timeout=_positive_float(table, "connect_timeout", where, 10.0),
        provider=_str(table, "provider", where) or ("bedrock" if bedrock else None),
        **_retry(table, where),
        api_key=key,
        auth=auth,
        host_params=tuple(host_params.items()),
    )


def _upstream_api(name: str, where: str) -> str:
    """The API an upstream's ``api`` names: one of :data:`UPSTREAM_APIS`
    (or an alias of one, ``bedrock`` for Converse)."""
    try:
        api = resolve_api(name)
    except ValueError:
        api = None
    if api not in UPSTREAM_APIS:
        raise ValueError(f"{where}api: {name!r} is not one of {', '.join(UPSTREAM_APIS)}")
    return str(api)


def _with_region(params: dict[str, str], env: Mapping[str, str], where: str) -> dict[str, str]:
    """``host_params`` with the region SigV4 signs for: given, else the
    environment's ``AWS_REGION`` / ``AWS_DEFAULT_REGION``; none is an error
    now rather than a 502 on every request."""
    if params.get("region"):
        return params
    region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
    if not region:
        raise ValueError(
            f"{where}host_params.region: SigV4 needs a region (or AWS_REGION in the environment)"
        )
    return {**params, "region": region}


_RETRY_KEYS = ("retries", "backoff", "weight", "cooldown")


def _retry(table: Mapping[str, Any], where: str) -> dict[str, Any]:
    """An upstream's retry settings, checked (``retry.py``)."""
    retries = table.get("retries", 0)
    if isinstance(retries, bool) or not isinstance(retries, int) or not 0 <= retries <= 10:
        raise ValueError(f"{where}retries: a whole number from 0 to 10 is required")
    out: dict[str, Any] = {"retries": retries}
    for key, default in (("backoff", 0.5), ("cooldown", 0.0)):
        value = table.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
            raise ValueError(f"{where}{key}: a number of seconds, 0 or more, is required")
        out[key] = float(value)
    if "weight" in table:
        weight = table["weight"]
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not weight > 0:
            raise ValueError(f"{where}weight: a positive number is required")
        out["weight"] = float(weight)
    return out


def _auth(table: Mapping[str, Any], where: str) -> AuthScheme | None:
    scheme = _str(table, "auth", where)
    if scheme is None:
        return None
    for known in AUTH_SCHEMES:
        if scheme == known:
            return known
    raise ValueError(f"{where}auth: {scheme!r} is not one of {', '.join(AUTH_SCHEMES)}")


def _route(
    i: int, table: Any, upstreams: Mapping[str, Upstream], foreign: ForeignThinking
) -> Route:
    where = f"routes[{i}]."
    if not isinstance(table, Mapping):
        raise ValueError(f"routes[{i}]: must be a table")
    _only(table, where, {"models", "upstreams", "foreign_thinking"})
    models = _str_list(table, "models", where)
    names = _str_list(table, "upstreams", where)
    unknown = [n for n in names if n not in upstreams]
    if unknown:
        raise ValueError(f"{where}upstreams: no [upstreams.{unknown[0]}] table")
    return Route(
        tuple(models),
        tuple(upstreams[n] for n in names),
        _foreign_thinking(table, where, foreign),
    )


def _keys(gateway: Mapping[str, Any], env: Mapping[str, str]) -> frozenset[str]:
    keys_env = _str(gateway, "keys_env", "gateway.")
    if keys_env is None:
        return frozenset()
    keys = frozenset(k.strip() for k in env.get(keys_env, "").split(",") if k.strip())
    if not keys:
        # Naming the variable and leaving it empty must not open the gateway.
        raise ValueError(f"gateway.keys_env: environment variable {keys_env} holds no key")
    return keys


def _only(table: Mapping[str, Any], where: str, allowed: set[str]) -> None:
    extra = sorted(set(table) - allowed)
    if extra:
        raise ValueError(f"{where}{extra[0]}: unknown key (expected one of {sorted(allowed)})")


def _table(table: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any]:
    value = table.get(key, {})
    if not isinstance(value, Mapping):
        raise ValueError(f"{where}: must be a table")
    return value


def _str_table(table: Mapping[str, Any], key: str, where: str) -> Mapping[str, str]:
    """A table of strings (``headers``, ``host_params``)."""
    value = _table(table, key, f"{where}{key}")
    for name, item in value.items():
        if not isinstance(item, str):
            raise ValueError(f"{where}{key}.{name}: must be a string")
    return value


def _str(table: Mapping[str, Any], key: str, where: str, *, required: bool = False) -> str | None:
    value = table.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value:
        raise ValueError(f"{where}{key}: a non-empty string is required")
    return value


def _str_list(table: Mapping[str, Any], key: str, where: str) -> list[str]:
    value = table.get(key)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"{where}{key}: a non-empty string or array of strings is required")
    return value


def _names(table: Mapping[str, Any], key: str, where: str, default: tuple[str, ...]) -> list[str]:
    """An array of non-empty strings (may be empty); ``default`` when absent."""
    value = table.get(key, list(default))
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"{where}{key}: an array of non-empty strings is required")
    return value


def _positive_int(table: Mapping[str, Any], key: str, where: str, default: int) -> int:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{where}{key}: a positive integer is required")
    return value


def _positive_float(table: Mapping[str, Any], key: str, where: str, default: float) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ValueError(f"{where}{key}: a positive number of seconds is required")
    return float(value)


def _choice(table: Mapping[str, Any], key: str, where: str, choices: tuple[str, ...]) -> str:
    """One of ``choices`` (the first when the key is absent)."""
    value = table.get(key, choices[0])
    if value not in choices:
        raise ValueError(f"{where}{key}: one of {', '.join(map(repr, choices))} is required")
    return str(value)


def _bool(table: Mapping[str, Any], key: str, where: str, default: bool) -> bool:
    value = table.get(key, default)
    if not isinstance(value, bool):
        raise ValueError(f"{where}{key}: true or false is required")
    return value


def _foreign_thinking(
    table: Mapping[str, Any], where: str, default: ForeignThinking
) -> ForeignThinking:
    value = table.get("foreign_thinking", default)
    if value not in FOREIGN_THINKING_MODES:
        raise ValueError(
            f"{where}foreign_thinking: one of {', '.join(FOREIGN_THINKING_MODES)} is required"
        )
    return value  # type: ignore[no-any-return]
