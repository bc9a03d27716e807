"""Reasoning modes and default limits by model family (docs/models.md).

Maintained sources say whether a model reasons, not how it is told to: the
budget ranges, effort levels and adaptive forms below come from the
providers' documentation (dates in docs/models.md). They also answer for a
model the snapshot does not list, by its name's family.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["EFFORT_ORDER", "FamilyRule", "ReasoningSpec", "family_rule"]

#: Effort levels from least to most thinking.
EFFORT_ORDER = ("none", "minimal", "low", "medium", "high", "xhigh", "max")


@dataclass(frozen=True, slots=True)
class ReasoningSpec:
    """How a model is told to think.

    ``mode`` is ``none`` (no reasoning), ``budget`` (a token budget between
    ``budget_min`` and ``budget_max``), ``effort`` (one of ``efforts``),
    ``adaptive`` (the model decides, optionally guided by an effort; a
    budget is taken too), ``always-on`` (reasons, cannot be steered beyond
    ``efforts``) or ``unknown`` (nothing is assumed: settings pass as
    given). ``dynamic`` says the model takes the budget form "decide
    yourself" (Gemini ``-1``); ``can_disable`` that thinking can be turned
    off; ``visible_thoughts`` that thought text (or summaries) can be
    returned.
    """

    mode: str = "unknown"
    budget_min: int | None = None
    budget_max: int | None = None
    efforts: tuple[str, ...] = ()
    dynamic: bool = False
    can_disable: bool = True
    visible_thoughts: bool = True


@dataclass(frozen=True, slots=True)
class FamilyRule:
    """One family: its name, reasoning spec (a function of the model's
    output limit, for Anthropic's budget < max_tokens range) and defaults
    for models of the family the snapshot does not list."""

    name: str
    reasoning: Callable[[int | None], ReasoningSpec]
    context_window: int | None = None
    max_output_tokens: int | None = None
    input_modalities: tuple[str, ...] = field(default=("text",))


def _claude_budget(limit: int | None) -> ReasoningSpec:
    return ReasoningSpec("budget", 1024, (limit or 64000) - 1)


_CLAUDE_EFFORTS = ("low", "medium", "high", "max")


def _claude_adaptive(limit: int | None) -> ReasoningSpec:
    """Claude 4.6: adaptive thinking, budgets still taken (deprecated)."""
    return ReasoningSpec("adaptive", 1024, (limit or 64000) - 1, _CLAUDE_EFFORTS)


def _claude_adaptive_only(limit: int | None) -> ReasoningSpec:
    """Claude 4.7 and later refuse ``budget_tokens``: adaptive thinking only."""
    return ReasoningSpec("adaptive", efforts=_CLAUDE_EFFORTS)


def _fixed(spec: ReasoningSpec) -> Callable[[int | None], ReasoningSpec]:
    return lambda _limit: spec


_CLAUDE_IO = ("text", "image", "pdf")
_GEMINI_IO = ("text", "image", "audio", "video", "pdf")
_GPT5 = ("minimal", "low", "medium", "high")
_O_SERIES = ("low", "medium", "high")

#: First match wins: more specific patterns first.
_RULES: tuple[tuple[re.Pattern[str], FamilyRule], ...] = tuple(
    (re.compile(pattern), rule)
    for pattern, rule in (
        (
            r"claude-(opus|sonnet|haiku)-(4-[7-9]|[5-9])",
            FamilyRule("claude-adaptive-only", _claude_adaptive_only, 200000, 64000, _CLAUDE_IO),
        ),
        (
            r"claude-(opus|sonnet)-4-6",
            FamilyRule("claude-adaptive", _claude_adaptive, 200000, 64000, _CLAUDE_IO),
        ),
        (
            r"claude-(3-7-sonnet|(opus|sonnet|haiku)-4)",
            FamilyRule("claude-budget", _claude_budget, 200000, 64000, _CLAUDE_IO),
        ),
        (
            r"claude-",
            FamilyRule("claude", _fixed(ReasoningSpec("none")), 200000, 8192, _CLAUDE_IO),
        ),
        (
            r"gemini-2\.5-pro",
            FamilyRule(
                "gemini-2.5-pro",
                _fixed(ReasoningSpec("budget", 128, 32768, dynamic=True, can_disable=False)),
                1048576,
                65536,
                _GEMINI_IO,
            ),
        ),
        (
            r"gemini-(2\.5-flash-lite|flash-lite-latest)",
            FamilyRule(
                "gemini-2.5-flash-lite",
                _fixed(ReasoningSpec("budget", 512, 24576, dynamic=True)),
                1048576,
                65536,
                _GEMINI_IO,
            ),
        ),
        (
            r"gemini-(2\.5-flash|flash-latest)",
            FamilyRule(
                "gemini-2.5-flash",
                _fixed(ReasoningSpec("budget", 1, 24576, dynamic=True)),
                1048576,
                65536,
                _GEMINI_IO,
            ),
        ),
        (
            r"gemini-(1\.|2\.0)",
            FamilyRule("gemini-1-2", _fixed(ReasoningSpec("none")), 1048576, 8192, _GEMINI_IO),
        ),
        (
            r"gemini-3(\.\d)?-pro",
            FamilyRule(
                "gemini-3-pro",
                _fixed(ReasoningSpec("effort", efforts=("low", "high"), can_disable=False)),
                1048576,
                65536,
                _GEMINI_IO,
            ),
        ),
        (
            r"gemini-",
            FamilyRule(
                "gemini-3-flash",
                _fixed(
                    ReasoningSpec(
                        "effort", efforts=("minimal", "low", "medium", "high"), can_disable=False
                    )
                ),
                1048576,
                65536,
                _GEMINI_IO,
            ),
        ),
        (
            r"gpt-5-chat|gpt-4|gpt-3\.5|chatgpt-",
            FamilyRule("gpt-4", _fixed(ReasoningSpec("none")), 128000, 16384, ("text", "image")),
        ),
        (
            r"gpt-5\.1-codex-max",
            FamilyRule(
                "gpt-5.1-codex-max",
                _fixed(ReasoningSpec("effort", efforts=("none", "low", "medium", "high", "xhigh"))),
                400000,
                128000,
                ("text", "image"),
            ),
        ),
        (
            r"gpt-5\.1",
            FamilyRule(
                "gpt-5.1",
                _fixed(ReasoningSpec("effort", efforts=("none", "low", "medium", "high"))),
                400000,
                128000,
                ("text", "image"),
            ),
        ),
        (
            r"gpt-5\.\d",
            FamilyRule(
                "gpt-5.2",
                _fixed(ReasoningSpec("effort", efforts=("none", "low", "medium", "high", "xhigh"))),
                400000,
                128000,
                ("text", "image"),
            ),
        ),
        (
            r"gpt-5",
            FamilyRule(
                "gpt-5",
                _fixed(ReasoningSpec("always-on", efforts=_GPT5, can_disable=False)),
                400000,
                128000,
                ("text", "image"),
            ),
        ),
        (
            r"(^|/)(o[1-9]|gpt-oss)",
            FamilyRule(
                "o-series",
                _fixed(ReasoningSpec("always-on", efforts=_O_SERIES, can_disable=False)),
                200000,
                100000,
            ),
        ),
        (
            r"deepseek-reasoner|magistral",
            FamilyRule(
                "reasoner", _fixed(ReasoningSpec("always-on", can_disable=False)), 128000, None
            ),
        ),
        (
            r"deepseek-chat",
            FamilyRule("chat", _fixed(ReasoningSpec("none")), 128000, None),
        ),
    )
)


def family_rule(model: str) -> FamilyRule | None:
    """The family rule that matches ``model`` (lower-cased), or None."""
    name = model.lower()
    for pattern, rule in _RULES:
        if pattern.search(name):
            return rule
    return None
