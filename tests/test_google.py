"""Gemini ``streamGenerateContent?alt=sse``: every fixture, the exact content of
key fixtures, the edge cases of providers.md §9.4 that no fixture covers,
chunk invariance and truncation."""

from __future__ import annotations

import hashlib
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from streamnorm import (
    BlockEnd,
    Done,
    Error,
    NormalizationError,
    ProviderBlock,
    Start,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ThinkingDelta,
    ToolCallBlock,
    ToolCallDelta,
    Usage,
)
from streamnorm.apis import ApiName
from streamnorm.normalizer import StreamNormalizer

from .support import (
    all_calls,
    dicts,
    done,
    final,
    final_done,
    fixture_id,
    fixture_paths,
    load,
    needs_fixtures,
    run,
    run_bytes,
    terminal,
)

API: ApiName = "google-generative-ai"
PATHS = fixture_paths(API)


def payloads(name: str) -> list[dict[str, Any]]:
    """The JSON payloads of a fixture, read independently of the library."""
    text = load(f"{API}/{name}").decode("utf-8").replace("\r\n", "\n")
    out = []
    for block in text.split("\n\n"):
        data = [line[5:].lstrip(" ") for line in block.split("\n") if line.startswith("data:")]
        if data:
            out.append(json.loads("\n".join(data)))
    return out


def parts(name: str) -> list[dict[str, Any]]:
    return [
        part
        for p in payloads(name)
        for c in p.get("candidates", [])
        for part in c.get("content", {}).get("parts", [])
    ]


def synthetic_id(response_id: str, n: int) -> str:
    return f"call_{hashlib.sha256(response_id.encode()).hexdigest()[:8]}_{n}"


def kinds(content: tuple[Any, ...]) -> list[str]:
    return [b.kind if isinstance(b, ProviderBlock) else type(b).__name__ for b in content]


# ---------------------------------------------------------------------------
# Every fixture: outcome, block kinds, usage (providers.md §4.4: input =
# prompt − cached + tool-use prompt; output = candidates + thoughts), read
# from the last usageMetadata and the parts of each recording.

T, TH, TC = "TextBlock", "ThinkingBlock", "ToolCallBlock"
GM, UC = "groundingMetadata", "urlContextMetadata"
Expected = tuple[str, StopReason, list[str], tuple[int, int, int, int]]

EXPECTED: dict[str, Expected] = {
    # name: (raw stop, stop, content kinds, (input, output, reasoning, total))
    "code-execution.sse": (
        "STOP",
        StopReason.STOP,
        ["executableCode", "codeExecutionResult", T],
        (507, 276, 168, 783),
    ),
    "file-search-grounding.sse": (
        "STOP",
        StopReason.STOP,
        ["executableCode", T, GM],
        (785, 779, 742, 1564),
    ),
    "function-call-no-args-thoughts.sse": (
        "STOP",
        StopReason.TOOL_USE,
        [TH, TC, TC, TC, TC],
        (249, 241, 183, 490),
    ),
    "function-call-partial-args.sse": ("STOP", StopReason.TOOL_USE, [TC, TC], (26, 155, 132, 181)),
    "function-call-thought-signature.sse": ("STOP", StopReason.TOOL_USE, [TC], (29, 212, 202, 241)),
    "function-call.sse": ("STOP", StopReason.TOOL_USE, [TC], (52, 5, 0, 57)),
    "function-calls-parallel-thinking-ids.sse": (
        "STOP",
        StopReason.TOOL_USE,
        [TC, TC],
        (71, 126, 93, 197),
    ),
    "function-calls-parallel.sse": ("STOP", StopReason.TOOL_USE, [TC, TC], (64, 11, 0, 75)),
    "grounding-google-search.sse": ("STOP", StopReason.STOP, [T, GM], (119, 653, 412, 772)),
    "max-tokens.sse": ("MAX_TOKENS", StopReason.LENGTH, [T], (9, 48, 38, 57)),
    "native-output-function-tools.sse": ("STOP", StopReason.TOOL_USE, [TC], (29, 81, 69, 110)),
    "structured-output-json.sse": ("STOP", StopReason.STOP, [T], (317, 254, 202, 571)),
    "text-basic.sse": ("STOP", StopReason.STOP, [T], (13, 8, 0, 21)),
    "thinking-hidden-thoughts-token-count.sse": (
        "STOP",
        StopReason.STOP,
        [T],
        (30, 2815, 2814, 2845),
    ),
    "thought-parts-2-5-pro.sse": ("STOP", StopReason.STOP, [TH, T], (34, 1256, 787, 1290)),
    "thought-parts-gemini-3.sse": ("STOP", StopReason.STOP, [TH, T], (11, 1416, 713, 1427)),
    "url-context.sse": ("STOP", StopReason.STOP, [T, GM, UC], (4642, 62, 37, 4704)),
    "usage-live-mid-stream.sse": ("STOP", StopReason.STOP, [T], (18, 115, 35, 133)),
    "vertex-flex-service-tier.sse": ("STOP", StopReason.STOP, [T], (5, 101, 100, 106)),
    "vertex-function-call-partial-args-nested.sse": (
        "STOP",
        StopReason.TOOL_USE,
        [TC],
        (31, 1710, 1026, 1741),
    ),
}


@needs_fixtures
def test_expectation_table_covers_every_fixture() -> None:
    assert sorted(p.name for p in PATHS) == sorted(EXPECTED)


