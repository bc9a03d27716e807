"""``openai-responses`` decoder: recorded fixtures, synthetic edge cases
(providers.md §2, §9.2), chunk invariance and truncation."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any, TypeVar

import pytest

from streamnorm import (
    BlockEnd,
    Done,
    Error,
    Event,
    NormalizationError,
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
from streamnorm.normalizer import StreamNormalizer

from .encode_oracles import responses_view
from .support import (
    dicts,
    fixture_paths,
    load,
    needs_fixtures,
    run,
    run_bytes,
    terminal,
)

API: ApiName = "openai-responses"
PATHS = fixture_paths(API)


def fixture(name: str) -> bytes:
    return load(f"{API}/{name}.sse")


def outcome(name: str) -> tuple[list[Event], Done | Error]:
    events = run_bytes(fixture(name))
    return events, terminal(events)


_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n|$)")


def data_lines(data: bytes) -> list[tuple[int, bytes]]:
    """(offset just past the JSON, JSON) of every ``data:`` line holding a
    payload, read independently of the library (SSE line ends only)."""
    out = []
    for m in _LINE.finditer(data):
        line = m.group().rstrip(b"\r\n")
        if line.startswith(b"data:") and line[5:].strip() not in (b"", b"[DONE]"):
            out.append((m.start() + len(line.rstrip()), line[5:]))
    return out


def wire(name: str) -> list[dict[str, Any]]:
    """The fixture's JSON payloads."""
    return [json.loads(payload) for _, payload in data_lines(fixture(name))]


def wire_of(name: str, kind: str) -> list[dict[str, Any]]:
    return [p for p in wire(name) if p.get("type") == kind]


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def diagnostics(events: list[Event]) -> list[NormalizationError]:
    return [e for e in events if isinstance(e, NormalizationError)]


_B = TypeVar("_B", TextBlock, ThinkingBlock, ToolCallBlock, ProviderBlock)


def block_at(end: Done | Error, index: int, kind: type[_B]) -> _B:
    """Block ``index`` of the final message, asserted to be a ``kind``."""
    block = end.message.content[index]
    assert isinstance(block, kind), block
    return block


def signature_json(block: TextBlock | ThinkingBlock | ToolCallBlock) -> Any:
    """A block's signature parsed as JSON; the block must have one."""
    assert block.signature is not None, block
    return json.loads(block.signature)


def kind_of(block: Any) -> str:
    if isinstance(block, ProviderBlock):
        return f"provider:{block.kind}"
    return {TextBlock: "text", ThinkingBlock: "thinking", ToolCallBlock: "toolcall"}[type(block)]


# ---------------------------------------------------------------------------
# Every fixture: one terminal event with the expected outcome, written from
# the fixtures themselves (MANIFEST.tsv and the payloads): the terminal event,
# the items of ``response.output`` in order, and the usage of the terminal
# response mapped as providers.md §2.5 says.

#: fixture · terminal · stop reason · raw stop reason · usage as
#: input/output/cache_read/cache_write/reasoning · content blocks in order.
#: Input is the wire's input_tokens minus cached_tokens and cache_write_tokens:
#: azure 2143−1280, bedrock 158−43, deepseek 366−256, lmstudio 182−2,
#: xai 216−192 and 1875−1578, image 2941−1920, code-interpreter 3727−3200,
#: web-search 9463−8320.
TABLE = """
apply-patch-tool                       done     tool_use  completed          642/67/0/0/0        provider:apply_patch_call
background-queued                      done     stop      completed          15/9/0/0/0          text
background-resume-starting-after       done     stop      completed          15/9/0/0/0          text
compaction-item                        done     stop      completed          872/1254/0/0/0      text provider:compaction
custom-tool-call                       done     tool_use  completed          50/20/0/0/0         provider:custom_tool_call
error-response-failed                  upstream error     -                  0/0/0/0/0
file-search                            done     stop      completed          1177/37/0/0/0       provider:file_search_call text
function-call                          done     tool_use  completed          255/16/0/0/0        toolcall
function-call-parallel                 done     tool_use  completed          36/54/0/0/0         toolcall toolcall
host-azure-code-interpreter            done     stop      completed          863/919/1280/0/576  thinking provider:code_interpreter_call text
host-bedrock-mantle-reasoning-text     done     stop      completed          115/32/0/43/10      thinking text
host-deepseek-reasoning-function-call  done     tool_use  completed          110/59/256/0/14     thinking toolcall
host-lmstudio-reasoning-tool-call      done     tool_use  completed          180/61/2/0/48       thinking text toolcall
host-openrouter-reasoning-text         done     stop      completed          78/37/0/0/22        thinking text
host-xai-reasoning-summary             done     stop      completed          24/923/192/0/323    thinking text
host-xai-web-search                    done     stop      completed          297/695/1578/0/397  provider:web_search_call text
image-generation                       done     stop      completed          1021/1249/1920/0/1024 thinking provider:image_generation_call text
logprobs                               done     stop      completed          25/10/0/0/0         text
max-output-tokens-incomplete           done     length    max_output_tokens  14/50/0/0/0         text
mcp-list-tools-missing-done            done     stop      completed          1199/103/0/0/0      provider:mcp_list_tools provider:mcp_list_tools provider:mcp_list_tools text
mcp-server-tool                        done     stop      completed          1401/480/0/0/256    provider:mcp_list_tools thinking provider:mcp_call thinking text
phase-commentary                       done     tool_use  completed          63/69/0/0/26        thinking text toolcall
reasoning-encrypted-function-call      done     tool_use  completed          53/469/0/0/448      thinking toolcall
reasoning-no-summary                   done     stop      completed          32/647/0/0/640      thinking text
reasoning-summary-code-interpreter     done     stop      completed          527/347/3200/0/128  thinking provider:code_interpreter_call provider:code_interpreter_call provider:code_interpreter_call text
reasoning-summary-text                 done     stop      completed          32/839/0/0/832      thinking text
refusal                                done     stop      completed          54/11/0/0/0         text
shell-tool-container                   done     stop      completed          200/120/0/0/0       provider:shell_call provider:shell_call_output text
structured-output-json                 done     stop      completed          166/30/0/0/0        text
text-basic                             done     stop      completed          11/5/0/0/0          text
tool-search                            done     tool_use  completed          600/47/0/0/21       provider:tool_search_call provider:tool_search_output toolcall
web-search                             done     stop      completed          1143/582/8320/0/512 thinking provider:web_search_call thinking text
"""  # noqa: E501
# shell-tool-container stops with "stop": its hosted shell call came with its
# output, so there is nothing for the client to run.

