"""What survives a switch of model, block by block (``sanitize.md`` §3, §5, §6).

:func:`sanitize_content` maps the content of one assistant message to what
the target accepts. The decisions are tables: :data:`THINKING_RULES` for
reasoning by kind and issuer, :data:`UNSIGNED_SAME_ISSUER` for unsigned
reasoning per target api. Two api-specific passes follow: Gemini signatures
must be base64 (with a sentinel for unsigned Gemini 3 calls), and Responses
reasoning is replayed only with encrypted content next to the item it
preceded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from enum import Enum
from typing import Any, Literal

from ..messages import (
    AssistantMessage,
    ContentBlock,
    ProviderBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
)
from .report import block_change
from .target import Target, same_issuer, same_provider
from .text import clean_block

__all__ = [
    "DEFAULT_FOREIGN_THINKING",
    "FOREIGN_THINKING_MODES",
    "GEMINI_SENTINEL",
    "SEPARATOR",
    "THINKING_RULES",
    "THINKING_TAGS",
    "UNSIGNED_SAME_ISSUER",
    "ForeignThinking",
    "is_valid_gemini_signature",
    "replayable_reasoning",
    "sanitize_content",
    "thinking_kind",
]

#: What becomes of another issuer's reasoning: plain text, text wrapped in
#: :data:`THINKING_TAGS`, or nothing. Text of either kind is followed by
#: :data:`SEPARATOR` when a block follows it in the message.
ForeignThinking = Literal["text", "tagged", "drop"]

FOREIGN_THINKING_MODES: tuple[str, ...] = ("text", "tagged", "drop")

#: The default: the reasoning stays in the conversation, and reads as what it was.
DEFAULT_FOREIGN_THINKING: ForeignThinking = "tagged"

THINKING_TAGS = ("<thinking>\n", "\n</thinking>")

#: Between reasoning turned into text and the block after it, so that the two
#: never read as one sentence when a target joins its text blocks.
SEPARATOR = "\n\n"

#: Documented value that tells Gemini 3 to skip thought-signature validation
#: for a function call it did not sign.
GEMINI_SENTINEL = "skip_thought_signature_validator"

#: Base64 in the standard or the URL-safe alphabet, one alphabet per value:
#: Gemini signatures are opaque bytes, and the JSON mapping of a protobuf
#: ``bytes`` field accepts either (the API answers in the standard alphabet;
#: google-genai and other clients send them back URL-safe).
_BASE64 = re.compile(r"\A(?:[A-Za-z0-9+/]+|[A-Za-z0-9_-]+)={0,2}\Z")


class Action(Enum):
    KEEP = "keep"
    DEMOTE = "demote"  # becomes a TextBlock (or is dropped with foreign_thinking="drop")
    DROP = "drop"
    BY_TARGET_API = "by_target_api"  # see UNSIGNED_SAME_ISSUER


#: ``(thinking kind, same issuer) -> action`` — the reasoning rows of §3.
THINKING_RULES: dict[tuple[str, bool], Action] = {
    ("redacted", True): Action.KEEP,
    ("redacted", False): Action.DROP,
    ("signed", True): Action.KEEP,
    ("signed", False): Action.DEMOTE,
    ("signed-empty", True): Action.KEEP,
    ("signed-empty", False): Action.DROP,
    ("unsigned", True): Action.BY_TARGET_API,
    ("unsigned", False): Action.DEMOTE,
    ("blank", True): Action.DROP,
    ("blank", False): Action.DROP,
}

#: Unsigned, non-empty reasoning of the same issuer, per target api.
#: Anthropic rejects unsigned thinking (and demoting it can trigger a refusal);
#: Responses has nothing to replay without an item.
UNSIGNED_SAME_ISSUER: dict[str, Action] = {
    "anthropic-messages": Action.DROP,
    "openai-responses": Action.DROP,
    "openai-completions": Action.KEEP,
    "google-generative-ai": Action.KEEP,
}


def thinking_kind(block: ThinkingBlock) -> str:
    """``redacted``, ``signed``, ``signed-empty``, ``unsigned`` or ``blank``."""
    if block.redacted:
        return "redacted" if block.signature else "blank"  # no data: nothing to replay
    has_text = bool(block.thinking.strip())
    if block.signature:
        return "signed" if has_text else "signed-empty"
    return "unsigned" if has_text else "blank"


def is_valid_gemini_signature(value: str | None) -> bool:
    """Non-empty base64 in one alphabet (``[A-Za-z0-9+/]`` or URL-safe
    ``[A-Za-z0-9_-]``), at most two ``=``, length % 4 == 0; or the Gemini 3
    sentinel. The value itself is never re-encoded."""
    if value == GEMINI_SENTINEL:
        return True
    return bool(value) and len(value or "") % 4 == 0 and _BASE64.match(value or "") is not None


def _json_object(text: str | None) -> dict[str, Any] | None:
    if not text:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def replayable_reasoning(signature: str | None) -> bool:
    """A Responses reasoning item with non-empty ``encrypted_content``."""
    item = _json_object(signature)
    if item is None or item.get("type", "reasoning") != "reasoning":
        return False
    enc = item.get("encrypted_content")
    return isinstance(enc, str) and bool(enc)


def _without_item_id(signature: str | None) -> str | None:
    """A Responses item signature without its ``id`` (``None`` if nothing is left)."""
    item = _json_object(signature)
    if item is None or "id" not in item:
        return signature
    rest = {k: v for k, v in item.items() if k != "id"}
    return json.dumps(rest, separators=(",", ":"), ensure_ascii=False) if rest else None


_CONTENT_TYPES = (TextBlock, ThinkingBlock, ToolCallBlock, ProviderBlock)


#: Target apis that replay a signature carried by an empty text block (a Gemini
#: ``thoughtSignature`` on an empty part, a Responses message item).
TEXT_SIGNATURE_APIS: frozenset[str] = frozenset({"google-generative-ai", "openai-responses"})


def _is_blank_text(block: ContentBlock | None, target: Target) -> bool:
    """Whitespace-only text carries nothing but perhaps a signature, and only
    some targets replay that; the others reject empty text blocks."""
    if not isinstance(block, TextBlock) or block.text.strip():
        return False
    return not (block.signature and target.api in TEXT_SIGNATURE_APIS)


# ---------------------------------------------------------------------------
# Per-block rules


def _thinking(
    block: ThinkingBlock, same: bool, target: Target, foreign: ForeignThinking
) -> ContentBlock | None:
    action = THINKING_RULES[(thinking_kind(block), same)]
    if action is Action.BY_TARGET_API:
        action = UNSIGNED_SAME_ISSUER[target.api]
    if action is Action.KEEP:
        return block
    if action is Action.DEMOTE and foreign == "text":
        return TextBlock(block.thinking)
    if action is Action.DEMOTE and foreign == "tagged":
        return TextBlock(THINKING_TAGS[0] + block.thinking + THINKING_TAGS[1])
    return None


def _text(block: TextBlock, same: bool) -> TextBlock:
    if same or (block.signature is None and not block.citations):
        return block
    return replace(block, signature=None, citations=())


def _tool_call(block: ToolCallBlock, same: bool) -> ToolCallBlock:
    if same or block.signature is None:
        return block
    return replace(block, signature=None)


def _with_gemini_signature_checked(block: ContentBlock) -> ContentBlock:
    """Same-issuer Gemini blocks keep only signatures the API will accept."""
    if isinstance(block, ProviderBlock) or is_valid_gemini_signature(block.signature):
        return block
    return block if block.signature is None else replace(block, signature=None)


def _block(
    block: ContentBlock,
    message: AssistantMessage,
    same: bool,
    target: Target,
    foreign: ForeignThinking,
) -> ContentBlock | None:
    if isinstance(block, ThinkingBlock):
        return _thinking(block, same, target, foreign)
    if isinstance(block, TextBlock):
        text = _text(block, same)
        return None if _is_blank_text(text, target) else text
    if isinstance(block, ToolCallBlock):
        return _tool_call(block, same)
    return block if same_provider(block.api, message.provider, target) else None


# ---------------------------------------------------------------------------
# Api-specific passes over the whole message


def _encrypted_reasoning_only(out: list[ContentBlock | None]) -> None:
    """§6.1: without ``encrypted_content`` a reasoning item cannot be replayed."""
    for i, b in enumerate(out):
        if isinstance(b, ThinkingBlock) and not replayable_reasoning(b.signature):
            out[i] = None


def _reasoning_followed_by_an_item(out: list[ContentBlock | None]) -> None:
    """§6.2: trailing and consecutive reasoning items are rejected."""
    alive = [i for i, b in enumerate(out) if b is not None]
    for pos, i in enumerate(alive):
        follower = out[alive[pos + 1]] if pos + 1 < len(alive) else None
        if isinstance(out[i], ThinkingBlock) and not _is_item(follower):
            out[i] = None


def _is_item(block: ContentBlock | None) -> bool:
    """A block that can follow a reasoning item: anything but reasoning."""
    return block is not None and not isinstance(block, ThinkingBlock)


def _item_ids_without_their_reasoning(
    original: Sequence[ContentBlock], out: list[ContentBlock | None], target: Target
) -> None:
    """§6.3: blocks that followed a dropped reasoning item (up to the next
    reasoning block) lose their item id and are replayed by ``call_id``."""
    after_dropped = False
    for i, orig in enumerate(original):
        b = out[i]
        if isinstance(orig, ThinkingBlock):
            after_dropped = b is None
        elif after_dropped and isinstance(b, (TextBlock, ToolCallBlock)):
            signature = _without_item_id(b.signature)
            if signature != b.signature:
                b = replace(b, signature=signature)
            out[i] = None if _is_blank_text(b, target) else b


def _responses_replay(
    original: Sequence[ContentBlock], out: list[ContentBlock | None], target: Target
) -> list[ContentBlock | None]:
    """§6: Responses reasoning is replayed only with encrypted content, right
    before the item it preceded; items that lost their reasoning lose their id."""
    out = list(out)
    _encrypted_reasoning_only(out)
    _reasoning_followed_by_an_item(out)
    _item_ids_without_their_reasoning(original, out, target)
    return out


def _gemini3_sentinel(out: list[ContentBlock | None]) -> list[ContentBlock | None]:
    """§5: every unsigned function call gets the documented sentinel."""
    return [
        replace(b, signature=GEMINI_SENTINEL)
        if isinstance(b, ToolCallBlock) and b.signature is None
        else b
        for b in out
    ]


#: Same-issuer signature checks that run before the survival rules, per target api.
SIGNATURE_CHECKS: dict[str, Callable[[ContentBlock], ContentBlock]] = {
    "google-generative-ai": _with_gemini_signature_checked,
}

ReplayPass = Callable[
    [Sequence[ContentBlock], list[ContentBlock | None], Target], list[ContentBlock | None]
]

#: Passes over a same-issuer message after the survival rules, per target api.
REPLAY_PASSES: dict[str, ReplayPass] = {
    "openai-responses": _responses_replay,
}


def _separated(original: Sequence[ContentBlock], out: list[ContentBlock | None]) -> None:
    """Reasoning turned into text ends with :data:`SEPARATOR` when another
    block follows it in the message."""
    last = max((i for i, b in enumerate(out) if b is not None), default=-1)
    for i, (orig, b) in enumerate(zip(original, out, strict=True)):
        if isinstance(orig, ThinkingBlock) and isinstance(b, TextBlock) and i < last:
            out[i] = TextBlock(b.text + SEPARATOR)


#: ``(block index in the message, kind, reason)`` of what a message lost.
Notes = list[tuple[int, str, str]]


def _note_changes(
    positions: Sequence[int],
    before: Sequence[ContentBlock],
    out: Sequence[ContentBlock | None],
    same: bool,
    foreign: ForeignThinking,
    notes: Notes,
) -> None:
    for position, old, new in zip(positions, before, out, strict=True):
        change = block_change(old, new, same, foreign == "tagged")
        if change is not None:
            notes.append((position, *change))


def sanitize_content(
    message: AssistantMessage,
    target: Target,
    foreign: ForeignThinking,
    notes: Notes | None = None,
) -> tuple[ContentBlock, ...]:
    """The content of ``message`` as ``target`` may receive it (ids untouched).
    What lost opaque state on the way is appended to ``notes``."""
    same = same_issuer(message, target)
    positions = [i for i, b in enumerate(message.content) if isinstance(b, _CONTENT_TYPES)]
    before = [clean_block(message.content[i]) for i in positions]
    check = SIGNATURE_CHECKS.get(target.api) if same else None
    original = [check(b) for b in before] if check is not None else before
    out = [_block(b, message, same, target, foreign) for b in original]
    replay = REPLAY_PASSES.get(target.api) if same else None
    if replay is not None:
        out = replay(original, out, target)
    if (target.gemini_major or 0) >= 3:
        out = _gemini3_sentinel(out)
    _separated(original, out)
    if notes is not None:
        _note_changes(positions, before, out, same, foreign, notes)
    kept = tuple(b for b in out if b is not None)
    unchanged = len(kept) == len(message.content) and all(
        a is b for a, b in zip(kept, message.content, strict=True)
    )
    return message.content if unchanged else kept
