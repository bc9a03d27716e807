"""``openai-completions`` (providers.md §3): recorded fixtures, §9.3 edge
cases, chunk-boundary invariance and truncation."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from typing import Any

import pytest

from streamnorm import (
    BlockEnd,
    Done,
    Error,
    Event,
    NormalizationError,
    PromptProgress,
    ProviderBlock,
    Start,
    StopReason,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCallBlock,
    ToolCallDelta,
    UsageUpdate,
)
from streamnorm.apis import ApiName
from streamnorm.messages import AssistantMessage

from .support import (
    fixture_id,
    fixture_paths,
    load,
    needs_fixtures,
    run_bytes,
    terminal,
)

API: ApiName = "openai-completions"
PATHS = fixture_paths(API)
IDS = [fixture_id(p) for p in PATHS]


def fx(name: str) -> bytes:
    return load(f"{API}/{name}.sse")


def finish(name: str, **options: Any) -> Done | Error:
    return terminal(run_bytes(fx(name), **options))


def sse(*payloads: Any, done: bool = True) -> bytes:
    """A stream of ``data:`` events; dicts are JSON-encoded, strings sent raw."""
    out = []
    for p in payloads:
        data = p if isinstance(p, str) else json.dumps(p)
        out.append(f"data: {data}\n\n")
    if done:
        out.append("data: [DONE]\n\n")
    return "".join(out).encode()


def chunk(
    delta: dict[str, Any] | None = None, finish: str | None = None, **top: Any
) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "delta": delta or {}, "finish_reason": finish}
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [choice],
        **top,
    }


def tc(
    index: int | None = None, id: str | None = None, name: str | None = None, args: Any = None
) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "function", "function": {}}
    if index is not None:
        entry["index"] = index
    if id is not None:
        entry["id"] = id
    if name is not None:
        entry["function"]["name"] = name
    if args is not None:
        entry["function"]["arguments"] = args
    return entry


def diags(events: list[Event]) -> list[str]:
    return [e.kind for e in events if isinstance(e, NormalizationError)]


def blocks(message: AssistantMessage, kind: type) -> list[Any]:
    return [b for b in message.content if isinstance(b, kind)]


def thinking(message: AssistantMessage) -> str:
    return "".join(b.thinking for b in blocks(message, ThinkingBlock))


def refusal(message: AssistantMessage) -> str:
    return "".join(b.text for b in blocks(message, TextBlock) if b.refusal)


# ---------------------------------------------------------------------------
# Every fixture: exactly one terminal event, the one the provider sent.

#: fixture → (terminal, stop_reason or Error.kind, raw_stop_reason, Error.code,
#: the NormalizationError kinds the stream must produce). Read from the bytes:
#: the last finish_reason of choice 0, whether an error chunk / ``event: error``
#: arrived, and what §3.4 says about content after a finish.
EXPECTED: dict[str, tuple[type, str, str | None, str | None, set[str]]] = {
    "alibaba-qwen-tool-call": (Done, "tool_use", "tool_calls", None, set()),
    "anthropic-openai-compat-tool-call": (Done, "tool_use", "tool_calls", None, set()),
    "azure-content-filter-results": (Done, "stop", "stop", None, set()),
    "cerebras-structured-tool": (Done, "tool_use", "tool_calls", None, {"content_after_finish"}),
    "crusoe-text-usage": (Done, "stop", "stop", None, set()),
    "deepseek-reasoning-content": (Done, "stop", "stop", None, set()),
    "deepseek-tool-call": (Done, "tool_use", "tool_calls", None, set()),
    "groq-browser-search-executed-tools": (Done, "stop", "stop", None, set()),
    "groq-reasoning-tool-use-failed-error": (Error, "upstream", None, "tool_use_failed", set()),
    "groq-text-x-groq-usage": (Done, "stop", "stop", None, set()),
    "groq-tool-call": (Done, "tool_use", "tool_calls", None, set()),
    "huggingface-router-novita": (Done, "stop", "stop", None, set()),
    "mistral-magistral-thinking-content-array": (Done, "stop", "stop", None, set()),
    "mistral-text": (Done, "stop", "stop", None, set()),
    "mistral-tool-calls-parallel": (Done, "tool_use", "tool_calls", None, set()),
    "moonshot-kimi-text": (Done, "stop", "stop", None, set()),
    "openai-content-logprobs": (Done, "stop", "stop", None, set()),
    "openai-finish-length": (Done, "length", "length", None, set()),
    "openai-multiple-choices-n3": (Done, "stop", "stop", None, set()),
    "openai-refusal-logprobs": (Done, "stop", "stop", None, set()),
    "openai-refusal": (Done, "stop", "stop", None, set()),
    "openai-text-include-usage": (Done, "stop", "stop", None, set()),
    "openai-tool-call": (Done, "tool_use", "tool_calls", None, set()),
    "openai-tool-calls-parallel": (Done, "tool_use", "tool_calls", None, set()),
    "openrouter-midstream-error": (Error, "upstream", "length", "400", set()),
    "openrouter-reasoning-details": (Done, "stop", "stop", None, set()),
    "openrouter-web-search-annotations": (Done, "stop", "stop", None, set()),
    "perplexity-citations": (Done, "stop", "stop", None, set()),
    "together-text": (Done, "stop", "stop", None, set()),
    "vllm-text-finish-length": (Done, "length", "length", None, set()),
    "xai-text": (Done, "stop", "stop", None, set()),
    "xai-tool-call": (Done, "tool_use", "tool_calls", None, set()),
    "zai-glm-reasoning-content": (Done, "stop", "stop", None, set()),
}


@needs_fixtures
def test_expectation_table_covers_every_fixture() -> None:
    assert {p.stem for p in PATHS} == set(EXPECTED)


@needs_fixtures
@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_fixture_terminal(path: Path) -> None:
    kind, reason, raw, code, expected_diags = EXPECTED[path.stem]
    for api in (API, "auto"):
        events = run_bytes(path.read_bytes(), api)
        end = terminal(events)
        assert type(end) is kind
        assert isinstance(events[0], Start) and events[0].api == API
        assert set(diags(events)) == expected_diags
        if isinstance(end, Done):
            assert end.stop_reason.value == reason
        else:
            assert (end.kind, end.code) == (reason, code)
            assert end.message.stop_reason is StopReason.ERROR
        assert end.message.raw_stop_reason == raw
        # Every block ends exactly once, in index order, before the terminal.
        ends = [e.index for e in events if isinstance(e, BlockEnd)]
        assert ends == list(range(len(end.message.content)))
        assert [e.block for e in events if isinstance(e, BlockEnd)] == list(end.message.content)
        # The deltas add up to the final blocks.
        for index, block in enumerate(end.message.content):
            if isinstance(block, TextBlock):
                text = "".join(
                    e.delta for e in events if isinstance(e, TextDelta) and e.index == index
                )
                assert text == block.text
            elif isinstance(block, ThinkingBlock):
                text = "".join(
                    e.delta for e in events if isinstance(e, ThinkingDelta) and e.index == index
                )
                assert text == block.thinking
            elif isinstance(block, ToolCallBlock):
                raw_args = "".join(
                    e.raw_json_delta
                    for e in events
                    if isinstance(e, ToolCallDelta) and e.index == index
                )
                assert raw_args == block.raw_arguments
                assert block.error is None
        usage = [e.usage for e in events if isinstance(e, UsageUpdate)]
        assert end.message.usage == (usage[-1] if usage else end.message.usage)
        u = end.message.usage
        assert (
            u.total_tokens
            == u.input_tokens + u.output_tokens + u.cache_read_tokens + u.cache_write_tokens
        )


# ---------------------------------------------------------------------------
# Key fixtures, exactly.


@needs_fixtures
def test_openai_tool_calls_parallel() -> None:
    end = finish("openai-tool-calls-parallel")
    assert isinstance(end, Done)
    calls = end.message.tool_calls
    assert [(c.id, c.name) for c in calls] == [
        ("call_JMW1whyEaYG438VE1OIflxA2", "GetWeatherArgs"),
        ("call_DNYTawLBoN8fj3KN6qU9N1Ou", "get_stock_price"),
    ]
    assert calls[0].raw_arguments == '{"city": "Edinburgh", "country": "GB", "units": "c"}'
    assert dict(calls[0].arguments) == {"city": "Edinburgh", "country": "GB", "units": "c"}
    assert dict(calls[1].arguments) == {"ticker": "AAPL", "exchange": "NASDAQ"}
    assert end.message.text == ""
    u = end.message.usage
    assert (u.input_tokens, u.output_tokens, u.total_tokens) == (149, 60, 209)
    assert end.message.response_id == "chatcmpl-ABfwAwrNePHUgBBezonVC6MX3zd63"
    assert end.message.model == "gpt-4o-2024-08-06"


@needs_fixtures
def test_mistral_tool_calls_parallel_without_index() -> None:
    end = finish("mistral-tool-calls-parallel")
    calls = end.message.tool_calls
    assert [(c.id, c.name, c.raw_arguments) for c in calls] == [
        ("nqjf8Hqe1", "plus", '{"a": 1, "b": 2}'),
        ("ATcpCKul3", "minus", '{"a": 2, "b": 1}'),
    ]
    assert [dict(c.arguments) for c in calls] == [{"a": 1, "b": 2}, {"a": 2, "b": 1}]
    u = end.message.usage
    assert (u.input_tokens, u.output_tokens, u.total_tokens) == (187, 45, 232)
    assert end.message.stop_reason is StopReason.TOOL_USE


@needs_fixtures
def test_alibaba_empty_id_on_continuations() -> None:
    end = finish("alibaba-qwen-tool-call")
    (call,) = end.message.tool_calls
    assert (call.id, call.name) == ("call_eee11723464a4b9eb8cee71d", "weather")
    assert call.raw_arguments == '{"location": "San Francisco"}'
    assert dict(call.arguments) == {"location": "San Francisco"}
    assert len(end.message.content) == 1
    u = end.message.usage
    assert (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.total_tokens) == (
        295,
        22,
        0,
        317,
    )


@needs_fixtures
def test_cerebras_two_responses_keep_the_first() -> None:
    events = run_bytes(fx("cerebras-structured-tool"))
    end = terminal(events)
    assert isinstance(end, Done)
    m = end.message
    assert [type(b) for b in m.content] == [ThinkingBlock, ToolCallBlock]
    assert m.response_id == "chatcmpl-9e97f9ca-9626-4ef8-8543-6e3ee7cef659"
    text = thinking(m)
    assert text.startswith('The user is asking about a "magic number". I have access to a function')
    assert text.endswith("I should call this function to get the magic number.")
    assert "2026" not in text  # the second response's reasoning is dropped
    assert m.text == ""  # the second response's '{"result": "2026"}' is dropped
    (call,) = m.tool_calls
    assert (call.id, call.name, call.raw_arguments, dict(call.arguments)) == (
        "bbd2b9d98",
        "nonUsefulTool",
        "{}",
        {},
    )
    assert diags(events) == ["content_after_finish"]
    # Usage snapshots replace each other: the last one wins.
    u = m.usage
    assert (u.input_tokens, u.cache_read_tokens, u.output_tokens, u.reasoning_tokens) == (
        177,
        256,
        122,
        108,
    )
    assert u.total_tokens == 555
    assert m.stop_reason is StopReason.TOOL_USE


@needs_fixtures
def test_xai_reasoning_outside_completion_tokens() -> None:
    end = finish("xai-tool-call")
    m = end.message
    u = m.usage
    # 307 prompt (306 cached) + 26 completion + 227 reasoning reported beside it = 560.
    assert (u.input_tokens, u.cache_read_tokens, u.output_tokens, u.reasoning_tokens) == (
        1,
        306,
        253,
        227,
    )
    assert u.total_tokens == 560
    (call,) = m.tool_calls
    assert (call.id, call.name, dict(call.arguments)) == (
        "call_79382389",
        "weather",
        {"location": "San Francisco"},
    )
    assert call.raw_arguments == '{"location":"San Francisco"}'
    assert thinking(m).startswith("First, the user is asking about the weather in San Francisco.")
    assert [type(b) for b in m.content] == [ThinkingBlock, ToolCallBlock]


@needs_fixtures
def test_deepseek_cache_counted_once() -> None:
    end = finish("deepseek-tool-call")
    m = end.message
    u = m.usage
    # cached_tokens and prompt_cache_hit_tokens are both 320: counted once.
    assert (u.input_tokens, u.cache_read_tokens, u.output_tokens, u.reasoning_tokens) == (
        19,
        320,
        83,
        39,
    )
    assert u.total_tokens == 422
    (call,) = m.tool_calls
    assert (call.id, call.name, call.raw_arguments) == (
        "call_00_ioIn7yN9p1ZOMNpDLwd4MgAF",
        "weather",
        '{"location": "San Francisco"}',
    )
    assert thinking(m).startswith("The user is asking for the weather in San Francisco.")
    assert m.text == ""


@needs_fixtures
def test_openrouter_midstream_error() -> None:
    end = finish("openrouter-midstream-error")
    assert isinstance(end, Error)
    assert (end.kind, end.code, end.reason) == ("upstream", "400", "Token limit reached")
    m = end.message
    assert m.raw_stop_reason == "length"
    assert m.error == "Token limit reached"
    assert thinking(m) == "We need to respond to a greeting. The user"
    assert blocks(m, ThinkingBlock)[0].signature is None  # no encrypted entry
    # The error chunk's usage is applied before the error: 11 reasoning within 10.
    u = m.usage
    assert (u.input_tokens, u.output_tokens, u.reasoning_tokens, u.total_tokens) == (43, 10, 11, 53)


@needs_fixtures
def test_groq_tool_use_failed_error_event() -> None:
    end = finish("groq-reasoning-tool-use-failed-error")
    assert isinstance(end, Error)
    assert (end.kind, end.code) == ("upstream", "tool_use_failed")
    assert end.reason.startswith(
        "Tool call validation failed: tool call validation failed: parameters for tool "
        "get_something_by_name did not match schema"
    )
    # Groq's failed_generation is appended to the reason.
    assert end.reason.endswith(
        '{"name": "get_something_by_name", "arguments": {\n  "invalid_param": "value"\n}}'
    )
    m = end.message
    assert thinking(m).startswith("We need to call the tool with invalid parameters first")
    assert m.raw_stop_reason is None and m.tool_calls == ()


@needs_fixtures
def test_openrouter_reasoning_details_encrypted_signature() -> None:
    raw = fx("openrouter-reasoning-details")
    # The merged reasoning_details (one encrypted entry) as sent.
    details = [
        d
        for line in raw.decode().splitlines()
        if line.startswith("data: {")
        for d in json.loads(line[6:])["choices"][0]["delta"].get("reasoning_details") or []
    ]
    assert [d["type"] for d in details] == ["reasoning.encrypted"]
    events = run_bytes(raw)
    end = terminal(events)
    m = end.message
    assert isinstance(end, Done)
    assert [type(b) for b in m.content] == [ThinkingBlock, TextBlock]
    block = m.content[0]
    assert isinstance(block, ThinkingBlock)
    assert block.thinking == ""
    assert block.signature == json.dumps(details, separators=(",", ":"), ensure_ascii=False)
    assert (
        json.loads(block.signature)[0]["id"]
        == "rs_0aa4f2c435e6d1dc0169082486816c8193a029b5fc4ef1764f"
    )
    announced = [e.signature for e in events if isinstance(e, ThinkingDelta) and e.signature]
    assert announced == [block.signature]
    assert m.text.startswith("I’m ChatGPT, a large-language-model assistant created by OpenAI.")
    assert m.text.endswith("just let me know!")
    u = m.usage
    assert (u.input_tokens, u.output_tokens, u.total_tokens) == (9, 104, 113)
    assert (m.stop_reason, m.raw_stop_reason) == (StopReason.STOP, "stop")


@needs_fixtures
def test_multiple_choices_select_one() -> None:
    expected = {0: 65, 1: 61, 2: 59}
    for choice, temperature in expected.items():
        end = finish("openai-multiple-choices-n3", choice=choice)
        assert isinstance(end, Done)
        m = end.message
        assert m.text == f'{{"city":"San Francisco","temperature":{temperature},"units":"f"}}'
        assert len(m.content) == 1
        assert (m.stop_reason, m.raw_stop_reason) == (StopReason.STOP, "stop")
        # Usage covers all choices.
        assert (m.usage.input_tokens, m.usage.output_tokens) == (79, 42)
    # A choice the stream never had is an error naming the choices it had,
    # never a Done made up from nothing.
    events = run_bytes(fx("openai-multiple-choices-n3"), choice=5)
    end = terminal(events)
    assert isinstance(end, Error) and end.kind == "protocol"
    assert end.reason == "choice 5 never appeared; the stream had choices: 0, 1, 2"
    assert end.message.content == ()


@needs_fixtures
def test_perplexity_citations() -> None:
    raw = fx("perplexity-citations")
    end = finish("perplexity-citations")
    m = end.message
    (text,) = blocks(m, TextBlock)
    assert text.text == "The current population of **[2][3]"
    urls = [
        "https://populationstat.com/united-states/san-francisco",
        "https://en.wikipedia.org/wiki/San_Francisco",
        "https://fred.stlouisfed.org/graph/?g=4K5j",
        "https://www.california-demographics.com/cities_by_population",
        "https://worldpopulationreview.com/us-cities/california/san-francisco",
        "https://worldpopulationreview.com/us-counties/california/san-francisco-county",
        "https://www.worldometers.info/world-population/us-population/",
    ]
    assert raw.count(urls[0].encode()) == 8  # repeated on every chunk, kept once
    assert list(text.citations) == [{"type": "url", "url": u} for u in urls]
    u = m.usage
    assert (u.input_tokens, u.output_tokens, u.total_tokens) == (10, 336, 346)


@needs_fixtures
def test_together_duplicated_text_and_top_level_cache() -> None:
    m = finish("together-text").message
    assert m.text == "1, 2, 3, 4, 5."
    u = m.usage
    assert (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.total_tokens) == (41, 15, 0, 56)
    assert u.raw is not None and u.raw["cached_tokens"] == 0


@needs_fixtures
def test_magistral_content_arrays() -> None:
    events = run_bytes(fx("mistral-magistral-thinking-content-array"))
    m = terminal(events).message
    assert [type(b) for b in m.content] == [ThinkingBlock, TextBlock]
    t = thinking(m)
    assert t.startswith("Okay, the user is asking how to cross the street. I know that crossing")
    assert t.endswith("Let me compile this information into a clear and concise response.")
    assert m.text.startswith("To cross the street safely, follow these steps:\n\n1. Look both ways")
    assert m.text.endswith("By following these steps, you can ensure a safe crossing.")
    assert "Okay" not in m.text
    assert (m.usage.input_tokens, m.usage.output_tokens) == (10, 232)
    assert diags(events) == []


@needs_fixtures
def test_anthropic_compat_tool_call_at_index_1() -> None:
    events = run_bytes(fx("anthropic-openai-compat-tool-call"))
    end = terminal(events)
    assert isinstance(end, Done)
    m = end.message
    assert [type(b) for b in m.content] == [TextBlock, ToolCallBlock]
    assert m.text == "Reading it."
    (call,) = m.tool_calls
    assert (call.id, call.name, call.raw_arguments, dict(call.arguments)) == (
        "toolu_sanitized",
        "read_file",
        '{"path": "a.txt"}',
        {"path": "a.txt"},
    )
    # Canonical index 1 (dense), not the wire index.
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert {e.index for e in deltas} == {1}
    assert deltas[0].raw_json_delta == "" and deltas[0].id == "toolu_sanitized"
    assert [e.raw_json_delta for e in deltas[1:]] == ['{"pa', 'th": "a.txt"}']
    # The file ends with "data: [DONE]\n" (no blank line): still [DONE].
    assert fx("anthropic-openai-compat-tool-call").endswith(b"data: [DONE]\n")


@needs_fixtures
def test_azure_empty_first_chunk() -> None:
    events = run_bytes(fx("azure-content-filter-results"))
    end = terminal(events)
    start = events[0]
    assert isinstance(start, Start)
    assert (start.model, start.response_id) == (
        "gpt-4.1-mini-2025-04-14",
        "chatcmpl-DPTBaSsimU1JbOyrWiQNkSSfOPQE7",
    )
    assert end.message.text == (
        "Why did the developer bring a map to the OpenTelemetry conference? "
        "\n\nBecause they wanted to trace every step!"
    )
    assert end.message.usage.total_tokens == 0
    assert diags(events) == []


@needs_fixtures
def test_groq_executed_tools_provider_block() -> None:
    events = run_bytes(fx("groq-browser-search-executed-tools"))
    end = terminal(events)
    m = end.message
    assert [type(b) for b in m.content] == [ThinkingBlock, ProviderBlock, TextBlock]
    block = m.content[1]
    assert isinstance(block, ProviderBlock)
    assert (block.api, block.kind) == (API, "executed_tools")
    (tool,) = block.data["executed_tools"]
    # Two wire entries with index 0 merged field by field; arguments not doubled.
    assert tool["type"] == "search"
    assert tool["arguments"] == '{"query": "What is the weather in San Francisco today?"}'
    assert tool["output"].startswith(
        "Title: Weather in San Francisco\nURL: https://www.weatherapi.com/"
    )
    assert len(tool["search_results"]["results"]) == 16
    # The chunk id changes on every chunk: the first one is the response id.
    assert m.response_id == "chatcmpl-03ea1ed2-c2dc-4f8d-ba51-54e08ca9287c"
    assert thinking(m).startswith("<think>\nTo find the current weather in San Francisco")
    assert m.text.startswith("The weather in San Francisco today is partly cloudy")
    u = m.usage  # from x_groq.usage
    assert (u.input_tokens, u.output_tokens, u.total_tokens) == (5003, 359, 5362)
    assert not any(isinstance(e, (TextDelta, ThinkingDelta)) and e.index == 1 for e in events)


@needs_fixtures
def test_refusal_is_its_own_text_block() -> None:
    for name in ("openai-refusal", "openai-refusal-logprobs"):
        m = finish(name).message
        (block,) = m.content
        assert isinstance(block, TextBlock) and block.refusal
        assert m.text == ""
    assert (
        refusal(finish("openai-refusal").message) == "I'm sorry, I can't assist with that request."
    )
    assert refusal(finish("openai-refusal-logprobs").message) == (
        "I'm very sorry, but I can't assist with that."
    )


@needs_fixtures
def test_openrouter_annotations_become_citations() -> None:
    m = finish("openrouter-web-search-annotations").message
    (text,) = blocks(m, TextBlock)
    assert [c["url_citation"]["url"] for c in text.citations] == [
        "https://github.com/pydantic/pydantic-ai",
        "https://pydantic.dev/pydantic-ai",
        "https://github.com/pydantic/pydantic-ai/releases/tag/v2.0.0",
        "https://pydantic.dev/docs/ai/overview/",
        "https://github.com/pydantic/pydantic-ai/tree/refs/tags/v1.44.0",
    ]
    assert all(c["type"] == "url_citation" for c in text.citations)
    assert text.text.startswith("The URL for Pydantic AI's GitHub repository is:")
    u = m.usage
    assert (u.input_tokens, u.output_tokens, u.cache_write_tokens, u.total_tokens) == (
        2317,
        53,
        0,
        2370,
    )


@needs_fixtures
def test_usage_locations() -> None:
    # x_groq.usage only
    u = finish("groq-text-x-groq-usage").message.usage
    assert (u.input_tokens, u.output_tokens, u.total_tokens) == (18, 73, 91)
    # top-level usage preferred over x_groq.usage (same numbers here)
    u = finish("groq-tool-call").message.usage
    assert (u.input_tokens, u.output_tokens, u.reasoning_tokens) == (304, 49, 23)
    # prompt_tokens_details: null (Hugging Face router)
    u = finish("huggingface-router-novita").message.usage
    assert (u.input_tokens, u.output_tokens, u.cache_read_tokens) == (40, 2, 0)
    # reasoning already inside completion_tokens: never added
    u = finish("zai-glm-reasoning-content").message.usage
    assert (u.input_tokens, u.output_tokens, u.reasoning_tokens, u.total_tokens) == (
        13,
        564,
        561,
        577,
    )
    u = finish("deepseek-reasoning-content").message.usage
    assert (u.output_tokens, u.reasoning_tokens, u.total_tokens) == (212, 198, 218)
    u = finish("moonshot-kimi-text").message.usage
    assert (u.output_tokens, u.reasoning_tokens, u.total_tokens) == (12, 7, 21)


@needs_fixtures
def test_finish_length() -> None:
    m = finish("openai-finish-length").message
    assert (m.stop_reason, m.raw_stop_reason, m.text) == (StopReason.LENGTH, "length", '{"')
    m = finish("vllm-text-finish-length").message
    assert m.stop_reason is StopReason.LENGTH
    assert m.text.endswith("<")  # content in the finish chunk itself is kept


@needs_fixtures
def test_reasoning_fields() -> None:
    m = finish("moonshot-kimi-text").message
    assert [type(b) for b in m.content] == [ThinkingBlock, TextBlock]
    assert (thinking(m), m.text) == ("Thinking aloud. ", "Hello!")
    m = finish("zai-glm-reasoning-content").message
    assert m.text == "4"
    m = finish("groq-tool-call").message
    assert thinking(m) == (
        'We need to call the function with correct parameter "name". '
        'Provide a name, e.g., "example".'
    )
    (call,) = m.tool_calls
    assert (call.id, call.name, dict(call.arguments)) == (
        "fc_bfb39741-3748-4def-9886-a93fc9c64a90",
        "get_something_by_name",
        {"name": "example"},
    )
    m = finish("deepseek-reasoning-content").message
    assert m.text == "Hello there! 😊 How can I help you today?"


# ---------------------------------------------------------------------------
# §9.3 synthetic edge cases.


def test_new_id_at_known_index_is_a_new_call() -> None:
    data = sse(
        chunk({"tool_calls": [tc(0, "call_a", "f", '{"x":')]}),
        chunk({"tool_calls": [tc(0, None, None, "1}")]}),
        chunk({"tool_calls": [tc(0, "call_b", "g", '{"y":2}')]}),
        chunk(finish="tool_calls"),
    )
    m = terminal(run_bytes(data)).message
    assert [(c.id, c.name, c.raw_arguments) for c in m.tool_calls] == [
        ("call_a", "f", '{"x":1}'),
        ("call_b", "g", '{"y":2}'),
    ]
    assert m.stop_reason is StopReason.TOOL_USE


def test_index_missing() -> None:
    data = sse(
        chunk({"tool_calls": [tc(None, "a", "f", '{"x"'), tc(None, None, None, ":1}")]}),
        chunk({"tool_calls": [tc(None, "b", "g", "{")]}),
        chunk({"tool_calls": [tc(None, None, None, "}")]}),  # the last call
        chunk({"tool_calls": [tc(None, "a", None, "")]}),  # a known id: no new call
        chunk(finish="tool_calls"),
    )
    m = terminal(run_bytes(data)).message
    assert [(c.id, c.name, dict(c.arguments)) for c in m.tool_calls] == [
        ("a", "f", {"x": 1}),
        ("b", "g", {}),
    ]


def test_index_zero_for_every_call() -> None:
    # Ollama: every parallel call at index 0, each with its own id.
    data = sse(
        chunk({"tool_calls": [tc(0, "c1", "f", '{"a":1}')]}),
        chunk({"tool_calls": [tc(0, "c2", "f", '{"a":')]}),
        chunk({"tool_calls": [tc(0, None, None, "2}")]}),
        chunk({"tool_calls": [tc(0, "c3", "g", "{}")]}),
        chunk(finish="stop"),
    )
    m = terminal(run_bytes(data)).message
    assert [(c.id, c.name, dict(c.arguments)) for c in m.tool_calls] == [
        ("c1", "f", {"a": 1}),
        ("c2", "f", {"a": 2}),
        ("c3", "g", {}),
    ]
    assert (m.stop_reason, m.raw_stop_reason) == (StopReason.TOOL_USE, "stop")


def test_interleaved_indices() -> None:
    data = sse(
        chunk({"tool_calls": [tc(0, "a", "f", '{"p":'), tc(1, "b", "g", '{"q":')]}),
        chunk({"tool_calls": [tc(1, None, None, '"Q"')]}),
        chunk({"tool_calls": [tc(0, None, None, '"P"}')]}),
        chunk({"tool_calls": [tc(1, "b", "g", "}")]}),  # repeated id and name
        chunk(finish="tool_calls"),
    )
    events = run_bytes(data)
    m = terminal(events).message
    assert [(c.id, c.name, dict(c.arguments)) for c in m.tool_calls] == [
        ("a", "f", {"p": "P"}),
        ("b", "g", {"q": "Q"}),
    ]
    deltas = [(e.index, e.raw_json_delta) for e in events if isinstance(e, ToolCallDelta)]
    assert deltas == [
        (0, ""),
        (0, '{"p":'),
        (1, ""),
        (1, '{"q":'),
        (1, '"Q"'),
        (0, '"P"}'),
        (1, "}"),
    ]


def test_repeated_id_and_name_are_not_concatenated() -> None:
    data = sse(
        chunk({"role": "assistant", "tool_calls": [tc(0, "call_1", "ff", '{"a"')]}),
        chunk({"role": "assistant", "tool_calls": [tc(0, "call_1", "ff", ":1}")]}),
        chunk({"role": "assistant", "tool_calls": [tc(0, "call_1", "ff", "")]}),
        chunk(finish="tool_calls"),
    )
    events = run_bytes(data)
    (call,) = terminal(events).message.tool_calls
    assert (call.id, call.name, call.raw_arguments) == ("call_1", "ff", '{"a":1}')
    assert diags(events) == []


def test_name_changed_is_ignored() -> None:
    data = sse(
        chunk({"tool_calls": [tc(0, "c", "f", "{}")]}),
        chunk({"tool_calls": [tc(0, None, "g", "")]}),
        chunk(finish="tool_calls"),
    )
    events = run_bytes(data)
    (call,) = terminal(events).message.tool_calls
    assert call.name == "f"
    assert diags(events) == ["tool_name_changed"]


def test_id_arrives_after_the_first_fragment() -> None:
    data = sse(
        chunk({"tool_calls": [tc(0, None, "f", '{"a":')]}),
        chunk({"tool_calls": [tc(0, "late", None, "1}")]}),
        chunk(finish="tool_calls"),
    )
    events = run_bytes(data)
    (call,) = terminal(events).message.tool_calls
    assert (call.id, dict(call.arguments)) == ("late", {"a": 1})
    ids = [e.id for e in events if isinstance(e, ToolCallDelta)]
    assert ids == [None, None, "late"]


def test_call_without_any_id_gets_a_synthetic_one() -> None:
    data = sse(chunk({"tool_calls": [tc(0, None, "f", "{}")]}), chunk(finish="tool_calls"))
    (call,) = terminal(run_bytes(data)).message.tool_calls
    assert call.id.startswith("call_") and call.id.endswith("_0")


def test_arguments_sent_as_an_object() -> None:
    data = sse(
        chunk({"tool_calls": [tc(0, "c", "f", {"city": "Zürich", "n": [1, 2]})]}),
        chunk(finish="tool_calls"),
    )
    (call,) = terminal(run_bytes(data)).message.tool_calls
    assert call.raw_arguments == '{"city":"Zürich","n":[1,2]}'
    assert dict(call.arguments) == {"city": "Zürich", "n": [1, 2]}


def test_content_reasoning_and_tool_calls_in_one_chunk() -> None:
    data = sse(
        chunk(
            {
                "tool_calls": [tc(0, "c", "f", '{"a":1}')],
                "content": "Let me check.",
                "refusal": "no",
                "reasoning_content": "Thinking.",
            }
        ),
        chunk(
            {
                "content": " More.",
                "reasoning_content": " Again.",
                "tool_calls": [tc(0, None, None, "")],
            }
        ),
        chunk(finish="tool_calls"),
    )
    events = run_bytes(data)
    m = terminal(events).message
    assert [type(b) for b in m.content] == [ThinkingBlock, TextBlock, TextBlock, ToolCallBlock]
    assert (thinking(m), m.text, refusal(m)) == ("Thinking. Again.", "Let me check. More.", "no")
    order = [
        (type(e).__name__, e.index)
        for e in events
        if isinstance(e, (TextDelta, ThinkingDelta, ToolCallDelta))
    ]
    assert order == [
        ("ThinkingDelta", 0),
        ("TextDelta", 1),
        ("TextDelta", 2),
        ("ToolCallDelta", 3),
        ("ToolCallDelta", 3),
        ("ThinkingDelta", 0),
        ("TextDelta", 1),
    ]


def test_reasoning_first_non_empty_field_only() -> None:
    data = sse(
        chunk({"reasoning_content": "A", "reasoning": "A"}),
        chunk({"reasoning_content": "", "reasoning": "B", "reasoning_text": "B"}),
        chunk({"reasoning_content": None, "reasoning": None, "reasoning_text": "C"}),
        chunk({"content": "done"}, finish="stop"),
    )
    m = terminal(run_bytes(data)).message
    assert thinking(m) == "ABC"


def test_reasoning_details_merged_by_index() -> None:
    data = sse(
        chunk(
            {
                "reasoning_details": [
                    {"type": "reasoning.text", "text": "Hel", "index": 0, "format": None}
                ]
            }
        ),
        chunk(
            {
                "reasoning_details": [
                    {
                        "type": "reasoning.text",
                        "text": "lo",
                        "index": 0,
                        "format": "anthropic-claude-v1",
                    }
                ]
            }
        ),
        chunk({"reasoning_details": [{"type": "reasoning.encrypted", "data": "ENC", "index": 1}]}),
        chunk({"content": "Hi"}, finish="stop"),
    )
    events = run_bytes(data)
    m = terminal(events).message
    block = m.content[0]
    assert isinstance(block, ThinkingBlock)
    assert block.thinking == "Hello"
    merged = [
        {"type": "reasoning.text", "text": "Hello", "index": 0, "format": "anthropic-claude-v1"},
        {"type": "reasoning.encrypted", "data": "ENC", "index": 1},
    ]
    assert block.signature == json.dumps(merged, separators=(",", ":"))
    signed = [e for e in events if isinstance(e, ThinkingDelta) and e.signature]
    assert len(signed) == 1 and signed[0].delta == ""
    # A plain reasoning field wins over the details' text in the same chunk.
    data = sse(
        chunk(
            {
                "reasoning": "plain",
                "reasoning_details": [{"type": "reasoning.text", "text": "plain", "index": 0}],
            }
        ),
        chunk(finish="stop"),
    )
    m = terminal(run_bytes(data)).message
    first = m.content[0]
    assert isinstance(first, ThinkingBlock)
    assert thinking(m) == "plain" and first.signature is None


def test_magistral_mixed_content_array() -> None:
    data = sse(
        chunk(
            {
                "content": [
                    {"type": "thinking", "thinking": [{"type": "text", "text": "hmm"}]},
                    {"type": "text", "text": "Answer"},
                ]
            }
        ),
        chunk({"content": [{"type": "thinking", "thinking": []}]}),
        chunk({"content": "!"}, finish="stop"),
    )
    events = run_bytes(data)
    m = terminal(events).message
    assert (thinking(m), m.text) == ("hmm", "Answer!")
    assert diags(events) == []


def test_empty_data_events_are_tolerated() -> None:
    data = (
        b"data:\n\n"
        + sse(chunk({"content": "Hi"}), done=False)
        + b"data: \n\n: keep-alive\n\ndata:\n\n"
        + sse(chunk(finish="stop"))
    )
    events = run_bytes(data)
    end = terminal(events)
    assert isinstance(end, Done) and end.message.text == "Hi"
    assert diags(events) == []


def test_done_without_finish_reason() -> None:
    events = run_bytes(sse(chunk({"content": "Hi"})))
    end = terminal(events)
    assert isinstance(end, Done)
    assert (end.stop_reason, end.message.raw_stop_reason) == (StopReason.STOP, None)
    assert diags(events) == ["missing_stop_reason"]


def test_end_without_finish_reason_is_truncated() -> None:
    data = sse(chunk({"content": "Hi", "tool_calls": [tc(0, "c", "f", '{"a":1}')]}), done=False)
    end = terminal(run_bytes(data))
    assert isinstance(end, Error) and end.kind == "truncated"
    assert end.message.text == "Hi"
    (call,) = end.message.tool_calls
    assert call.error == "incomplete" and dict(call.arguments) == {"a": 1}


def test_end_after_finish_reason_without_done() -> None:
    data = sse(chunk({"content": "Hi"}), chunk(finish="stop"), done=False)
    end = terminal(run_bytes(data))
    assert isinstance(end, Done) and end.message.text == "Hi"


def test_input_after_done_is_ignored() -> None:
    data = sse(chunk({"content": "Hi"}, finish="stop")) + sse(
        chunk({"content": "more"}), done=False
    )
    events = run_bytes(data)
    assert terminal(events).message.text == "Hi"
    # "[DONE]" is a prefix match, as in the openai SDK.
    events = run_bytes(
        sse(chunk({"content": "Hi"}, finish="stop"), done=False) + b"data: [DONE] \n\n"
    )
    assert isinstance(terminal(events), Done)


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("stop", StopReason.STOP),
        ("end", StopReason.STOP),
        ("length", StopReason.LENGTH),
        ("tool_calls", StopReason.TOOL_USE),
        ("function_call", StopReason.TOOL_USE),
        ("content_filter", StopReason.CONTENT_FILTER),
    ],
)
def test_finish_reason_mapping(raw: str, reason: StopReason) -> None:
    events = run_bytes(sse(chunk({"content": "x"}, finish=raw)))
    end = terminal(events)
    assert isinstance(end, Done)
    assert (end.stop_reason, end.message.raw_stop_reason) == (reason, raw)
    assert diags(events) == []


def test_unknown_finish_reason() -> None:
    events = run_bytes(sse(chunk({"content": "x"}, finish="eos_token")))
    end = terminal(events)
    assert isinstance(end, Done)
    assert (end.stop_reason, end.message.raw_stop_reason) == (StopReason.STOP, "eos_token")
    assert diags(events) == ["unknown_stop_reason"]


@pytest.mark.parametrize("raw", ["error", "network_error"])
def test_error_finish_reasons(raw: str) -> None:
    usage = {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}
    data = sse(
        chunk({"content": "x"}, finish=raw), {"id": "chatcmpl-1", "choices": [], "usage": usage}
    )
    end = terminal(run_bytes(data))
    assert isinstance(end, Error)
    assert (end.kind, end.code, end.message.raw_stop_reason) == ("upstream", raw, raw)
    assert end.message.text == "x"
    assert end.message.usage.total_tokens == 6  # the trailing usage chunk still counts
    # Cut right after the value: still the upstream error, not a truncation.
    end = terminal(run_bytes(sse(chunk({"content": "x"}, finish=raw), done=False)))
    assert isinstance(end, Error) and end.kind == "upstream"


def test_length_with_an_open_tool_call() -> None:
    data = sse(chunk({"tool_calls": [tc(0, "c", "f", '{"a": "hal')]}, finish="length"))
    end = terminal(run_bytes(data))
    assert isinstance(end, Done) and end.stop_reason is StopReason.LENGTH
    (call,) = end.message.tool_calls
    assert call.error == "incomplete" and dict(call.arguments) == {"a": "hal"}


def test_prompt_progress() -> None:
    progress = {"total": 120, "cache": 20, "processed": 60, "time_ms": 12.5}
    data = sse(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "choices": [],
            "prompt_progress": progress,
        },
        {
            "id": "chatcmpl-1",
            "choices": [],
            "prompt_progress": {**progress, "processed": 120, "time_ms": 30},
        },
        chunk({"content": "Hi"}, finish="stop"),
    )
    events = run_bytes(data)
    assert isinstance(events[0], Start)
    got = [e for e in events if isinstance(e, PromptProgress)]
    assert got == [PromptProgress(60, 120, 20, 12.5), PromptProgress(120, 120, 20, 30.0)]
    assert terminal(events).message.text == "Hi"
    assert diags(events) == []


def test_legacy_function_call() -> None:
    data = sse(
        chunk({"role": "assistant", "function_call": {"name": "get_weather", "arguments": ""}}),
        chunk({"function_call": {"arguments": '{"city":'}}),
        chunk({"function_call": {"arguments": '"Paris"}'}}),
        chunk(finish="function_call"),
    )
    events = run_bytes(data)
    end = terminal(events)
    assert isinstance(end, Done) and end.stop_reason is StopReason.TOOL_USE
    (call,) = end.message.tool_calls
    assert (call.name, dict(call.arguments)) == ("get_weather", {"city": "Paris"})
    # Synthesised at open from the response id, so every delta carries it.
    assert call.id == f"call_{hashlib.sha256(b'chatcmpl-1').hexdigest()[:8]}_0"
    assert {e.id for e in events if isinstance(e, ToolCallDelta)} == {call.id}


def test_choice_usage() -> None:
    usage = {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12, "cached_tokens": 4}
    data = sse(
        {
            "id": "x",
            "choices": [
                {"index": 0, "delta": {"content": "Hi"}, "finish_reason": "stop", "usage": usage}
            ],
        }
    )
    u = terminal(run_bytes(data)).message.usage
    assert (u.input_tokens, u.cache_read_tokens, u.output_tokens, u.total_tokens) == (5, 4, 3, 12)
    # Top-level usage is preferred within a chunk.
    top = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    data = sse(
        {
            "id": "x",
            "usage": top,
            "x_groq": {"usage": usage},
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop", "usage": usage}],
        }
    )
    assert terminal(run_bytes(data)).message.usage.total_tokens == 2


def test_cache_write_tokens() -> None:
    usage = {
        "prompt_tokens": 100,
        "completion_tokens": 10,
        "total_tokens": 110,
        "prompt_tokens_details": {"cached_tokens": 30, "cache_write_tokens": 50},
    }
    u = terminal(run_bytes(sse(chunk(finish="stop", usage=usage)))).message.usage
    assert (u.input_tokens, u.cache_read_tokens, u.cache_write_tokens, u.output_tokens) == (
        20,
        30,
        50,
        10,
    )
    assert u.total_tokens == 110


def test_error_chunk_with_metadata_raw() -> None:
    error = {
        "code": 502,
        "message": "Provider returned error",
        "metadata": {"raw": "upstream timeout"},
    }
    data = sse(chunk({"content": "Hi"}), {"id": "chatcmpl-1", "choices": [], "error": error})
    end = terminal(run_bytes(data))
    assert isinstance(end, Error)
    assert (end.kind, end.code) == ("upstream", "502")
    assert end.reason == "Provider returned error\nupstream timeout"
    assert end.message.text == "Hi"


def test_error_event_without_error_object() -> None:
    data = b'event: error\ndata: {"message": "boom"}\n\n'
    end = terminal(run_bytes(sse(chunk({"content": "Hi"}), done=False) + data, API))
    assert isinstance(end, Error) and end.kind == "upstream"
    assert end.message.text == "Hi"


def test_annotations_before_text() -> None:
    citation = {"type": "url_citation", "url_citation": {"url": "https://x.test", "title": "X"}}
    data = sse(
        chunk({"content": "", "annotations": [citation]}),
        chunk({"content": "See X."}, finish="stop"),
    )
    m = terminal(run_bytes(data)).message
    (block,) = m.content
    assert isinstance(block, TextBlock)
    assert (block.text, list(block.citations)) == ("See X.", [citation])


def test_content_after_finish_is_dropped_once() -> None:
    usage = {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}
    data = sse(
        chunk({"content": "A"}, finish="stop"),
        chunk({"content": "B"}),
        chunk({"content": "C", "tool_calls": [tc(0, "c", "f", "{}")]}),
        chunk({"content": ""}, finish="stop", usage=usage),
    )
    events = run_bytes(data)
    m = terminal(events).message
    assert (m.text, m.tool_calls, m.usage.total_tokens) == ("A", (), 3)
    assert diags(events) == ["content_after_finish"]


def test_other_choices_never_touch_the_selected_one() -> None:
    data = sse(
        {
            "id": "x",
            "choices": [
                {"index": 1, "delta": {"content": "one", "tool_calls": [tc(0, "b", "g", "{}")]}},
                {"index": 0, "delta": {"content": "zero"}},
            ],
        },
        {"id": "x", "choices": [{"index": 1, "delta": {}, "finish_reason": "length"}]},
        {"id": "x", "choices": [{"index": 0, "delta": {"content": "!"}, "finish_reason": "stop"}]},
    )
    m = terminal(run_bytes(data)).message
    assert (m.text, m.tool_calls, m.raw_stop_reason) == ("zero!", (), "stop")
    m = terminal(run_bytes(data, choice=1)).message
    assert (m.text, m.raw_stop_reason, m.stop_reason) == ("one", "length", StopReason.LENGTH)
    assert m.tool_calls[0].error == "incomplete"


def test_junk_values_do_not_raise() -> None:
    data = sse(
        {"id": 5, "choices": "x"},
        {"id": "x", "choices": [None, 3, {"index": 0, "delta": None}]},
        chunk({"content": 7, "tool_calls": [None, {"index": "0", "function": None}], "refusal": 1}),
        chunk(
            {"content": "ok"}, finish=None, usage={"prompt_tokens": -3, "completion_tokens": True}
        ),
        chunk(finish="stop"),
    )
    events = run_bytes(data)
    end = terminal(events)
    assert isinstance(end, Done) and end.message.text == "ok"
    assert "decoder_error" not in diags(events)


# ---------------------------------------------------------------------------
# Chunk-boundary invariance.


# ---------------------------------------------------------------------------
# Truncation at random byte offsets.


def _received(data: bytes) -> list[tuple[int, str, Any]]:
    """Each ``data:`` line of a fixture with the offset at which it is whole:
    ``(end, event name, payload or "[DONE]")``."""
    out: list[tuple[int, str, Any]] = []
    pos, event = 0, "message"
    for line in data.split(b"\n"):
        end = pos + len(line)
        text = line.decode().rstrip("\r")
        if text.startswith("event:"):
            event = text[6:].strip()
        elif text.startswith("data:"):
            body = text[5:].strip()
            out.append((end, event, "[DONE]" if body.startswith("[DONE]") else json.loads(body)))
        elif not text:
            event = "message"
        pos = end + 1
    return out


def _oracle(items: list[tuple[int, str, Any]], cut: int) -> tuple[str, str]:
    """What a stream cut at ``cut`` must end with (``"done"``, ``"upstream"``
    or ``"truncated"``), and the text of choice 0 received before its finish."""
    text, finished = "", False
    for end, event, payload in items:
        if end > cut:
            break
        if payload == "[DONE]":
            return "done", text
        if event == "error" or payload.get("error"):
            return "upstream", text
        for choice in payload.get("choices") or []:
            if choice.get("index") != 0:
                continue
            content = (choice.get("delta") or {}).get("content")
            if not finished:
                if isinstance(content, str):
                    text += content
                elif isinstance(content, list):
                    text += "".join(p.get("text", "") for p in content if p.get("type") == "text")
            if choice.get("finish_reason"):
                finished = True
    return ("done" if finished else "truncated"), text


@needs_fixtures
@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_truncation(path: Path) -> None:
    data = path.read_bytes()
    full = terminal(run_bytes(data)).message
    items = _received(data)
    rng = random.Random(f"{path.name}-cuts")
    cuts = sorted(rng.randrange(0, len(data)) for _ in range(50))
    # Plus the edges of the last events, where the terminal signal arrives.
    cuts += [e + d for e, _, _ in items[-3:] for d in (-1, 0, 1) if 0 <= e + d < len(data)]
    for cut in cuts:
        events = run_bytes(data[:cut])
        end = terminal(events)
        expected, text = _oracle(items, cut)
        m = end.message
        if expected == "truncated":
            assert isinstance(end, Error) and end.kind == "truncated", (cut, end)
            assert m.stop_reason is StopReason.ERROR
            assert all(c.error == "incomplete" for c in m.tool_calls)
        elif expected == "upstream":
            assert isinstance(end, Error) and end.kind == "upstream", (cut, end)
        else:
            assert isinstance(end, Done), (cut, end)
            assert m.stop_reason == full.stop_reason or full.stop_reason is StopReason.ERROR
        # Everything received is kept, and it is what the full stream had so far.
        assert m.text == text, cut
        assert full.text.startswith(m.text)
        assert thinking(full).startswith(thinking(m))
        assert refusal(full).startswith(refusal(m))
        for got, want in zip(m.tool_calls, full.tool_calls[: len(m.tool_calls)], strict=True):
            assert (got.id in (want.id, None)) or got.id.startswith("call_")
            assert want.raw_arguments.startswith(got.raw_arguments)
        assert len(m.tool_calls) <= len(full.tool_calls)
        if m.response_id is not None:
            assert m.response_id == full.response_id


def test_reasoning_details_signed_text_signs_the_block() -> None:
    # Anthropic models behind OpenRouter: reasoning.text with a signature at the end.
    first = {
        "type": "reasoning.text",
        "text": "Let me see",
        "index": 0,
        "format": "anthropic-claude-v1",
    }
    last = {"type": "reasoning.text", "text": "", "signature": "SIG", "index": 0}
    data = sse(
        chunk({"reasoning": "Let me see", "reasoning_details": [first]}),
        chunk({"reasoning_details": [last]}),
        chunk({"content": "Yes."}, finish="stop"),
    )
    block = terminal(run_bytes(data)).message.content[0]
    assert isinstance(block, ThinkingBlock) and block.thinking == "Let me see"
    assert block.signature is not None
    assert json.loads(block.signature) == [{**first, "signature": "SIG"}]