Expectation = tuple[str, str, "str | None", list[str], tuple[int, ...]]


def _expectations() -> dict[str, Expectation]:
    out: dict[str, Expectation] = {}
    for line in TABLE.strip().splitlines():
        name, kind, stop, raw, usage, *blocks = line.split()
        counts = tuple(int(n) for n in usage.split("/"))
        out[name] = (kind, stop, None if raw == "-" else raw, blocks, counts)
    return out


EXPECTED = _expectations()

#: The only fixture whose ``*.done`` values disagree with its deltas.
EXPECTED_DIAGNOSTICS = {"shell-tool-container": ["text_mismatch"]}


@needs_fixtures
def test_every_fixture_has_an_expectation() -> None:
    assert sorted(p.stem for p in PATHS) == sorted(EXPECTED)


@needs_fixtures
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_outcome(name: str) -> None:
    kind, stop, raw_stop, kinds, usage = EXPECTED[name]
    events = run_bytes(fixture(name), API)
    end = terminal(events)
    assert isinstance(events[0], Start)
    assert sum(isinstance(e, Start) for e in events) == 1
    if kind == "done":
        assert isinstance(end, Done)
    else:
        assert isinstance(end, Error) and end.kind == kind
    message = end.message
    assert message.api == API
    assert message.stop_reason.value == stop
    assert message.raw_stop_reason == raw_stop
    assert [kind_of(b) for b in message.content] == kinds
    u = message.usage
    assert (
        u.input_tokens,
        u.output_tokens,
        u.cache_read_tokens,
        u.cache_write_tokens,
        u.reasoning_tokens,
    ) == usage
    assert u.total_tokens == sum(usage[:4])
    assert [d.kind for d in diagnostics(events)] == EXPECTED_DIAGNOSTICS.get(name, [])
    # Every block ends exactly once, in the final content's order of indices.
    ends = [e.index for e in events if isinstance(e, BlockEnd)]
    assert sorted(ends) == list(range(len(message.content)))
    for e in events:
        if isinstance(e, BlockEnd):
            assert message.content[e.index] == e.block
    # The same bytes with api detection.
    assert dicts(run_bytes(fixture(name))) == dicts(events)


# ---------------------------------------------------------------------------
# Exact content of key fixtures


def _blocks(name: str) -> tuple[Any, ...]:
    return outcome(name)[1].message.content


@needs_fixtures
def test_function_call() -> None:
    events, end = outcome("function-call")
    (call,) = end.message.content
    assert call == ToolCallBlock(
        id="call_kL0PCQV7M2WMoVX8V8OtYSAL",
        name="get_capital",
        arguments={"country": "France"},
        raw_arguments='{"country":"France"}',
        signature='{"id":"fc_67e554a1de488191af0831d35cbe082e0794405d35281ae2"}',
    )
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert [d.raw_json_delta for d in deltas] == ["", '{"', "country", '":"', "France", '"}']
    assert all(d.id == "call_kL0PCQV7M2WMoVX8V8OtYSAL" and d.name == "get_capital" for d in deltas)
    assert deltas[-1].partial_args == {"country": "France"}
    assert end.message.model == "gpt-4o-2024-08-06"
    assert end.message.response_id == "resp_67e554a155508191900ee113293c4c830794405d35281ae2"


@needs_fixtures
def test_function_call_parallel() -> None:
    events, end = outcome("function-call-parallel")
    first, second = end.message.content
    assert isinstance(first, ToolCallBlock) and isinstance(second, ToolCallBlock)
    assert (first.id, first.name, first.raw_arguments, first.arguments) == (
        "call_sKC7OABqf2A2PTLCm0CLeRWV",
        "secret_retrieval_tool",
        '{"password":"mellon"}',
        {"password": "mellon"},
    )
    assert (second.id, second.name, second.raw_arguments, second.arguments) == (
        "call_OdR3s3xop0vtgkDyWRMLafuH",
        "secret_retrieval_tool",
        '{"password":"radiance"}',
        {"password": "radiance"},
    )
    assert first.signature == '{"id":"fc_0c3b09d20eedf2d30068f966bad8b88190af96d232f504ef1f"}'
    assert second.signature == '{"id":"fc_0c3b09d20eedf2d30068f966bafd288190a9045fdc554de6d5"}'
    assert first.error is None and second.error is None
    for index, block in enumerate(end.message.content):
        assert isinstance(block, ToolCallBlock)
        streamed = "".join(
            e.raw_json_delta for e in events if isinstance(e, ToolCallDelta) and e.index == index
        )
        assert streamed == block.raw_arguments


@needs_fixtures
def test_reasoning_encrypted_function_call() -> None:
    events, end = outcome("reasoning-encrypted-function-call")
    thinking, call = end.message.content
    assert isinstance(thinking, ThinkingBlock) and isinstance(call, ToolCallBlock)
    (done_item,) = [
        p["item"]
        for p in wire_of("reasoning-encrypted-function-call", "response.output_item.done")
        if p["item"]["type"] == "reasoning"
    ]
    assert thinking.thinking == ""
    # The whole item of output_item.done, compact, in wire key order.
    assert thinking.signature == compact(done_item)
    signed = signature_json(thinking)
    assert signed["id"] == "rs_0050471a34b36ae60068c97bac4dcc819595fd0f80d6b3c405"
    # The item's three copies carry three different tokens; the done one is kept.
    assert signed["encrypted_content"].startswith("gAAAAABoyXvxI6jwG5j6rvTG")
    assert signed["summary"] == []
    # Announced by ThinkingDelta("", signature) just before the block's end.
    sig_events = [e for e in events if isinstance(e, ThinkingDelta) and e.signature]
    assert [(e.index, e.delta, e.signature) for e in sig_events] == [(0, "", thinking.signature)]
    position = events.index(sig_events[0])
    after = events[position + 1]
    assert isinstance(after, BlockEnd) and after.index == 0
    assert call.id == "call_CWXgs68YprAjp6t0371hiPOI"
    assert call.name == "final_result"
    assert call.raw_arguments == '{"result":6666}' and call.arguments == {"result": 6666}
    assert call.signature == '{"id":"fc_0050471a34b36ae60068c97bf19d9c819590eaf42c0edc1042"}'


