"""A selected choice (Chat Completions ``n > 1``) or candidate (Gemini) that
never appears ends the stream with an error naming the ones that did, never
with an empty ``Done``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from streamnorm import Done, Error, TextBlock, normalize

from .support import FIXTURES, needs_fixtures
from .test_cli import cli


def _sse(chunks: list[dict[str, Any]], newline: str = "\n") -> bytes:
    end = (newline * 2).encode()
    return b"".join(b"data: " + json.dumps(c).encode() + end for c in chunks)


def _completions(n: int) -> bytes:
    chunks = [
        {"id": "c", "model": "m", "choices": [{"index": i, "delta": {"content": f"hi{i}"}}]}
        for i in range(n)
    ]
    chunks += [
        {"id": "c", "model": "m", "choices": [{"index": i, "delta": {}, "finish_reason": "stop"}]}
        for i in range(n)
    ]
    return _sse(chunks) + b"data: [DONE]\n\n"


@pytest.mark.parametrize("choice", [0, 1, 2])
def test_a_choice_that_appears_is_read(choice: int) -> None:
    end = list(normalize([_completions(3)], api="openai-completions", choice=choice))[-1]
    assert isinstance(end, Done) and end.content == (TextBlock(f"hi{choice}"),)


@pytest.mark.parametrize("eof", [True, False])
def test_a_choice_that_never_appears_is_a_protocol_error(eof: bool) -> None:
    data = _completions(3)
    if eof:
        data = data.removesuffix(b"data: [DONE]\n\n")  # ends after the finish reasons
    end = list(normalize([data], api="openai-completions", choice=5))[-1]
    assert isinstance(end, Error) and end.kind == "protocol"
    assert end.reason == "choice 5 never appeared; the stream had choices: 0, 1, 2"
    assert end.message.content == ()


def test_a_gemini_candidate_that_never_appears_is_a_protocol_error() -> None:
    chunks = [
        {
            "candidates": [
                {"index": i, "content": {"parts": [{"text": "x"}]}, "finishReason": "STOP"}
            ]
        }
        for i in range(2)
    ]
    data = _sse(chunks, "\r\n")
    assert isinstance(list(normalize([data], api="google", choice=1))[-1], Done)
    end = list(normalize([data], api="google", choice=4))[-1]
    assert isinstance(end, Error) and end.kind == "protocol"
    assert end.reason == "candidate 4 never appeared; the stream had candidates: 0, 1"


@needs_fixtures
def test_the_cli_reports_a_missing_choice_and_exits_1() -> None:
    path = FIXTURES / "openai-completions" / "openai-multiple-choices-n3.sse"
    proc = cli("normalize", "--final", "--choice", "5", str(path))
    assert proc.returncode == 1
    assert b"choice 5 never appeared; the stream had choices: 0, 1, 2" in proc.stderr + proc.stdout
