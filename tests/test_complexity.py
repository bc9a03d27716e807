"""Every function in the package is short enough to read at once: a
cyclomatic complexity of at most 25 and at most 80 lines. Counted here from
the syntax tree (the decisions radon counts: ``if``/``elif``, loops,
``except``, ``case``, conditional expressions, ``assert``, each
comprehension and its conditions, and each extra operand of ``and``/``or``)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "streamnorm"
MAX_COMPLEXITY = 25
MAX_LINES = 80

_DECISIONS = (
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.IfExp,
    ast.ExceptHandler,
    ast.match_case,
    ast.Assert,
)
Function = ast.FunctionDef | ast.AsyncFunctionDef


def complexity(function: Function) -> int:
    """1 + the decisions in ``function``, nested functions excluded."""
    count = 1
    stack: list[ast.AST] = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue  # counted on its own
        if isinstance(node, _DECISIONS):
            count += 1
        elif isinstance(node, ast.comprehension):
            count += 1 + len(node.ifs)
        elif isinstance(node, ast.BoolOp):
            count += len(node.values) - 1
        stack.extend(ast.iter_child_nodes(node))
    return count


def functions() -> Iterator[tuple[str, Function]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}", node


def test_the_count_sees_every_kind_of_decision() -> None:
    source = """
def f(x):
    if x and x > 1 or x < -1:
        pass
    elif x:
        pass
    for i in range(3):
        while i:
            i -= 1
    try:
        pass
    except ValueError:
        pass
    y = [i for i in range(3) if i if i > 1]
    z = 1 if x else 2
    assert x
    def inner():
        if x:
            pass
    match x:
        case 1:
            pass
"""
    function = ast.parse(source).body[0]
    assert isinstance(function, ast.FunctionDef)
    # 1 + if, and/or (2), elif, for, while, except, comprehension (1 + 2 ifs),
    # conditional expression, assert, case
    assert complexity(function) == 1 + 1 + 2 + 1 + 1 + 1 + 1 + 3 + 1 + 1 + 1


def test_no_function_is_too_complex_or_too_long() -> None:
    found = list(functions())
    assert len(found) > 500  # the whole package was read
    too_complex = [
        f"{name} ({complexity(f)})" for name, f in found if complexity(f) > MAX_COMPLEXITY
    ]
    too_long = [
        f"{name} ({f.end_lineno - f.lineno + 1} lines)"
        for name, f in found
        if f.end_lineno is not None and f.end_lineno - f.lineno + 1 > MAX_LINES
    ]
    assert not too_complex, too_complex
    assert not too_long, too_long
