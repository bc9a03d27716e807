"""JSON Schema for a tool from a Python function: its signature gives the
parameters and their types, its docstring the descriptions
(``Tool.from_function``; docs/client.md).

Types map as JSON Schema has them: ``str``, ``int``, ``float``, ``bool``,
``None``, ``list[X]`` / ``tuple[X, ...]``, ``dict[str, X]``, ``Literal[...]``
(an ``enum``), ``X | None`` (not required when it has a default), a
``TypedDict`` or a dataclass (an object). A parameter without a default is
required. The docstring's first paragraph describes the tool; an ``Args:``
section (Google style) or ``:param name:`` lines describe the parameters.
A type with no JSON Schema (a class of its own) raises ``TypeError``
naming the parameter, rather than being sent as a schema that accepts
anything.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

__all__ = ["function_schema"]

_SIMPLE: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
    Any: {},
}
_ARG_LINE = re.compile(r"^\s*(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_PARAM_LINE = re.compile(r"^\s*:param\s+(?:\w+\s+)?(\w+)\s*:\s*(.*)$")


def _schema(tp: Any, where: str) -> dict[str, Any]:
    if tp in _SIMPLE:
        return dict(_SIMPLE[tp])
    origin, args = get_origin(tp), get_args(tp)
    if origin is Literal:
        return {"enum": list(args)}
    if origin in (Union, types.UnionType):
        options = [_schema(a, where) for a in args if a is not type(None)]
        nullable = type(None) in args
        one = options[0] if len(options) == 1 else {"anyOf": options}
        return {"anyOf": [one, {"type": "null"}]} if nullable else one
    if origin in (list, tuple, set, frozenset) or tp in (list, tuple, set):
        items = [a for a in args if a is not Ellipsis]
        return {"type": "array", **({"items": _schema(items[0], where)} if items else {})}
    if origin is dict or tp is dict:
        return {
            "type": "object",
            **({"additionalProperties": _schema(args[1], where)} if args else {}),
        }
    if typing.is_typeddict(tp) or dataclasses.is_dataclass(tp):
        return _object(get_type_hints(tp), _required_fields(tp), {}, where)
    raise TypeError(f"{where}: {tp!r} has no JSON Schema; use str, int, float, bool, list, dict …")


def _required_fields(tp: Any) -> set[str]:
    if dataclasses.is_dataclass(tp):
        return {
            f.name
            for f in dataclasses.fields(tp)
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        }
    return set(getattr(tp, "__required_keys__", ()))


def _object(
    hints: dict[str, Any], required: set[str], docs: dict[str, str], where: str
) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for name, tp in hints.items():
        prop = _schema(tp, f"{where}.{name}")
        if name in docs:
            prop["description"] = docs[name]
        properties[name] = prop
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        out["required"] = [n for n in hints if n in required]
    return out


def _docs(doc: str) -> tuple[str, dict[str, str]]:
    """The description (first paragraph) and each parameter's words."""
    text = inspect.cleandoc(doc or "")
    description = text.split("\n\n", 1)[0].strip()
    params: dict[str, str] = {}
    in_args = False
    for line in text.splitlines():
        match = _PARAM_LINE.match(line)
        if match:
            params[match.group(1)] = match.group(2).strip()
            continue
        if line.strip() in ("Args:", "Arguments:", "Parameters:"):
            in_args = True
            continue
        if in_args:
            arg = _ARG_LINE.match(line)
            if arg and line.startswith((" ", "\t")):
                params[arg.group(1).lstrip("*")] = arg.group(2).strip()
            elif line.strip() and not line.startswith((" ", "\t")):
                in_args = False
    if description.startswith((":param", "Args:")):
        description = ""
    return description, params


def function_schema(fn: Callable[..., Any]) -> tuple[str, str, dict[str, Any]]:
    """``(name, description, parameters)`` of ``fn``."""
    signature = inspect.signature(fn)
    hints = get_type_hints(fn)
    description, docs = _docs(fn.__doc__ or "")
    params = {
        name: hints.get(name, Any)
        for name, p in signature.parameters.items()
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and name not in ("self", "cls")
    }
    required = {n for n in params if signature.parameters[n].default is inspect.Parameter.empty}
    return fn.__name__, description, _object(params, required, docs, fn.__name__)
