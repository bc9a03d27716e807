"""The code is typed, linted and formatted: ``mypy --strict`` (over the
``files`` that pyproject.toml names: the package and its tests), ``ruff
check`` and ``ruff format --check`` report nothing.

They run as tests so that the README's one test command, which CI runs,
holds every change to that. The versions of both tools are bounded in the
``dev`` extra, so a new release cannot fail a run that changed nothing.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys

import pytest

from .support import REPO, mypy_cache_held

#: One worker runs these and the type check of tests/test_entry_points.py, one
#: after the other: both mypy runs share the repository's mypy cache (and
#: take turns on it, `mypy_cache_held`, wherever they run).
pytestmark = pytest.mark.xdist_group("mypy-cache")


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    with mypy_cache_held() if command[0] == "mypy" else contextlib.nullcontext():
        return subprocess.run(
            [sys.executable, "-m", *command], cwd=REPO, capture_output=True, text=True, check=False
        )


@pytest.mark.parametrize(
    "command",
    [("mypy", "--strict"), ("ruff", "check", "."), ("ruff", "format", "--check", ".")],
    ids=["mypy-strict", "ruff-check", "ruff-format"],
)
def test_tool_reports_nothing(command: tuple[str, ...]) -> None:
    result = _run(*command)
    assert result.returncode == 0, result.stdout + result.stderr
