"""Running the cells: the agent CLIs one process per cell, the AI SDK and the
Python frameworks one process per kind for all their cells (their imports
cost seconds; each cell is still named to the upstream before it runs and
timed on its own)."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from .agent_clis import AGENT_CLIS
from .harness import CLIENT_KEY, HERE, NODE_DIR, Run, Stack, Verdict, base_env, judge, run_process
from .matrix import Cell

RESULT_PREFIX = "E2E-CELL "
#: Seconds a whole batch (every AI SDK or every Python cell) may take.
BATCH_TIMEOUT = 600


def run_cli_cell(stack: Stack, cell: Cell) -> Run:
    """One agent CLI run in a fresh HOME and working directory."""
    launch, _ = AGENT_CLIS[cell.client.framework]
    stack.upstream.cell = cell.name
    home = Path(tempfile.mkdtemp(prefix=cell.name + "-", dir=stack.workdir))
    command, env = launch(stack.gateways[cell.upstream].url, home)
    return run_process(command, env, home)


def _batch_spec(stack: Stack, cell: Cell) -> dict[str, object]:
    return {
        "cell": cell.name,
        "framework": cell.client.framework,
        "provider": cell.client.mode,
        "mode": cell.client.mode,
        "stream": cell.stream,
        "gateway": stack.gateways[cell.upstream].url,
    }


def run_batch(stack: Stack, runner: str, cells: list[Cell]) -> dict[str, Run]:
    """Every cell of one runner kind in one process; a cell with no result
    line (the process died or hung) gets the process's output as its run."""
    plan = json.dumps(
        {"control": stack.upstream.base_url, "cells": [_batch_spec(stack, c) for c in cells]}
    )
    home = Path(tempfile.mkdtemp(prefix=runner + "-", dir=stack.workdir))
    env = base_env(home)
    env["STREAMNORM_GATEWAY_KEY"] = CLIENT_KEY
    if runner == "aisdk":
        command = ["node", str(NODE_DIR / "aisdk.mjs"), plan]
    else:
        command = [sys.executable, str(HERE / "py_clients.py"), plan]
    done = run_process(command, env, HERE, timeout=BATCH_TIMEOUT)
    runs: dict[str, Run] = {}
    for line in done.output.splitlines():
        if line.startswith(RESULT_PREFIX):
            result = json.loads(line[len(RESULT_PREFIX) :])
            runs[result["cell"]] = Run(
                result["exit"], result["output"], result["error"], result["seconds"]
            )
    missing = Run(-1, done.output[-2000:], f"no result line; {done.stderr[-2000:]}", 0.0)
    return {c.name: runs.get(c.name, missing) for c in cells}


def verdict_of(stack: Stack, cell: Cell, run: Run) -> Verdict:
    exchanges = stack.upstream.of_cell(cell.name)
    return judge(cell.name, run, exchanges, cell.upstream, cell.client.returns_state)
