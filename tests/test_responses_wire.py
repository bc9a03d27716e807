"""Which Responses output items wait for the client: one rule
(``providers/openai_responses/wire.py``) behind the stream decoder's stop
reason and sanitize's calls, judged from the item rather than from a list of
type names."""

from __future__ import annotations

import json
from typing import Any

import pytest

from streamnorm import Done, ProviderBlock, StopReason, ToolResultMessage, UserMessage
from streamnorm.messages import Message
from streamnorm.providers.openai_responses.wire import (
    answered_call_ids,
    client_call_id,
    output_call_id,
)
from streamnorm.sanitize import sanitize_messages_for_target, validate_history_for_target
from streamnorm.sanitize.calls import calls_in

from .support import run_bytes, terminal

API = "openai-responses"


def _stream(*items: dict[str, Any]) -> bytes:
    """A Responses stream whose output is ``items``: each added then done,
    then ``response.completed`` listing them."""
    payloads: list[dict[str, Any]] = [
        {"type": "response.created", "response": {"id": "resp_1", "model": "gpt-5"}}
    ]
    for i, item in enumerate(items):
        added = {k: v for k, v in item.items() if k not in ("output", "tools")}
        payloads.append({"type": "response.output_item.added", "output_index": i, "item": added})
        payloads.append({"type": "response.output_item.done", "output_index": i, "item": item})
    payloads.append(
        {
            "type": "response.completed",
            "response": {
                "id": "resp_1",
                "model": "gpt-5",
                "status": "completed",
                "output": list(items),
            },
        }
    )
    return "".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n" for p in payloads).encode()


def _done(*items: dict[str, Any]) -> Done:
    end = terminal(run_bytes(_stream(*items), API, provider="openai", model="gpt-5"))
    assert isinstance(end, Done), end
    return end


CLIENT_SEARCH: dict[str, Any] = {
    "type": "tool_search_call",
    "id": "tsc_1",
    "call_id": "call_ts1",
    "execution": "client",
    "arguments": {"paths": ["get_weather"]},
    "status": "completed",
}
SERVER_SEARCH: dict[str, Any] = {
    "type": "tool_search_call",
    "id": "tsc_2",
    "call_id": None,
    "execution": "server",
    "arguments": {"queries": ["get_weather"]},
    "status": "completed",
}
SERVER_SEARCH_OUTPUT: dict[str, Any] = {
    "type": "tool_search_output",
    "id": "tso_2",
    "call_id": None,
    "execution": "server",
    "tools": [],
    "status": "completed",
}
LOCAL_SHELL: dict[str, Any] = {
    "type": "shell_call",
    "id": "sh_1",
    "call_id": "call_sh1",
    "action": {},
}
HOSTED_SHELL_OUTPUT: dict[str, Any] = {
    "type": "shell_call_output",
    "id": "sho_1",
    "call_id": "call_sh1",
}
#: An item type no list knows: a call_id, nothing says the server ran it.
FUTURE_CALL: dict[str, Any] = {
    "type": "hologram_call",
    "id": "hg_1",
    "call_id": "call_hg1",
    "input": "x",
}
MCP_APPROVAL: dict[str, Any] = {
    "type": "mcp_approval_request",
    "id": "mcpr_1",
    "server_label": "deepwiki",
    "name": "ask_question",
    "arguments": "{}",
}
WEB_SEARCH: dict[str, Any] = {
    "type": "web_search_call",
    "id": "ws_1",
    "status": "completed",
    "action": {},
}

#: (items of one response, its stop reason, the call ids the client answers).
CASES: dict[str, tuple[tuple[dict[str, Any], ...], StopReason, list[str]]] = {
    "client tool search": ((CLIENT_SEARCH,), StopReason.TOOL_USE, ["call_ts1"]),
    "server tool search": ((SERVER_SEARCH, SERVER_SEARCH_OUTPUT), StopReason.STOP, []),
    "local shell": ((LOCAL_SHELL,), StopReason.TOOL_USE, ["call_sh1"]),
    "hosted shell": ((LOCAL_SHELL, HOSTED_SHELL_OUTPUT), StopReason.STOP, []),
    "output first": ((HOSTED_SHELL_OUTPUT, LOCAL_SHELL), StopReason.STOP, []),
    "future item type": ((FUTURE_CALL,), StopReason.TOOL_USE, ["call_hg1"]),
    "mcp approval request": ((MCP_APPROVAL,), StopReason.STOP, []),
    "server tool": ((WEB_SEARCH,), StopReason.STOP, []),
}


@pytest.mark.parametrize("case", list(CASES))
def test_stop_reason_from_the_item(case: str) -> None:
    items, stop, _ = CASES[case]
    end = _done(*items)
    assert end.stop_reason is stop
    kinds = [b.kind if isinstance(b, ProviderBlock) else None for b in end.message.content]
    assert kinds == [i["type"] for i in items]


@pytest.mark.parametrize("case", list(CASES))
def test_sanitize_answers_the_calls_the_decoder_counted(case: str) -> None:
    """The same rule on both sides: the calls sanitize finds in the decoded
    message are the ones that made it ``tool_use``, and an unanswered one gets
    exactly one synthetic result; the sanitized history validates."""
    items, _, call_ids = CASES[case]
    message = _done(*items).message
    assert [s.id for s in calls_in(message.content)] == call_ids
    history: list[Message] = [UserMessage("go"), message]
    out = sanitize_messages_for_target(history, "openai", "gpt-5", api=API)
    assert out[:2] == history
    synthetic = [m for m in out[2:] if isinstance(m, ToolResultMessage)]
    assert [(m.tool_call_id, m.is_error) for m in synthetic] == [(c, True) for c in call_ids]
    assert validate_history_for_target(out, "openai", "gpt-5", api=API) == []
    answered = [*history, *(ToolResultMessage(c, "t", "ok") for c in call_ids)]
    assert sanitize_messages_for_target(answered, "openai", "gpt-5", api=API) == answered


def test_wire_rule() -> None:
    assert client_call_id(CLIENT_SEARCH) == "call_ts1"
    assert client_call_id({**CLIENT_SEARCH, "execution": "server"}) is None
    assert client_call_id(SERVER_SEARCH) is None  # call_id null
    assert client_call_id(HOSTED_SHELL_OUTPUT) is None  # an output answers, it asks nothing
    assert client_call_id({**FUTURE_CALL, "call_id": ""}) is None
    assert client_call_id(MCP_APPROVAL) is None and client_call_id(WEB_SEARCH) is None
    assert output_call_id(HOSTED_SHELL_OUTPUT) == "call_sh1"
    assert output_call_id(LOCAL_SHELL) is None
    items = [LOCAL_SHELL, HOSTED_SHELL_OUTPUT, SERVER_SEARCH_OUTPUT, FUTURE_CALL]
    assert answered_call_ids(items) == {"call_sh1"}
