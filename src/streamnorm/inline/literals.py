"""Python literals as JSON values, without ``eval``.

Python-style dialects (``[f(a=1)]``, Llama built-ins) and XML values typed as
objects or arrays are read with :mod:`ast`; this module turns the literal
nodes into JSON-ready values. Only literals are accepted: constants, lists,
tuples, dicts, signed numbers, and the names ``True``/``False``/``None`` and
their JSON spellings ``true``/``false``/``null``. Anything else (a call, a
variable, an operator) is rejected, never evaluated.
"""

from __future__ import annotations

import ast
import math
from typing import Any

__all__ = ["NotALiteral", "literal_from_node", "literal_from_source"]


class NotALiteral(ValueError):
    """The node is not a literal that has a JSON form."""


_NAMES: dict[str, Any] = {
    "True": True,
    "False": False,
    "None": None,
    "true": True,
    "false": False,
    "null": None,
}


def literal_from_node(node: ast.AST) -> Any:
    """The JSON-ready value of a literal node; raises :class:`NotALiteral`.

    Iterative over an explicit stack, so nesting depth is not limited by
    Python's recursion limit. Cost: O(nodes).
    """
    # Each work item is (node, setter); containers are built bottom-up.
    root: list[Any] = [None]
    stack: list[tuple[ast.AST, list[Any] | dict[Any, Any], Any]] = [(node, root, 0)]
    while stack:
        n, parent, slot = stack.pop()
        value: Any
        if isinstance(n, ast.Constant):
            value = n.value
            if isinstance(value, (bytes, complex)) or value is Ellipsis:
                raise NotALiteral(f"{type(value).__name__} has no JSON form")
            if isinstance(value, float) and not math.isfinite(value):
                raise NotALiteral("non-finite number")
        elif isinstance(n, ast.Name):
            if n.id not in _NAMES:
                raise NotALiteral(f"name {n.id!r} is not a literal")
            value = _NAMES[n.id]
        elif isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd)):
            operand = n.operand
            if not (
                isinstance(operand, ast.Constant)
                and isinstance(operand.value, (int, float))
                and not isinstance(operand.value, bool)
            ):
                raise NotALiteral("sign applied to a non-number")
            value = -operand.value if isinstance(n.op, ast.USub) else operand.value
        elif isinstance(n, (ast.List, ast.Tuple)):
            items: list[Any] = [None] * len(n.elts)
            for k, elt in enumerate(n.elts):
                stack.append((elt, items, k))
            value = items
        elif isinstance(n, ast.Dict):
            if any(k is None for k in n.keys):
                raise NotALiteral("dict unpacking")
            keys: list[Any] = [None] * len(n.keys)
            vals: list[Any] = [None] * len(n.values)
            for k, (kn, vn) in enumerate(zip(n.keys, n.values, strict=True)):
                assert kn is not None
                stack.append((kn, keys, k))
                stack.append((vn, vals, k))
            value = _PendingDict(keys, vals)
        else:
            raise NotALiteral(f"{type(n).__name__} is not a literal")
        parent[slot] = value
    return _resolve(root[0])


class _PendingDict:
    """A dict whose keys and values are filled in after it is created."""

    __slots__ = ("keys", "values")

    def __init__(self, keys: list[Any], values: list[Any]) -> None:
        self.keys = keys
        self.values = values


def _resolve(value: Any) -> Any:
    """Replace every :class:`_PendingDict` by a real dict, keeping key order."""
    if not isinstance(value, (list, _PendingDict)):
        return value
    out: list[Any] = [None]
    stack: list[tuple[Any, list[Any] | dict[Any, Any], Any]] = [(value, out, 0)]
    while stack:
        v, parent, slot = stack.pop()
        if isinstance(v, _PendingDict):
            d: dict[Any, Any] = {}
            for k, item in zip(v.keys, v.values, strict=True):
                if not isinstance(k, (str, int, float, bool)) and k is not None:
                    raise NotALiteral("dict key has no JSON form")
                d[k] = None
                stack.append((item, d, k))
            parent[slot] = d
        elif isinstance(v, list):
            items: list[Any] = list(v)
            for k, item in enumerate(v):
                stack.append((item, items, k))
            parent[slot] = items
        else:
            parent[slot] = v
    return out[0]


def literal_from_source(src: str) -> Any:
    """The JSON-ready value of a Python (or JSON) literal written as ``src``.

    Raises :class:`NotALiteral` when ``src`` is not a single literal
    expression.
    """
    try:
        tree = ast.parse(src.strip(), mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError) as e:
        raise NotALiteral(str(e)) from None
    return literal_from_node(tree.body)
