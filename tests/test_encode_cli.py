"""``streamnorm translate --to API``: the stream re-encoded for another API,
run as a user runs it (the console script in a subprocess)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from streamnorm import APIS, Error, encode_stream

from .support import FIXTURES, needs_fixtures, run_bytes, terminal
from .test_cli import cli, one_error_line

STREAMS = [
    "anthropic-messages/thinking-then-tool-use.sse",
    "openai-responses/reasoning-summary-text.sse",
    "openai-completions/deepseek-tool-call.sse",
    "google-generative-ai/function-call-partial-args.sse",
]


@needs_fixtures
@pytest.mark.parametrize("target", APIS)
@pytest.mark.parametrize("name", STREAMS)
def test_translate_writes_what_encode_stream_writes(name: str, target: str) -> None:
    path: Path = FIXTURES / name
    proc = cli("translate", "--to", target, str(path))
    assert proc.returncode == 0, proc.stderr
    events = run_bytes(path.read_bytes(), path.parent.name)
    assert proc.stdout == b"".join(encode_stream(events, target))
    back = terminal(run_bytes(proc.stdout, target)).message
    assert back.text == terminal(events).message.text


@needs_fixtures
def test_translate_reads_stdin_and_names_the_model() -> None:
    data = (FIXTURES / STREAMS[2]).read_bytes()
    proc = cli("translate", "--to", "gemini", "--as-model", "client-model", "-", stdin=data)
    assert proc.returncode == 0, proc.stderr
    first = json.loads(proc.stdout.split(b"\r\n")[0][len(b"data: ") :])
    assert first["modelVersion"] == "client-model"


@needs_fixtures
def test_an_error_stream_exits_1_after_the_targets_error_event() -> None:
    path = FIXTURES / "openai-responses/error-response-failed.sse"
    proc = cli("translate", "--to", "anthropic-messages", str(path))
    assert proc.returncode == 1
    assert b"event: error\n" in proc.stdout
    assert isinstance(terminal(run_bytes(proc.stdout, "anthropic-messages")), Error)
    assert "ended in an error" in one_error_line(proc)


@pytest.mark.parametrize("to", ["auto", "nonsense"])
def test_a_bad_target_is_a_usage_error(to: str) -> None:
    proc = cli("translate", "--to", to, "sample:anthropic")
    assert proc.returncode == 2
    assert "--to" in one_error_line(proc)
