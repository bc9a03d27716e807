"""The fuzz targets beyond the SSE streams (``fuzz/targets.py``): a fixed
range of seeds of each, checked in CI; longer runs are ``python -m fuzz.run
--target all``."""

from __future__ import annotations

import json
import random
import signal

import pytest
from fuzz.check import InvariantError, check
from fuzz.run import fuzz_targets
from fuzz.targets import TARGETS

from streamnorm import (
    AssistantMessage,
    BlockEnd,
    Done,
    Error,
    Event,
    ProviderBlock,
    Start,
    StopReason,
    StreamNormalizer,
    Usage,
    UserMessage,
    decode_request,
    encode_request,
    encode_stream,
)

from .support import needs_fixtures

#: Seeds per target checked here (a few seconds each); the gateway's cases
#: run real requests, some of which wait out a stalled upstream.
SEEDS = 300
SEEDS_OF = {"gateway": 120}


@needs_fixtures
@pytest.mark.parametrize("name", sorted(TARGETS))
def test_every_seed_of_the_target_holds_its_invariants(name: str) -> None:
    seeds = SEEDS_OF.get(name, SEEDS)
    counts, reports = fuzz_targets((name,), range(seeds))
    assert counts[name] == seeds
    assert not reports, "\n".join(reports[:3])


@needs_fixtures
def test_a_broken_rule_is_reported_with_its_replay(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(case: object) -> None:
        raise InvariantError("made_up", "for the test")

    monkeypatch.setitem(
        TARGETS,
        "requests",
        TARGETS["requests"].__class__("requests", TARGETS["requests"].generate, broken),
    )
    counts, reports = fuzz_targets(("requests",), [7])
    assert counts["requests"] == 1 and len(reports) == 1
    assert "seed 7 broke made_up" in reports[0]
    assert "python -m fuzz.run --target requests --seed 7 --count 1" in reports[0]


def test_the_same_seed_makes_the_same_input() -> None:
    for target in TARGETS.values():
        assert target.generate(random.Random(5)) == target.generate(random.Random(5))


def test_bytes_after_a_json_array_give_the_same_error_in_any_chunks() -> None:
    """Found by the ``framings`` target: the reason quoted what had arrived of
    the bytes after ``]``, so it changed with the chunking."""
    data = b'[{"candidates": [{"content": {"parts": [{"text": "hi"}]}}]}],\n  "usage": {}'
    check(data, "auto", {}, split_seed=1)
    end = StreamNormalizer("google-generative-ai").feed(data)[-1]
    assert isinstance(end, Error) and end.kind == "protocol"
    assert end.reason == "unexpected byte after the array: b','"


def test_a_responses_item_that_lost_its_type_is_encoded_with_its_kind() -> None:
    """Found by the ``encoders`` target: a provider item whose ``type`` a
    mutated stream dropped made the Responses encoder raise ``KeyError``."""
    item = ProviderBlock("openai-responses", "web_search_call", {"id": "ws_1", "status": "done"})
    message = AssistantMessage(
        (item,), "openai-responses", "m", StopReason.STOP, "completed", Usage(), "resp_1"
    )
    events: list[Event] = [
        Start("openai-responses", "m", "resp_1"),
        BlockEnd(0, item),
        Done(message),
    ]
    encoded = b"".join(encode_stream(events, "openai-responses"))
    check(encoded, "openai-responses", {}, split_seed=3)
    assert b'"type":"web_search_call","id":"ws_1"' in encoded.replace(b" ", b"")


@pytest.mark.parametrize("stray", [b"}", b"]", b":", b","])
def test_a_stray_closer_after_a_json_document_ends_the_stream(stray: bytes) -> None:
    """Found by a 10-minute run of every target: after a pretty-printed JSON
    document, a byte no value starts with began an empty item that consumed
    nothing, and the framer looped for ever, holding ever more empty items.
    (The alarm turns a hang into a failure.)"""
    chunk = {"candidates": [{"content": {"parts": [{"text": "hi"}]}, "finishReason": "STOP"}]}
    body = json.dumps(chunk, indent=2).encode() + b"\n" + stray
    signal.signal(signal.SIGALRM, _hang)
    signal.alarm(5)
    try:
        check(body, "auto", {}, split_seed=2)
        end = StreamNormalizer("auto").feed(body)[-1]
    finally:
        signal.alarm(0)
    assert isinstance(end, Error) and end.kind == "protocol"


def _hang(*_: object) -> None:
    raise TimeoutError("the framer did not return")


def test_gemini_media_with_a_field_that_is_no_string_is_kept_as_it_came() -> None:
    """Found by a 10-minute run of every target: a ``fileUri`` holding a list
    reached ``mimetypes`` and raised ``TypeError`` out of ``decode_request``."""
    body = {
        "contents": [{"role": "user", "parts": [{"fileData": {"fileUri": [{"text": "x"}]}}]}],
    }
    request = decode_request(body, "google-generative-ai", path="/v1beta/models/m:generateContent")
    (message,) = request.messages
    assert isinstance(message, UserMessage)
    wire = encode_request(request, "google-generative-ai", sanitize=False)
    assert wire.body["contents"] == body["contents"]


def test_a_cohere_index_that_is_an_object_keys_a_block() -> None:
    """Found by a 10-minute run of every target: an index holding an object
    was unhashable as a block key, and the decoder raised (``decoder_error``)."""
    data = b'event: tool-call-end\ndata: {"type":"tool-call-end","index":{"a":1}}\n\n'
    check(data, "cohere-chat", {}, split_seed=4)


@needs_fixtures
@pytest.mark.parametrize("seed", [4116524, 4366889])
def test_the_seeds_that_broke_the_responses_encoder_hold(seed: int) -> None:
    """Found by the same run: a message item without ``content`` (or ``id``)
    made the Responses encoder raise ``KeyError``."""
    target = TARGETS["encoders"]
    target.check(target.generate(random.Random(seed)))