@needs_fixtures
def test_reasoning_summary_text_parts_joined_by_blank_line() -> None:
    events, end = outcome("reasoning-summary-text")
    thinking, text = end.message.content
    assert isinstance(thinking, ThinkingBlock)
    summaries = [
        p["text"] for p in wire_of("reasoning-summary-text", "response.reasoning_summary_text.done")
    ]
    assert len(summaries) == 3
    assert thinking.thinking == "\n\n".join(summaries)
    assert thinking.thinking.startswith(
        "**Exploring prime numbers**\n\nI need to find prime numbers"
    )
    assert "\n\n**Testing prime candidates**\n\n" in thinking.thinking
    assert "\n\n**Final count of primes**\n\n" in thinking.thinking
    # The separators are deltas of their own; the deltas add up to the text.
    deltas = [e.delta for e in events if isinstance(e, ThinkingDelta) and e.index == 0]
    assert deltas.count("\n\n") == 2
    assert "".join(deltas) == thinking.thinking
    signed = signature_json(thinking)
    assert [s["text"] for s in signed["summary"]] == summaries
    assert text == TextBlock("3", '{"id":"msg_0a1097cbfef27a8c00696afa33407081969902b1b1da52f678"}')


@needs_fixtures
def test_reasoning_no_summary_is_an_empty_block() -> None:
    _, end = outcome("reasoning-no-summary")
    thinking = end.message.content[0]
    assert isinstance(thinking, ThinkingBlock) and thinking.thinking == ""
    assert json.loads(thinking.signature or "")["summary"] == []


@needs_fixtures
def test_refusal_is_its_own_text_block() -> None:
    events, end = outcome("refusal")
    (block,) = end.message.content
    assert block == TextBlock(
        "I'm sorry, I can't assist with that.",
        '{"id":"msg_05f46fd4032c869b0068f966cbd974819784490218d2264e0d"}',
        (),
        refusal=True,
    )
    assert "".join(e.delta for e in events if isinstance(e, TextDelta)) == block.text


@needs_fixtures
def test_openrouter_reasoning_text_interleaved_and_done() -> None:
    events, end = outcome("host-openrouter-reasoning-text")
    thinking, text = end.message.content
    assert isinstance(thinking, ThinkingBlock) and isinstance(text, TextBlock)
    assert thinking.thinking == (
        'The user asks: "What is 2+2?" They expect a straightforward answer: 4. Just answer 4.'
    )
    # The id of output_item.done; response.completed reports another one.
    assert signature_json(thinking)["id"] == "rs_tmp_2kbe7x16sax"
    assert text.text == "4" and text.signature == '{"id":"msg_tmp_8cjof4f6zpw"}'
    # The message ends while the reasoning item is still open.
    ends = [e.index for e in events if isinstance(e, BlockEnd)]
    assert ends == [1, 0]
    # OpenRouter's trailing [DONE] after response.completed changes nothing.
    assert end.message.usage.raw is not None and "cost" in end.message.usage.raw


@needs_fixtures
def test_lmstudio_values_only_in_done_events() -> None:
    events, end = outcome("host-lmstudio-reasoning-tool-call")
    thinking, text, call = end.message.content
    assert isinstance(thinking, ThinkingBlock) and isinstance(text, TextBlock)
    assert isinstance(call, ToolCallBlock)
    assert thinking.thinking.startswith("The user is asking for the weather in San Francisco.")
    assert thinking.thinking.endswith(
        "so I have all the required information to make the function call."
    )
    assert text.text == "I'll get the current weather information for San Francisco for you."
    assert (call.id, call.name, call.raw_arguments, call.arguments) == (
        "call_2025306790300011",
        "weather",
        '{"location":"San Francisco"}',
        {"location": "San Francisco"},
    )
    assert call.signature == '{"id":"fc_z9synwu0kvc33k6e9u3dq4"}'
    # The arguments came only with function_call_arguments.done: emitted as
    # one normal delta after the opening one.
    deltas = [e.raw_json_delta for e in events if isinstance(e, ToolCallDelta)]
    assert deltas == ["", '{"location":"San Francisco"}']
    for index, block in enumerate(end.message.content[:2]):
        assert isinstance(block, (TextBlock, ThinkingBlock))
        streamed = "".join(
            e.delta
            for e in events
            if isinstance(e, (TextDelta, ThinkingDelta)) and e.index == index
        )
        assert streamed == (block.text if isinstance(block, TextBlock) else block.thinking)


@needs_fixtures
def test_deepseek_reasoning_text_and_arguments() -> None:
    _, end = outcome("host-deepseek-reasoning-function-call")
    thinking, call = end.message.content
    assert isinstance(thinking, ThinkingBlock) and isinstance(call, ToolCallBlock)
    assert thinking.thinking == "The user asks about temperature in Tokyo. I'll call the tool."
    assert (call.id, call.name, call.arguments) == (
        "call_00_xjY8Z2BvSlzgEmmw0DtH0464",
        "get_temperature",
        {"city": "Tokyo"},
    )
    assert call.raw_arguments == '{"city": "Tokyo"}'


@needs_fixtures
def test_mcp_list_tools_missing_done_completed_from_response() -> None:
    events, end = outcome("mcp-list-tools-missing-done")
    lists = [block_at(end, index, ProviderBlock) for index in range(3)]
    final_output = wire_of("mcp-list-tools-missing-done", "response.completed")[0]["response"][
        "output"
    ]
    assert [b.data["server_label"] for b in lists] == ["deepwiki", "microsoft_learn", "gitmcp"]
    # The two never done come from response.completed, tools included.
    assert [b.data for b in lists] == final_output[:3]
    assert all(b.data["tools"] for b in lists)
    # Ended before Done, each exactly once.
    done_at = events.index(end)
    ends = {e.index: i for i, e in enumerate(events) if isinstance(e, BlockEnd)}
    assert sorted(ends) == [0, 1, 2, 3]
    assert ends[2] < ends[3] < ends[0] < ends[1] < done_at
    assert block_at(end, 3, TextBlock).text.startswith(
        "Here are the available tools from each connected MCP server:"
    )


@needs_fixtures
def test_error_then_response_failed_gives_one_error() -> None:
    events, end = outcome("error-response-failed")
    assert isinstance(end, Error)
    assert end.kind == "upstream"
    assert end.code == "insufficient_quota"
    assert end.reason.startswith("You exceeded your current quota, please check your plan")
    assert end.message.stop_reason is StopReason.ERROR
    assert end.message.model == "gpt-5-nano-2025-08-07"
    assert [type(e) for e in events] == [Start, Error]


