"""End to end: the real client programs through ``streamnorm serve`` to a
scripted upstream of every API (tests/e2e/harness.py says what a cell checks).

Claude Code, Codex CLI and Gemini CLI (``claude -p``, ``codex exec``,
``gemini -p``), the Vercel AI SDK providers, the OpenAI Agents SDK, LangChain,
pydantic-ai and litellm as a library, each against an Anthropic Messages,
Responses, Chat Completions and Gemini upstream, streaming and not where the
client allows. The clients come from ``tests/e2e/node/package-lock.json``
(``npm ci --prefix tests/e2e/node``) and the ``e2e`` extra; without them the
cells are skipped, unless ``STREAMNORM_E2E=1`` (set by ``.ci/run``) makes
that a failure. Each cell's time is in the terminal summary.

A cell expected to fail would carry a strict xfail naming its cause
(``EXPECTED_FAILURES``); when the cause is fixed the cell passes and the mark
must go.
"""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Callable, Iterator

import pytest

from .harness import NODE_BIN, Run, Stack, running_stack
from .matrix import CELLS, Cell
from .runners import run_batch, run_cli_cell, verdict_of

pytestmark = pytest.mark.xdist_group("e2e")

PYTHON_CLIENTS = (
    "agents",
    "langchain_openai",
    "langchain_anthropic",
    "langchain_google_genai",
    "pydantic_ai",
    "litellm",
)
NODE_CLIENTS = ("claude", "codex", "gemini")

#: Cells expected to fail: a cell-name pattern (the whole name) and the reason,
#: each a strict xfail that must go when its cause is fixed. None today.
EXPECTED_FAILURES: tuple[tuple[str, str], ...] = ()


def _missing_clients() -> list[str]:
    missing = [name for name in NODE_CLIENTS if not (NODE_BIN / name).exists()]
    missing += [name for name in PYTHON_CLIENTS if importlib.util.find_spec(name) is None]
    return missing


class Matrix:
    """The running stack and the batch results, computed once per session."""

    def __init__(self, stack: Stack) -> None:
        self.stack = stack
        self.batches: dict[str, dict[str, Run]] = {}

    def run(self, cell: Cell) -> Run:
        runner = cell.client.runner
        if runner == "cli":
            return run_cli_cell(self.stack, cell)
        if runner not in self.batches:
            cells = [c for c in CELLS if c.client.runner == runner]
            self.batches[runner] = run_batch(self.stack, runner, cells)
        return self.batches[runner][cell.name]


@pytest.fixture(scope="session")
def matrix() -> Iterator[Matrix]:
    missing = _missing_clients()
    if missing:
        message = (
            f"the e2e clients are not installed ({', '.join(missing)}): "
            "npm ci --prefix tests/e2e/node && pip install -e '.[e2e]' -c constraints.txt"
        )
        if os.environ.get("STREAMNORM_E2E") == "1":
            pytest.fail(message)
        pytest.skip(message)
    with running_stack() as stack:
        yield Matrix(stack)


def _param(cell: Cell) -> object:
    reasons = [reason for pattern, reason in EXPECTED_FAILURES if re.fullmatch(pattern, cell.name)]
    marks = [pytest.mark.xfail(strict=True, reason=" / ".join(reasons))] if reasons else []
    return pytest.param(cell, id=cell.name, marks=marks)


@pytest.mark.parametrize("cell", [_param(cell) for cell in CELLS])
def test_cell(cell: Cell, matrix: Matrix, record_property: Callable[[str, object], None]) -> None:
    run = matrix.run(cell)
    verdict = verdict_of(matrix.stack, cell, run)
    record_property("e2e_seconds", round(verdict.seconds, 2))
    record_property("e2e_state", verdict.state)
    assert not verdict.problems, verdict.report()
