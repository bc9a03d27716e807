"""The command line's first errors: a target it cannot write, the gateway's
missing configuration and busy port, and a table wider than the terminal."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from .support import REPO
from .test_cli import cli, one_error_line


@pytest.mark.parametrize("to", ["ollama", "bedrock", "cohere-chat", "bedrock-invoke-stream"])
def test_translate_to_a_read_only_api_is_a_usage_error(to: str) -> None:
    proc = cli("translate", "--to", to, "sample:anthropic")
    assert proc.returncode == 2
    line = one_error_line(proc)
    assert "--to" in line
    assert "does not write them" in line
    assert "anthropic-messages, openai-responses" in line


def test_translate_help_offers_only_the_four_apis() -> None:
    out = "".join(cli("translate", "--help").stdout.decode().split())  # argparse wraps at "-"
    to = out.split("--toAPItheapitowrite", 1)[1].split("--as-model", 1)[0]
    assert "anthropic-messages,openai-responses,openai-completions,google-generative-ai" in to
    assert "ollama" not in to
    assert "cohere" not in to


def test_serve_with_a_missing_config_says_so_in_words(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.toml"
    proc = cli("serve", "--config", str(missing), "--port", "1")
    assert proc.returncode == 2
    line = one_error_line(proc)
    assert "no such file" in line
    assert "Errno" not in line


def test_serve_on_a_busy_port_is_a_usage_error() -> None:
    pytest.importorskip("uvicorn")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = cli("serve", "--config", str(REPO / "gateway.toml"), "--port", str(port))
    assert proc.returncode == 2
    assert f"127.0.0.1:{port}: the port is already in use" in proc.stderr.decode()
    assert "Traceback" not in proc.stderr.decode()


def test_inspect_table_fits_the_terminal_width() -> None:
    wide = cli("inspect", "sample:anthropic", "sample:openai-responses")
    assert max(len(line) for line in wide.stdout.decode().splitlines()) > 100
    proc = cli("inspect", "sample:anthropic", "sample:openai-responses", env={"COLUMNS": "100"})
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.decode().splitlines()
    assert len(lines) == 4
    assert all(len(line) <= 100 for line in lines), lines
    assert "sample:anthropic" in lines[2] or "…" in lines[2]
