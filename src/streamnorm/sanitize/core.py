"""``sanitize_messages_for_target``: the pipeline (``sanitize.md`` §3, §4, §8).

1. Each assistant message that did not fail is reduced to what the target
   accepts (:mod:`.blocks`); failed turns (``error``, ``aborted``) are dropped.
2. One walk pairs tool results with the pending calls of the assistant turn
   they follow; a result that answers nothing is dropped, a call left without
   a result gets a synthetic error result when the next turn or user message
   arrives, or at the end.
3. Tool-call ids are assigned in conversation order per call, never per id
   string, so the rewrite is injective; results take the id of their call.
4. Messages are rebuilt; unchanged ones are the input objects themselves.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from ..messages import (
    AssistantMessage,
    ContentBlock,
    Message,
    ProviderBlock,
    StopReason,
    SystemMessage,
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
)
from .blocks import (
    DEFAULT_FOREIGN_THINKING,
    FOREIGN_THINKING_MODES,
    ForeignThinking,
    Notes,
    sanitize_content,
)
from .calls import CallSite, calls_in
from .ids import IdAllocator, id_rule_for
from .report import SanitizeWarning
from .target import Target, resolve_target
from .text import clean_content, clean_str

__all__ = [
    "FAILED_STOP_REASONS",
    "SYNTHETIC_RESULT_TEXT",
    "sanitize_messages_for_target",
    "sanitize_with_warnings",
]

#: Turns that ended this way are incomplete and never replayed.
FAILED_STOP_REASONS: frozenset[StopReason] = frozenset({StopReason.ERROR, StopReason.ABORTED})

#: Content of the error result that answers a call left without one.
SYNTHETIC_RESULT_TEXT = "No result provided"


@dataclass(eq=False)
class _Call:
    site: CallSite
    answered: bool = False
    new_id: str = ""


@dataclass(eq=False)
class _Turn:
    message: AssistantMessage
    content: tuple[ContentBlock, ...]
    calls: list[_Call] = field(default_factory=list)
    #: Unanswered calls by input id, in block order: a result takes the first
    #: (§4.2: two calls with one id are answered in order). O(1) per result.
    pending: dict[str, deque[_Call]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for c in self.calls:
            self.pending.setdefault(c.site.id, deque()).append(c)

    def answer(self, call_id: str) -> _Call | None:
        """The first unanswered call with ``call_id``, now answered."""
        queue = self.pending.get(call_id)
        if not queue:
            return None
        call = queue.popleft()
        call.answered = True
        return call


@dataclass(eq=False)
class _Result:
    call: _Call
    message: ToolResultMessage | None  # None: synthetic


_Entry = UserMessage | SystemMessage | _Turn | _Result


def _walk(
    messages: Iterable[Message],
    target: Target,
    foreign: ForeignThinking,
    warnings: list[SanitizeWarning],
) -> list[_Entry]:
    """Drop failed turns and pair results with calls (§8), saying in
    ``warnings`` what was left out or lost opaque state. O(messages + blocks)."""
    out: list[_Entry] = []
    current: _Turn | None = None

    def close() -> None:
        if current is not None:
            out.extend(_Result(c, None) for c in current.calls if not c.answered)
            for c in current.calls:
                c.answered = True
            current.pending.clear()

    for position, m in enumerate(messages):
        if isinstance(m, AssistantMessage):
            close()
            current = None
            if m.stop_reason in FAILED_STOP_REASONS:
                _warn(
                    warnings,
                    position,
                    None,
                    "turn_dropped",
                    f"turn that ended with {m.stop_reason.value} dropped",
                )
                continue
            notes: Notes = []
            content = sanitize_content(m, target, foreign, notes)
            warnings.extend(SanitizeWarning(position, *note) for note in notes)
            current = _Turn(m, content, [_Call(s) for s in calls_in(content)])
            out.append(current)
        elif isinstance(m, ToolResultMessage):
            call = current.answer(m.tool_call_id) if current is not None else None
            if call is not None:
                out.append(_Result(call, m))
            else:
                _warn(
                    warnings,
                    position,
                    None,
                    "result_dropped",
                    "tool result that answers no call dropped",
                )
        elif isinstance(m, (UserMessage, SystemMessage)):  # a system message ends a turn too
            close()
            current = None
            out.append(m)
        else:
            raise TypeError(f"not a message: {type(m).__name__}")
    close()
    return out


def _warn(
    warnings: list[SanitizeWarning], message: int, block: int | None, kind: str, reason: str
) -> None:
    warnings.append(SanitizeWarning(message, block, kind, reason))


def _assign_ids(entries: Sequence[_Entry], target: Target) -> None:
    """Give every call its output id (§4.2), in conversation order: tool
    calls and client-executed provider items alike, so no two share one."""
    alloc = IdAllocator(id_rule_for(target))
    for e in entries:
        if isinstance(e, _Turn):
            for c in e.calls:
                c.new_id = alloc.assign(c.site.id)


def _with_id(block: ContentBlock, new_id: str) -> ContentBlock:
    """``block`` answering to ``new_id``: a tool call's ``id``, a provider
    item's ``call_id``; the block itself when it already does."""
    if isinstance(block, ToolCallBlock):
        return block if block.id == new_id else replace(block, id=new_id)
    if isinstance(block, ProviderBlock) and block.data.get("call_id") != new_id:
        return replace(block, data={**block.data, "call_id": new_id})
    return block


