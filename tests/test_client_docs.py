"""The ``Client`` samples of the README, docs/client.md and docs/requests.md
run as written, against a fake Anthropic host on 127.0.0.1 reached through
the environment (``ANTHROPIC_BASE_URL``, ``ANTHROPIC_API_KEY``)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from .client_support import ScriptedServer, Step

ROOT = Path(__file__).resolve().parent.parent


def _block(doc: str, heading: str) -> str:
    """The first Python block after ``heading`` in ``doc``."""
    text = (ROOT / doc).read_text(encoding="utf-8")
    start = text.index(heading) if heading else 0
    match = re.search(r"```python\n(.*?)```", text[start:], re.S)
    assert match, f"no python block after {heading!r} in {doc}"
    return match.group(1)


@pytest.mark.parametrize(
    ("doc", "heading"),
    [
        ("README.md", "## Quick start"),
        ("docs/client.md", ""),
        ("docs/requests.md", "## An agent loop across providers"),
    ],
)
def test_client_sample_runs(doc: str, heading: str, monkeypatch: pytest.MonkeyPatch) -> None:
    code = _block(doc, heading)
    assert "Client(" in code
    with ScriptedServer([Step()]) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-docs")
        scope: dict[str, Any] = {}
        exec(compile(code, f"{doc}:sample", "exec"), scope)
    assert server.seen and server.seen[0].path == "/v1/messages"
    assert scope["message"].content[0].text == "Hi"