@needs_fixtures
@pytest.mark.parametrize("path", PATHS, ids=fixture_id)
def test_fixture_outcome(path: Path) -> None:
    raw_stop, stop, content_kinds, (inp, out, reasoning, total) = EXPECTED[path.name]
    events = run_bytes(path.read_bytes(), API)
    end = terminal(events)
    assert isinstance(end, Done), end
    assert not [e for e in events if isinstance(e, NormalizationError)]
    msg = end.message
    assert (msg.raw_stop_reason, msg.stop_reason) == (raw_stop, stop)
    assert kinds(msg.content) == content_kinds
    assert msg.usage == Usage.of(input_tokens=inp, output_tokens=out, reasoning_tokens=reasoning)
    assert msg.usage.total_tokens == total
    # The canonical total equals what Gemini bills in every recording.
    last_usage = [p["usageMetadata"] for p in payloads(path.name) if "usageMetadata" in p][-1]
    assert msg.usage.total_tokens == last_usage["totalTokenCount"]
    assert msg.usage.raw == last_usage
    # Start from the first chunk; the message carries the reported identity.
    first = payloads(path.name)[0]
    assert events[0] == Start(API, first["modelVersion"], first["responseId"])
    assert (msg.model, msg.response_id) == (first["modelVersion"], first["responseId"])
    # Every block ends once; ids of calls without a wire id are synthesised.
    assert sorted(e.index for e in events if isinstance(e, BlockEnd)) == list(
        range(len(msg.content))
    )
    for block in msg.content:
        if isinstance(block, ToolCallBlock):
            assert block.error is None and block.id


@needs_fixtures
def test_auto_detects_gemini() -> None:
    for path in PATHS:
        assert dicts(run_bytes(path.read_bytes())) == dicts(run_bytes(path.read_bytes(), API))


# ---------------------------------------------------------------------------
# Key fixtures, exact content


@needs_fixtures
def test_function_call_partial_args() -> None:
    name = "function-call-partial-args.sse"
    events = run_bytes(load(f"{API}/{name}"), API)
    msg = terminal(events).message
    rid = "dqHOab6xGLzWodAPkPuViA4"
    opening_signature = parts(name)[0]["thoughtSignature"]
    assert msg.content == (
        ToolCallBlock(
            synthetic_id(rid, 0),
            "getWeather",
            {"location": "Boston"},
            '{"location":"Boston"}',
            opening_signature,
        ),
        ToolCallBlock(
            synthetic_id(rid, 1),
            "getWeather",
            {"location": "San Francisco"},
            '{"location":"San Francisco"}',
        ),
    )
    deltas = [
        (e.index, e.id, e.name, e.raw_json_delta) for e in events if isinstance(e, ToolCallDelta)
    ]
    assert deltas == [
        (0, synthetic_id(rid, 0), "getWeather", ""),
        (0, synthetic_id(rid, 0), "getWeather", '{"location":"Boston'),
        (0, synthetic_id(rid, 0), "getWeather", '"}'),
        (1, synthetic_id(rid, 1), "getWeather", ""),
        (1, synthetic_id(rid, 1), "getWeather", '{"location":"San Francisco'),
        (1, synthetic_id(rid, 1), "getWeather", '"}'),
    ]
    # The first call ends when its closing part ({}) arrives, before the second opens.
    order = [
        (type(e).__name__, e.index) for e in events if isinstance(e, (ToolCallDelta, BlockEnd))
    ]
    assert order.index(("BlockEnd", 0)) < order.index(("ToolCallDelta", 1))


NESTED_DELTAS = [
    "",
    '{"recipe":{"ingredients":[{"amount":"16 oz',
    '","name":"Lasagna noodles',
    '"},{"amount":"1 lb',
    '","name":"Ground beef',
    '"},{"amount":"15 oz',
    '","name":"Ricotta cheese',
    '"},{"amount":"3 cups',
    '","name":"Mozzarella cheese',
    '"},{"amount":"1/2 cup',
    '","name":"Parmesan cheese',
    '"},{"amount":"24 oz',
    '","name":"Tomato sauce',
    '"},{"amount":"1',
    '","name":"Egg',
    '"},{"amount":"2 cloves',
    '","name":"Garlic',
    '"},{"amount":"1 tsp',
    '","name":"Salt',
    '"},{"amount":"1/2 tsp',
    '","name":"Pepper',
    '"}],"name":"Lasagna',
    '","steps":["Preheat oven to 375°F (190°C).',
    '","Cook lasagna noodles according to package directions, drain and set aside',
    ".",
    '","Brown ground beef with minced garlic in a skillet. Drain fat and stir in tomato sauce.'
    " Simmer for 10 minutes.",
    '","In a bowl, mix ricotta cheese, egg, salt, pepper, and Parmesan cheese.',
    '","In a 9x13 baking dish, spread a',
    " thin layer of meat sauce.",
    '","Layer noodles, ricotta mixture, mozzarella, and meat sauce. Repeat.',
    '","Top with remaining mozzarella cheese.',
    '","Cover with foil and bake for 25 minutes.',
    '","Remove foil and bake for another 25 minutes until golden.',
    '","Let stand for 15 minutes before serving.',
    '"]}}',
]


@needs_fixtures
def test_vertex_function_call_partial_args_nested() -> None:
    name = "vertex-function-call-partial-args-nested.sse"
    events = run_bytes(load(f"{API}/{name}"), API)
    msg = terminal(events).message
    deltas = [e.raw_json_delta for e in events if isinstance(e, ToolCallDelta)]
    assert deltas == NESTED_DELTAS
    (call,) = msg.content
    assert isinstance(call, ToolCallBlock)
    assert call.name == "cookRecipe"
    assert call.id == synthetic_id("tjXVaYaxFISTq8YP_MWiyAo", 0)
    assert call.signature == parts(name)[0]["thoughtSignature"]
    assert call.raw_arguments == "".join(NESTED_DELTAS)
    assert call.error is None
    recipe = call.arguments["recipe"]
    assert list(recipe) == ["ingredients", "name", "steps"]
    assert len(recipe["ingredients"]) == 10 and len(recipe["steps"]) == 10
    assert recipe["ingredients"][0] == {"amount": "16 oz", "name": "Lasagna noodles"}
    assert recipe["name"] == "Lasagna"
    assert recipe["steps"][1].endswith("drain and set aside.")
    assert recipe["steps"][4] == "In a 9x13 baking dish, spread a thin layer of meat sauce."
    assert json.loads(call.raw_arguments) == call.arguments


