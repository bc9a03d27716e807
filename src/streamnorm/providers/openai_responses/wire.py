"""Wire facts of ``openai-responses`` shared by its stream decoder, its
request codec and sanitize.

Signatures: a message or function-call item's own fields that must be
replayed (its ``id``, ``phase`` / ``namespace``) are the block's signature, as
compact JSON (:func:`item_signature`).

Which output items wait for the client. An item asks the client to act when
it carries a ``call_id`` (the id the client's ``*_output`` input item will
answer), is not itself an output, is not marked ``"execution": "server"``,
and its output is not in the same response. That covers ``custom_tool_call``,
``apply_patch_call``, ``computer_call``, ``local_shell_call``, a local
``shell_call``, a ``tool_search_call`` with ``"execution": "client"`` and the
next client-executed item type without a list of names; a hosted
``shell_call`` or ``tool_search_call`` comes with its output (or says
``"execution": "server"``) and asks nothing.

Server tools (``web_search_call``, ``code_interpreter_call``, ``mcp_call`` …)
carry no ``call_id``. ``mcp_approval_request`` carries none either: it waits
for the user's decision, which goes back as an ``mcp_approval_response`` input
item naming ``approval_request_id``, not as a tool result. It is not a tool
call, so a response that ends with one stops with ``stop``.

``function_call`` items are the ``ToolCallBlock``s; the rule holds for them
too but the decoder reads them on their own path.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..._json import dumps_compact

__all__ = [
    "MESSAGE_PARTS",
    "answered_call_ids",
    "client_call_id",
    "is_output_item",
    "item_signature",
    "output_call_id",
]

#: Content part types of message items. The stream decoder keeps a part it
#: has no text block for as a ``ProviderBlock`` of that kind; it is a part of
#: an item, not an item, and cannot be sent back on its own.
MESSAGE_PARTS = frozenset(
    ("input_text", "input_image", "input_file", "input_audio", "output_text", "output_audio")
)

#: The ``execution`` value of an item the server runs itself.
SERVER_EXECUTION = "server"

_OUTPUT_SUFFIX = "_output"


def _call_id(item: Mapping[str, Any]) -> str | None:
    value = item.get("call_id")
    return value if isinstance(value, str) and value else None


def is_output_item(item: Mapping[str, Any]) -> bool:
    """An item that answers a call (``shell_call_output``, ``tool_search_output`` …)."""
    kind = item.get("type")
    return isinstance(kind, str) and kind.endswith(_OUTPUT_SUFFIX)


def client_call_id(item: Mapping[str, Any]) -> str | None:
    """The ``call_id`` the client must answer for ``item``, judged from the
    item alone (see :func:`answered_call_ids` for the same-response check);
    ``None`` for outputs, server-executed items and items without one."""
    if is_output_item(item) or item.get("execution") == SERVER_EXECUTION:
        return None
    return _call_id(item)


def output_call_id(item: Mapping[str, Any]) -> str | None:
    """The ``call_id`` that an output item answers, else ``None``."""
    return _call_id(item) if is_output_item(item) else None


def answered_call_ids(items: Iterable[Mapping[str, Any]]) -> set[str]:
    """The call ids answered by output items among ``items`` (one response's
    output): a call among them with one of these ids was run by the server.
    One pass, O(number of items)."""
    return {cid for item in items if (cid := output_call_id(item)) is not None}


def item_signature(fields: dict[str, Any]) -> str | None:
    """The signature of a message or function-call item (providers.md §2.2):
    compact JSON of its non-empty string fields among ``fields`` (``id`` and
    ``phase`` / ``namespace``); None when there are none."""
    present = {k: v for k, v in fields.items() if isinstance(v, str) and v}
    return dumps_compact(present) if present else None
