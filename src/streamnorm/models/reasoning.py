"""Reasoning settings translated into what a target model accepts
(docs/models.md, "Reasoning translation").

A canonical :class:`~streamnorm.request.Reasoning` says one of four things:
off (``enabled=False``, effort ``none`` or a budget of 0), dynamic (a budget
of -1, or thinking on with neither effort nor budget), an effort level, or a
token budget. :func:`plan_reasoning` turns it into the one form the target
model takes — clamped to its range, ``max_tokens`` raised above a budget —
and says in ``warnings`` what it changed. Each request encoder writes the
plan in its api's spelling.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .catalog import ModelInfo
from .families import EFFORT_ORDER, ReasoningSpec

if TYPE_CHECKING:
    from ..request import Reasoning

__all__ = ["EFFORT_BUDGETS", "ReasoningPlan", "effort_for_budget", "plan_reasoning"]

#: The budget an effort level becomes on a model that takes only budgets.
EFFORT_BUDGETS = {
    "minimal": 512,
    "low": 1024,
    "medium": 8192,
    "high": 24576,
    "xhigh": 32768,
    "max": 32768,
}
#: Room left for the answer when ``max_tokens`` is raised above a budget.
ANSWER_ROOM = 4096


@dataclass(frozen=True, slots=True)
class ReasoningPlan:
    """One reasoning setting in the form the target takes: ``kind`` is
    ``off``, ``dynamic`` (the target's own "decide yourself": Anthropic
    adaptive, Gemini ``-1``, an effort model's default), ``effort`` (with
    ``effort``), ``budget`` (with ``budget``) or ``omit`` (the target takes
    no reasoning setting). ``max_tokens`` is the value to send (None: the
    request's). ``show_thoughts`` whether thought text was asked for."""

    kind: str
    effort: str | None = None
    budget: int | None = None
    max_tokens: int | None = None
    show_thoughts: bool = False
    warnings: tuple[str, ...] = ()

    def effort_level(self) -> str | None:
        """The plan as an OpenAI effort level: off is ``none``, a budget
        the level :func:`effort_for_budget` gives; None to send none."""
        if self.kind == "off":
            return "none"
        if self.kind == "budget" and self.budget is not None:
            return effort_for_budget(self.budget)
        return self.effort if self.kind == "effort" else None


def _intent(reasoning: Reasoning) -> tuple[str, int | str | None]:
    """What the request asks: (kind, value)."""
    budget, effort = reasoning.budget_tokens, reasoning.effort
    if not reasoning.enabled or effort == "none" or budget == 0:
        return "off", None
    if budget is not None and budget > 0:
        return "budget", budget
    if effort is not None:
        return "effort", effort
    return "dynamic", None


def plan_reasoning(reasoning: Reasoning, max_tokens: int | None, info: ModelInfo) -> ReasoningPlan:
    """``reasoning`` for the model ``info`` describes, with ``max_tokens``
    (the value the request will send, None for none)."""
    kind, value = _intent(reasoning)
    spec = info.reasoning
    notes: list[str] = []
    plan = _PLANNERS[spec.mode](kind, value, spec, notes, info.model)
    show = plan.kind != "off" and reasoning.summary != "none" and spec.visible_thoughts
    out_max = max_tokens
    if plan.kind == "budget" and plan.budget is not None:
        budget, out_max = _room(plan.budget, max_tokens, info, notes)
        plan = ReasoningPlan("budget", budget=budget)
    if info.fallback and notes:
        notes.append(f"model {info.model!r} is not in the catalog: its family's rules applied")
    return ReasoningPlan(
        plan.kind, plan.effort, plan.budget, out_max, show, tuple(f"reasoning: {n}" for n in notes)
    )


def _room(
    budget: int, max_tokens: int | None, info: ModelInfo, notes: list[str]
) -> tuple[int, int | None]:
    """The budget and ``max_tokens`` with the budget below ``max_tokens``
    (Anthropic refuses it otherwise; elsewhere the budget is spent out of
    the same limit) and both within the model's output limit."""
    if max_tokens is None or max_tokens > budget:
        return budget, max_tokens
    room = min(max_tokens, ANSWER_ROOM)
    raised = budget + room
    limit = info.max_output_tokens
    if limit is not None and raised > limit:
        raised = limit
        lowered = max(info.reasoning.budget_min or 1, limit - room)
        notes.append(f"budget_tokens {budget} lowered to {lowered} to fit max_tokens {limit}")
        budget = lowered
    notes.append(f"max_tokens {max_tokens} raised to {raised}, above budget_tokens {budget}")
    return budget, raised


def _clamp(budget: int, spec: ReasoningSpec, notes: list[str], model: str) -> int:
    low = spec.budget_min if spec.budget_min is not None else budget
    high = spec.budget_max if spec.budget_max is not None else budget
    out = min(max(budget, low), high)
    if out != budget:
        notes.append(f"budget_tokens {budget} clamped to {out} ({model} takes {low}-{high})")
    return out


def _nearest(effort: str, efforts: tuple[str, ...], notes: list[str], model: str) -> str:
    if effort in efforts or not efforts:
        return effort
    rank = EFFORT_ORDER.index(effort) if effort in EFFORT_ORDER else EFFORT_ORDER.index("medium")
    out = min(efforts, key=lambda e: (abs(EFFORT_ORDER.index(e) - rank), -EFFORT_ORDER.index(e)))
    notes.append(f"effort {effort!r} sent as {out!r} ({model} takes {', '.join(efforts)})")
    return out


def _as_given(
    kind: str, value: int | str | None, spec: ReasoningSpec, notes: list[str], model: str
) -> ReasoningPlan:
    """An unknown model: the request's setting, unchanged."""
    if kind == "budget":
        return ReasoningPlan("budget", budget=int(value or 0))
    if kind == "effort":
        return ReasoningPlan("effort", effort=str(value))
    return ReasoningPlan(kind)


def _no_reasoning(
    kind: str, value: int | str | None, spec: ReasoningSpec, notes: list[str], model: str
) -> ReasoningPlan:
    if kind != "off":
        notes.append(f"{model} does not reason: the reasoning setting was not sent")
    return ReasoningPlan("omit")


def _budget_model(
    kind: str, value: int | str | None, spec: ReasoningSpec, notes: list[str], model: str
) -> ReasoningPlan:
    if kind == "off" and spec.can_disable:
        return ReasoningPlan("off")
    if kind == "off":
        low = spec.budget_min or 1
        notes.append(f"{model} cannot turn thinking off: the smallest budget {low} sent")
        return ReasoningPlan("budget", budget=low)
    if kind == "dynamic" and spec.dynamic:
        return ReasoningPlan("dynamic")
    if kind == "budget":
        return ReasoningPlan("budget", budget=_clamp(int(value or 0), spec, notes, model))
    effort = str(value) if kind == "effort" else "medium"
    budget = _clamp(EFFORT_BUDGETS.get(effort, EFFORT_BUDGETS["medium"]), spec, [], model)
    asked = f"effort {effort!r}" if kind == "effort" else "dynamic thinking"
    notes.append(f"{asked} sent as budget_tokens {budget}")
    return ReasoningPlan("budget", budget=budget)


def _adaptive_model(
    kind: str, value: int | str | None, spec: ReasoningSpec, notes: list[str], model: str
) -> ReasoningPlan:
    """Adaptive thinking; a budget where the model still takes one (no
    budget range: it refuses budgets, so the budget's effort is sent)."""
    if kind == "budget" and spec.budget_min is not None:
        return ReasoningPlan("budget", budget=_clamp(int(value or 0), spec, notes, model))
    if kind == "budget":
        effort = effort_for_budget(int(value or 0))
        notes.append(f"budget_tokens {value} sent as adaptive thinking, effort {effort!r}")
        return ReasoningPlan("effort", effort=_nearest(effort, spec.efforts, notes, model))
    if kind == "effort":
        return ReasoningPlan("effort", effort=_nearest(str(value), spec.efforts, notes, model))
    return ReasoningPlan(kind)


def _effort_model(
    kind: str, value: int | str | None, spec: ReasoningSpec, notes: list[str], model: str
) -> ReasoningPlan:
    if kind == "dynamic":
        return ReasoningPlan("dynamic")
    if kind == "off":
        if "none" in spec.efforts:
            return ReasoningPlan("effort", effort="none")
        if not spec.efforts:
            notes.append(f"{model} always reasons: thinking cannot be turned off")
            return ReasoningPlan("omit")
        lowest = spec.efforts[0]
        notes.append(f"{model} cannot turn thinking off: effort {lowest!r} sent")
        return ReasoningPlan("effort", effort=lowest)
    if not spec.efforts:
        notes.append(f"{model} takes no reasoning setting: {kind} {value} not sent")
        return ReasoningPlan("omit")
    if kind == "budget":
        effort = effort_for_budget(int(value or 0))
        notes.append(f"budget_tokens {value} sent as effort {effort!r}")
        return ReasoningPlan("effort", effort=_nearest(effort, spec.efforts, notes, model))
    return ReasoningPlan("effort", effort=_nearest(str(value), spec.efforts, notes, model))


def effort_for_budget(budget: int) -> str:
    """The documented heuristic from a token budget to an effort level
    (requests.md §7): up to 2048 low, up to 16384 medium, else high."""
    if budget <= 2048:
        return "low"
    return "medium" if budget <= 16384 else "high"


_PLANNERS = {
    "unknown": _as_given,
    "none": _no_reasoning,
    "budget": _budget_model,
    "adaptive": _adaptive_model,
    "effort": _effort_model,
    "always-on": _effort_model,
}