@needs_fixtures
def test_function_call_no_args_thoughts() -> None:
    name = "function-call-no-args-thoughts.sse"
    msg = final(load(f"{API}/{name}"), API).message
    rid = "_vr4aYiWEJnYodAPkujX0QM"
    thinking, theme, *screens = msg.content
    assert thinking == ThinkingBlock(parts(name)[0]["text"])
    assert thinking.thinking.startswith("**Processing User Requests**")
    assert theme == ToolCallBlock(
        synthetic_id(rid, 0), "read_theme", {}, "{}", parts(name)[1]["thoughtSignature"]
    )
    assert screens == [
        ToolCallBlock(synthetic_id(rid, n), "read_screen", {"id": x}, f'{{"id":"{x}"}}')
        for n, x in ((1, "A"), (2, "B"), (3, "C"))
    ]
    assert msg.stop_reason is StopReason.TOOL_USE


@needs_fixtures
def test_function_calls_parallel() -> None:
    msg = final(load(f"{API}/function-calls-parallel.sse"), API).message
    rid = "l9cEarvcAfjC7_UPtZea-Aw"
    assert msg.content == (
        ToolCallBlock(
            synthetic_id(rid, 0), "get_weather", {"location": "Boston"}, '{"location":"Boston"}'
        ),
        ToolCallBlock(
            synthetic_id(rid, 1),
            "get_weather",
            {"location": "New Delhi"},
            '{"location":"New Delhi"}',
        ),
    )


@needs_fixtures
def test_function_calls_parallel_thinking_ids() -> None:
    name = "function-calls-parallel-thinking-ids.sse"
    events = run_bytes(load(f"{API}/{name}"), API)
    msg = terminal(events).message
    assert msg.content == (
        ToolCallBlock(
            "dv8szvqe",
            "get_weather",
            {"location": "Boston"},
            '{"location":"Boston"}',
            parts(name)[0]["thoughtSignature"],
        ),
        ToolCallBlock(
            "j80tal12", "get_weather", {"location": "New Delhi"}, '{"location":"New Delhi"}'
        ),
    )
    # Wire ids are on every delta, from the opening one on.
    assert [e.id for e in events if isinstance(e, ToolCallDelta)] == ["dv8szvqe"] * 2 + [
        "j80tal12"
    ] * 2


@needs_fixtures
def test_function_call_thought_signature() -> None:
    name = "function-call-thought-signature.sse"
    msg = final(load(f"{API}/{name}"), API).message
    (call,) = msg.content
    assert call == ToolCallBlock(
        synthetic_id("QUVVadTSNJ6_qtsPvN7J8Q0", 0),
        "get_country",
        {},
        "{}",
        parts(name)[0]["thoughtSignature"],
    )
    assert call.signature and call.signature.startswith("EpwICpkIAXLI2nxlU6gs")


@needs_fixtures
def test_thought_parts_2_5_pro() -> None:
    name = "thought-parts-2-5-pro.sse"
    events = run_bytes(load(f"{API}/{name}"), API)
    msg = terminal(events).message
    wire = parts(name)
    thoughts = "".join(p["text"] for p in wire if p.get("thought"))
    answer = "".join(p["text"] for p in wire if not p.get("thought"))
    signature = next(p["thoughtSignature"] for p in wire if "thoughtSignature" in p)
    # The signature rides on the first answer part: it does not make it a thought.
    assert not next(p for p in wire if "thoughtSignature" in p).get("thought")
    assert msg.content == (ThinkingBlock(thoughts), TextBlock(answer, signature))
    assert answer.startswith("This is a great question!")
    assert len([e for e in events if isinstance(e, ThinkingDelta)]) == 4


@needs_fixtures
def test_thought_parts_gemini_3() -> None:
    name = "thought-parts-gemini-3.sse"
    msg = final(load(f"{API}/{name}"), API).message
    wire = parts(name)
    # The stream ends with an empty text part that carries the signature.
    assert wire[-1]["text"] == "" and wire[-1]["thoughtSignature"].startswith("EqIZCp8ZAQ")
    thoughts = "".join(p["text"] for p in wire if p.get("thought"))
    answer = "".join(p["text"] for p in wire if not p.get("thought"))
    assert msg.content == (ThinkingBlock(thoughts), TextBlock(answer, wire[-1]["thoughtSignature"]))
    assert thoughts.startswith("**Defining the Narrative Parameters**")


@needs_fixtures
def test_code_execution() -> None:
    name = "code-execution.sse"
    msg = final(load(f"{API}/{name}"), API).message
    wire = parts(name)
    code, result, text = msg.content
    # The code part keeps its thoughtSignature verbatim; the empty text part
    # after it carries nothing and opens nothing.
    assert code == ProviderBlock(API, "executableCode", wire[0])
    assert "thoughtSignature" in code.data
    assert result == ProviderBlock(API, "codeExecutionResult", wire[2])
    assert text == TextBlock(
        "The result of $65465 - 6544 \\times 65464 - 6 + 1.02255$ is **-428,330,955.97745**.",
        wire[-1]["thoughtSignature"],
    )
    assert msg.usage == Usage(507, 276, 0, 0, 168, 783)
    assert msg.stop_reason is StopReason.STOP


