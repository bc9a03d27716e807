"""Make a conversation history safe to send to another provider or model.

``sanitize_messages_for_target`` keeps what the target can verify, turns
foreign reasoning into text, rewrites tool-call ids, repairs the call/result
structure and removes unpaired surrogates (reference: ``sanitize.md``).
``validate_history_for_target`` reports what a target would reject.

Modules, along the data flow: :mod:`.target` (who sends, who issued),
:mod:`.blocks` (what survives, per block), :mod:`.calls` (which blocks need
results), :mod:`.ids` (id rules and the injective rewrite), :mod:`.text`
(surrogates), :mod:`.report` (what was lost, in words), :mod:`.core` (the
pipeline), :mod:`.validators`.
"""

from .blocks import (
    DEFAULT_FOREIGN_THINKING,
    FOREIGN_THINKING_MODES,
    GEMINI_SENTINEL,
    ForeignThinking,
)
from .core import sanitize_messages_for_target, sanitize_with_warnings
from .ids import ID_RULES, IdRule, id_rule_for
from .report import SanitizeWarning
from .target import Target, models_match, resolve_target, same_issuer
from .validators import (
    VALIDATORS,
    Validator,
    validate_anthropic,
    validate_bedrock,
    validate_google,
    validate_history_for_target,
    validate_mistral,
    validate_openai_completions,
    validate_openai_responses,
    validator_for,
)

__all__ = [
    "DEFAULT_FOREIGN_THINKING",
    "FOREIGN_THINKING_MODES",
    "GEMINI_SENTINEL",
    "ID_RULES",
    "VALIDATORS",
    "ForeignThinking",
    "IdRule",
    "SanitizeWarning",
    "Target",
    "Validator",
    "id_rule_for",
    "models_match",
    "resolve_target",
    "same_issuer",
    "sanitize_messages_for_target",
    "sanitize_with_warnings",
    "validate_anthropic",
    "validate_bedrock",
    "validate_google",
    "validate_history_for_target",
    "validate_mistral",
    "validate_openai_completions",
    "validate_openai_responses",
    "validator_for",
]
