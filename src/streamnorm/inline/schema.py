"""Tool schemas: which tools exist, and the JSON type of each parameter.

XML dialects write parameter values as raw text; the schema decides whether
``3`` is the number 3 or the string ``"3"`` (reference §2.4). Tools are given
as OpenAI-style definitions (``{"type": "function", "function": {"name", "parameters"}}``),
bare ``{"name", "parameters"}`` objects, or a ``{name: json_schema}`` mapping.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from .literals import NotALiteral, literal_from_source

__all__ = ["ToolSchemas", "convert_value"]

# The order in which the types of a union are tried (Ollama's order).
_TYPE_ORDER = ("null", "boolean", "integer", "number", "array", "object", "string")
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_INTEGER = re.compile(r"[-+]?\d+")


class ToolSchemas:
    """Parameter types by tool and parameter name."""

    __slots__ = ("_params",)

    def __init__(self, params: dict[str, dict[str, Any]]) -> None:
        self._params = params

    @classmethod
    def of(cls, tools: Sequence[Any] | Mapping[str, Any] | None) -> ToolSchemas | None:
        if tools is None:
            return None
        params: dict[str, dict[str, Any]] = {}
        if isinstance(tools, Mapping):
            for name, schema in tools.items():
                params[str(name)] = _properties(schema)
        else:
            for tool in tools:
                if not isinstance(tool, Mapping):
                    continue
                inner = tool.get("function")
                fn: Mapping[str, Any] = inner if isinstance(inner, Mapping) else tool
                tool_name = fn.get("name")
                if isinstance(tool_name, str):
                    schema = fn.get("parameters", fn.get("input_schema", {}))
                    params[tool_name] = _properties(schema)
        return cls(params)

    def knows(self, tool: str) -> bool:
        return tool in self._params

    def param_names(self, tool: str) -> frozenset[str]:
        return frozenset(self._params.get(tool, {}))

    def param_types(self, tool: str, param: str) -> tuple[str, ...] | None:
        """The JSON types allowed for ``param``, in trial order; ``None`` when unknown."""
        schema = self._params.get(tool, {}).get(param)
        if not isinstance(schema, Mapping):
            return None
        found = _types(schema)
        if not found:
            return None
        return tuple(t for t in _TYPE_ORDER if t in found)


def _properties(schema: Any) -> dict[str, Any]:
    if isinstance(schema, Mapping):
        props = schema.get("properties")
        if isinstance(props, Mapping):
            return dict(props)
    return {}


def _types(schema: Mapping[str, Any]) -> set[str]:
    out: set[str] = set()
    t = schema.get("type")
    if isinstance(t, str):
        out.add(t)
    elif isinstance(t, list):
        out.update(x for x in t if isinstance(x, str))
    for key in ("anyOf", "oneOf"):
        members = schema.get(key)
        if isinstance(members, list):
            for m in members:
                if isinstance(m, Mapping):
                    out |= _types(m)
    if not out:
        if "properties" in schema:
            out.add("object")
        elif "items" in schema:
            out.add("array")
    return out


def convert_value(text: str, types: tuple[str, ...] | None) -> tuple[str, bool]:
    """The JSON text for an XML parameter value, and whether it fit its type.

    ``types`` ``None`` means no schema: JSON numbers, ``true``, ``false``,
    ``null``, objects and arrays convert, everything else is a string. A value
    that fits none of ``types`` is returned as a JSON string with ``False``.
    JSON written by the model is kept byte for byte.
    """
    s = text.strip()
    if types is None:
        try:
            v = _strict_loads(s)
        except (ValueError, RecursionError):
            return _string(text), True
        return (s, True) if not isinstance(v, str) else (_string(text), True)
    for t in types:
        out = _as_type(s, t)
        if out is not None:
            return out, True
        if t == "string":
            return _string(text), True
    return _string(text), False


def _as_type(s: str, t: str) -> str | None:
    if t == "json":  # any JSON value, as written (a DSML ``string="false"`` value)
        try:
            _strict_loads(s)
        except (ValueError, RecursionError):
            return None
        return s
    if t == "null":
        return "null" if s in ("null", "None") else None
    if t == "boolean":
        low = s.lower()
        return low if low in ("true", "false") else None
    if t == "integer":
        if _INTEGER.fullmatch(s):
            return str(int(s))
        return None
    if t == "number":
        if _JSON_NUMBER.fullmatch(s):
            return s
        try:
            f = float(s)
        except ValueError:
            return None
        return json.dumps(f) if f == f and f not in (float("inf"), float("-inf")) else None
    if t in ("array", "object"):
        want = list if t == "array" else dict
        try:
            v = _strict_loads(s)
        except (ValueError, RecursionError):
            try:
                v = literal_from_source(s)
            except NotALiteral:
                return None
            return json.dumps(v, ensure_ascii=False) if isinstance(v, want) else None
        return s if isinstance(v, want) else None
    return None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _strict_loads(s: str) -> Any:
    """``json.loads`` without ``NaN``/``Infinity``."""
    return json.loads(s, parse_constant=_reject_constant)


def _string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)
