"""Which blocks of an assistant message are calls the client must answer.

``ToolCallBlock``s always are. Some provider blocks are too: Responses items
that wait for the client (``custom_tool_call``, ``apply_patch_call``, a
client-executed ``tool_search_call`` …, judged by
:mod:`streamnorm.providers.openai_responses.wire`, the rule the stream
decoder uses for the stop reason) need a result with their ``call_id`` when
replayed to the same provider. Their ``call_id`` is an id like any other:
rewritten, with its results, when it collides or breaks the target's rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..apis import resolve_api
from ..messages import ContentBlock, ProviderBlock, ToolCallBlock
from ..providers.openai_responses.wire import answered_call_ids, client_call_id

__all__ = ["CLIENT_CALL_APIS", "CallSite", "calls_in"]

#: Wire apis whose provider blocks can wait for the client.
CLIENT_CALL_APIS: frozenset[str] = frozenset({"openai-responses"})


@dataclass(frozen=True, slots=True)
class CallSite:
    """One call in a message: its id, tool name and block position (a
    ``ToolCallBlock``, or a ``ProviderBlock`` whose ``data["call_id"]`` is
    the id)."""

    id: str
    name: str
    index: int


def _api(name: str) -> str | None:
    try:
        return resolve_api(name)
    except (ValueError, AttributeError):
        return None


def _client_items(content: Sequence[ContentBlock]) -> list[tuple[int, ProviderBlock]]:
    return [
        (i, b)
        for i, b in enumerate(content)
        if isinstance(b, ProviderBlock) and _api(b.api) in CLIENT_CALL_APIS
    ]


def calls_in(content: Sequence[ContentBlock]) -> list[CallSite]:
    """The calls of one message, in block order. O(blocks): the outputs of the
    message are collected once, not searched per call."""
    items = _client_items(content)
    answered = answered_call_ids(b.data for _, b in items)
    provider_calls: dict[int, CallSite] = {}
    for i, b in items:
        call_id = client_call_id(b.data)
        if call_id is not None and call_id not in answered:
            name = b.data.get("name")
            provider_calls[i] = CallSite(call_id, name if isinstance(name, str) else b.kind, i)
    return [
        CallSite(b.id, b.name, i) if isinstance(b, ToolCallBlock) else provider_calls[i]
        for i, b in enumerate(content)
        if isinstance(b, ToolCallBlock) or i in provider_calls
    ]
