"""What sanitize dropped or downgraded, said in words (``sanitize.md``, "Warnings").

Nothing a history carried is lost without a word: every block whose opaque
state (a signature, reasoning, citations, a provider block) does not reach
the target as it was, and every message left out, gives one
:class:`SanitizeWarning` naming the message and block and why.
:func:`block_change` compares a block before and after the survival rules;
whitespace that carried nothing (blank text, blank reasoning) and what the
target gains (the Gemini 3 sentinel) are not losses.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..messages import ContentBlock, ProviderBlock, TextBlock, ThinkingBlock, ToolCallBlock

__all__ = ["SanitizeWarning", "block_change"]


@dataclass(frozen=True, slots=True)
class SanitizeWarning:
    """One thing of a history that did not reach the target as it was.

    ``message`` is the index of the message in the history given (None for
    what is not in the history: a tool or a setting, which ``reason`` names),
    ``block`` the index of the block in its content (None when the whole
    message is meant), ``kind`` a short code (``thinking_as_text``,
    ``thinking_tagged``, ``thinking_dropped``, ``signature_removed``,
    ``citations_removed``, ``provider_block_dropped``, ``turn_dropped``,
    ``result_dropped``, ``thinking_off``, ``tool_dropped``,
    ``tool_options_lost``, ``tool_choice_dropped``) and ``reason`` the words
    for a person.
    """

    message: int | None
    block: int | None
    kind: str
    reason: str

    def __str__(self) -> str:
        if self.message is None:
            return self.reason
        where = f"messages[{self.message}]"
        if self.block is not None:
            where += f".content[{self.block}]"
        return f"{where}: {self.kind}: {self.reason}"


def _thinking_change(
    block: ThinkingBlock, new: ContentBlock | None, same: bool, tagged: bool
) -> tuple[str, str] | None:
    if isinstance(new, TextBlock):
        how = "visible <thinking> text" if tagged else "plain text"
        return ("thinking_tagged" if tagged else "thinking_as_text"), (
            f"reasoning of another issuer sent as {how}"
        )
    if new is not None:
        return None
    if not block.signature and not block.thinking.strip():
        return None  # blank reasoning carried nothing
    if same:
        return "thinking_dropped", "reasoning the target api cannot replay dropped"
    what = "redacted reasoning" if block.redacted else "reasoning"
    return "thinking_dropped", f"{what} of another issuer dropped"


def _signature_change(
    block: TextBlock | ToolCallBlock, new: ContentBlock | None, same: bool
) -> tuple[str, str] | None:
    if new is None:
        if block.signature:
            return "signature_removed", "empty text that carried a signature dropped"
        return None  # whitespace only
    if not isinstance(new, (TextBlock, ToolCallBlock)):
        return None
    if block.signature and new.signature != block.signature:
        if not same:
            return "signature_removed", "signature of another issuer removed"
        if new.signature:
            return "signature_removed", "item id removed: its reasoning item was dropped"
        return "signature_removed", "signature the target would reject removed"
    lost_citations = isinstance(block, TextBlock) and block.citations
    if lost_citations and isinstance(new, TextBlock) and not new.citations:
        return "citations_removed", "citations of another issuer removed"
    return None


def block_change(
    block: ContentBlock, new: ContentBlock | None, same: bool, tagged: bool
) -> tuple[str, str] | None:
    """``(kind, reason)`` when ``new`` (None: dropped) lost opaque state that
    ``block`` had; None when nothing was lost. ``same`` says whether the
    message came from the target's issuer, ``tagged`` whether demoted
    reasoning is wrapped in tags."""
    if isinstance(block, ThinkingBlock):
        return _thinking_change(block, new, same, tagged)
    if isinstance(block, (TextBlock, ToolCallBlock)):
        return _signature_change(block, new, same)
    if isinstance(block, ProviderBlock) and new is None:
        return "provider_block_dropped", (
            f"{block.api} {block.kind} block dropped: only its own host can replay it"
        )
    return None