@needs_fixtures
def test_max_output_tokens_incomplete() -> None:
    events, end = outcome("max-output-tokens-incomplete")
    assert isinstance(end, Done)
    assert end.stop_reason is StopReason.LENGTH
    assert end.message.raw_stop_reason == "max_output_tokens"
    (text,) = end.message.content
    assert isinstance(text, TextBlock)
    assert text.text.startswith("Sure! Here is a list of all 50 U.S. states:\n\n1. Alabama\n")
    assert text.text.endswith("8. Delaware\n9. Florida")
    assert (end.usage.input_tokens, end.usage.output_tokens) == (14, 50)
    assert [type(e) for e in events[-2:]] == [UsageUpdate, Done]


@needs_fixtures
def test_shell_tool_container_text_mismatch() -> None:
    events, end = outcome("shell-tool-container")
    assert isinstance(end, Done)
    shell, output, text = end.message.content
    assert isinstance(shell, ProviderBlock) and isinstance(output, ProviderBlock)
    assert isinstance(text, TextBlock)
    done_text = wire_of("shell-tool-container", "response.output_text.done")[0]["text"]
    assert len(done_text) == 190
    streamed = "".join(e.delta for e in events if isinstance(e, TextDelta))
    assert streamed == "The command ran successfully."
    assert text.text == done_text  # the .done value wins; deltas are not retracted
    (mismatch,) = diagnostics(events)
    assert mismatch.kind == "text_mismatch" and mismatch.raw == done_text
    assert shell.data["action"]["commands"] == ["echo 'Hello from container!' && uname -a"]
    assert output.data["output"][0]["stdout"].startswith("Hello from container!")
    assert end.stop_reason is StopReason.STOP  # its output is in the same response


@needs_fixtures
def test_phase_commentary_in_text_signature() -> None:
    _, end = outcome("phase-commentary")
    assert isinstance(end, Done)
    thinking, text, call = end.message.content
    assert isinstance(thinking, ThinkingBlock) and isinstance(text, TextBlock)
    assert isinstance(call, ToolCallBlock)
    assert text.text == "I’ll check the capital lookup tool for “PotatoLand.”"
    assert text.signature == (
        '{"id":"msg_0fabc13af1ee0049006a691dfebdc881a1ae18d027c313d8ce","phase":"commentary"}'
    )
    assert signature_json(thinking)["encrypted_content"].startswith("gAAAAABqaR3-pGgSyJcP")
    assert (call.id, call.name, call.arguments) == (
        "call_LabG58Uhrq9kZvR52BYKjToD",
        "get_capital",
        {"country": "PotatoLand"},
    )
    assert end.stop_reason is StopReason.TOOL_USE


@needs_fixtures
def test_tool_search_namespace_in_signature() -> None:
    _, end = outcome("tool-search")
    search, found, call = end.message.content
    assert isinstance(search, ProviderBlock) and isinstance(found, ProviderBlock)
    assert isinstance(call, ToolCallBlock)
    assert search.data["arguments"] == {"paths": ["get_exchange_rate"]}
    assert found.data["tools"][0]["name"] == "get_exchange_rate"
    assert call.signature == (
        '{"id":"fc_060f468708eb0ff90069f3e2f2bb00819398117e5b32b4a3de","namespace":"get_exchange_rate"}'
    )
    assert call.arguments == {"from_currency": "USD", "to_currency": "EUR"}
    assert call.id == "call_CeXueyTqEJ1rgm84BHSwNPz8"


@needs_fixtures
def test_background_resume_starting_after() -> None:
    events, end = outcome("background-resume-starting-after")
    assert events[0] == Start(
        API, "gpt-4o-2024-08-06", "resp_0850765c843cca5300699cc47d93c0819089a181f5feeff8eb"
    )
    assert not diagnostics(events)
    (text,) = end.message.content
    assert isinstance(text, TextBlock)
    assert text.text == "2 + 2 equals 4."
    assert "".join(e.delta for e in events if isinstance(e, TextDelta)) == "2 + 2 equals 4."


@needs_fixtures
def test_background_queued() -> None:
    events, end = outcome("background-queued")
    assert sum(isinstance(e, Start) for e in events) == 1
    assert isinstance(end, Done)


@needs_fixtures
def test_file_search_citations() -> None:
    _, end = outcome("file-search")
    search, text = end.message.content
    assert isinstance(search, ProviderBlock) and isinstance(text, TextBlock)
    assert search.data["queries"] == ["What is the capital of France?"]
    assert text.text == "The capital of France is Paris."
    assert text.citations == (
        {
            "type": "file_citation",
            "file_id": "file-9RhPAs9YqVajpGXRfcgavJ",
            "filename": "tmp8l5_2pzy.txt",
            "index": 30,
        },
    )


@needs_fixtures
def test_xai_web_search_citations_not_doubled() -> None:
    _, end = outcome("host-xai-web-search")
    text = block_at(end, 1, TextBlock)
    assert [c["url"] for c in text.citations] == [
        "https://en.wikipedia.org/wiki/XAI_%28company%29",
        "https://x.ai/company",
        "https://www.ibm.com/think/topics/explainable-ai",
        "https://www.owkin.com/a-z-of-ai-for-healthcare/xai",
        "https://x.ai/",
    ]


@needs_fixtures
def test_bedrock_mantle_cache_write_usage() -> None:
    _, end = outcome("host-bedrock-mantle-reasoning-text")
    assert isinstance(end, Done)
    u = end.usage
    assert (u.input_tokens, u.cache_write_tokens, u.cache_read_tokens, u.output_tokens) == (
        115,
        43,
        0,
        32,
    )
    assert u.reasoning_tokens == 10 and u.total_tokens == 190
    thinking, text = end.message.content
    assert isinstance(thinking, ThinkingBlock) and isinstance(text, TextBlock)
    assert signature_json(thinking)["encrypted_content"].startswith("rsn_5ZVrif4J0bXIqmWd")
    assert text.text == "First tool result: `first result`\n\nSecond tool result: `second result`"
    assert text.signature == '{"id":"msg_b9dea558e8565c58afa798b4ee2589c0","phase":"final_answer"}'


