"""What each target rejects, as checks over a history (``sanitize.md`` §2–§8).

A validator returns a list of problems (empty when the target would accept
the history as far as these rules go). The rules are the providers' published
request constraints as ``sanitize.md`` summarises them: tool-call id patterns
and lengths, every call answered by a following result and every result
following its call, unique ids, nothing signed by another issuer, signed
thinking for Anthropic, encrypted and paired reasoning for Responses, base64
thought signatures (and signed calls on Gemini 3) for Gemini, and no unpaired
surrogates anywhere. Each validator is a row of :data:`VALIDATORS`: a fixed
id rule (or the target's) and a tuple of checks.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..messages import (
    AssistantMessage,
    Message,
    ProviderBlock,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
)
from .blocks import GEMINI_SENTINEL, is_valid_gemini_signature, replayable_reasoning
from .calls import calls_in
from .ids import ID_RULES, IdRule, id_rule_for
from .target import Target, resolve_target, same_issuer, same_provider
from .text import has_surrogate

__all__ = [
    "VALIDATORS",
    "Validator",
    "validate_anthropic",
    "validate_bedrock",
    "validate_google",
    "validate_history_for_target",
    "validate_mistral",
    "validate_openai_completions",
    "validate_openai_responses",
    "validator_for",
]

Check = Callable[[Sequence[Message], Target, IdRule], Iterator[str]]


def _assistants(messages: Sequence[Message]) -> Iterator[tuple[int, AssistantMessage]]:
    return ((i, m) for i, m in enumerate(messages) if isinstance(m, AssistantMessage))


# ---------------------------------------------------------------------------
# Checks every target shares


def ids_match_rule(messages: Sequence[Message], target: Target, rule: IdRule) -> Iterator[str]:
    """Call ids match the target's pattern and length (§4.1), whoever issued
    them: tool calls and client-executed provider items."""
    for i, m in _assistants(messages):
        for site in calls_in(m.content):
            if not rule.is_valid(site.id):
                yield f"message {i}: tool call id {site.id!r} does not match {rule.regex}"


def ids_unique(messages: Sequence[Message], target: Target, rule: IdRule) -> Iterator[str]:
    """No two calls in the conversation share an id."""
    seen: dict[str, int] = {}
    for i, m in _assistants(messages):
        for site in calls_in(m.content):
            if site.id in seen:
                yield f"message {i}: tool call id {site.id!r} reused from message {seen[site.id]}"
            seen.setdefault(site.id, i)


def calls_paired(messages: Sequence[Message], target: Target, rule: IdRule) -> Iterator[str]:
    """Each call is answered by exactly one result directly after its message
    (other results between are fine); each result answers such a call."""
    # Unanswered calls of the current turn, id -> count (insertion-ordered):
    # O(1) per result, so the check is linear in the history.
    pending: dict[str, int] | None = None
    owner = -1

    def unanswered() -> Iterator[str]:
        for call_id, count in (pending or {}).items():
            for _ in range(count):
                yield f"message {owner}: tool call {call_id!r} has no result"

    for i, m in enumerate(messages):
        if isinstance(m, AssistantMessage):
            yield from unanswered()
            pending, owner = Counter(s.id for s in calls_in(m.content)), i
        elif isinstance(m, ToolResultMessage):
            if pending and pending.get(m.tool_call_id):
                pending[m.tool_call_id] -= 1
            else:
                yield f"message {i}: tool result {m.tool_call_id!r} does not follow its call"
        elif isinstance(m, (UserMessage, SystemMessage)):
            yield from unanswered()
            pending = None
    yield from unanswered()


def turns_not_empty(messages: Sequence[Message], target: Target, rule: IdRule) -> Iterator[str]:
    """Assistant messages need at least one block."""
    for i, m in _assistants(messages):
        if not m.content:
            yield f"message {i}: assistant message without content"


def nothing_foreign(messages: Sequence[Message], target: Target, rule: IdRule) -> Iterator[str]:
    """Another issuer's reasoning, signatures, citations and provider blocks
    cannot be verified by the target (§2, §3)."""
    sentinel_ok = (target.gemini_major or 0) >= 3
    for i, m in _assistants(messages):
        same = same_issuer(m, target)
        for j, b in enumerate(m.content):
            where = f"message {i} block {j}"
            if isinstance(b, ProviderBlock) and not same_provider(b.api, m.provider, target):
                yield f"{where}: {b.api} provider block {b.kind!r} sent to {target.api}"
            if same:
                continue
            if isinstance(b, ThinkingBlock):
                yield f"{where}: reasoning of another issuer"
            elif isinstance(b, TextBlock) and (b.signature or b.citations):
                yield f"{where}: text signature or citations of another issuer"
            elif (
                isinstance(b, ToolCallBlock)
                and b.signature is not None
                and not (sentinel_ok and b.signature == GEMINI_SENTINEL)
            ):
                yield f"{where}: tool call signature of another issuer"


def _strings(value: Any) -> Iterator[str]:
    """Every string in JSON-like data, keys too, in no set order (a walk with
    its own stack: any depth)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)


