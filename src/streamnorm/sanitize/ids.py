"""Tool-call id rules per target and the injective rewrite (``sanitize.md`` §4).

Each target accepts a different id alphabet and length. The rules are one
table, :data:`ID_RULES`; :func:`id_rule_for` picks the row for a target and
:class:`IdAllocator` assigns output ids, walking the calls in conversation
order so that no two calls ever share an output id.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from .target import Target

__all__ = ["ID_RULES", "IdAllocator", "IdRule", "id_rule_for"]


@dataclass(frozen=True, slots=True)
class IdRule:
    """What a target accepts as a tool-call id, and how to make one it accepts.

    ``alphabet`` is the body of a regex character class. Derived ids are
    ``derived_prefix`` + the first ``derived_hex`` hex digits of a SHA-256.
    """

    name: str
    alphabet: str
    max_len: int
    min_len: int = 1
    no_trailing_underscore: bool = False
    derived_prefix: str = "call_"
    derived_hex: int = 24
    source: str = ""
    pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)
    outside: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        body = f"[{self.alphabet}]{{{self.min_len},{self.max_len}}}"
        object.__setattr__(self, "pattern", re.compile(rf"\A{body}\Z"))
        object.__setattr__(self, "outside", re.compile(rf"[^{self.alphabet}]"))

    @property
    def regex(self) -> str:
        """The rule as a human-readable regex (for messages and docs)."""
        return f"^[{self.alphabet}]{{{self.min_len},{self.max_len}}}$" + (
            " not ending in _" if self.no_trailing_underscore else ""
        )

    def is_valid(self, value: str) -> bool:
        if self.pattern.match(value) is None:
            return False
        return not (self.no_trailing_underscore and value.endswith("_"))

    def cleaned(self, value: str) -> str:
        """Foreign characters become ``_``; cut to the maximum length."""
        out = self.outside.sub("_", value)[: self.max_len]
        if self.no_trailing_underscore:
            out = out.rstrip("_")
        return out

    def derived(self, original: str, k: int) -> str:
        """The ``k``-th candidate id derived from ``original`` by hashing."""
        digest = hashlib.sha256(
            (original + "\x00" + str(k)).encode("utf-8", "surrogatepass")
        ).hexdigest()
        return self.derived_prefix + digest[: self.derived_hex]


_PLAIN = "a-zA-Z0-9_-"
_DOTTED = "a-zA-Z0-9_.:-"

#: One row per target family. ``default`` serves Chat Completions hosts other
#: than OpenAI and Azure (it keeps Kimi's ``functions.<name>:<n>`` ids intact).
ID_RULES: dict[str, IdRule] = {
    rule.name: rule
    for rule in (
        IdRule("anthropic", _PLAIN, 64, source="Anthropic: tool_use id ^[a-zA-Z0-9_-]+$"),
        IdRule("bedrock", _PLAIN, 64, source="Bedrock Converse toolUseId, 1-64"),
        IdRule(
            "openai-responses",
            _PLAIN,
            64,
            no_trailing_underscore=True,
            source="Responses call_id; Codex rejects a trailing _",
        ),
        IdRule("openai-completions", _DOTTED, 40, source="OpenAI/Azure: maximum length 40"),
        IdRule("google", _PLAIN, 64, source="Gemini function call ids, optional and plain"),
        IdRule(
            "mistral",
            "a-zA-Z0-9",
            9,
            min_len=9,
            derived_prefix="",
            derived_hex=9,
            source="mistral-common: exactly 9 alphanumerics",
        ),
        IdRule("default", _DOTTED, 64, source="other Chat Completions hosts"),
    )
}

#: Chat Completions providers that enforce OpenAI's 40-character limit.
OPENAI_LENGTH_PROVIDERS: frozenset[str] = frozenset({"openai", "azure", "azure-openai"})

#: Id rule by target api, before the provider-specific overrides below.
_RULE_BY_API: dict[str, str] = {
    "anthropic-messages": "anthropic",
    "openai-responses": "openai-responses",
    "openai-completions": "default",
    "google-generative-ai": "google",
}


def id_rule_for(target: Target) -> IdRule:
    """The id rule of ``target``: Mistral on any api, then by api and provider."""
    if target.is_mistral:
        return ID_RULES["mistral"]
    name = _RULE_BY_API[target.api]
    if name == "anthropic" and target.is_bedrock:
        name = "bedrock"
    elif name == "default" and target.provider in OPENAI_LENGTH_PROVIDERS:
        name = "openai-completions"
    return ID_RULES[name]


@dataclass
class IdAllocator:
    """Assigns output ids in conversation order, never the same one twice.

    Cost: O(1) hashes per call, amortised. ``used`` only grows, so a derived
    candidate found taken stays taken; ``next_k`` remembers, per original id,
    where the search for a free derived id stops, and the next call with
    that original (a Gemini ``call_0`` in every turn) resumes there instead
    of rehashing ``k = 0, 1 …`` (which made ``n`` repeats cost ``n²/2``).
    """

    rule: IdRule
    used: set[str] = field(default_factory=set)
    next_k: dict[str, int] = field(default_factory=dict)

    def assign(self, original: str) -> str:
        """The output id for one call whose input id is ``original``.

        Kept when the target's rule accepts it and no earlier call took it,
        whoever issued it (a provider's own ids follow its rule; one that
        does not, such as ``toolu_é``, would be rejected all the same). Then
        the cleaned id is tried, then hashed ids.
        """
        if self.rule.is_valid(original) and original not in self.used:
            return self._take(original)
        cleaned = self.rule.cleaned(original)
        if self.rule.is_valid(cleaned) and cleaned not in self.used:
            return self._take(cleaned)
        k = self.next_k.get(original, 0)
        while (candidate := self.rule.derived(original, k)) in self.used:
            k += 1
        self.next_k[original] = k + 1
        return self._take(candidate)

    def _take(self, value: str) -> str:
        self.used.add(value)
        return value
