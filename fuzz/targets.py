"""Fuzz targets beyond the SSE streams: every framing and every codec.

A target makes one input from a seed (``random.Random(seed)``, so a seed is a
complete bug report) and checks it, raising :class:`InvariantError` naming
the broken rule:

* ``framings`` — the read-only APIs' recordings (AWS event stream, NDJSON,
  Gemini's JSON array, Cohere and Mistral SSE) after byte-level mutations,
  fed as their api or ``auto``: every invariant of :func:`fuzz.check.check`.
* ``requests`` — recorded request bodies after JSON mutations:
  ``decode_request`` gives a ``Request`` or raises ``ValueError``; a decoded
  request encodes for every request API (``ValueError`` allowed) and the
  same-API body decodes again.
* ``responses`` — recorded non-streaming bodies after JSON mutations:
  ``decode_response`` gives a message or raises ``ValueError``, and the
  message encodes as every API's response.
* ``encoders`` — the canonical events of a mutated recorded stream (any
  valid event sequence streamnorm produces), encoded for every API: the
  encoder never raises, and the bytes pass every invariant of ``check`` when
  read back as that API (chunk invariance of the encoded bytes included).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from fuzz.check import InvariantError, check
from fuzz.gateway import check_gateway, gateway_plan, shared
from fuzz.mutate import APIS, FIXTURES, _mutate_payload, dumps, generate_from
from streamnorm import decode_request, decode_response, encode_request, encode_response
from streamnorm.encoder import encode_stream
from streamnorm.normalizer import StreamNormalizer

__all__ = ["TARGETS", "Target", "TargetCase"]

#: Each read-only recording folder and the api it is fed as.
_EXTRA = {
    "bedrock-converse-stream": "bedrock-converse-stream",
    "bedrock-invoke-stream": "bedrock-invoke-stream",
    "ollama-chat": "ollama-chat",
    "gemini-json-array": "google-generative-ai",
    "cohere-chat": "cohere-chat",
    "mistral-chat": "openai-completions",
}


@dataclass
class TargetCase:
    """One generated input of a target and what it is fed as."""

    target: str
    api: str
    data: bytes
    source: str

    def describe(self) -> str:
        return f"{self.target}: {self.source} as {self.api} ({len(self.data)} bytes)"


@dataclass(frozen=True)
class Target:
    name: str
    generate: Callable[[random.Random], TargetCase]
    check: Callable[[TargetCase], None]


def _files(folder: Path, pattern: str) -> list[Path]:
    return sorted(folder.glob(pattern)) if folder.is_dir() else []


# --------------------------------------------------------------------------
# Byte mutations for framings that are not SSE


def _byte_mutation(data: bytes, rng: random.Random, other: bytes) -> bytes:
    """One change anywhere in the bytes: a flip, a cut, a deleted, repeated
    or foreign run, a splice with another recording."""
    if not data:
        return other[: rng.randrange(len(other) + 1)]
    i = rng.randrange(len(data))
    j = min(len(data), i + rng.randrange(1, 64))
    op = rng.randrange(6)
    if op == 0:
        return data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[i + 1 :]
    if op == 1:
        return data[:i]
    if op == 2:
        return data[:i] + data[j:]
    if op == 3:
        return data[:j] + data[i:j] + data[j:]
    if op == 4:
        return data[:i] + rng.randbytes(rng.randrange(1, 16)) + data[i:]
    k = rng.randrange(len(other) + 1)
    return data[:i] + other[k:]


def _framing_case(rng: random.Random) -> TargetCase:
    root = FIXTURES / "extra-apis"
    folders = [(name, api) for name, api in _EXTRA.items() if (root / name).is_dir()]
    if not folders:
        return TargetCase("framings", "auto", rng.randbytes(rng.randrange(64)), "random bytes")
    name, api = rng.choice(folders)
    paths = _files(root / name, "*.*")
    paths = [p for p in paths if p.suffix in (".bin", ".ndjson", ".json", ".sse")]
    path = rng.choice(paths)
    data, other = path.read_bytes(), rng.choice(paths).read_bytes()
    for _ in range(rng.randrange(0, 4)):
        data = _byte_mutation(data, rng, other)
    feed_as = api if rng.random() < 0.8 else "auto"
    return TargetCase("framings", feed_as, data, f"extra-apis/{name}/{path.name}")


def _check_framing(case: TargetCase) -> None:
    check(case.data, case.api, {}, split_seed=len(case.data))


# --------------------------------------------------------------------------
# Request and response bodies


def _body_case(kind: str, rng: random.Random) -> TargetCase:
    api = rng.choice(APIS)
    paths = _files(FIXTURES / kind / api, "*.json")
    if not paths:
        return TargetCase(kind, api, b"{}", "empty body")
    path = rng.choice(paths)
    body: Any = json.loads(path.read_bytes())
    for _ in range(rng.randrange(1, 5)):
        body = _mutate_payload(body, rng, ())
    try:
        data = dumps(body, rng).encode("utf-8", "surrogatepass")
    except (ValueError, RecursionError):
        data = path.read_bytes()
    return TargetCase(kind, api, data, f"{kind}/{api}/{path.name}")


def _guard(rule: str, call: Callable[[], Any]) -> Any:
    """``call()``; ``None`` when it raised ``ValueError`` (a clear refusal),
    an :class:`InvariantError` for anything else that escaped."""
    try:
        return call()
    except ValueError:
        return None
    except Exception as exc:  # any other escape is the finding
        raise InvariantError(rule, f"{type(exc).__name__}: {exc}") from exc


def _check_request(case: TargetCase) -> None:
    request = _guard("decode_request", lambda: decode_request(case.data, case.api))
    if request is None:
        return
    for target in APIS:
        wire = _guard("encode_request", partial(encode_request, request, target, provider="fuzz"))
        if wire is not None and target == case.api:
            again = partial(decode_request, wire.body, target, path=wire.path)
            _guard("decode_request_again", again)


def _check_response(case: TargetCase) -> None:
    message = _guard("decode_response", lambda: decode_response(case.data, case.api))
    if message is None:
        return
    for target in APIS:
        _guard("encode_response", partial(encode_response, message, target))


# --------------------------------------------------------------------------
# Encoders


def _encoder_case(rng: random.Random) -> TargetCase:
    source = generate_from(rng.choice(APIS), rng)
    target = rng.choice(APIS)
    return TargetCase("encoders", target, source.data, f"{source.describe()} from {source.api}")


def _check_encoder(case: TargetCase) -> None:
    normalizer = StreamNormalizer("auto")
    events = [*normalizer.feed(case.data), *normalizer.flush()]
    encoded = _guard("encode_stream", lambda: b"".join(encode_stream(events, case.api)))
    if encoded is None:
        raise InvariantError("encode_stream", "encode_stream refused a canonical event sequence")
    check(encoded, case.api, {}, split_seed=len(encoded))


# --------------------------------------------------------------------------
# The gateway against a misbehaving upstream


def _gateway_case(rng: random.Random) -> TargetCase:
    source, plan = gateway_plan(rng)
    return TargetCase("gateway", plan["client"], json.dumps(plan).encode(), source)


def _check_gateway(case: TargetCase) -> None:
    upstream, harness = shared()
    check_gateway(harness, upstream, json.loads(case.data))


TARGETS: dict[str, Target] = {
    "framings": Target("framings", _framing_case, _check_framing),
    "requests": Target("requests", lambda rng: _body_case("requests", rng), _check_request),
    "responses": Target("responses", lambda rng: _body_case("responses", rng), _check_response),
    "encoders": Target("encoders", _encoder_case, _check_encoder),
    "gateway": Target("gateway", _gateway_case, _check_gateway),
}