def _rebuild_turn(turn: _Turn) -> AssistantMessage | None:
    content = list(turn.content)
    for c in turn.calls:
        content[c.site.index] = _with_id(content[c.site.index], c.new_id)
    if not content:
        return None
    new, old = tuple(content), turn.message.content
    if len(new) == len(old) and all(a is b for a, b in zip(new, old, strict=True)):
        return turn.message
    return replace(turn.message, content=new)


def _rebuild_result(result: _Result) -> ToolResultMessage:
    call, m = result.call, result.message
    if m is None:
        return ToolResultMessage(call.new_id, call.site.name, SYNTHETIC_RESULT_TEXT, True)
    changes: dict[str, object] = {}
    if m.tool_call_id != call.new_id:
        changes["tool_call_id"] = call.new_id
    name, content = clean_str(m.tool_name), clean_content(m.content)
    if name is not m.tool_name:
        changes["tool_name"] = name
    if content is not m.content:
        changes["content"] = content
    return replace(m, **changes) if changes else m  # type: ignore[arg-type]


def _rebuild_user(m: UserMessage) -> UserMessage:
    content = clean_content(m.content)
    return m if content is m.content else UserMessage(content)


def _rebuild_system(m: SystemMessage) -> SystemMessage:
    content = clean_content(m.content)
    if content is m.content:
        return m
    if isinstance(content, str):
        return replace(m, content=content)
    return replace(m, content=tuple(b for b in content if isinstance(b, TextBlock)))


def sanitize_messages_for_target(
    messages: Iterable[Message],
    provider: str | None,
    model: str | None,
    *,
    api: str | None = None,
    foreign_thinking: ForeignThinking = DEFAULT_FOREIGN_THINKING,
) -> list[Message]:
    """Make a conversation history safe to send to ``(provider, api, model)``.

    Keeps what the target can verify (its own signatures and opaque blocks),
    turns another issuer's reasoning into text wrapped in ``<thinking>`` tags
    (plain text with ``foreign_thinking="text"``, dropped with ``"drop"``),
    rewrites tool-call ids the target would reject, repairs the call/result
    structure and removes unpaired surrogates. Pure, deterministic and
    idempotent; the input is never modified. Raises ``ValueError`` for an
    unknown or missing ``api`` and an unknown ``foreign_thinking`` mode; bad
    data never raises. :func:`sanitize_with_warnings` also says what was lost.
    """
    return sanitize_with_warnings(
        messages, provider, model, api=api, foreign_thinking=foreign_thinking
    )[0]


def sanitize_with_warnings(
    messages: Iterable[Message],
    provider: str | None,
    model: str | None,
    *,
    api: str | None = None,
    foreign_thinking: ForeignThinking = DEFAULT_FOREIGN_THINKING,
) -> tuple[list[Message], tuple[SanitizeWarning, ...]]:
    """:func:`sanitize_messages_for_target`, and one :class:`SanitizeWarning`
    per block that lost opaque state (a signature, reasoning, citations, a
    provider block) and per message left out, in history order."""
    if foreign_thinking not in FOREIGN_THINKING_MODES:
        raise ValueError(
            f"foreign_thinking must be one of {FOREIGN_THINKING_MODES}, got {foreign_thinking!r}"
        )
    target = resolve_target(provider, model, api)
    warnings: list[SanitizeWarning] = []
    entries = _walk(messages, target, foreign_thinking, warnings)
    _assign_ids(entries, target)
    out: list[Message] = []
    for e in entries:
        if isinstance(e, _Turn):
            turn = _rebuild_turn(e)
            if turn is not None:
                out.append(turn)
        elif isinstance(e, _Result):
            out.append(_rebuild_result(e))
        elif isinstance(e, SystemMessage):
            out.append(_rebuild_system(e))
        else:
            out.append(_rebuild_user(e))
    return out, tuple(warnings)
