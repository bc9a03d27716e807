"""The price of a call from its usage and the catalog's prices (docs/models.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .catalog import Prices, model_info

if TYPE_CHECKING:
    from ..messages import Usage

__all__ = ["CostBreakdown", "usage_cost"]

_PER = 1_000_000


@dataclass(frozen=True, slots=True)
class CostBreakdown:
    """What a call cost, in USD, by kind of token. ``output`` excludes the
    reasoning share, which ``reasoning`` prices (at the reasoning price where
    the model has one, else at the output price); ``total`` is the sum.
    ``as_of`` and ``source`` date and name the prices used."""

    input: float
    cached_input: float
    cache_write: float
    output: float
    reasoning: float
    total: float
    model: str
    as_of: str | None = None
    source: str | None = None


def usage_cost(
    usage: Usage, model: str | None, provider: str | None = None
) -> CostBreakdown | None:
    """The cost of ``usage`` on ``model`` at ``provider``; ``None`` — not 0 —
    when the usage was not reported or a price it needs is unknown."""
    if not usage.reported:
        return None
    info = model_info(model, provider)
    if info.prices is None:
        return None
    prompt = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
    prices = info.prices.for_prompt(prompt)
    reasoning = min(usage.reasoning_tokens, usage.output_tokens)
    parts = (
        _price(usage.input_tokens, prices.input),
        _price(usage.cache_read_tokens, prices.cache_read),
        _price(usage.cache_write_tokens, prices.cache_write),
        _price(usage.output_tokens - reasoning, prices.output),
        _price(reasoning, _reasoning_price(prices)),
    )
    if any(p is None for p in parts):
        return None
    input_, cached, written, output, thought = (p or 0.0 for p in parts)
    return CostBreakdown(
        input=input_,
        cached_input=cached,
        cache_write=written,
        output=output,
        reasoning=thought,
        total=input_ + cached + written + output + thought,
        model=info.model,
        as_of=prices.as_of,
        source=prices.source,
    )


def _reasoning_price(prices: Prices) -> float | None:
    return prices.reasoning if prices.reasoning is not None else prices.output


def _price(tokens: int, per_million: float | None) -> float | None:
    """``tokens`` at ``per_million``; no tokens cost nothing even when the
    price is unknown (a model without a cache-write price that wrote none)."""
    if tokens == 0:
        return 0.0
    return None if per_million is None else tokens * per_million / _PER
