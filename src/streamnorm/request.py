"""The canonical request: a conversation plus the options every API shares
(DESIGN.md §5a, requests.md §0).

All types are frozen dataclasses with ``to_dict()``/``from_dict()``, so a
request can be stored as JSON and rebuilt equal. What the canonical model
does not cover lives in ``extra``, keyed by api: those fields are merged into
that api's body verbatim (objects merged recursively) and ignored for every
other api, so a same-api round trip loses nothing and a cross-api one drops
exactly what the other api cannot take.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from .messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    TextBlock,
    ToolResultMessage,
    UserMessage,
    message_from_dict,
)

if TYPE_CHECKING:  # the sanitize package imports the providers, which import this module
    from .sanitize.report import SanitizeWarning

__all__ = [
    "TOOL_CHOICE_MODES",
    "Extra",
    "ProviderTool",
    "Reasoning",
    "Request",
    "ResponseFormat",
    "Tool",
    "WireRequest",
]

#: Fields of one api's JSON that the canonical model does not cover, by api.
Extra = Mapping[str, Mapping[str, Any]]

#: ``tool_choice`` values that are not tool names.
TOOL_CHOICE_MODES = ("auto", "none", "required")


@dataclass(frozen=True, slots=True)
class Tool:
    """A function the model may call. ``parameters`` is JSON Schema;
    ``strict`` asks for schema-constrained arguments (None: the api's
    default); ``cache`` is a prompt-cache breakpoint after this definition;
    ``extra`` holds fields of the definition in one api's spelling, by api."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )
    strict: bool | None = None
    cache: str | None = None
    extra: Extra | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "function",
            "name": self.name,
            "description": self.description,
            "parameters": dict(self.parameters),
            "strict": self.strict,
            "cache": self.cache,
            "extra": _plain(self.extra),
        }

    @classmethod
    def from_function(cls, fn: Callable[..., Any], *, strict: bool | None = None) -> Tool:
        """The tool ``fn`` is: its name, its docstring's first paragraph as
        the description, JSON Schema of its parameters from the signature's
        types and the docstring's ``Args:`` (``streamnorm.toolschema``)."""
        from .toolschema import function_schema

        name, description, parameters = function_schema(fn)
        return cls(name, description, parameters, strict)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Tool:
        return cls(
            d["name"],
            d.get("description") or "",
            dict(d.get("parameters") or {"type": "object", "properties": {}}),
            d.get("strict"),
            d.get("cache"),
            d.get("extra"),
        )


