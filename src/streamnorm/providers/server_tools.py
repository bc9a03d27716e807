"""Server tools across APIs: a provider's own tool said in the target's words,
or, where the target has none like it, refused or dropped with a warning.

A server tool (web search, URL fetch …) runs on the provider's side and is
kept in a request as that API's own definition (``ProviderTool``). Sent to
another API, it becomes the target's tool of the same kind where there is
one, with the options both share::

    kind        anthropic-messages       openai-responses   google-generative-ai
    web_search  web_search_20250305      web_search         googleSearch
    web_fetch   web_fetch_20250910       —                  urlContext

(Chat Completions has no server tools.) Each API's request codec reads its
own definition into a neutral spec (``server_tool_spec``: ``kind``, the
shared options ``allowed_domains``, ``blocked_domains``, ``user_location``,
``max_uses``, and ``lost``, the options only it knows) and writes a spec as
its own tool (``server_tool``, with the options it cannot carry).

A ``tool_choice`` that forces such a tool by name is not carried (the
target's model decides), with a warning. Any other provider tool of another
API (code execution, MCP servers, Codex's ``namespace`` and ``custom``
tools …), and a server tool the target has no like of, goes by the
``server_tools`` policy: ``"warn"`` (the default) drops it and says so in
the ``WireRequest``'s warnings, ``"refuse"`` raises ``ValueError`` naming
the tool. Options lost on the way are always a warning.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from ..request import ProviderTool, Request, Tool
from ..sanitize.report import SanitizeWarning
from .anthropic import request as anthropic_request
from .google import request as google_request
from .openai_responses import request as responses_request

__all__ = ["SERVER_TOOL_POLICIES", "translate_server_tools"]

#: What to do with a provider tool the target cannot take.
SERVER_TOOL_POLICIES = ("warn", "refuse")


class _ServerTools(Protocol):
    def server_tool_spec(self, data: Mapping[str, Any]) -> dict[str, Any] | None: ...

    def server_tool(self, spec: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]] | None: ...


#: Per target, what makes a request with server tools acceptable to it
#: (or says why it cannot be).
_FITS: dict[str, Callable[[Request], tuple[Request, str | None]]] = {
    "google-generative-ai": google_request.with_server_tools,
}

_CODECS: dict[str, _ServerTools] = {
    "anthropic-messages": anthropic_request,
    "openai-responses": responses_request,
    "google-generative-ai": google_request,
}


def translate_server_tools(
    request: Request, api: str, policy: str = "warn"
) -> tuple[Request, tuple[SanitizeWarning, ...]]:
    """``request`` with every provider tool of another API said in ``api``'s
    words or removed, and the warnings for what was removed or lost."""
    if policy not in SERVER_TOOL_POLICIES:
        raise ValueError(
            f"server_tools: {policy!r} is not one of {', '.join(SERVER_TOOL_POLICIES)}"
        )
    if not any(isinstance(t, ProviderTool) and t.api != api for t in request.tools):
        return request, ()
    warnings: list[SanitizeWarning] = []
    choice = request.tool_choice
    plan: list[tuple[int, ProviderTool, ProviderTool | None, list[str]]] = []
    for i, tool in enumerate(request.tools):
        if isinstance(tool, ProviderTool) and tool.api != api:
            if choice is not None and tool.data.get("name") == choice:
                # A choice forcing a provider tool names no tool of the target.
                said = f"tool_choice {choice!r}: not carried to {api}; the model decides"
                warnings.append(SanitizeWarning(None, None, "tool_choice_dropped", said))
                choice = None
            plan.append((i, tool, *_map(tool, api)))
    request = dataclasses.replace(request, tool_choice=choice)
    request, reason = _fit(request, api, {i: m for i, _, m, _ in plan})
    for i, tool, mapped, lost in plan:
        where = f"tools[{i}] ({tool.api} {_name(tool)})"
        if mapped is None or reason is not None:
            message = f"{where}: {reason or f'{api} has no equivalent'}"
            if policy == "refuse":
                raise ValueError(f"{message} (server_tools = 'refuse')")
            warnings.append(SanitizeWarning(None, None, "tool_dropped", f"{message}; dropped"))
        elif lost:
            said = f"{where}: {', '.join(lost)} not carried to {api}"
            warnings.append(SanitizeWarning(None, None, "tool_options_lost", said))
    return request, tuple(warnings)


def _fit(
    request: Request, api: str, mapped: dict[int, ProviderTool | None]
) -> tuple[Request, str | None]:
    """``request`` with each foreign provider tool (by index) replaced by its
    mapping, in place, once each, as the target takes them; or, when the
    target cannot take them beside its other tools, without any of them and
    the reason."""
    kept = [t for i, t in enumerate(request.tools) if i not in mapped]
    seen = [t.data for t in kept if isinstance(t, ProviderTool)]
    tools: list[Tool | ProviderTool] = []
    for i, tool in enumerate(request.tools):
        if i not in mapped:
            tools.append(tool)
            continue
        new = mapped[i]
        if new is not None and new.data not in seen:
            seen.append(new.data)
            tools.append(new)
    added = len(tools) > len(kept)
    fitted = dataclasses.replace(request, tools=tuple(tools))
    hook = _FITS.get(api)
    if hook is None or not added:
        return fitted, None
    fitted, reason = hook(fitted)
    if reason is not None:
        return dataclasses.replace(request, tools=tuple(kept)), reason
    return fitted, None


def _map(tool: ProviderTool, api: str) -> tuple[ProviderTool | None, list[str]]:
    """The target's tool for ``tool`` and the options lost, or (None, [])."""
    source, target = _CODECS.get(tool.api), _CODECS.get(api)
    spec = source.server_tool_spec(tool.data) if source is not None else None
    written = target.server_tool(spec) if spec is not None and target is not None else None
    if spec is None or written is None:
        return None, []
    data, lost = written
    return ProviderTool(api, data), [*spec["lost"], *lost]


def _name(tool: ProviderTool) -> str:
    """How a provider tool is named in a warning: its type, or its one key (Gemini)."""
    kind = tool.data.get("type")
    if isinstance(kind, str):
        return kind
    return next(iter(tool.data), "tool")
