"""The model catalog: limits, reasoning modes and prices by (host, model),
and what is computed from them — reasoning settings a target model accepts
and the cost of a call (docs/models.md)."""

from __future__ import annotations

from .catalog import (
    ModelInfo,
    Prices,
    PriceTier,
    clear_overrides,
    default_max_tokens,
    model_info,
    override_model,
)
from .cost import CostBreakdown, usage_cost
from .families import ReasoningSpec
from .reasoning import ReasoningPlan, plan_reasoning

__all__ = [
    "CostBreakdown",
    "ModelInfo",
    "PriceTier",
    "Prices",
    "ReasoningPlan",
    "ReasoningSpec",
    "clear_overrides",
    "default_max_tokens",
    "model_info",
    "override_model",
    "plan_reasoning",
    "usage_cost",
]