@dataclass(frozen=True, slots=True)
class ProviderTool:
    """A tool only one api knows (web search, code execution, MCP servers,
    computer use …), kept as that api's own definition and sent only to it."""

    api: str
    data: Mapping[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"type": "provider", "api": self.api, "data": dict(self.data)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ProviderTool:
        return cls(d["api"], dict(d.get("data") or {}))


@dataclass(frozen=True, slots=True)
class Reasoning:
    """How much to think. ``effort`` is ``none``, ``minimal``, ``low``,
    ``medium``, ``high``, ``xhigh`` or ``max``; ``budget_tokens`` a token
    budget; ``summary`` whether and how thinking text is returned (``auto``,
    ``concise``, ``detailed``, or ``none`` for signatures only);
    ``enabled=False`` turns thinking off where the api has a switch."""

    effort: str | None = None
    budget_tokens: int | None = None
    summary: str | None = None
    enabled: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {
            "effort": self.effort,
            "budget_tokens": self.budget_tokens,
            "summary": self.summary,
            "enabled": self.enabled,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Reasoning:
        return cls(
            d.get("effort"), d.get("budget_tokens"), d.get("summary"), bool(d.get("enabled", True))
        )


@dataclass(frozen=True, slots=True)
class ResponseFormat:
    """Structured output: ``type`` is ``json_schema`` (with ``schema``),
    ``json_object`` or ``text``; ``name``, ``description`` and ``strict`` are
    the OpenAI-style attributes of a named schema."""

    type: str = "json_schema"
    schema: Mapping[str, Any] | None = None
    name: str | None = None
    description: str | None = None
    strict: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "schema": dict(self.schema) if self.schema is not None else None,
            "name": self.name,
            "description": self.description,
            "strict": self.strict,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ResponseFormat:
        return cls(
            d.get("type", "json_schema"),
            d.get("schema"),
            d.get("name"),
            d.get("description"),
            d.get("strict"),
        )


@dataclass(frozen=True, slots=True)
class Request:
    """One request to a model, in no api's spelling.

    ``system`` is text, or text blocks (to carry cache breakpoints);
    ``system_role`` how OpenAI apis spell it: None for their default
    (Responses ``instructions``, a Chat ``system`` message), ``"system"`` or
    ``"developer"`` for a leading message of that role. ``tool_choice`` is
    ``"auto"``, ``"none"``, ``"required"`` or the name of one tool;
    ``parallel_tool_calls`` False allows one call per turn. ``stop`` holds
    stop sequences; ``metadata`` the OpenAI key/value pairs. ``headers``
    holds non-secret request headers of one api that change what the body
    means (``anthropic-beta``, ``anthropic-version``, ``openai-beta``), by
    api, sent with that api's request only.

    ``messages`` may be given as a str (one user message: ``Request(model,
    "hi")``) or any sequence; it is kept as a tuple, and an item that is not
    a message raises ``TypeError`` naming its index.
    """

    model: str | None
    messages: tuple[Message, ...]
    system: str | tuple[TextBlock, ...] | None = None
    tools: tuple[Tool | ProviderTool, ...] = ()
    tool_choice: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    stop: tuple[str, ...] = ()
    reasoning: Reasoning | None = None
    response_format: ResponseFormat | None = None
    stream: bool = True
    metadata: Mapping[str, str] | None = None
    extra: Extra | None = None
    parallel_tool_calls: bool | None = None
    system_role: str | None = None
    headers: Extra | None = None

    if TYPE_CHECKING:  # the signature type checkers see: messages as a user would give them

        def __init__(
            self,
            model: str | None,
            messages: str | Sequence[Message],
            system: str | tuple[TextBlock, ...] | None = None,
            tools: tuple[Tool | ProviderTool, ...] = (),
            tool_choice: str | None = None,
            max_tokens: int | None = None,
            temperature: float | None = None,
            top_p: float | None = None,
            top_k: int | None = None,
            stop: tuple[str, ...] = (),
            reasoning: Reasoning | None = None,
            response_format: ResponseFormat | None = None,
            stream: bool = True,
            metadata: Mapping[str, str] | None = None,
            extra: Extra | None = None,
            parallel_tool_calls: bool | None = None,
            system_role: str | None = None,
            headers: Extra | None = None,
        ) -> None: ...

    def __post_init__(self) -> None:
        messages: object = self.messages
        if isinstance(messages, str):
            messages = (UserMessage(messages),)
        elif type(messages) is not tuple:
            if not isinstance(messages, Sequence):
                raise TypeError(
                    f"Request.messages must be a str or a sequence of messages, "
                    f"not {type(messages).__name__}"
                )
            messages = tuple(messages)
        for i, message in enumerate(messages):
            if not isinstance(message, _MESSAGES):
                raise TypeError(_not_a_message(i, message))
        object.__setattr__(self, "messages", messages)

    def to_dict(self) -> dict[str, Any]:
        system: Any = self.system
        if isinstance(system, tuple):
            system = [b.to_dict() for b in system]
        return {
            "model": self.model,
            "messages": [m.to_dict() for m in self.messages],
            "system": system,
            "system_role": self.system_role,
            "tools": [t.to_dict() for t in self.tools],
            "tool_choice": self.tool_choice,
            "parallel_tool_calls": self.parallel_tool_calls,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "top_k": self.top_k,
            "stop": list(self.stop),
            "reasoning": self.reasoning.to_dict() if self.reasoning is not None else None,
            "response_format": (
                self.response_format.to_dict() if self.response_format is not None else None
            ),
            "stream": self.stream,
            "metadata": dict(self.metadata) if self.metadata is not None else None,
            "extra": _plain(self.extra),
            "headers": _plain(self.headers),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Request:
        system = d.get("system")
        if isinstance(system, list):
            system = tuple(
                TextBlock(b["text"], cache=b.get("cache")) for b in system if isinstance(b, dict)
            )
        tools = tuple(
            ProviderTool.from_dict(t) if t.get("type") == "provider" else Tool.from_dict(t)
            for t in d.get("tools") or ()
        )
        reasoning = d.get("reasoning")
        response_format = d.get("response_format")
        return cls(
            model=d.get("model"),
            messages=tuple(message_from_dict(m) for m in d.get("messages") or ()),
            system=system,
            tools=tools,
            tool_choice=d.get("tool_choice"),
            max_tokens=d.get("max_tokens"),
            temperature=d.get("temperature"),
            top_p=d.get("top_p"),
            top_k=d.get("top_k"),
            stop=tuple(d.get("stop") or ()),
            reasoning=Reasoning.from_dict(reasoning) if reasoning is not None else None,
            response_format=(
                ResponseFormat.from_dict(response_format) if response_format is not None else None
            ),
            stream=bool(d.get("stream", True)),
            metadata=d.get("metadata"),
            extra=d.get("extra"),
            parallel_tool_calls=d.get("parallel_tool_calls"),
            system_role=d.get("system_role"),
            headers=d.get("headers"),
        )


@dataclass(frozen=True, slots=True)
class WireRequest:
    """An encoded request: ``path`` is relative to the api's base URL and
    includes the query; ``headers`` are the non-secret headers the api needs.
    ``warnings`` says what of the request did not reach the body as given
    (``SanitizeWarning``s: another issuer's reasoning turned into text, a
    signature removed, thinking turned off, a server tool the api has no like
    of, a reasoning budget clamped to the target model's range …). It is a
    diagnostic of the encoding, not part of the request: it takes no part in
    equality, and ``to_dict`` writes it only when there is one."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: Mapping[str, Any]
    warnings: tuple[SanitizeWarning, ...] = field(default=(), compare=False)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "method": self.method,
            "path": self.path,
            "headers": dict(self.headers),
            "body": dict(self.body),
            "warnings": list(self.warnings),
        }
        if self.warnings:
            out["warnings"] = [asdict(w) for w in self.warnings]
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> WireRequest:
        from .sanitize.report import SanitizeWarning  # the sanitize package imports this one

        return cls(
            d["method"],
            d["path"],
            dict(d.get("headers") or {}),
            dict(d["body"]),
            tuple(SanitizeWarning(**w) for w in d.get("warnings") or ()),
        )


_MESSAGES = (UserMessage, AssistantMessage, ToolResultMessage, SystemMessage)


def _not_a_message(index: int, item: object) -> str:
    kind = "None" if item is None else type(item).__name__
    hint = " (read message dicts with message_from_dict)" if isinstance(item, dict) else ""
    return (
        f"messages[{index}] must be a UserMessage, AssistantMessage, ToolResultMessage "
        "or SystemMessage, "
        f"not {kind}{hint}"
    )


def _plain(extra: Extra | None) -> dict[str, Any] | None:
    return {k: dict(v) for k, v in extra.items()} if extra is not None else None
