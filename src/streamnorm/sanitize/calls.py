"""Which blocks of an assistant message are calls the client must answer.

``ToolCallBlock``s always are. Some provider blocks are too: Responses items
that the client executes (``custom_tool_call``, ``apply_patch_call`` …,
``DESIGN.md`` §4) need a result with their ``call_id`` when replayed to the
same provider. Their ids are replayed verbatim, so they are never rewritten.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..apis import resolve_api
from ..messages import ContentBlock, ProviderBlock, ToolCallBlock

__all__ = ["CLIENT_CALL_KINDS", "CallSite", "calls_in"]

#: Provider block kinds, per wire api, that the client executes and answers.
CLIENT_CALL_KINDS: dict[str, frozenset[str]] = {
    "openai-responses": frozenset(
        {"custom_tool_call", "apply_patch_call", "computer_call", "local_shell_call", "shell_call"}
    ),
}

#: A call of this kind is server-executed when its output item is in the same
#: message (a hosted-container shell call comes with its output).
_SERVER_OUTPUT: dict[str, str] = {"shell_call": "shell_call_output"}


@dataclass(frozen=True, slots=True)
class CallSite:
    """One call in a message: its id, tool name, block position and whether
    its id may be rewritten (``ToolCallBlock``) or is replayed verbatim."""

    id: str
    name: str
    index: int
    rewritable: bool


def _api(name: str) -> str | None:
    try:
        return resolve_api(name)
    except (ValueError, AttributeError):
        return None


def _provider_call(block: ProviderBlock, content: Sequence[ContentBlock]) -> str | None:
    if block.kind not in CLIENT_CALL_KINDS.get(_api(block.api) or "", frozenset()):
        return None
    call_id = block.data.get("call_id")
    if not isinstance(call_id, str) or not call_id:
        return None
    output_kind = _SERVER_OUTPUT.get(block.kind)
    if output_kind and any(
        isinstance(b, ProviderBlock) and b.kind == output_kind and b.data.get("call_id") == call_id
        for b in content
    ):
        return None
    return call_id


def calls_in(content: Sequence[ContentBlock]) -> list[CallSite]:
    """The calls of one message, in block order."""
    sites: list[CallSite] = []
    for i, b in enumerate(content):
        if isinstance(b, ToolCallBlock):
            sites.append(CallSite(b.id, b.name, i, True))
        elif isinstance(b, ProviderBlock) and (call_id := _provider_call(b, content)):
            name = b.data.get("name")
            sites.append(CallSite(call_id, name if isinstance(name, str) else b.kind, i, False))
    return sites
