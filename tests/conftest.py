"""Suite-wide settings: the few tests that take seconds each run first, and
the Python processes the tests start read compiled bytecode.

The suite runs on every core (``-n auto`` in pyproject.toml); the workers
take tests in collection order, so a long test collected last would keep one
worker busy while the others have finished. Starting with the longest ones
(longest first, the rest in their usual order) lets the short tests fill in
around them. The order changes nothing a test checks: none depends on
another having run.

Many tests run the ``streamnorm`` command (and the gateway) in a subprocess,
as a user does. Where ``PYTHONDONTWRITEBYTECODE`` is set, each of those
processes would compile the package from source again (a third of its start
time); instead they share bytecode written to a temporary folder outside the
repository (``PYTHONPYCACHEPREFIX``), removed at the end of the run.

A failing test's report is built with the cyclic garbage collector paused.
Formatting the failure parses the test's source (``ast.parse``); on CPython
3.11 a collection that runs inside that parse and finalizes an object whose
``__del__`` raises (the openai SDK's client when its constructor failed)
re-enters the parser from the unraisable-exception hook, and the outer parse
fails with ``SystemError: AST constructor recursion depth mismatch``
(CPython gh-106905, pytest #10763): an internal error that ends the whole
run. The garbage is collected once the report is made, outside the parser.
"""

from __future__ import annotations

import gc
import os
import shutil
import tempfile
from collections.abc import Generator

import pytest

#: Node id prefixes of the tests that take a second or more, longest first
#: (measured on a 2-core machine). ``test_static`` runs ``mypy --strict`` over
#: the whole tree, 20 s or more with an empty mypy cache.
LONGEST_FIRST = (
    "tests/test_static.py::",
    "tests/test_entry_points.py::test_a_type_checker_catches_typos_at_the_front_door",
    "tests/test_robustness.py::test_fuzz_seeded_bulk",
    "tests/test_limits.py::test_one_huge_chunk_of_short_data_lines_stops_at_the_limit",
    "tests/test_robustness.py::test_fuzz_hypothesis",
    "tests/test_limits.py::test_a_100mb_valid_stream_costs_about_its_final_message",
    "tests/test_encode_properties.py::test_any_message_reaches_every_sdk",
    "tests/test_sse.py::test_one_huge_chunk_of_short_data_lines_is_read_in_bounded_memory",
    "tests/test_sanitize_growth.py::",
    "tests/test_limits.py::test_one_huge_block_costs_twice_its_text",
    "tests/test_partial_json.py::test_prefixes_are_monotone",
    "tests/test_encode_json_prefix.py::test_every_prefix_of_a_json_object_is_valid_and_closes",
    "tests/test_partial_json.py::test_final_arguments_adversarial",
)


def _rank(item: pytest.Item) -> int:
    for rank, prefix in enumerate(LONGEST_FIRST):
        if item.nodeid.startswith(prefix):
            return rank
    return len(LONGEST_FIRST)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Move the longest tests to the front; ``sort`` is stable, so every
    other test keeps its place relative to the rest."""
    items.sort(key=_rank)


def pytest_configure(config: pytest.Config) -> None:
    """Give the subprocesses of the run (the xdist workers included, which
    start after this) one bytecode cache outside the repository."""
    if not os.environ.get("PYTHONDONTWRITEBYTECODE") or os.environ.get("PYTHONPYCACHEPREFIX"):
        return  # bytecode is written beside the sources, or a cache is set
    prefix = tempfile.mkdtemp(prefix="streamnorm-tests-pycache-")
    os.environ["PYTHONPYCACHEPREFIX"] = prefix
    del os.environ["PYTHONDONTWRITEBYTECODE"]
    config.add_cleanup(lambda: shutil.rmtree(prefix, ignore_errors=True))


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport() -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Build each report with the cyclic collector paused (see the module
    docstring): no finalizer runs inside the parse of a failure's source."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return (yield)
    finally:
        if was_enabled:
            gc.enable()