@needs_fixtures
def test_client_tools_count_as_tool_use() -> None:
    _, end = outcome("custom-tool-call")
    assert isinstance(end, Done)
    (call,) = end.message.content
    assert isinstance(call, ProviderBlock)
    assert call.data["input"] == "SELECT * FROM users WHERE age > 25"
    assert end.stop_reason is StopReason.TOOL_USE
    _, end = outcome("apply-patch-tool")
    assert isinstance(end, Done)
    patch = block_at(end, 0, ProviderBlock)
    assert patch.data["operation"]["diff"].startswith("+## Shopping Checklist")
    assert end.stop_reason is StopReason.TOOL_USE


@needs_fixtures
def test_server_tool_items_keep_their_final_state() -> None:
    _, end = outcome("web-search")
    search = block_at(end, 1, ProviderBlock)
    assert search.data["action"]["query"] == "weather: San Francisco, CA"
    _, end = outcome("image-generation")
    image = block_at(end, 1, ProviderBlock)
    assert image.data["status"] == "completed" and image.data["result"].startswith("UklGR")
    assert block_at(end, 2, TextBlock).text == ""
    _, end = outcome("mcp-server-tool")
    call = block_at(end, 2, ProviderBlock)
    assert call.data["name"] == "ask_question" and call.data["output"].startswith("The `pydant")
    assert "input" not in call.data  # mcp_call_arguments are progress, not accumulated


@needs_fixtures
def test_logprobs_and_structured_output_are_plain_text() -> None:
    _, end = outcome("structured-output-json")
    json.loads(block_at(end, 0, TextBlock).text)
    events, end = outcome("logprobs")
    assert block_at(end, 0, TextBlock).text == "".join(
        e.delta for e in events if isinstance(e, TextDelta)
    )


# ---------------------------------------------------------------------------
# Synthetic streams for what no fixture covers


def sse(*payloads: dict[str, Any] | str, events: bool = True) -> bytes:
    out = []
    for p in payloads:
        if isinstance(p, str):
            out.append(f"data: {p}\n\n")
        elif events:
            out.append(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n")
        else:
            out.append(f"data: {json.dumps(p)}\n\n")
    return "".join(out).encode()


def response(status: str, output: list[Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {"id": "resp_1", "model": "gpt-x", "status": status, "output": output or [], **extra}


CREATED = {"type": "response.created", "response": response("in_progress")}
USAGE = {
    "input_tokens": 10,
    "input_tokens_details": {"cached_tokens": 4},
    "output_tokens": 7,
    "output_tokens_details": {"reasoning_tokens": 3},
    "total_tokens": 17,
}


def completed(output: list[Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "type": "response.completed",
        "response": response("completed", output, usage=USAGE, **extra),
    }


def message_item(text: str, item_id: str = "msg_1", **extra: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "id": item_id,
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
        **extra,
    }


def call_item(name: str = "f", arguments: str = "", **extra: Any) -> dict[str, Any]:
    """A ``function_call`` output item (``fc_1``, ``call_1``)."""
    return {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": name,
        "arguments": arguments,
        **extra,
    }


def added(item: dict[str, Any], index: int = 0) -> dict[str, Any]:
    return {"type": "response.output_item.added", "output_index": index, "item": item}


def item_done(item: dict[str, Any] | None, index: int = 0) -> dict[str, Any]:
    return {"type": "response.output_item.done", "output_index": index, "item": item}


def args_delta(delta: str, index: int = 0) -> dict[str, Any]:
    return {"type": "response.function_call_arguments.delta", "output_index": index, "delta": delta}


def test_azure_text_deltas_before_content_part_added() -> None:
    data = sse(
        CREATED,
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {"type": "message", "id": "msg_1", "content": [], "role": "assistant"},
        },
        {
            "type": "response.output_text.delta",
            "output_index": 0,
            "content_index": 0,
            "delta": "Hel",
        },
        {
            "type": "response.output_text.delta",
            "output_index": 0,
            "content_index": 0,
            "delta": "lo",
        },
        {
            "type": "response.content_part.added",
            "output_index": 0,
            "content_index": 0,
            "part": {"type": "output_text", "text": "", "annotations": []},
        },
        {"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": "!"},
        {
            "type": "response.output_text.done",
            "output_index": 0,
            "content_index": 0,
            "text": "Hello!",
        },
        {"type": "response.output_item.done", "output_index": 0, "item": message_item("Hello!")},
        completed([message_item("Hello!")]),
    )
    events = run_bytes(data)
    end = terminal(events)
    assert not diagnostics(events)
    assert end.message.content == (TextBlock("Hello!", '{"id":"msg_1"}'),)
    assert [e.delta for e in events if isinstance(e, TextDelta)] == ["Hel", "lo", "!"]
    assert isinstance(end, Done)
    assert end.usage.input_tokens == 6 and end.usage.cache_read_tokens == 4


def test_encrypted_content_only_in_response_completed_is_backfilled() -> None:
    streamed = {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "Hm."}],
    }
    final = {**streamed, "encrypted_content": "ENC"}
    data = sse(
        CREATED,
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {"type": "reasoning", "id": "rs_1", "summary": []},
        },
        {
            "type": "response.reasoning_summary_part.added",
            "output_index": 0,
            "summary_index": 0,
            "part": {"type": "summary_text", "text": ""},
        },
        {
            "type": "response.reasoning_summary_text.delta",
            "output_index": 0,
            "summary_index": 0,
            "delta": "Hm.",
        },
        item_done(streamed),
        {
            "type": "response.output_item.added",
            "output_index": 1,
            "item": {"type": "message", "id": "msg_1", "content": []},
        },
        {
            "type": "response.output_text.delta",
            "output_index": 1,
            "content_index": 0,
            "delta": "Hi",
        },
        {"type": "response.output_item.done", "output_index": 1, "item": message_item("Hi")},
        completed([final, message_item("Hi")]),
    )
    events = run_bytes(data)
    end = terminal(events)
    assert isinstance(end, Done)
    thinking = end.message.content[0]
    assert thinking == ThinkingBlock("Hm.", compact(final))
    # The block's end was emitted once, with the signature known then.
    (first_end,) = [e for e in events if isinstance(e, BlockEnd) and e.index == 0]
    assert isinstance(first_end.block, ThinkingBlock)
    assert first_end.block.signature == compact(streamed)
    (note,) = diagnostics(events)
    assert note.kind == "backfilled_from_completed"
    assert events.index(note) < events.index(end)


