"""Token counts: the providers' count requests and answers, and the local estimate."""

from __future__ import annotations

import csv
import json
import re
import statistics
from pathlib import Path
from typing import Any

import pytest

from streamnorm import (
    ImageBlock,
    ProviderTool,
    Request,
    TextBlock,
    Tool,
    UserMessage,
    WireRequest,
    count_request,
    count_tokens,
    decode_request,
    decode_response,
    estimate_tokens,
    normalize,
    read_count,
)

from .support import FIXTURES, needs_fixtures

WEATHER = Tool(
    "get_weather",
    "Weather of a city",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def _request(**kw: Any) -> Request:
    base: dict[str, Any] = {
        "model": "m-1",
        "messages": (UserMessage("What is the weather in Paris?"),),
        "system": "Be brief.",
        "tools": (WEATHER,),
        "max_tokens": 500,
        "temperature": 0.3,
    }
    return Request(**{**base, **kw})


def test_anthropic_count_request_keeps_only_what_count_tokens_takes() -> None:
    wire = count_request(_request(), "anthropic-messages")
    assert (wire.method, wire.path) == ("POST", "/v1/messages/count_tokens")
    assert wire.headers["anthropic-version"]
    assert set(wire.body) == {"model", "messages", "system", "tools"}
    assert wire.body["tools"][0]["name"] == "get_weather"


def test_responses_count_request_goes_to_input_tokens() -> None:
    wire = count_request(_request(), "openai-responses")
    assert wire.path == "/v1/responses/input_tokens"
    assert {"model", "input", "instructions", "tools"} <= set(wire.body)
    assert not {"stream", "max_output_tokens", "temperature", "store"} & set(wire.body)


def test_gemini_count_request_wraps_the_generate_request() -> None:
    wire = count_request(_request(model="gemini-2.5-flash"), "google-generative-ai")
    assert wire.path == "/v1beta/models/gemini-2.5-flash:countTokens"
    inner = wire.body["generateContentRequest"]
    assert inner["model"] == "models/gemini-2.5-flash"
    assert inner["contents"][0]["parts"][0]["text"] == "What is the weather in Paris?"
    assert inner["systemInstruction"]["parts"][0]["text"] == "Be brief."
    assert set(wire.body) == {"generateContentRequest"}


def test_chat_completions_has_no_count_endpoint() -> None:
    with pytest.raises(ValueError, match="no token count endpoint"):
        count_request(_request(), "openai-completions")


@pytest.mark.parametrize(
    ("api", "body"),
    [
        ("anthropic-messages", b'{"input_tokens":41}'),
        ("openai-responses", b'{"object":"response.input_tokens","input_tokens":41}'),
        ("google-generative-ai", b'{"totalTokens":41,"promptTokensDetails":[]}'),
    ],
)
def test_read_count_reads_each_answer(api: str, body: bytes) -> None:
    assert read_count(body, api) == 41


def test_read_count_refuses_an_error_body() -> None:
    error = {"type": "error", "error": {"type": "invalid_request_error", "message": "x"}}
    with pytest.raises(ValueError, match="input_tokens"):
        read_count(error, "anthropic-messages")


def test_count_tokens_asks_the_provider_when_given_a_transport() -> None:
    sent: list[WireRequest] = []

    def send(wire: WireRequest) -> bytes:
        sent.append(wire)
        return b'{"totalTokens":17}'

    count = count_tokens(_request(), "gemini", "gemini-2.5-pro", send=send)
    assert (count.input_tokens, count.exact, count.source) == (17, True, "google-generative-ai")
    assert sent[0].path == "/v1beta/models/gemini-2.5-pro:countTokens"


def test_count_tokens_estimates_offline_and_where_no_endpoint_exists() -> None:
    def send(wire: WireRequest) -> bytes:  # pragma: no cover - must not be called
        raise AssertionError(wire)

    offline = count_tokens(_request(), "anthropic-messages")
    chat = count_tokens(_request(), "openai-completions", send=send)
    assert (offline.exact, offline.source) == (False, "estimate")
    assert offline.input_tokens == estimate_tokens(_request(), "anthropic-messages")
    assert (chat.exact, chat.source) == (False, "estimate")


def test_estimate_grows_with_text_tools_and_images() -> None:
    short = estimate_tokens(_request(tools=()), "openai-responses")
    long = estimate_tokens(
        _request(tools=(), messages=(UserMessage("word " * 400),)), "openai-responses"
    )
    tooled = estimate_tokens(_request(), "openai-responses")
    image = ImageBlock("image/png", data="iVBORw0KGgo=")
    pictured = estimate_tokens(
        _request(tools=(), messages=(UserMessage((TextBlock("see"), image)),)),
        "openai-responses",
    )
    assert short < tooled < long
    assert 300 <= long - short <= 600  # 2,000 characters at four to five per token
    assert pictured - short >= 900  # an image counts as about 1,000 tokens
    search = ProviderTool("anthropic-messages", {"type": "web_search_20250305", "name": "w"})
    assert estimate_tokens(_request(tools=(search,)), "anthropic-messages") > short


# ---------------------------------------------------------------------------
# The estimate against the input tokens the recorded answers report


def _manifest(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def _interaction(row: dict[str, str]) -> tuple[str, str, int]:
    """(repository, cassette, interaction index) of one fixture's source."""
    source = row["source_path"]
    path, _, tail = source.partition("#")
    found = re.search(r"(\d+)$", tail) or re.search(
        r"interaction index (\d+)", row.get("what_it_covers", "")
    )
    return row["source_repo"], path, int(found[1]) if found else 0


def _reported_input(path: Path, api: str) -> int:
    """The input tokens an answer fixture reports (cache reads and writes included)."""
    data = path.read_bytes()
    if data.lstrip()[:1] == b"[":  # Gemini's streamed JSON array
        events = list(normalize([data], "google-generative-ai"))
        usage = events[-1].message.usage  # type: ignore[union-attr]
    else:
        usage = decode_response(data, api).usage
    return usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens


def _pairs() -> list[tuple[str, Request, int]]:
    """Each request fixture whose answer is recorded too: (name, request, tokens)."""
    answers: dict[tuple[str, str, int], Path] = {}
    for folder in ("responses", "extra-apis"):
        for row in _manifest(FIXTURES / folder / "MANIFEST.tsv"):
            answers.setdefault(_interaction(row), FIXTURES / folder / row["file"])
    pairs = []
    for row in _manifest(FIXTURES / "requests" / "MANIFEST.tsv"):
        answer = answers.get(_interaction(row))
        if answer is None:
            continue
        api = row["file"].split("/", 1)[0]
        body = json.loads((FIXTURES / "requests" / row["file"]).read_text(encoding="utf-8"))
        request = decode_request(body, api, path="/v1beta/models/m:generateContent")
        pairs.append((row["file"], request, _reported_input(answer, api)))
    return pairs


def _shows_its_input(request: Request) -> bool:
    """False for a request whose input the server adds to: a server tool's
    results, or a cached context named by id."""
    cached = any("cachedContent" in fields for fields in (request.extra or {}).values())
    return not cached and not any(isinstance(t, ProviderTool) for t in request.tools)


@needs_fixtures
def test_estimate_error_against_the_fixtures_reported_input_tokens() -> None:
    pairs = [p for p in _pairs() if _shows_its_input(p[1])]
    assert len(pairs) >= 4
    errors = []
    for name, request, reported in pairs:
        estimate = estimate_tokens(request, name.split("/", 1)[0])
        errors.append(abs(estimate - reported) / reported)
    # The figures docs/requests.md gives for these pairs ("Counting tokens").
    assert statistics.median(errors) <= 0.55
    assert max(errors) <= 0.75