def no_surrogates(messages: Sequence[Message], target: Target, rule: IdRule) -> Iterator[str]:
    """Every outbound string must be encodable as UTF-8 (§7)."""
    for i, m in enumerate(messages):
        sent = [b.to_dict() for b in m.content] if isinstance(m, AssistantMessage) else m.to_dict()
        if any(has_surrogate(s) for s in _strings(sent)):
            yield f"message {i}: unpaired surrogate"


COMMON: tuple[Check, ...] = (
    ids_match_rule,
    ids_unique,
    calls_paired,
    turns_not_empty,
    nothing_foreign,
    no_surrogates,
)


# ---------------------------------------------------------------------------
# Api-specific checks


def thinking_signed(messages: Sequence[Message], target: Target, rule: IdRule) -> Iterator[str]:
    """Anthropic rejects thinking blocks without a signature."""
    for i, m in _assistants(messages):
        for j, b in enumerate(m.content):
            if isinstance(b, ThinkingBlock) and not b.signature:
                yield f"message {i} block {j}: thinking without signature"


def text_not_blank(messages: Sequence[Message], target: Target, rule: IdRule) -> Iterator[str]:
    """Anthropic rejects empty (whitespace-only) text blocks."""
    for i, m in _assistants(messages):
        for j, b in enumerate(m.content):
            if isinstance(b, TextBlock) and not b.text.strip():
                yield f"message {i} block {j}: empty text block"


def reasoning_replayable(
    messages: Sequence[Message], target: Target, rule: IdRule
) -> Iterator[str]:
    """Responses reasoning needs encrypted content and a following item (§6)."""
    for i, m in _assistants(messages):
        for j, b in enumerate(m.content):
            if not isinstance(b, ThinkingBlock):
                continue
            if not replayable_reasoning(b.signature):
                yield f"message {i} block {j}: reasoning item without encrypted_content"
            nxt = m.content[j + 1] if j + 1 < len(m.content) else None
            if nxt is None or isinstance(nxt, ThinkingBlock):
                yield f"message {i} block {j}: reasoning item without a following item"


def gemini_signatures(messages: Sequence[Message], target: Target, rule: IdRule) -> Iterator[str]:
    """Thought signatures must be base64; Gemini 3 needs one on every call (§5)."""
    need_call_signature = (target.gemini_major or 0) >= 3
    for i, m in _assistants(messages):
        for j, b in enumerate(m.content):
            if not isinstance(b, (TextBlock, ThinkingBlock, ToolCallBlock)):
                continue
            if b.signature is not None and not is_valid_gemini_signature(b.signature):
                yield f"message {i} block {j}: thought signature is not base64"
            if need_call_signature and isinstance(b, ToolCallBlock) and b.signature is None:
                yield f"message {i} block {j}: function call without thought signature"


# ---------------------------------------------------------------------------
# The validators


@dataclass(frozen=True, slots=True)
class Validator:
    """A target family's checks; ``id_rule`` names a fixed row of
    :data:`~streamnorm.sanitize.ids.ID_RULES`, or ``None`` for the target's."""

    name: str
    checks: tuple[Check, ...]
    id_rule: str | None = None

    def __call__(self, messages: Sequence[Message], target: Target) -> list[str]:
        rule = ID_RULES[self.id_rule] if self.id_rule else id_rule_for(target)
        return [p for check in self.checks for p in check(messages, target, rule)]


validate_anthropic = Validator("anthropic", (*COMMON, thinking_signed, text_not_blank), "anthropic")
validate_bedrock = Validator("bedrock", (*COMMON, thinking_signed, text_not_blank), "bedrock")
validate_openai_responses = Validator(
    "openai-responses", (*COMMON, reasoning_replayable), "openai-responses"
)
validate_openai_completions = Validator("openai-completions", COMMON)
validate_google = Validator("google", (*COMMON, gemini_signatures), "google")
validate_mistral = Validator("mistral", COMMON, "mistral")

VALIDATORS: dict[str, Validator] = {
    v.name: v
    for v in (
        validate_anthropic,
        validate_bedrock,
        validate_openai_responses,
        validate_openai_completions,
        validate_google,
        validate_mistral,
    )
}

_VALIDATOR_BY_API: dict[str, str] = {
    "anthropic-messages": "anthropic",
    "openai-responses": "openai-responses",
    "openai-completions": "openai-completions",
    "google-generative-ai": "google",
}


def validator_for(target: Target) -> Validator:
    """Mistral models on any api, Claude on Bedrock, else by api."""
    if target.is_mistral:
        return validate_mistral
    if target.api == "anthropic-messages" and target.is_bedrock:
        return validate_bedrock
    return VALIDATORS[_VALIDATOR_BY_API[target.api]]


def validate_history_for_target(
    messages: Sequence[Message], provider: str | None, model: str | None, *, api: str | None = None
) -> list[str]:
    """Problems that ``(provider, api, model)`` would reject in ``messages``.

    Target resolution is that of ``sanitize_messages_for_target`` (same
    ``ValueError``s). An empty list means no known rule is broken.
    """
    target = resolve_target(provider, model, api)
    return validator_for(target)(list(messages), target)