def test_items_only_in_response_completed() -> None:
    call = call_item(arguments='{"a":1}', status="completed")
    reasoning = {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "S1"}, {"type": "summary_text", "text": "S2"}],
    }
    search = {"type": "web_search_call", "id": "ws_1", "status": "completed"}
    data = sse(CREATED, completed([reasoning, message_item("Answer"), search, call]))
    events = run_bytes(data)
    end = terminal(events)
    assert isinstance(end, Done)
    assert end.message.content == (
        ThinkingBlock("S1\n\nS2", compact(reasoning)),
        TextBlock("Answer", '{"id":"msg_1"}'),
        ProviderBlock(API, "web_search_call", search),
        ToolCallBlock("call_1", "f", {"a": 1}, '{"a":1}', '{"id":"fc_1"}'),
    )
    assert end.stop_reason is StopReason.TOOL_USE
    assert [e.index for e in events if isinstance(e, BlockEnd)] == [0, 1, 2, 3]
    assert [e.raw_json_delta for e in events if isinstance(e, ToolCallDelta)] == ["", '{"a":1}']
    assert not diagnostics(events)


def test_done_marker_without_terminal_is_truncated() -> None:
    data = sse(
        CREATED,
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {"type": "message", "id": "msg_1", "content": []},
        },
        {
            "type": "response.output_text.delta",
            "output_index": 0,
            "content_index": 0,
            "delta": "par",
        },
        "[DONE]",
        events=False,
    )
    end = terminal(run_bytes(data))
    assert isinstance(end, Error) and end.kind == "truncated"
    assert end.message.content == (TextBlock("par"),)
    assert end.message.stop_reason is StopReason.ERROR


def test_arguments_only_in_output_item_done() -> None:
    added_item = call_item("get")
    done = {**added_item, "arguments": '{"q":"x"}', "status": "completed"}
    data = sse(
        CREATED,
        added(added_item),
        item_done(done),
        completed([done]),
    )
    events = run_bytes(data)
    end = terminal(events)
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert [(d.id, d.name, d.raw_json_delta) for d in deltas] == [
        ("call_1", "get", ""),
        ("call_1", "get", '{"q":"x"}'),
    ]
    assert end.message.content == (
        ToolCallBlock("call_1", "get", {"q": "x"}, '{"q":"x"}', '{"id":"fc_1"}'),
    )
    assert not diagnostics(events)


def test_arguments_mismatch_done_value_wins() -> None:
    item = call_item()
    data = sse(
        CREATED,
        added(item),
        args_delta('{"a":'),
        {
            "type": "response.function_call_arguments.done",
            "output_index": 0,
            "arguments": '{"b":2}',
        },
        item_done({**item, "arguments": '{"b":2}'}),
        completed(),
    )
    events = run_bytes(data)
    end = terminal(events)
    assert block_at(end, 0, ToolCallBlock).arguments == {"b": 2}
    assert [d.kind for d in diagnostics(events)] == ["arguments_mismatch"]


def test_eager_arguments_at_added() -> None:
    item = call_item(arguments='{"a"')
    data = sse(
        CREATED,
        added(item),
        args_delta(":1}"),
        item_done({**item, "arguments": '{"a":1}'}),
        completed(),
    )
    events = run_bytes(data)
    assert [e.raw_json_delta for e in events if isinstance(e, ToolCallDelta)] == ["", '{"a"', ":1}"]
    assert block_at(terminal(events), 0, ToolCallBlock).arguments == {"a": 1}


def test_shell_call_without_output_is_a_client_tool_call() -> None:
    item = {
        "type": "shell_call",
        "id": "sh_1",
        "call_id": "call_1",
        "status": "completed",
        "action": {"commands": ["ls"]},
    }
    data = sse(
        CREATED,
        added(item),
        item_done(item),
        completed([item]),
    )
    end = terminal(run_bytes(data))
    assert isinstance(end, Done)
    assert end.stop_reason is StopReason.TOOL_USE
    assert end.message.content == (ProviderBlock(API, "shell_call", item),)


def test_interleaved_summary_and_text_keep_their_blocks() -> None:
    data = sse(
        CREATED,
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {"type": "reasoning", "id": "rs"},
        },
        {
            "type": "response.output_item.added",
            "output_index": 1,
            "item": {"type": "message", "id": "m"},
        },
        {
            "type": "response.reasoning_summary_text.delta",
            "output_index": 0,
            "summary_index": 0,
            "delta": "a",
        },
        {"type": "response.output_text.delta", "output_index": 1, "content_index": 0, "delta": "x"},
        {
            "type": "response.reasoning_summary_text.delta",
            "output_index": 0,
            "summary_index": 1,
            "delta": "b",
        },
        {"type": "response.output_text.delta", "output_index": 1, "content_index": 1, "delta": "y"},
        {"type": "response.refusal.delta", "output_index": 1, "content_index": 2, "delta": "no"},
        completed(),
    )
    events = run_bytes(data)
    end = terminal(events)
    assert end.message.content == (
        ThinkingBlock("a\n\nb"),
        TextBlock("x"),
        TextBlock("y"),
        TextBlock("no", refusal=True),
    )
    assert not diagnostics(events)


def test_response_incomplete_with_content_filter_and_open_tool_call() -> None:
    item = call_item()
    data = sse(
        CREATED,
        added(item),
        args_delta('{"a":1}'),
        {
            "type": "response.incomplete",
            "response": response(
                "incomplete",
                [{**item, "arguments": '{"a":1}', "status": "incomplete"}],
                incomplete_details={"reason": "content_filter"},
            ),
        },
    )
    end = terminal(run_bytes(data))
    assert isinstance(end, Done)
    assert end.stop_reason is StopReason.CONTENT_FILTER
    assert end.message.raw_stop_reason == "content_filter"
    call = block_at(end, 0, ToolCallBlock)
    assert call.error == "incomplete" and call.raw_arguments == '{"a":1}'


def test_incomplete_without_reason() -> None:
    data = sse(CREATED, {"type": "response.incomplete", "response": response("incomplete")})
    end = terminal(run_bytes(data))
    assert isinstance(end, Done)
    assert (end.stop_reason, end.message.raw_stop_reason) == (StopReason.LENGTH, "incomplete")


