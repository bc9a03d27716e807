"""The survival table of ``sanitize.md`` §3, row by row, for every ordered pair
of the providers anthropic, openai (Responses), openai-completions, google and
mistral: same model, same provider with another model, and another provider.

Each row says what goes in and, from the table alone, what must come out; the
expectations are written here independently of the implementation.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Literal

import pytest

from streamnorm.messages import (
    AssistantMessage,
    ContentBlock,
    Message,
    ProviderBlock,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
)
from streamnorm.sanitize import sanitize_messages_for_target

from .sanitize_support import ISSUERS, Issuer, call, result, signature

SENTINEL = "skip_thought_signature_validator"
CITATION = {"type": "web_search_result_location", "url": "https://example.org", "cited_text": "x"}


@dataclass(frozen=True)
class Case:
    source: Issuer
    provider: str
    api: str
    model: str
    relation: str  # "same model", "other model", "other provider"

    @property
    def same(self) -> bool:
        return self.relation == "same model"

    @property
    def gemini3(self) -> bool:
        return self.api == "google-generative-ai" and self.model.startswith("gemini-3")

    @property
    def id_pattern(self) -> str:
        """The target's id rule, restated from sanitize.md §4.1."""
        words = ("mistral", "magistral", "devstral", "ministral", "codestral", "pixtral")
        if self.provider == "mistral" or any(w in self.model for w in words):
            return r"[a-zA-Z0-9]{9}"
        if self.api == "openai-responses":
            return r"[a-zA-Z0-9_-]{0,63}[a-zA-Z0-9-]"
        if self.api == "openai-completions":
            limit = 40 if self.provider in ("openai", "azure") else 64
            return rf"[a-zA-Z0-9_.:-]{{1,{limit}}}"
        return r"[a-zA-Z0-9_-]{1,64}"

    def __str__(self) -> str:
        return f"{self.source.key}->{self.provider}/{self.api}/{self.model}"


def _cases() -> list[Case]:
    cases = []
    for s in ISSUERS.values():
        cases.append(Case(s, s.provider, s.api, s.model, "same model"))
        cases.append(Case(s, s.provider, s.api, s.other_model, "other model"))
        for o in ISSUERS.values():
            if o is not s:
                cases.append(Case(s, o.provider, o.api, o.model, "other provider"))
    return cases


CASES = _cases()

Content = tuple[ContentBlock, ...]


@dataclass(frozen=True)
class Row:
    name: str
    content: Callable[[Issuer], Content]
    expect: Callable[[Case, Content], Content]
    mode: Literal["text", "tagged", "drop"] = "text"
    stop: StopReason = StopReason.STOP
    results: Callable[[Content], list[ToolResultMessage]] = field(default=lambda c: [])


DONE = TextBlock("Done.")
#: Another issuer's reasoning in tagged mode, without the separator.
TAGGED = "<thinking>\nLet me check.\n</thinking>"


def _signed_calls(case: Case, content: Content) -> Content:
    """Calls keep their signature for the same issuer, lose it otherwise; on a
    Gemini 3 target an unsigned call carries the sentinel."""
    out: list[ContentBlock] = []
    for b in content:
        if isinstance(b, ToolCallBlock):
            sig = b.signature if case.same else None
            b = replace(b, signature=SENTINEL if sig is None and case.gemini3 else sig)
        out.append(b)
    return tuple(out)


def _results_for(content: Content) -> list[ToolResultMessage]:
    return [result(b.id, b.name) for b in content if isinstance(b, ToolCallBlock)]


