"""Every Python code sample in README.md and docs/*.md runs as written.

The rules for a sample's info string (``no-run <reason>``, ``continues``,
``given=…``) and what the fake server answers are in ``tests/docs_support.py``.
A sample runs in this process with its file's line numbers, so a failure
points at the line of the doc; it fails when it raises, and when the final
event or message it leaves is an error or reports no usage.
"""

from __future__ import annotations

import ast
import linecache
from collections.abc import Iterator
from typing import Any

import pytest

from .docs_support import (
    DOCUMENTS,
    GIVEN,
    Context,
    DocsUpstream,
    Program,
    Sample,
    all_blocks,
    bind,
    blocks_of,
    classify,
    environment,
    failed_result,
    programs,
    rewrite_hosts,
)
from .gateway_support import ServerThread
from .support import REPO, needs_fixtures

pytestmark = pytest.mark.xdist_group("docs_examples")

SAMPLES = [s for s in (classify(b) for b in all_blocks()) if s is not None]
PROGRAMS = programs(SAMPLES)
NO_RUN = [s for s in SAMPLES if s.no_run is not None and s.problem is None]


@pytest.fixture(scope="module")
def fake() -> Iterator[str]:
    with ServerThread(DocsUpstream()) as server:
        yield server.url


@pytest.fixture
def sdk_env(fake: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The fake's URL, with the SDKs' variables pointing at it, in the
    repository's root (a sample reads ``gateway.toml`` from there)."""
    for name, value in environment(fake).items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(REPO)
    return fake


def test_every_block_is_classified() -> None:
    problems = [f"{s.block.where}: {s.problem}" for s in SAMPLES if s.problem is not None]
    assert problems == [], "blocks that cannot be classified:\n" + "\n".join(problems)


def test_the_docs_hold_samples_of_each_kind() -> None:
    """The collection found the docs and their samples: a count of zero
    would mean the parametrized tests below ran nothing."""
    assert len(DOCUMENTS) > 10
    assert len(PROGRAMS) >= 30
    assert NO_RUN, "no no-run block found: the info-string rule is not read"
    assert any(s.continues for s in SAMPLES) and any(s.given for s in SAMPLES)


def _execute(program: Program, ctx: Context) -> dict[str, Any]:
    names: dict[str, Any] = {"__name__": "__main__"}
    for sample in program.samples:
        names.update(bind(sample.given, ctx))
        source = "\n" * sample.block.line + rewrite_hosts(sample.block.text, ctx.base)
        lines = source.splitlines(keepends=True)
        linecache.cache[sample.block.where] = (len(source), None, lines, sample.block.where)
        exec(compile(source, sample.block.where, "exec"), names)
    return names


@needs_fixtures
@pytest.mark.parametrize("program", PROGRAMS, ids=[p.id for p in PROGRAMS])
def test_sample_runs(program: Program, sdk_env: str) -> None:
    with Context.open(sdk_env) as ctx:
        names = _execute(program, ctx)
    problem = failed_result(names)
    assert problem is None, f"{program.id}: {problem}"


@pytest.mark.parametrize("sample", NO_RUN, ids=[s.block.where for s in NO_RUN])
def test_no_run_sample_compiles(sample: Sample) -> None:
    """A sample not meant to run still parses (top-level ``await`` allowed:
    such a sample is the body of a coroutine)."""
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    compile("\n" * sample.block.line + sample.block.text, sample.block.where, "exec", flags)


# -- the rules themselves ------------------------------------------------------


def test_classification_rules(tmp_path: Any) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(
        "```python\nx = 1\n```\n\n"
        "```python continues given=url,response:anthropic-messages\ny = x\n```\n\n"
        "```python no-run: a fragment\nawait f()\n```\n\n"
        "```python no-run\nz\n```\n\n"
        "```python quietly\nz\n```\n\n"
        "```python given=nowhere\nz\n```\n\n"
        "```\nplain\n```\n\n"
        "```sh\nls\n```\n\n"
        "  ```python\n  indented = 1\n  ```\n\n"
        "```python\nunclosed\n"
    )
    samples = [classify(b) for b in blocks_of(doc)]
    kinds = [None if s is None else (s.no_run, s.continues, s.given, s.problem) for s in samples]
    assert kinds[0] == (None, False, (), None)
    assert kinds[1] == (None, True, ("url", "response:anthropic-messages"), None)
    assert kinds[2] == ("a fragment", False, (), None)
    assert kinds[3] is not None and kinds[3][3] == "no-run without a reason"
    assert kinds[4] is not None and "unknown word 'quietly'" in str(kinds[4][3])
    assert kinds[5] is not None and "nowhere" in str(kinds[5][3])
    assert kinds[6] is not None and "without a language" in str(kinds[6][3])
    assert kinds[7] is None
    assert samples[8] is not None and samples[8].block.text == "indented = 1\n"
    assert kinds[9] is not None and kinds[9][3] is not None
    chains = programs([s for s in samples if s is not None])
    assert [len(p.samples) for p in chains] == [1, 2, 1]


@needs_fixtures
def test_every_given_name_is_bound(sdk_env: str) -> None:
    """Each name of the table gives a value (a broken entry would fail only
    the samples that use it, far from its cause)."""
    with Context.open(sdk_env) as ctx:
        values = bind(tuple(GIVEN), ctx)
    assert set(values) == set(GIVEN)


@needs_fixtures
def test_the_fake_sends_chat_usage_only_when_asked(fake: str) -> None:
    """As OpenAI does: without ``stream_options.include_usage`` a Chat
    Completions stream carries no usage, so a sample that forgets to ask
    reports none and fails."""
    import httpx

    def usage_of(body: dict[str, Any]) -> int:
        with httpx.stream("POST", f"{fake}/v1/chat/completions", json=body) as response:
            from streamnorm import Done, normalize

            last = list(normalize(response.iter_bytes(), "openai-completions"))[-1]
        assert isinstance(last, Done)
        return last.message.usage.total_tokens

    base = {"model": "gpt-5", "messages": [], "stream": True}
    assert usage_of(base) == 0
    assert usage_of({**base, "stream_options": {"include_usage": True}}) > 0