def test_response_failed_keeps_content_and_usage() -> None:
    data = sse(
        CREATED,
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {"type": "message", "id": "m"},
        },
        {
            "type": "response.output_text.delta",
            "output_index": 0,
            "content_index": 0,
            "delta": "so far",
        },
        {
            "type": "response.failed",
            "response": response(
                "failed",
                error={"code": "server_error", "message": "The server had an error"},
                usage=USAGE,
            ),
        },
        completed(),
    )
    events = run_bytes(data)
    end = terminal(events)
    assert isinstance(end, Error)
    assert (end.kind, end.code, end.reason) == (
        "upstream",
        "server_error",
        "The server had an error",
    )
    assert end.message.content == (TextBlock("so far"),)
    assert end.message.raw_stop_reason == "failed"
    assert end.message.usage.output_tokens == 7


def test_response_failed_without_details() -> None:
    data = sse(CREATED, {"type": "response.failed", "response": response("failed", error=None)})
    end = terminal(run_bytes(data))
    assert isinstance(end, Error) and end.reason == "response failed" and end.code is None


def test_error_event_with_top_level_fields() -> None:
    data = sse(
        CREATED,
        {"type": "error", "code": "rate_limit_exceeded", "message": "Slow down", "param": None},
        completed(),
    )
    events = run_bytes(data)
    end = terminal(events)
    assert isinstance(end, Error)
    assert (end.kind, end.code, end.reason) == ("upstream", "rate_limit_exceeded", "Slow down")


def test_sse_event_name_error_without_type() -> None:
    data = b'event: error\ndata: {"message": "boom"}\n\n' + sse(completed())
    end = terminal(run_bytes(sse(CREATED) + data))
    assert isinstance(end, Error) and end.reason == "boom"


def test_stream_resumed_mid_sequence_does_not_crash() -> None:
    call = call_item(arguments='{"a":1}', status="completed")
    data = sse(
        {
            "type": "response.output_text.delta",
            "output_index": 0,
            "content_index": 0,
            "delta": "tail",
        },
        {"type": "response.function_call_arguments.delta", "output_index": 1, "delta": "1}"},
        {
            "type": "response.reasoning_summary_text.done",
            "output_index": 2,
            "summary_index": 3,
            "text": "late",
        },
        {"type": "response.output_item.done", "output_index": 1, "item": call},
        completed([message_item("head tail"), call]),
    )
    events = run_bytes(data)
    end = terminal(events)
    assert isinstance(end, Done)
    kinds = [d.kind for d in diagnostics(events)]
    assert kinds[0] == "missing_start"
    assert "delta_for_unknown_block" in kinds and "text_mismatch" in kinds
    text, thinking, tool = end.message.content
    assert isinstance(text, TextBlock) and isinstance(thinking, ThinkingBlock)
    assert isinstance(tool, ToolCallBlock)
    assert text.text == "head tail"
    assert thinking.thinking == "late"
    assert tool.arguments == {"a": 1}
    # A later Start is not emitted: response.completed only fills in the message.
    assert sum(isinstance(e, Start) for e in events) == 1
    assert end.message.response_id == "resp_1"


def test_unknown_events_items_and_parts() -> None:
    odd = {"type": "brand_new_item", "id": "x_1", "payload": [1, 2]}
    data = sse(
        CREATED,
        {"type": "response.something_new", "output_index": 0},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {"type": "brand_new_item"},
        },
        item_done(odd),
        {
            "type": "response.output_item.added",
            "output_index": 1,
            "item": {"type": "message", "id": "m"},
        },
        {
            "type": "response.content_part.added",
            "output_index": 1,
            "content_index": 0,
            "part": {"type": "output_audio", "data": ""},
        },
        {
            "type": "response.output_item.done",
            "output_index": 1,
            "item": {
                "type": "message",
                "id": "m",
                "content": [{"type": "output_audio", "data": "AAA"}],
            },
        },
        {"type": "response.web_search_call.searching", "output_index": 0},
        completed(),
    )
    events = run_bytes(data)
    end = terminal(events)
    assert end.message.content == (
        ProviderBlock(API, "brand_new_item", odd),
        ProviderBlock(API, "output_audio", {"type": "output_audio", "data": "AAA"}),
    )
    assert isinstance(end, Done)
    assert end.stop_reason is StopReason.STOP


def test_annotations_from_done_when_no_events_delivered_them() -> None:
    cite = {"type": "url_citation", "url": "https://example.com", "start_index": 0, "end_index": 2}
    item = message_item("Hi")
    item["content"][0]["annotations"] = [cite]
    data = sse(
        CREATED,
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {"type": "message", "id": "msg_1"},
        },
        {
            "type": "response.output_text.delta",
            "output_index": 0,
            "content_index": 0,
            "delta": "Hi",
        },
        item_done(item),
        completed([item]),
    )
    end = terminal(run_bytes(data))
    assert block_at(end, 0, TextBlock).citations == (cite,)


def test_no_event_lines_and_done_after_terminal() -> None:
    data = sse(CREATED, completed([message_item("ok")]), events=False) + b"data: [DONE]\n\n"
    events = run_bytes(data)
    end = terminal(events)
    assert isinstance(end, Done) and block_at(end, 0, TextBlock).text == "ok"


def test_empty_data_and_invalid_json_do_not_stop_the_stream() -> None:
    data = sse(CREATED) + b"data:\n\ndata: {not json\n\n" + sse(completed([message_item("ok")]))
    events = run_bytes(data)
    end = terminal(events)
    assert isinstance(end, Done)
    assert [d.kind for d in diagnostics(events)] == ["invalid_json"]


def test_junk_field_types_never_raise() -> None:
    data = sse(
        {"type": "response.created", "response": {"id": 5, "model": None, "usage": "x"}},
        {"type": "response.output_item.added", "output_index": True, "item": "nope"},
        {
            "type": "response.output_text.delta",
            "output_index": "0",
            "content_index": None,
            "delta": 7,
        },
        {"type": "response.reasoning_summary_text.delta", "output_index": 3.5, "delta": None},
        item_done(None),
        {"type": "response.completed", "response": {"status": 1, "output": {"a": 1}, "usage": [1]}},
    )
    events = run_bytes(data)
    end = terminal(events)
    assert isinstance(end, (Done, Error))
    assert not [d for d in diagnostics(events) if d.kind == "decoder_error"]


# ---------------------------------------------------------------------------
# Chunk invariance and truncation, on every fixture


def _terminal_end(data: bytes) -> int:
    """Offset just past the JSON of the event that ends the stream."""
    ends = ("response.completed", "response.incomplete", "response.failed", "error")
    for end, payload in data_lines(data):
        if json.loads(payload).get("type") in ends:
            return end
    raise AssertionError("no terminal event")