@needs_fixtures
def test_grounding_google_search() -> None:
    name = "grounding-google-search.sse"
    events = run_bytes(load(f"{API}/{name}"), API)
    msg = terminal(events).message
    grounding = payloads(name)[-1]["candidates"][0]["groundingMetadata"]
    assert set(grounding) >= {"webSearchQueries", "groundingChunks", "groundingSupports"}
    text, block = msg.content
    assert isinstance(text, TextBlock)
    assert text.text == "".join(p["text"] for p in parts(name))
    assert block == ProviderBlock(API, "groundingMetadata", grounding)
    # Emitted at the end, just before the terminal event.
    assert isinstance(events[-2], BlockEnd) and events[-2].block == block
    assert msg.usage.input_tokens == 17 + 102  # prompt + tool-use prompt


@needs_fixtures
def test_thinking_hidden_thoughts_token_count() -> None:
    msg = final(load(f"{API}/thinking-hidden-thoughts-token-count.sse"), API).message
    assert msg.content == (TextBlock("3"),)
    assert msg.usage == Usage(30, 2815, 0, 0, 2814, 2845)


@needs_fixtures
def test_max_tokens() -> None:
    end = final(load(f"{API}/max-tokens.sse"), API)
    assert isinstance(end, Done)
    assert end.stop_reason is StopReason.LENGTH and end.message.raw_stop_reason == "MAX_TOKENS"
    assert end.content == (TextBlock("Here are all 50 U.S."),)
    assert end.usage == Usage(9, 48, 0, 0, 38, 57)


@needs_fixtures
def test_url_context() -> None:
    name = "url-context.sse"
    msg = final(load(f"{API}/{name}"), API).message
    chunks = [p["candidates"][0] for p in payloads(name)]
    # urlContextMetadata comes on the first chunk only; groundingMetadata is {}
    # there and filled on the last: the last non-empty value of each wins.
    assert chunks[0]["groundingMetadata"] == {} and "urlContextMetadata" not in chunks[-1]
    assert msg.content == (
        TextBlock("Pydantic AI Gateway is now available!"),
        ProviderBlock(API, "groundingMetadata", chunks[-1]["groundingMetadata"]),
        ProviderBlock(
            API,
            "urlContextMetadata",
            {
                "urlMetadata": [
                    {
                        "retrievedUrl": "https://ai.pydantic.dev",
                        "urlRetrievalStatus": "URL_RETRIEVAL_STATUS_SUCCESS",
                    }
                ]
            },
        ),
    )


@needs_fixtures
def test_vertex_flex_signature_on_text_part() -> None:
    name = "vertex-flex-service-tier.sse"
    msg = final(load(f"{API}/{name}"), API).message
    assert msg.content == (TextBlock("OK", parts(name)[0]["thoughtSignature"]),)


# ---------------------------------------------------------------------------
# Synthetic streams (§9.4 items without a fixture)


def sse(*chunks: dict[str, Any], sep: bytes = b"\r\n\r\n", prefix: bytes = b"data: ") -> bytes:
    return b"".join(prefix + json.dumps(c).encode() + sep for c in chunks)


def chunk(*wire_parts: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(wire_parts)}}
    if finish:
        candidate["finishReason"] = finish
    candidate.update(extra.pop("candidate", {}))
    return {"candidates": [candidate], "modelVersion": "gemini-x", "responseId": "r1", **extra}


def call(name: str | None = None, **fields: Any) -> dict[str, Any]:
    fc = {"name": name} if name else {}
    return {"functionCall": {**fc, **fields}}


def events_of(data: bytes, **options: Any) -> list[Any]:
    return run_bytes(data, API, **options)


def diagnostics(events: list[Any]) -> list[str]:
    return [e.kind for e in events if isinstance(e, NormalizationError)]


def test_duplicate_call_id_without_signature_keeps_signature() -> None:
    first = {**call("f", args={"a": 1}, id="c1"), "thoughtSignature": "SIG"}
    repeat = call("f", args={"a": 1}, id="c1")
    end = final_done(sse(chunk(first), chunk(repeat, finish="STOP")), API)
    assert end.content == (ToolCallBlock("c1", "f", {"a": 1}, '{"a":1}', "SIG"),)
    assert end.stop_reason is StopReason.TOOL_USE


def test_duplicate_call_id_supplies_a_missing_signature() -> None:
    first = call("f", args={}, id="c1")
    repeat = {**call("f", args={}, id="c1"), "thoughtSignature": "LATE"}
    events = events_of(sse(chunk(first, repeat, finish="STOP")))
    assert done(events).content == (ToolCallBlock("c1", "f", {}, "{}", "LATE"),)


def test_calls_with_distinct_ids_stay_distinct() -> None:
    end = final_done(sse(chunk(call("f", id="a"), call("f", id="b"), finish="STOP")), API)
    assert [b.id for b in all_calls(end.content)] == ["a", "b"]
    assert [b.raw_arguments for b in all_calls(end.content)] == ["{}", "{}"]


