"""``streamnorm normalize`` reads a non-streaming JSON response (detected, or
under ``--api``) as the events its streaming form gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from streamnorm import decode_response, detect_response_api
from streamnorm.codec import response_events

from .support import FIXTURES, needs_fixtures
from .test_cli import cli

RESPONSES = sorted((FIXTURES / "responses").glob("*/*.json")) if FIXTURES.is_dir() else []


def _answers() -> list[Path]:
    """The recorded answers (error bodies aside), a few per api."""
    by_api: dict[str, list[Path]] = {}
    for path in RESPONSES:
        if "error" not in path.name:
            by_api.setdefault(path.parent.name, []).append(path)
    return [p for paths in by_api.values() for p in paths[:3]]


@needs_fixtures
@pytest.mark.parametrize("path", _answers(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_final_message_is_decode_response(path: Path) -> None:
    api = path.parent.name
    body = path.read_bytes()
    assert detect_response_api(body) == api
    expected = decode_response(body, api).to_dict()
    for args in (("normalize", "--final", str(path)), ("normalize", "--final", "--api", api, "-")):
        stdin = body if args[-1] == "-" else None
        proc = cli(*args, stdin=stdin)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout) == json.loads(json.dumps(expected))


@needs_fixtures
def test_events_are_those_of_the_streaming_form() -> None:
    path = _answers()[0]
    api = path.parent.name
    proc = cli("normalize", str(path))
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    expected = [e.to_dict() for e in response_events(path.read_bytes(), api)]
    assert lines == json.loads(json.dumps(expected))
    assert lines[0]["type"] == "start" and lines[-1]["type"] == "done"


@needs_fixtures
def test_an_error_body_exits_1_with_the_error_line() -> None:
    path = next(p for p in RESPONSES if "error" in p.name)
    proc = cli("normalize", "--final", str(path))
    assert proc.returncode == 1
    assert proc.stderr.decode().startswith("streamnorm: error:")


def test_a_json_body_that_is_no_response_is_read_as_a_stream() -> None:
    proc = cli("normalize", "--final", "-", stdin=b'{"hello": "world"}')
    assert proc.returncode == 1
    assert b"protocol" in proc.stderr