def _body(block: Any) -> str:
    if isinstance(block, TextBlock):
        return block.text
    if isinstance(block, ThinkingBlock):
        return block.thinking
    if isinstance(block, ToolCallBlock):
        return block.raw_arguments
    return ""


@needs_fixtures
@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_truncation_at_random_offsets(path: Path) -> None:
    data = path.read_bytes()
    full = run([data], API)
    full_end = terminal(full)
    mismatched = {
        int(m.group(1))
        for d in diagnostics(full)
        if d.kind.endswith("_mismatch")
        for m in [re.match(r"block (\d+)", d.detail)]
        if m
    }
    end_at = _terminal_end(data)
    rng = random.Random(f"cut/{path.stem}")
    for cut in sorted(rng.randrange(1, len(data)) for _ in range(50)):
        n = StreamNormalizer(API)
        fed = n.feed(data[:cut])
        events = fed + n.flush()
        end = terminal(events)
        if cut >= end_at:
            assert dicts(events) == dicts(full), cut
            continue
        assert isinstance(end, Error) and end.kind == "truncated", (cut, end)
        assert dicts(fed) == dicts(full[: len(fed)]), cut
        partial, whole = end.message, full_end.message
        assert partial.stop_reason is StopReason.ERROR
        assert len(partial.content) <= len(whole.content)
        assert partial.usage in (whole.usage, type(whole.usage)())
        for index, block in enumerate(partial.content):
            assert kind_of(block) == kind_of(whole.content[index]), cut
            if index not in mismatched:
                assert _body(whole.content[index]).startswith(_body(block)), (cut, index)
            if isinstance(block, ToolCallBlock):
                ended_on_wire = any(isinstance(e, BlockEnd) and e.index == index for e in fed)
                assert (block.error == "incomplete") is not ended_on_wire, (cut, index)


def test_summary_part_done_checks_only_its_own_part() -> None:
    """Each part's ``*.done`` is compared with that part's text alone (where the
    part starts is counted as it streams, not read back from the block)."""

    def part(kind: str, index: int, **fields: Any) -> dict[str, Any]:
        return {"type": kind, "output_index": 0, "summary_index": index, **fields}

    delta, done = "response.reasoning_summary_text.delta", "response.reasoning_summary_text.done"
    data = sse(
        CREATED,
        {"type": "response.output_item.added", "output_index": 0, "item": {"type": "reasoning"}},
        part(delta, 0, delta="ab"),
        part(delta, 0, delta="cd"),
        part(done, 0, text="abcd"),  # equal: nothing to do
        part(delta, 1, delta="ef"),
        part(done, 1, text="efgh"),  # extends: the rest streams as a delta
        part(delta, 2, delta="xy"),
        part(done, 2, text="XYZ"),  # differs: the final value wins, reported
        completed(),
    )
    events = run_bytes(data)
    end = terminal(events)
    assert isinstance(end, Done)
    (thinking,) = end.message.content
    assert isinstance(thinking, ThinkingBlock)
    assert thinking.thinking == "abcd\n\nefgh\n\nXYZ"
    streamed = "".join(e.delta for e in events if isinstance(e, ThinkingDelta))
    assert streamed == "abcd\n\nefgh\n\nxy"
    assert [d.kind for d in diagnostics(events)] == ["text_mismatch"]


def test_a_message_whose_output_index_is_not_its_final_position_keeps_its_text_once() -> None:
    item = message_item("Hi")
    data = sse(
        CREATED,
        {"type": "response.output_item.added", "output_index": 1, "item": {**item, "content": []}},
        {
            "type": "response.content_part.added",
            "output_index": 1,
            "content_index": 0,
            "part": {"type": "output_text", "text": "", "annotations": []},
        },
        {
            "type": "response.output_text.delta",
            "output_index": 1,
            "content_index": 0,
            "delta": "Hi",
        },
        item_done(item, 1),
        completed([item]),  # the host lists it first: nothing at index 0 went to the output
    )
    sdk = responses_view(data)
    end = terminal(run_bytes(data))
    texts = [b.text for b in end.message.content if isinstance(b, TextBlock)]
    assert "".join(texts) == sdk.text == "Hi"


def test_a_server_run_custom_tool_call_is_not_a_call_for_the_client() -> None:
    """xAI's x_search runs as ``custom_tool_call`` items named after tools the
    client never offered (its ``tools`` hold only ``{"type": "x_search"}``),
    then the answer follows in the same response."""
    tools = [{"type": "x_search", "allowed_x_handles": ["xai"]}]
    call = {
        "call_id": "xs_call_1",
        "input": '{"query":"from:xai","limit":20}',
        "name": "x_keyword_search",
        "type": "custom_tool_call",
        "id": "ctc_r1_xs_call_1",
        "status": "completed",
    }
    search = {
        "id": "ws_r1_call_2",
        "type": "web_search_call",
        "status": "completed",
        "action": {"type": "search", "query": "", "sources": []},
    }
    answer = message_item("Latest posts", item_id="msg_r1")
    created = {"type": "response.created", "response": response("in_progress", tools=tools)}
    data = sse(
        created,
        {"type": "response.output_item.added", "output_index": 0, "item": {**call, "input": ""}},
        item_done(call, 0),
        item_done(search, 1),
        item_done(answer, 2),
        completed([call, search, answer], tools=tools),
    )
    end = terminal(run_bytes(data))
    assert isinstance(end, Done)
    message = end.message
    assert message.stop_reason is StopReason.STOP and message.tool_calls == ()
    kinds = [b.kind for b in message.content if isinstance(b, ProviderBlock)]
    assert kinds == ["custom_tool_call", "web_search_call"]
    assert message.text == "Latest posts"


def test_a_custom_tool_call_of_a_tool_the_client_offered_is_still_its_call() -> None:
    tools = [{"type": "custom", "name": "grep"}, {"type": "x_search"}]
    call = {
        "call_id": "call_1",
        "input": "TODO",
        "name": "grep",
        "type": "custom_tool_call",
        "id": "ctc_1",
        "status": "completed",
    }
    created = {"type": "response.created", "response": response("in_progress", tools=tools)}
    data = sse(created, item_done(call, 0), completed([call], tools=tools))
    end = terminal(run_bytes(data))
    assert end.message.stop_reason is StopReason.TOOL_USE