ROWS: list[Row] = [
    Row(
        "signed thinking",
        lambda s: (ThinkingBlock("Let me check.", signature(s.api, "thinking")), DONE),
        lambda c, x: x if c.same else (TextBlock("Let me check.\n\n"), DONE),
    ),
    Row(
        "signed thinking, tagged mode",
        lambda s: (ThinkingBlock("Let me check.", signature(s.api, "thinking")), DONE),
        lambda c, x: x if c.same else (TextBlock(TAGGED + "\n\n"), DONE),
        mode="tagged",
    ),
    Row(
        "signed thinking, drop mode",
        lambda s: (ThinkingBlock("Let me check.", signature(s.api, "thinking")), DONE),
        lambda c, x: x if c.same else (DONE,),
        mode="drop",
    ),
    Row(
        "signed empty thinking",
        lambda s: (ThinkingBlock("", signature(s.api, "thinking")), DONE),
        lambda c, x: x if c.same else (DONE,),
    ),
    Row(
        "unsigned thinking",
        lambda s: (ThinkingBlock("Let me check."), DONE),
        lambda c, x: (
            ((DONE,) if c.api in ("anthropic-messages", "openai-responses") else x)
            if c.same
            else (TextBlock("Let me check.\n\n"), DONE)
        ),
    ),
    Row(
        "unsigned thinking, tagged mode, last block",
        lambda s: (DONE, ThinkingBlock("Let me check.")),
        lambda c, x: (
            ((DONE,) if c.api in ("anthropic-messages", "openai-responses") else x)
            if c.same
            else (DONE, TextBlock(TAGGED))
        ),
        mode="tagged",
    ),
    Row(
        "unsigned thinking, drop mode",
        lambda s: (ThinkingBlock("Let me check."), DONE),
        lambda c, x: (
            ((DONE,) if c.api in ("anthropic-messages", "openai-responses") else x)
            if c.same
            else (DONE,)
        ),
        mode="drop",
    ),
    Row(
        "unsigned blank thinking",
        lambda s: (ThinkingBlock(" \n"), DONE),
        lambda c, x: (DONE,),
    ),
    Row(
        "redacted thinking",
        lambda s: (ThinkingBlock("", signature(s.api, "redacted"), redacted=True), DONE),
        lambda c, x: x if c.same else (DONE,),
    ),
    Row(
        "text with signature and citations",
        lambda s: (TextBlock("Done.", signature(s.api, "text"), (CITATION,)),),
        lambda c, x: x if c.same else (DONE,),
    ),
    Row(
        "tool call with signature",
        lambda s: (TextBlock("Running."), call("abc123XYZ", signature=signature(s.api, "call"))),
        _signed_calls,
        results=_results_for,
    ),
    Row(
        "tool call with error (truncated)",
        lambda s: (
            ToolCallBlock(
                "abc123XYZ",
                "bash",
                {"cmd": "l"},
                '{"cmd": "l',
                signature(s.api, "call"),
                error="incomplete",
            ),
        ),
        _signed_calls,
        stop=StopReason.LENGTH,
        results=_results_for,
    ),
    Row(
        "provider block",
        lambda s: (ProviderBlock(s.api, "server_tool_use", {"id": "srv_1", "name": "web"}), DONE),
        lambda c, x: x if (c.api, c.provider) == (c.source.api, c.source.provider) else (DONE,),
    ),
]


def _history(case: Case, row: Row) -> tuple[list[Message], AssistantMessage]:
    content = row.content(case.source)
    msg = case.source.message(content, stop=row.stop)
    return [UserMessage("go"), msg, *row.results(content)], msg


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.name)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_survival_table(case: Case, row: Row) -> None:
    history, msg = _history(case, row)
    out = sanitize_messages_for_target(
        history, case.provider, case.model, api=case.api, foreign_thinking=row.mode
    )
    expected = row.expect(case, msg.content)
    turns = [m for m in out if isinstance(m, AssistantMessage)]
    assert len(turns) == 1
    assert turns[0].content == expected
    # The origin of the message is never rewritten.
    assert (turns[0].api, turns[0].model, turns[0].provider) == (msg.api, msg.model, msg.provider)
    assert out[0] == history[0]
    assert [m for m in out[2:]] == history[2:]


# ``ToolCallBlock.id``: kept when the target's rule accepts it, whoever issued
# it; otherwise rewritten, and the result follows.
ID_SAMPLES = ("fn.lookup:1", "toolu_01AbC", "abc123XYZ")


def _expected_id(case: Case, original: str) -> str:
    if re.fullmatch(case.id_pattern, original):
        return original
    if case.id_pattern == r"[a-zA-Z0-9]{9}":
        cleaned = re.sub(r"[^a-zA-Z0-9]", "_", original)[:9]
        if re.fullmatch(case.id_pattern, cleaned):
            return cleaned
        return hashlib.sha256((original + "\x000").encode()).hexdigest()[:9]
    return re.sub(r"[^a-zA-Z0-9_-]", "_", original)


@pytest.mark.parametrize("original", ID_SAMPLES)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_survival_tool_call_id(case: Case, original: str) -> None:
    history: list[Message] = [
        UserMessage("go"),
        case.source.message((call(original),)),
        result(original),
    ]
    out = sanitize_messages_for_target(history, case.provider, case.model, api=case.api)
    (turn,) = [m for m in out if isinstance(m, AssistantMessage)]
    (block,) = turn.content
    assert isinstance(block, ToolCallBlock)
    assert block.id == _expected_id(case, original)
    assert re.fullmatch(case.id_pattern, block.id)
    assert isinstance(out[2], ToolResultMessage) and out[2].tool_call_id == block.id