@pytest.mark.parametrize("reason", ["SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "OTHER"])
def test_block_reason_is_a_content_filter_stop(reason: str) -> None:
    body = {"promptFeedback": {"blockReason": reason}, "usageMetadata": {"promptTokenCount": 7}}
    events = events_of(sse(body))
    end = terminal(events)
    assert isinstance(end, Done)
    assert end.stop_reason is StopReason.CONTENT_FILTER
    assert end.message.raw_stop_reason == reason
    assert end.content == ()
    assert end.usage.input_tokens == 7
    # Detected as Gemini from promptFeedback alone.
    assert dicts(run_bytes(sse(body))) == dicts(events)


@pytest.mark.parametrize("reason", ["MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL"])
def test_error_like_finish_reason_is_upstream_error_not_tool_use(reason: str) -> None:
    data = sse(
        chunk(call("f", args={"x": 1})),
        chunk(finish=reason, candidate={"finishMessage": "Malformed function call: f(x="}),
        {"usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 2}, "modelVersion": "m"},
    )
    events = events_of(data)
    end = terminal(events)
    assert isinstance(end, Error)
    assert (end.kind, end.code, end.reason) == ("upstream", reason, "Malformed function call: f(x=")
    assert end.message.stop_reason is StopReason.ERROR
    assert end.message.raw_stop_reason == reason
    # The trailing usage chunk still counts: the Error comes where Done would.
    assert end.message.usage.total_tokens == 5
    assert isinstance(end.message.content[0], ToolCallBlock)


def test_error_like_finish_reason_without_message() -> None:
    end = final(sse(chunk(finish="MALFORMED_FUNCTION_CALL")), API)
    assert isinstance(end, Error) and end.code == "MALFORMED_FUNCTION_CALL"


@pytest.mark.parametrize(
    ("raw", "stop"),
    [
        ("SAFETY", StopReason.CONTENT_FILTER),
        ("RECITATION", StopReason.CONTENT_FILTER),
        ("SPII", StopReason.CONTENT_FILTER),
        ("IMAGE_SAFETY", StopReason.CONTENT_FILTER),
        ("LANGUAGE", StopReason.CONTENT_FILTER),
        ("MAX_TOKENS", StopReason.LENGTH),
        ("OTHER", StopReason.STOP),
        ("FINISH_REASON_UNSPECIFIED", StopReason.STOP),
        ("NO_IMAGE", StopReason.STOP),
    ],
)
def test_stop_mapping_with_a_call_present(raw: str, stop: StopReason) -> None:
    # Only STOP (and the stop-like values) become tool_use with a call present.
    end = final(sse(chunk(call("f"), finish=raw)), API)
    assert isinstance(end, Done)
    expected = StopReason.TOOL_USE if stop is StopReason.STOP else stop
    assert (end.stop_reason, end.message.raw_stop_reason) == (expected, raw)


def test_unknown_finish_reason() -> None:
    events = events_of(sse(chunk({"text": "x"}, finish="SOMETHING_NEW")))
    end = terminal(events)
    assert isinstance(end, Done) and end.stop_reason is StopReason.STOP
    assert end.message.raw_stop_reason == "SOMETHING_NEW"
    assert "unknown_stop_reason" in diagnostics(events)


def test_last_non_empty_finish_reason_wins() -> None:
    data = sse(chunk({"text": "a"}, finish="MAX_TOKENS"), chunk({"text": "b"}, finish=""))
    end = final_done(data, API)
    assert end.message.raw_stop_reason == "MAX_TOKENS" and end.content == (TextBlock("ab"),)


def test_error_object_mid_stream() -> None:
    error = {
        "error": {
            "code": 429,
            "message": "Resource has been exhausted",
            "status": "RESOURCE_EXHAUSTED",
        }
    }
    data = sse(chunk({"text": "Hel"}), error, chunk({"text": "lo"}, finish="STOP"))
    events = events_of(data)
    end = terminal(events)
    assert isinstance(end, Error)
    assert (end.kind, end.code, end.reason) == (
        "upstream",
        "RESOURCE_EXHAUSTED",
        "Resource has been exhausted",
    )
    assert end.message.content == (TextBlock("Hel"),)
    assert end.message.stop_reason is StopReason.ERROR


def test_error_object_without_status_uses_the_code() -> None:
    data = sse(chunk({"text": "a"}), {"error": {"code": 500, "message": "Internal error"}})
    end = final(data, API)
    assert isinstance(end, Error) and (end.code, end.reason) == ("500", "Internal error")


def test_error_body_instead_of_a_stream() -> None:
    body = {"error": {"code": 400, "message": "API key not valid", "status": "INVALID_ARGUMENT"}}
    for data in (sse(body), json.dumps(body).encode()):
        end = final(data)
        assert isinstance(end, Error) and end.kind == "upstream"
        assert end.reason == "API key not valid"


def test_no_finish_reason_is_truncated() -> None:
    events = events_of(sse(chunk({"text": "partial"}), {"usageMetadata": {"promptTokenCount": 4}}))
    end = terminal(events)
    assert isinstance(end, Error) and end.kind == "truncated"
    assert end.message.content == (TextBlock("partial"),)
    assert end.message.usage.input_tokens == 4
    assert end.message.raw_stop_reason is None


def test_json_array_body_is_read_like_the_sse_stream() -> None:
    # A request without alt=sse answers with one streamed JSON array (DESIGN.md §2).
    chunks = [chunk({"text": "hi"}), chunk({"text": "!"}, finish="STOP")]
    body = json.dumps(chunks, indent=2).encode()
    for api in ("auto", API):
        assert dicts(run_bytes(body, api)) == dicts(run_bytes(sse(*chunks), api))
    assert done(events_of(body)).content == (TextBlock("hi!"),)


def test_data_without_space_after_colon() -> None:
    chunks = (chunk({"text": "Hello"}), chunk({"text": " world"}, finish="STOP"))
    with_space = events_of(sse(*chunks))
    without = events_of(sse(*chunks, prefix=b"data:"))
    assert dicts(without) == dicts(with_space)
    assert done(without).content == (TextBlock("Hello world"),)


def test_lf_framing_equals_crlf_framing() -> None:
    chunks = (chunk({"text": "a"}), chunk({"text": "b"}, finish="STOP"))
    assert dicts(events_of(sse(*chunks, sep=b"\n\n"))) == dicts(events_of(sse(*chunks)))


def _multi(index0: str, index1: str, finish: bool = False) -> dict[str, Any]:
    cands: list[dict[str, Any]] = [
        {"content": {"parts": [{"text": index0}]}},
        {"content": {"parts": [{"text": index1}]}, "index": 1},
    ]
    if finish:
        cands[0]["finishReason"] = "STOP"
        cands[1]["finishReason"] = "MAX_TOKENS"
    return {"candidates": cands, "modelVersion": "m", "responseId": "r"}


def test_candidate_count_two_with_choice() -> None:
    data = sse(_multi("a", "x"), _multi("b", "y", finish=True))
    zero = final_done(data, API)
    one = final_done(data, API, choice=1)
    assert zero.content == (TextBlock("ab"),) and zero.stop_reason is StopReason.STOP
    assert one.content == (TextBlock("xy"),) and one.stop_reason is StopReason.LENGTH


def test_candidate_chunks_carrying_one_candidate_each() -> None:
    # Gemini interleaves candidates, one per chunk, each with its index.
    data = sse(
        {"candidates": [{"content": {"parts": [{"text": "a"}]}, "index": 0}]},
        {"candidates": [{"content": {"parts": [{"text": "x"}]}, "index": 1}]},
        {
            "candidates": [
                {"content": {"parts": [{"text": "y"}]}, "index": 1, "finishReason": "STOP"}
            ]
        },
        {
            "candidates": [
                {"content": {"parts": [{"text": "b"}]}, "index": 0, "finishReason": "STOP"}
            ]
        },
    )
    assert final_done(data, API, choice=1).content == (TextBlock("xy"),)
    assert final_done(data, API).content == (TextBlock("ab"),)


def test_partial_args_out_of_order_falls_back_to_the_final_tree() -> None:
    data = sse(
        chunk(call("f", willContinue=True)),
        chunk(call(partialArgs=[{"jsonPath": "$.a.x", "numberValue": 1}], willContinue=True)),
        chunk(call(partialArgs=[{"jsonPath": "$.b", "stringValue": "B"}], willContinue=True)),
        # Reopens the object "a", which the previous path closed.
        chunk(call(partialArgs=[{"jsonPath": "$.a.y", "boolValue": True}], willContinue=True)),
        chunk(
            call(partialArgs=[{"jsonPath": "$.c[0]", "nullValue": "NULL_VALUE"}], willContinue=True)
        ),
        chunk(call(), finish="STOP"),
    )
    events = events_of(data)
    assert diagnostics(events) == ["partial_args_out_of_order"]
    (block,) = done(events).content
    assert isinstance(block, ToolCallBlock)
    assert block.arguments == {"a": {"x": 1, "y": True}, "b": "B", "c": [None]}
    assert block.raw_arguments == '{"a":{"x":1,"y":true},"b":"B","c":[null]}'
    assert block.error is None
    deltas = [e.raw_json_delta for e in events if isinstance(e, ToolCallDelta)]
    assert deltas[:3] == ["", '{"a":{"x":1', '},"b":"B']


@pytest.mark.parametrize(
    "entries",
    [
        # a skipped array index
        [{"jsonPath": "$.a[1]", "stringValue": "x"}],
        # the same scalar set twice
        [{"jsonPath": "$.n", "numberValue": 1}, {"jsonPath": "$.n", "numberValue": 2}],
        # a path that is not a JSON path
        [{"jsonPath": "a.b", "stringValue": "x"}],
    ],
)
def test_partial_args_that_cannot_be_synthesised(entries: list[dict[str, Any]]) -> None:
    data = sse(
        chunk(call("f", willContinue=True)),
        chunk(call(partialArgs=entries)),
        chunk({"text": ""}, finish="STOP"),
    )
    events = events_of(data)
    assert diagnostics(events) == ["partial_args_out_of_order"]
    (block,) = done(events).content
    assert isinstance(block, ToolCallBlock) and block.error is None
    assert json.loads(block.raw_arguments) == block.arguments


def test_partial_args_scalars_brackets_and_escapes() -> None:
    data = sse(
        chunk(call("f", willContinue=True, args={"mode": "fast"})),
        chunk(
            call(
                partialArgs=[
                    {"jsonPath": "$.n", "numberValue": 2.5},
                    {"jsonPath": "$['odd.key'][0].ok", "boolValue": False},
                    {"jsonPath": "$['odd.key'][1]", "nullValue": None},
                    {"jsonPath": "$.q", "stringValue": 'say "hi"\n', "willContinue": True},
                    {"jsonPath": "$.q", "stringValue": "é\\"},
                ],
                willContinue=True,
            )
        ),
        chunk(call()),
        chunk({"text": ""}, finish="STOP"),
    )
    events = events_of(data)
    assert diagnostics(events) == []
    (block,) = done(events).content
    assert isinstance(block, ToolCallBlock)
    expected = {"mode": "fast", "n": 2.5, "odd.key": [{"ok": False}, None], "q": 'say "hi"\né\\'}
    assert block.arguments == expected
    assert block.raw_arguments == json.dumps(expected, separators=(",", ":"), ensure_ascii=False)


def test_streamed_call_open_at_the_terminal_is_incomplete() -> None:
    data = sse(
        chunk(call("f", willContinue=True), candidate={"index": 0}),
        chunk(
            call(
                partialArgs=[{"jsonPath": "$.city", "stringValue": "Par", "willContinue": True}],
                willContinue=True,
            )
        ),
        chunk(finish="MAX_TOKENS"),
    )
    events = events_of(data)
    end = terminal(events)
    assert isinstance(end, Done) and end.stop_reason is StopReason.LENGTH
    (block,) = end.content
    assert isinstance(block, ToolCallBlock)
    # Closing text is written (it parses), but the call was cut: incomplete.
    assert block.raw_arguments == '{"city":"Par"}'
    assert block.error == "incomplete"
    assert block.arguments == {"city": "Par"}


def test_streamed_call_open_when_the_stream_is_cut() -> None:
    data = sse(
        chunk(call("f", willContinue=True)),
        chunk(
            call(
                partialArgs=[{"jsonPath": "$.a[0].b", "stringValue": "x", "willContinue": True}],
                willContinue=True,
            )
        ),
    )
    end = final(data, API)
    assert isinstance(end, Error) and end.kind == "truncated"
    (block,) = end.message.content
    assert isinstance(block, ToolCallBlock) and block.error == "incomplete"
    assert block.raw_arguments == '{"a":[{"b":"x"}]}'


def test_streamed_call_without_values_has_empty_arguments() -> None:
    end = final_done(
        sse(
            chunk(call("f", willContinue=True)),
            chunk(call(willContinue=True)),
            chunk(call(), finish="STOP"),
        ),
        API,
    )
    assert end.content == (ToolCallBlock(synthetic_id("r1", 0), "f", {}, ""),)


def test_named_part_closes_an_open_streamed_call() -> None:
    data = sse(
        chunk(call("f", willContinue=True)),
        chunk(call(partialArgs=[{"jsonPath": "$.a", "numberValue": 1}], willContinue=True)),
        chunk(call("g", args={"b": 2}), finish="STOP"),
    )
    end = final_done(data, API)
    assert [(b.name, b.raw_arguments, b.error) for b in all_calls(end.content)] == [
        ("f", '{"a":1}', None),
        ("g", '{"b":2}', None),
    ]


def test_nameless_call_part_without_an_open_call() -> None:
    events = events_of(
        sse(chunk(call(partialArgs=[{"jsonPath": "$.a", "numberValue": 1}]), finish="STOP"))
    )
    assert diagnostics(events) == ["delta_for_unknown_block"]
    assert done(events).content == ()


def test_thought_true_decides_thinking_not_the_signature() -> None:
    data = sse(
        chunk({"text": "think", "thought": True}),
        chunk({"text": " more", "thought": True, "thoughtSignature": "S1"}),
        chunk({"text": "answer", "thoughtSignature": "S2"}),
        chunk({"text": " rest"}, finish="STOP"),
    )
    events = events_of(data)
    assert done(events).content == (
        ThinkingBlock("think more", "S1"),
        TextBlock("answer rest", "S2"),
    )
    # The signature change is announced on the ThinkingDelta of its part.
    thinking = [e for e in events if isinstance(e, ThinkingDelta)]
    assert [(e.delta, e.signature) for e in thinking] == [("think", None), (" more", "S1")]


def test_signature_retention() -> None:
    data = sse(
        chunk({"text": "a", "thoughtSignature": "S1"}),
        chunk({"text": "b"}),  # no signature: keeps S1
        chunk({"text": "c", "thoughtSignature": "S2"}),  # replaces
        chunk({"text": "", "thoughtSignature": ""}, finish="STOP"),
    )
    assert final_done(data, API).content == (TextBlock("abc", "S2"),)


def test_empty_text_with_signature_after_a_call_opens_a_text_block() -> None:
    data = sse(chunk(call("f")), chunk({"text": "", "thoughtSignature": "S"}, finish="STOP"))
    end = final_done(data, API)
    assert kinds(end.content) == ["ToolCallBlock", "TextBlock"]
    assert end.content[1] == TextBlock("", "S")
    assert end.stop_reason is StopReason.TOOL_USE


def test_empty_text_without_signature_does_nothing() -> None:
    data = sse(
        chunk({"text": "t", "thought": True}),
        chunk({"text": ""}),
        chunk({"text": "", "thought": True}, finish="STOP"),
    )
    assert final_done(data, API).content == (ThinkingBlock("t"),)


def test_other_parts_are_provider_blocks() -> None:
    image = {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}
    data = sse(
        chunk(
            {"text": "see"},
            image,
            {"fileData": {"fileUri": "gs://x"}},
            {"text": "done"},
            finish="STOP",
        )
    )
    end = final_done(data, API)
    assert end.content == (
        TextBlock("see"),
        ProviderBlock(API, "inlineData", image),
        ProviderBlock(API, "fileData", {"fileData": {"fileUri": "gs://x"}}),
        TextBlock("done"),
    )


def test_citation_metadata_goes_to_the_last_text_block() -> None:
    sources = [{"startIndex": 0, "endIndex": 4, "uri": "https://example.com"}]
    data = sse(
        chunk({"text": "one"}),
        chunk({"text": " two"}, candidate={"citationMetadata": {"citationSources": sources}}),
        chunk({"text": ""}, finish="STOP", candidate={"citationMetadata": {}}),
    )
    assert final_done(data, API).content == (TextBlock("one two", citations=tuple(sources)),)


def test_citation_metadata_after_the_text_block_ended() -> None:
    sources = [{"uri": "https://example.com"}]
    data = sse(
        chunk({"text": "cited"}, candidate={"citationMetadata": {"citationSources": sources}}),
        chunk(call("f"), finish="STOP"),
    )
    events = events_of(data)
    end = done(events)
    assert end.content[0] == TextBlock("cited", citations=tuple(sources))
    assert kinds(end.content) == ["TextBlock", "ToolCallBlock"]


def test_usage_cached_tokens_and_missing_fields() -> None:
    usage = {
        "promptTokenCount": 1000,
        "cachedContentTokenCount": 800,
        "toolUsePromptTokenCount": 50,
        "thoughtsTokenCount": 20,
        "totalTokenCount": 1070,
    }
    events = events_of(sse(chunk({"text": "x"}, finish="STOP", usageMetadata=usage)))
    end = done(events)
    # No candidatesTokenCount in the snapshot: it counts as 0.
    assert end.usage == Usage(250, 20, 800, 0, 20, 1070)
    assert end.usage.total_tokens == usage["totalTokenCount"]


def test_usage_snapshots_latest_wins() -> None:
    data = sse(
        chunk({"text": "a"}, usageMetadata={"promptTokenCount": 5, "candidatesTokenCount": 9}),
        chunk({"text": "b"}, usageMetadata={"promptTokenCount": 5}),
        chunk(
            {"text": "c"},
            finish="STOP",
            usageMetadata={"promptTokenCount": 5, "candidatesTokenCount": 3},
        ),
    )
    events = events_of(data)
    updates = [e.usage.output_tokens for e in events if type(e).__name__ == "UsageUpdate"]
    assert updates == [9, 0, 3]
    assert done(events).usage.output_tokens == 3


def test_start_and_requested_model() -> None:
    data = sse(chunk({"text": "a"}, finish="STOP"))
    events = run_bytes(data, "gemini", model="gemini-requested")
    assert events[0] == Start(API, "gemini-x", "r1")
    msg = terminal(events).message
    assert (msg.model, msg.response_model, msg.response_id) == (
        "gemini-requested",
        "gemini-x",
        "r1",
    )


def test_vertex_extras_are_ignored() -> None:
    base = chunk({"text": "ok"}, finish="STOP")
    vertex = {**base, "createTime": "2026-01-01T00:00:00Z", "trafficType": "ON_DEMAND"}
    assert dicts(events_of(sse(vertex))) == dicts(events_of(sse(base)))


def test_input_after_the_terminal_is_ignored_and_feed_after_flush_raises() -> None:
    n = StreamNormalizer(API)
    n.feed(sse({"error": {"code": 503, "status": "UNAVAILABLE", "message": "overloaded"}}))
    assert n.closed
    assert n.feed(sse(chunk({"text": "late"}, finish="STOP"))) == []
    n.flush()
    with pytest.raises(RuntimeError):
        n.feed(b"data: {}\r\n\r\n")


# ---------------------------------------------------------------------------
# Chunk invariance and truncation, on every fixture


_FINISH = re.compile(rb'"(finishReason|blockReason)"\s*:\s*"[^"]')


def _stop_point(data: bytes) -> int:
    """The offset just after the JSON of the first payload with a stop value:
    a cut at or after it has the stop value, a cut before it does not."""
    match = _FINISH.search(data)
    assert match is not None
    line_end = data.find(b"\n", match.end())
    line = data[: line_end if line_end >= 0 else len(data)]
    return line.rstrip(b"\r").rfind(b"}") + 1


def _comparable(content: tuple[Any, ...]) -> list[Any]:
    """Content without the candidate metadata blocks (added at the terminal)."""
    return [b for b in content if not (isinstance(b, ProviderBlock) and b.kind in (GM, UC))]


@needs_fixtures
@pytest.mark.parametrize("path", PATHS, ids=fixture_id)
def test_truncation_at_random_offsets(path: Path) -> None:
    data = path.read_bytes()
    full_events = run([data], API)
    full = terminal(full_events).message
    stop_at = _stop_point(data)
    assert 0 < stop_at <= len(data)
    rng = random.Random(f"cuts/{path.name}")
    done_seen = error_seen = 0
    for cut in sorted(rng.sample(range(1, len(data)), min(50, len(data) - 1))):
        n = StreamNormalizer(API)
        fed = n.feed(data[:cut])
        # What complete events produce does not depend on what follows.
        assert dicts(fed) == dicts(full_events[: len(fed)])
        end = terminal(fed + n.flush())
        if cut < stop_at:
            error_seen += 1
            assert isinstance(end, Error) and end.kind == "truncated", (cut, end)
            assert end.message.raw_stop_reason is None
            got, want = _comparable(end.message.content), _comparable(full.content)
            assert len(got) <= len(want)
            for g, w in zip(got, want, strict=False):
                if isinstance(w, TextBlock):
                    assert isinstance(g, TextBlock) and w.text.startswith(g.text)
                elif isinstance(w, ThinkingBlock):
                    assert isinstance(g, ThinkingBlock) and w.thinking.startswith(g.thinking)
                elif isinstance(w, ToolCallBlock):
                    assert isinstance(g, ToolCallBlock) and (g.id, g.name) == (w.id, w.name)
                    assert g == w or g.error == "incomplete"
                else:
                    assert g == w
        else:
            done_seen += 1
            assert isinstance(end, Done), (cut, end)
            assert end.message == full
    assert error_seen, "some cut falls before the stop value"


_COUNT_FIELDS = (
    "cachedContentTokenCount",
    "thoughtsTokenCount",
    "promptTokenCount",
    "toolUsePromptTokenCount",
    "candidatesTokenCount",
)
_COUNT_VALUES: tuple[Any, ...] = (
    0,
    1,
    7,
    2**63 - 1,
    2**63,
    -1,
    -(2**70),
    True,
    False,
    1.0,
    None,
    "3",
    [],
)


def test_usage_counts_that_are_no_count_are_zero() -> None:
    # Every count a chunk's usageMetadata may carry, valid or not: a count
    # that is no integer in [0, 2**63) counts as 0 (bools and floats too),
    # whatever the others are; the rest follow §4.4.
    from streamnorm.providers.google.decoder import to_usage

    def count(raw: dict[str, Any], field: str) -> int:
        value = raw.get(field, 0)
        return value if type(value) is int and 0 <= value < 2**63 else 0

    rng = random.Random(4)
    for _ in range(3000):
        raw = {f: rng.choice(_COUNT_VALUES) for f in _COUNT_FIELDS if rng.random() < 0.8}
        cached, thoughts, prompt, tool, candidates = (count(raw, f) for f in _COUNT_FIELDS)
        usage = to_usage(raw)
        assert usage.input_tokens == max(prompt + tool - cached, 0), raw
        assert (usage.output_tokens, usage.cache_read_tokens) == (candidates + thoughts, cached)
        assert usage.reasoning_tokens == thoughts and usage.raw is raw
