"""Mutation strategies: recorded SSE streams turned into hostile variants.

Everything here is driven by one random source, any :class:`random.Random`:
a seeded ``random.Random(seed)`` (the CI run and ``fuzz/run.py``),
hypothesis' ``st.randoms()`` (:func:`cases`, so hypothesis shrinks the
decisions), or :class:`ByteRandom`, which reads its decisions from a byte
string (the atheris entry point, so coverage guidance mutates decisions
rather than opaque seeds). The same decisions always give the same bytes.

A stream is handled as a list of SSE *blocks* (the bytes of one event up to
and including its blank line), so that whole events can be dropped,
duplicated, swapped, moved or corrupted; a block's JSON payload can be
parsed, mutated at a random JSON path and written back; and byte-level
mutations (bit flips, invalid UTF-8, NUL, line-ending changes, truncation)
apply to the joined bytes.
"""

from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

__all__ = [
    "APIS",
    "FIXTURES",
    "ByteRandom",
    "Case",
    "cases",
    "fixture_paths",
    "generate",
    "join_blocks",
    "mutate",
    "split_blocks",
]

APIS = ("anthropic-messages", "openai-responses", "openai-completions", "google-generative-ai")
#: The recorded streams live beside the repository, never inside it.
FIXTURES = Path(
    os.environ.get("STREAMNORM_FIXTURES")
    or Path(__file__).resolve().parents[1].parent / "shared" / "fixtures"
)

Rng = random.Random

# --------------------------------------------------------------------------
# Random sources


class ByteRandom(random.Random):
    """A ``random.Random`` whose every decision is read from ``data``.

    Once the bytes run out every decision is 0 (the first choice, the
    smallest value), so any byte string is a complete, deterministic recipe.
    """

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._pos = 0
        super().__init__(0)

    def seed(self, *args: Any, **kwargs: Any) -> None:
        """Seeding is meaningless here: the bytes are the seed."""

    def getrandbits(self, k: int) -> int:
        n = (k + 7) // 8
        chunk = self._data[self._pos : self._pos + n]
        self._pos += n
        return int.from_bytes(chunk.ljust(n, b"\0"), "little") & ((1 << k) - 1) if k else 0

    def random(self) -> float:
        return self.getrandbits(53) / (1 << 53)


# --------------------------------------------------------------------------
# Blocks

_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_BLANK = (b"\n", b"\r\n", b"\r")


def split_blocks(data: bytes) -> list[bytes]:
    """The stream cut after each blank line: joined again they give ``data``."""
    blocks: list[bytes] = []
    current: list[bytes] = []
    for match in _LINE.finditer(data):
        line = match.group()
        current.append(line)
        if line in _BLANK:
            blocks.append(b"".join(current))
            current = []
    if current:
        blocks.append(b"".join(current))
    return blocks


def join_blocks(blocks: list[bytes]) -> bytes:
    return b"".join(blocks)


def _newline(block: bytes) -> bytes:
    if b"\r\n" in block:
        return b"\r\n"
    if b"\n" in block:
        return b"\n"
    return b"\r" if b"\r" in block else b"\n"


@dataclass
class _Parsed:
    """The fields of one block that mutations care about."""

    event: bytes | None
    data: bytes | None
    newline: bytes


def _parse_block(block: bytes) -> _Parsed:
    event: bytes | None = None
    data: list[bytes] = []
    for match in _LINE.finditer(block):
        line = match.group().rstrip(b"\r\n")
        name, _, value = line.partition(b":")
        value = value[1:] if value.startswith(b" ") else value
        if name == b"event":
            event = value
        elif name == b"data":
            data.append(value)
    return _Parsed(event, b"\n".join(data) if data else None, _newline(block))


def _payload(block: bytes) -> Any:
    """The block's JSON payload, or None when it has none (or it is not JSON)."""
    parsed = _parse_block(block)
    if parsed.data is None:
        return None
    try:
        return json.loads(parsed.data)
    except (ValueError, RecursionError):
        return None


def _make_block(event: bytes | None, data: bytes, newline: bytes = b"\n") -> bytes:
    head = b"event: " + event + newline if event is not None else b""
    return head + b"data: " + data + newline + newline


# --------------------------------------------------------------------------
# Hostile JSON values


class Raw:
    """JSON text inserted verbatim where a value goes (what ``json`` cannot write)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def dumps(value: Any, rng: Rng | None = None) -> str:
    """Serialise ``value`` with :class:`Raw` parts spliced in verbatim."""
    raws: list[str] = []

    def swap(node: Any) -> Any:
        # Iterative (values may nest deeply); containers are copied, not changed.
        root = [node]
        stack: list[tuple[Any, Any]] = [(root, 0)]
        while stack:
            container, key = stack.pop()
            item = container[key]
            if isinstance(item, Raw):
                raws.append(item.text)
                container[key] = f"\x00RAW{len(raws) - 1}\x00"
            elif isinstance(item, dict):
                copy = dict(item)
                container[key] = copy
                stack.extend((copy, k) for k in copy)
            elif isinstance(item, list):
                copy_list = list(item)
                container[key] = copy_list
                stack.extend((copy_list, i) for i in range(len(copy_list)))
        return root[0]

    ascii_only = rng is not None and rng.random() < 0.2
    text = json.dumps(swap(value), ensure_ascii=ascii_only, separators=(",", ":"))
    if raws:
        text = re.sub(r'"\\u0000RAW(\d+)\\u0000"', lambda m: raws[int(m.group(1))], text)
    return text


_STRINGS = (
    "",
    " ",
    "x",
    "é😀",
    "\u0000",
    "\u202e",
    "\ufffd",
    "\ud7ff\ue000",
    "line\nbreak",
    '"quoted"',
    "\\",
    "data: [DONE]",
    "[DONE]",
    "event: error",
    '{"a":',
    "null",
)
_RAW_STRINGS = (
    r'"\ud800"',
    r'"\udc00"',
    r'"\ud800\ud800"',
    r'"\udbff\udfff"',
    r'"x\ud83d"',
    r'"\u0000"',
)
_RAW_NUMBERS = (
    "1e400",
    "-1e400",
    "1E+309",
    "4.9e-325",
    "-0",
    "-0.0",
    "1.7976931348623157e308",
    "123456789012345678901234567890",
    "18446744073709551616",
    "-9223372036854775809",
)


def hostile_value(rng: Rng, vocabulary: tuple[str, ...] = ()) -> Any:
    """A value of a random JSON type, often one that decoders do not expect."""
    kind = rng.randrange(20)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice((True, False))
    if kind == 2:
        return rng.choice((0, 1, -1, 2, 3, 7, 2**31, 2**53 + 1, 2**63, -(2**63)))
    if kind == 3:
        return rng.choice((0.0, 0.5, -1.5, 1e-300, 1e308, 3.0))
    if kind == 4:
        return Raw(rng.choice(_RAW_NUMBERS))
    if kind == 5:
        digits = rng.choice((4300, 4301, 5000, 10_000))
        return Raw(rng.choice(("", "-")) + "9" * digits + rng.choice(("", ".5", "e5")))
    if kind == 6:
        return rng.choice(_STRINGS)
    if kind == 7:
        return Raw(rng.choice(_RAW_STRINGS))
    if kind == 8:
        return "x" * rng.choice((100, 1000, 20_000))
    if kind == 9:
        return []
    if kind == 10:
        return {}
    if kind == 11:
        return [hostile_value(rng, vocabulary) for _ in range(rng.randrange(4))]
    if kind == 12:
        return {rng.choice(("type", "index", "text", "id", "x")): hostile_value(rng, vocabulary)}
    if kind == 13:
        depth = rng.choice((10, 100, 255, 511, 10, 100, 255, 511, 513, 5000))
        open_, close = rng.choice((("[", "]"), ('{"a":', "}")))
        inner = "1" if open_ == '{"a":' else ""
        return Raw(open_ * depth + inner + close * depth)
    if kind in (14, 15, 16) and vocabulary:
        return rng.choice(vocabulary)
    if kind == 17:
        return rng.randrange(-2, 6)
    if kind == 18:
        return Raw('"\\q\\x\\' + "u12" + '"')  # invalid escapes: not JSON
    return str(rng.randrange(-1, 5))


# --------------------------------------------------------------------------
# JSON paths


def _paths(value: Any, limit: int = 4000) -> list[tuple[Any, ...]]:
    """Paths to every node (breadth-first, at most ``limit``), the root excluded."""
    out: list[tuple[Any, ...]] = []
    queue: list[tuple[tuple[Any, ...], Any]] = [((), value)]
    head = 0
    while head < len(queue) and len(out) < limit:
        path, node = queue[head]
        head += 1
        if isinstance(node, dict):
            children: Iterator[tuple[Any, Any]] = iter(node.items())
        elif isinstance(node, list):
            children = iter(enumerate(node))
        else:
            continue
        for key, child in children:
            out.append((*path, key))
            queue.append(((*path, key), child))
    return out


def _copy(value: Any) -> Any:
    """A deep copy of a JSON value, iterative (values may nest deeply)."""
    root = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        container, key = stack.pop()
        item = container[key]
        if isinstance(item, dict):
            item = container[key] = dict(item)
            stack.extend((item, k) for k in item)
        elif isinstance(item, list):
            item = container[key] = list(item)
            stack.extend((item, i) for i in range(len(item)))
    return root[0]


def _get_parent(value: Any, path: tuple[Any, ...]) -> Any:
    node = value
    for key in path[:-1]:
        node = node[key]
    return node


_INDEX_KEYS = frozenset(
    ("index", "output_index", "content_index", "summary_index", "sequence_number")
)


def _mutate_payload(payload: Any, rng: Rng, vocabulary: tuple[str, ...]) -> Any:
    """One mutation at a random JSON path of ``payload`` (a new object)."""
    payload = _copy(payload)
    paths = _paths(payload)
    if not paths:
        return hostile_value(rng, vocabulary)
    # Prefer fields that decoders dispatch on or key blocks by.
    interesting = [p for p in paths if p[-1] in _INDEX_KEYS or p[-1] in ("type", "id")]
    path = rng.choice(interesting) if interesting and rng.random() < 0.3 else rng.choice(paths)
    parent = _get_parent(payload, path)
    key = path[-1]
    op = rng.randrange(8)
    if (op == 0 and isinstance(parent, dict)) or (op == 1 and isinstance(parent, list)):
        del parent[key]
    elif op == 2 and key in _INDEX_KEYS:
        parent[key] = rng.choice((-1, 0, 1, 2, 5, 999, 2**63, "0", None, 0.5, True))
    elif op == 3 and isinstance(parent, dict):
        parent[rng.choice(("type", "extra", "error", "index", "usage", "x" * 10))] = hostile_value(
            rng, vocabulary
        )
    elif op == 4 and isinstance(parent[key], str) and parent[key]:
        text = parent[key]
        cut = rng.randrange(len(text) + 1)
        parent[key] = text[:cut] + rng.choice(_STRINGS) + text[cut:]
    elif op == 5:
        other = rng.choice(paths)
        try:
            parent[key] = _copy(_get_parent(payload, other)[other[-1]])
        except (KeyError, IndexError, TypeError):
            parent[key] = hostile_value(rng, vocabulary)
    else:
        parent[key] = hostile_value(rng, vocabulary)
    return payload


# --------------------------------------------------------------------------
# Fixtures and their vocabulary


def fixture_paths(api: str | None = None) -> list[Path]:
    if not FIXTURES.is_dir():
        return []
    apis = [api] if api else list(APIS)
    return sorted(p for a in apis for p in (FIXTURES / a).glob("*.sse"))


@cache
def _fixture(path: Path) -> tuple[bytes, tuple[bytes, ...]]:
    data = path.read_bytes()
    return data, tuple(split_blocks(data))


@cache
def vocabulary(api: str) -> tuple[str, ...]:
    """String values of ``type``-like fields seen in the api's fixtures, plus
    the stop values the decoders know and a few they do not."""
    words: set[str] = set()
    for path in fixture_paths(api):
        for block in _fixture(path)[1]:
            payload = _payload(block)
            for p in _paths(payload, limit=300):
                if p[-1] in ("type", "finish_reason", "finishReason", "stop_reason", "status"):
                    node = _get_parent(payload, p)[p[-1]]
                    if isinstance(node, str):
                        words.add(node)
    words.update(("unknown", "error", "", "MALFORMED_FUNCTION_CALL", "network_error"))
    return tuple(sorted(words))


# --------------------------------------------------------------------------
# Synthetic events, per api: shapes the decoders read, with values drawn
# from small pools so that they collide with the blocks of the stream.


def _anthropic_event(rng: Rng, voc: tuple[str, ...]) -> tuple[bytes | None, Any]:
    index = rng.randrange(-1, 5)
    kind = rng.randrange(9)
    if kind == 0:
        block_type = rng.choice(
            (
                "text",
                "thinking",
                "redacted_thinking",
                "tool_use",
                "server_tool_use",
                "web_search_tool_result",
                "mystery",
            )
        )
        block: dict[str, Any] = {"type": block_type}
        if block_type == "tool_use":
            block.update(id=rng.choice(("toolu_1", "", None)), name=rng.choice(("f", "g", "")))
            block["input"] = rng.choice(({}, {"a": 1}, hostile_value(rng)))
        elif block_type == "text":
            block["text"] = rng.choice(("", "hi", hostile_value(rng)))
        elif block_type == "thinking":
            block.update(thinking="", signature=rng.choice(("", "sig", None)))
        elif block_type == "redacted_thinking":
            block["data"] = rng.choice(("opaque", hostile_value(rng)))
        return b"content_block_start", {
            "type": "content_block_start",
            "index": index,
            "content_block": block,
        }
    if kind in (1, 2):
        delta_type = rng.choice(
            (
                "text_delta",
                "thinking_delta",
                "input_json_delta",
                "signature_delta",
                "citations_delta",
                "compaction_delta",
                "mystery_delta",
            )
        )
        field_name = {
            "text_delta": "text",
            "thinking_delta": "thinking",
            "input_json_delta": "partial_json",
            "signature_delta": "signature",
            "citations_delta": "citation",
            "compaction_delta": "content",
        }.get(delta_type, "value")
        value = rng.choice(('{"a": ', "1}", "x", "", '"\\ud800', hostile_value(rng)))
        return b"content_block_delta", {
            "type": "content_block_delta",
            "index": index,
            "delta": {"type": delta_type, field_name: value},
        }
    if kind == 3:
        return b"content_block_stop", {"type": "content_block_stop", "index": index}
    if kind == 4:
        return b"message_delta", {
            "type": "message_delta",
            "delta": {"stop_reason": rng.choice((*voc, None, 3))},
            "usage": {"output_tokens": hostile_value(rng)},
        }
    if kind == 5:
        return b"message_start", {
            "type": "message_start",
            "message": {
                "id": rng.choice(("msg_2", "")),
                "model": hostile_value(rng),
                "usage": {"input_tokens": hostile_value(rng)},
            },
        }
    if kind == 6:
        return b"error", {
            "type": "error",
            "error": {"type": hostile_value(rng, voc), "message": hostile_value(rng)},
        }
    if kind == 7:
        return b"message_stop", {"type": "message_stop"}
    return rng.choice((None, b"ping")), {"type": rng.choice(("ping", "mystery_event", *voc))}


def _responses_event(rng: Rng, voc: tuple[str, ...]) -> tuple[bytes | None, Any]:
    index = rng.randrange(-1, 4)
    kind = rng.randrange(10)
    item_type = rng.choice(
        (
            "message",
            "reasoning",
            "function_call",
            "web_search_call",
            "custom_tool_call",
            "shell_call",
            "shell_call_output",
            "mystery",
        )
    )
    item: dict[str, Any] = {
        "type": item_type,
        "id": rng.choice(("it_1", "it_2", "")),
        "call_id": rng.choice(("c1", "c2", "")),
        "name": "f",
    }
    if rng.random() < 0.5:
        item["arguments"] = rng.choice(('{"a":1}', "", "{", hostile_value(rng)))
    if rng.random() < 0.3:
        item["content"] = [
            {
                "type": rng.choice(("output_text", "refusal", "x")),
                "text": rng.choice(("hi", hostile_value(rng))),
            }
        ]
    if rng.random() < 0.3:
        item["summary"] = [{"type": "summary_text", "text": hostile_value(rng)}]
    if rng.random() < 0.2:
        item["status"] = "incomplete"
    if kind == 0:
        name = rng.choice(("response.output_item.added", "response.output_item.done"))
        return None, {"type": name, "output_index": index, "item": item}
    if kind in (1, 2):
        name = rng.choice(
            (
                "response.output_text.delta",
                "response.refusal.delta",
                "response.reasoning_summary_text.delta",
                "response.reasoning_text.delta",
                "response.function_call_arguments.delta",
            )
        )
        return None, {
            "type": name,
            "output_index": index,
            "item_id": item["id"],
            "content_index": rng.randrange(-1, 3),
            "summary_index": rng.randrange(3),
            "delta": rng.choice(("x", '{"a":', "", hostile_value(rng))),
        }
    if kind == 3:
        name = rng.choice(
            (
                "response.output_text.done",
                "response.refusal.done",
                "response.reasoning_summary_text.done",
                "response.reasoning_text.done",
                "response.function_call_arguments.done",
                "response.content_part.added",
                "response.reasoning_summary_part.added",
                "response.output_text.annotation.added",
            )
        )
        return None, {
            "type": name,
            "output_index": index,
            "content_index": rng.randrange(3),
            "summary_index": rng.randrange(3),
            "text": hostile_value(rng),
            "refusal": hostile_value(rng),
            "arguments": hostile_value(rng),
            "part": {
                "type": rng.choice(("output_text", "reasoning_text", "x")),
                "text": hostile_value(rng),
            },
            "annotation": hostile_value(rng),
        }
    if kind in (4, 5):
        name = rng.choice(
            (
                "response.created",
                "response.in_progress",
                "response.queued",
                "response.completed",
                "response.incomplete",
                "response.failed",
            )
        )
        response: dict[str, Any] = {
            "id": rng.choice(("resp_1", "")),
            "model": "m",
            "status": rng.choice((*voc, None)),
        }
        if rng.random() < 0.5:
            response["output"] = [item, hostile_value(rng)]
        if rng.random() < 0.5:
            response["usage"] = {
                "input_tokens": hostile_value(rng),
                "output_tokens": 3,
                "input_tokens_details": hostile_value(rng),
            }
        if rng.random() < 0.3:
            response["error"] = {"code": hostile_value(rng), "message": hostile_value(rng)}
        if rng.random() < 0.3:
            response["incomplete_details"] = {"reason": hostile_value(rng, voc)}
        return None, {"type": name, "response": response}
    if kind == 6:
        return b"error", {
            "type": "error",
            "code": hostile_value(rng),
            "message": hostile_value(rng),
        }
    return None, {
        "type": rng.choice((*voc, "response.mystery", "response.")),
        "output_index": index,
    }


def _completions_event(rng: Rng, voc: tuple[str, ...]) -> tuple[bytes | None, Any]:
    delta: dict[str, Any] = {}
    for _ in range(rng.randrange(1, 4)):
        field_name = rng.choice(
            (
                "content",
                "refusal",
                "reasoning_content",
                "reasoning",
                "tool_calls",
                "function_call",
                "annotations",
                "executed_tools",
                "reasoning_details",
                "role",
            )
        )
        if field_name == "tool_calls":
            delta[field_name] = [
                {
                    "index": rng.choice((0, 1, 2, None, -1, "0")),
                    "id": rng.choice(("call_a", "call_b", "", None)),
                    "function": {
                        "name": rng.choice(("f", "g", "", None)),
                        "arguments": rng.choice(('{"a":', "1}", "", {"k": 1}, hostile_value(rng))),
                    },
                }
                for _ in range(rng.randrange(1, 3))
            ]
        elif field_name == "function_call":
            delta[field_name] = {"name": rng.choice(("f", "")), "arguments": hostile_value(rng)}
        elif field_name == "reasoning_details":
            delta[field_name] = [
                {
                    "type": rng.choice(
                        ("reasoning.text", "reasoning.encrypted", "reasoning.summary")
                    ),
                    "index": rng.randrange(2),
                    "text": hostile_value(rng),
                    "signature": rng.choice(("", "s", None)),
                    "data": "enc",
                }
            ]
        elif field_name == "content" and rng.random() < 0.3:
            delta[field_name] = [
                {
                    "type": rng.choice(("text", "thinking")),
                    "text": hostile_value(rng),
                    "thinking": [{"text": hostile_value(rng)}],
                }
            ]
        else:
            delta[field_name] = rng.choice(("x", "", hostile_value(rng)))
    choice: dict[str, Any] = {"index": rng.choice((0, 0, 0, 1, None)), "delta": delta}
    if rng.random() < 0.3:
        choice["finish_reason"] = rng.choice((*voc, None, ""))
    payload: dict[str, Any] = {
        "id": rng.choice(("chatcmpl-1", "")),
        "model": "m",
        "object": "chat.completion.chunk",
        "choices": [choice],
    }
    extra = rng.randrange(8)
    if extra == 0:
        payload["usage"] = {
            "prompt_tokens": hostile_value(rng),
            "completion_tokens": 2,
            "prompt_tokens_details": hostile_value(rng),
        }
    elif extra == 1:
        payload["error"] = {
            "message": hostile_value(rng),
            "code": hostile_value(rng),
            "metadata": {"raw": hostile_value(rng)},
        }
    elif extra == 2:
        payload["prompt_progress"] = {
            "processed": hostile_value(rng),
            "total": 3,
            "cache": 0,
            "time_ms": hostile_value(rng),
        }
    elif extra == 3:
        payload["citations"] = hostile_value(rng)
    elif extra == 4:
        payload["choices"] = []
    event = b"error" if rng.random() < 0.03 else None
    return event, payload


def _google_event(rng: Rng, voc: tuple[str, ...]) -> tuple[bytes | None, Any]:
    parts: list[Any] = []
    for _ in range(rng.randrange(1, 4)):
        kind = rng.randrange(6)
        part: dict[str, Any]
        if kind == 0:
            part = {"text": rng.choice(("x", "", hostile_value(rng)))}
        elif kind == 1:
            part = {"text": "t", "thought": rng.choice((True, False, "true"))}
        elif kind in (2, 3):
            call: dict[str, Any] = {"name": rng.choice(("f", "", None))}
            if rng.random() < 0.5:
                call["id"] = rng.choice(("c1", "c2", ""))
            if rng.random() < 0.5:
                call["args"] = rng.choice(({}, {"a": 1}, hostile_value(rng)))
            if rng.random() < 0.6:
                call["willContinue"] = rng.choice((True, False, None))
            if rng.random() < 0.6:
                path = rng.choice(
                    (
                        "$.a",
                        "$.a.b",
                        "$.b[0]",
                        "$.b[1]",
                        "$['x y']",
                        "$",
                        "$..",
                        "$[0]",
                        "a",
                        "$.a[99999999999999999999]",
                    )
                )
                entry: dict[str, Any] = {"jsonPath": path}
                entry[
                    rng.choice(("stringValue", "numberValue", "boolValue", "nullValue", "mystery"))
                ] = hostile_value(rng)
                call["partialArgs"] = [entry]
            part = {"functionCall": call}
        elif kind == 4:
            part = {"executableCode": {"code": hostile_value(rng)}}
        else:
            part = {"thoughtSignature": rng.choice(("sig", "", hostile_value(rng)))}
        if rng.random() < 0.2:
            part["thoughtSignature"] = hostile_value(rng)
        parts.append(part)
    candidate: dict[str, Any] = {
        "content": {"parts": parts, "role": "model"},
        "index": rng.choice((0, 0, 1, None)),
    }
    if rng.random() < 0.3:
        candidate["finishReason"] = rng.choice((*voc, "STOP", None))
    if rng.random() < 0.2:
        candidate["groundingMetadata"] = hostile_value(rng)
    if rng.random() < 0.1:
        candidate["citationMetadata"] = {"citationSources": [hostile_value(rng)]}
    payload: dict[str, Any] = {
        "candidates": [candidate],
        "modelVersion": "g",
        "responseId": rng.choice(("r1", "")),
    }
    extra = rng.randrange(6)
    if extra == 0:
        payload["usageMetadata"] = {
            "promptTokenCount": hostile_value(rng),
            "candidatesTokenCount": 2,
        }
    elif extra == 1:
        payload["error"] = {
            "code": hostile_value(rng),
            "message": hostile_value(rng),
            "status": hostile_value(rng),
        }
    elif extra == 2:
        payload["promptFeedback"] = {"blockReason": hostile_value(rng, voc)}
    return None, payload


_SYNTHETIC: dict[str, Callable[[Rng, tuple[str, ...]], tuple[bytes | None, Any]]] = {
    "anthropic-messages": _anthropic_event,
    "openai-responses": _responses_event,
    "openai-completions": _completions_event,
    "google-generative-ai": _google_event,
}


def synthetic_block(api: str, rng: Rng, newline: bytes = b"\n") -> bytes:
    event, payload = _SYNTHETIC[api](rng, vocabulary(api))
    return _make_block(event, dumps(payload, rng).encode("utf-8", "surrogatepass"), newline)


# --------------------------------------------------------------------------
# Mutations of a whole stream


_INVALID_UTF8 = (
    b"\xff",
    b"\xc3",
    b"\xc0\xaf",
    b"\xed\xa0\x80",
    b"\xf4\x90\x80\x80",
    b"\xe2\x82",
    b"\x00",
    b"\xef\xbb\xbf",
)
_JUNK_LINES = (
    b": keep-alive\n",
    b":\n",
    b"retry: 10\n",
    b"retry: 99999999999999999999999999\n",
    b"id: 7\n",
    b"id: a\x00b\n",
    b"event: error\n",
    b"event:\n",
    b"data\n",
    b"data:\n\n",
    b"data: [DONE]\n\n",
    b"data: [DONE]x\n\n",
    b"data: {}\n\n",
    b"data: []\n\n",
    b"data: null\n\n",
    b"data: 1\n\n",
    b'data: "x"\n\n',
    b"data: {\n\n",
    b"data: NaN\n\n",
    b'data: {"error": {"message": "boom", "code": 500}}\n\n',
    b"\n",
    b"\r\n",
)


@dataclass
class _Stream:
    api: str
    blocks: list[bytes]
    data: bytes | None = None  # set once a byte-level mutation has happened

    def bytes(self) -> bytes:
        return self.data if self.data is not None else join_blocks(self.blocks)

    def to_blocks(self) -> None:
        if self.data is not None:
            self.blocks = split_blocks(self.data)
            self.data = None

    def to_bytes(self) -> bytearray:
        return bytearray(self.bytes())


def _payload_indices(blocks: list[bytes]) -> list[int]:
    return [i for i, b in enumerate(blocks) if b"data:" in b and b"[DONE]" not in b]


def _m_drop(s: _Stream, rng: Rng) -> str:
    if s.blocks:
        del s.blocks[rng.randrange(len(s.blocks))]
    return "drop"


def _m_duplicate(s: _Stream, rng: Rng) -> str:
    if s.blocks:
        i = rng.randrange(len(s.blocks))
        j = i + 1 if rng.random() < 0.5 else rng.randrange(len(s.blocks) + 1)
        s.blocks.insert(j, s.blocks[i])
    return "duplicate"


def _m_swap(s: _Stream, rng: Rng) -> str:
    if len(s.blocks) > 1:
        i = rng.randrange(len(s.blocks) - 1)
        j = i + 1 if rng.random() < 0.6 else rng.randrange(len(s.blocks))
        s.blocks[i], s.blocks[j] = s.blocks[j], s.blocks[i]
    return "swap"


def _m_move(s: _Stream, rng: Rng) -> str:
    if len(s.blocks) > 1:
        block = s.blocks.pop(rng.randrange(len(s.blocks)))
        s.blocks.insert(rng.randrange(len(s.blocks) + 1), block)
    return "move"


def _m_reverse_run(s: _Stream, rng: Rng) -> str:
    if len(s.blocks) > 2:
        i = rng.randrange(len(s.blocks) - 1)
        j = min(len(s.blocks), i + rng.randrange(2, 6))
        s.blocks[i:j] = s.blocks[i:j][::-1]
    return "reverse"


def _m_second_start(s: _Stream, rng: Rng) -> str:
    """The first payload (message_start, response.created, first chunk) again."""
    payloads = _payload_indices(s.blocks)
    if payloads:
        s.blocks.insert(rng.randrange(len(s.blocks) + 1), s.blocks[payloads[0]])
    return "second_start"


def _m_early_terminal(s: _Stream, rng: Rng) -> str:
    """The last payload (usually the terminal one) somewhere earlier as well."""
    payloads = _payload_indices(s.blocks)
    if payloads:
        s.blocks.insert(rng.randrange(len(s.blocks) + 1), s.blocks[payloads[-1]])
    return "early_terminal"


def _m_payload(s: _Stream, rng: Rng) -> str:
    """Replace / delete / retype a value at a random JSON path of one payload."""
    payloads = _payload_indices(s.blocks)
    if not payloads:
        return "payload(none)"
    i = rng.choice(payloads)
    parsed = _parse_block(s.blocks[i])
    payload = _payload(s.blocks[i])
    if payload is None:
        return "payload(not json)"
    voc = vocabulary(s.api)
    for _ in range(1 + (rng.random() < 0.3) + (rng.random() < 0.1)):
        payload = _mutate_payload(payload, rng, voc)
    try:
        text = dumps(payload, rng).encode("utf-8", "surrogatepass")
    except RecursionError:  # nested past what json.dumps can write: left as it was
        return "payload(too deep)"
    event = parsed.event
    if rng.random() < 0.1:
        event = rng.choice((None, b"error", b"message", b"mystery"))
    s.blocks[i] = _make_block(event, text, parsed.newline)
    return "payload"


def _m_index(s: _Stream, rng: Rng) -> str:
    """Point a delta at a block that was never started (or at another block)."""
    candidates = [
        i
        for i in _payload_indices(s.blocks)
        if re.search(rb'"(?:index|output_index|content_index)"', s.blocks[i])
    ]
    if not candidates:
        return "index(none)"
    i = rng.choice(candidates)
    new = rng.choice((b"-1", b"1", b"2", b"7", b"999", b'"0"', b"null", b"0.5", b"true"))
    s.blocks[i] = re.sub(
        rb'("(?:index|output_index|content_index)"\s*:\s*)(-?\d+)',
        lambda m: m.group(1) + new,
        s.blocks[i],
        count=1,
    )
    return "index"


def _m_synthetic(s: _Stream, rng: Rng) -> str:
    newline = _newline(s.blocks[0]) if s.blocks else b"\n"
    for _ in range(1 + (rng.random() < 0.4) * rng.randrange(1, 6)):
        s.blocks.insert(rng.randrange(len(s.blocks) + 1), synthetic_block(s.api, rng, newline))
    return "synthetic"


def _m_foreign(s: _Stream, rng: Rng) -> str:
    """A block from another api's recording."""
    paths = fixture_paths(rng.choice(APIS))
    if paths:
        blocks = _fixture(rng.choice(paths))[1]
        if blocks:
            s.blocks.insert(rng.randrange(len(s.blocks) + 1), rng.choice(blocks))
    return "foreign"


def _m_junk_line(s: _Stream, rng: Rng) -> str:
    s.blocks.insert(rng.randrange(len(s.blocks) + 1), rng.choice(_JUNK_LINES))
    return "junk_line"


def _m_corrupt_json(s: _Stream, rng: Rng) -> str:
    """Insert or delete characters inside one data line's JSON."""
    payloads = _payload_indices(s.blocks)
    if not payloads:
        return "corrupt(none)"
    i = rng.choice(payloads)
    block = bytearray(s.blocks[i])
    start = block.find(b"data:") + 5
    end = max(start, len(block.rstrip(b"\r\n")))
    pos = rng.randrange(start, end + 1)
    if rng.random() < 0.5 and pos < end:
        del block[pos : pos + rng.randrange(1, 4)]
    else:
        block[pos:pos] = rng.choice((b"{", b"}", b"[", b'"', b",", b":", b"\\", b"0", b"\\u"))
    s.blocks[i] = bytes(block)
    return "corrupt_json"


def _m_truncate(s: _Stream, rng: Rng) -> str:
    data = s.bytes()
    s.data = data[: rng.randrange(len(data) + 1)]
    return "truncate"


def _m_flip(s: _Stream, rng: Rng) -> str:
    data = s.to_bytes()
    for _ in range(rng.randrange(1, 4)):
        if data:
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    s.data = bytes(data)
    return "flip"


def _m_inject_bytes(s: _Stream, rng: Rng) -> str:
    data = s.to_bytes()
    pos = rng.randrange(len(data) + 1)
    data[pos:pos] = rng.choice(_INVALID_UTF8) * rng.randrange(1, 3)
    s.data = bytes(data)
    return "inject_bytes"


def _m_newlines(s: _Stream, rng: Rng) -> str:
    data = s.bytes().replace(b"\r\n", b"\n")
    style = rng.choice((b"\n", b"\r\n", b"\r"))
    if rng.random() < 0.5:
        data = data.replace(b"\n", style)
    else:  # only some of the line ends
        pieces = data.split(b"\n")
        data = b"".join(p + (style if rng.random() < 0.5 else b"\n") for p in pieces[:-1])
        data += pieces[-1]
    s.data = data
    return "newlines"


def _m_merge_events(s: _Stream, rng: Rng) -> str:
    """Remove one blank line: two events' data lines join into one event."""
    if len(s.blocks) > 1:
        i = rng.randrange(len(s.blocks) - 1)
        first = s.blocks[i]
        for blank in (b"\r\n\r\n", b"\n\n", b"\r\r"):
            if first.endswith(blank):
                first = first[: -len(blank) // 2]
                break
        s.blocks[i : i + 2] = [first + s.blocks[i + 1]]
    return "merge_events"


def _m_split_data(s: _Stream, rng: Rng) -> str:
    """Cut one data line into several ``data:`` lines (joined by LF by SSE)."""
    payloads = _payload_indices(s.blocks)
    if not payloads:
        return "split_data(none)"
    i = rng.choice(payloads)
    parsed = _parse_block(s.blocks[i])
    assert parsed.data is not None
    data = parsed.data
    cut = rng.randrange(len(data) + 1)
    nl = parsed.newline
    head = b"event: " + parsed.event + nl if parsed.event is not None else b""
    sep = b"" if rng.random() < 0.5 else b" "
    s.blocks[i] = head + b"data: " + data[:cut] + nl + b"data:" + sep + data[cut:] + nl + nl
    return "split_data"


def _m_no_space(s: _Stream, rng: Rng) -> str:
    data = s.bytes()
    s.data = data.replace(b"data: ", b"data:", rng.randrange(1, 50))
    return "no_space"


def _m_bom(s: _Stream, rng: Rng) -> str:
    s.data = b"\xef\xbb\xbf" * rng.randrange(1, 3) + s.bytes()
    return "bom"


def _m_tool_args(s: _Stream, rng: Rng) -> str:
    """Adversarial text in a tool call's argument fragments."""
    payloads = [
        i
        for i in _payload_indices(s.blocks)
        if re.search(rb'"(?:partial_json|arguments|delta)"', s.blocks[i])
    ]
    if not payloads:
        return "tool_args(none)"
    i = rng.choice(payloads)
    parsed = _parse_block(s.blocks[i])
    payload = _payload(s.blocks[i])
    if payload is None:
        return "tool_args(not json)"
    fragment = rng.choice(
        (
            "[" * rng.choice((600, 5000)),
            '{"a":' * 700,
            '"\\ud800',
            '\\udc00"',
            '"x": "' + "y" * 5000,
            "9" * rng.choice((4301, 10_000)),
            "1e400",
            '{"k": 1, "k": 2}',
            "\x00\x01",
            '"\\q',
            "}" * 10,
        )
    )
    for path in _paths(payload):
        if path[-1] in ("partial_json", "arguments", "delta"):
            parent = _get_parent(payload, path)
            if isinstance(parent[path[-1]], str):
                parent[path[-1]] += fragment
                break
    text = dumps(payload).encode("utf-8", "surrogatepass")
    s.blocks[i] = _make_block(parsed.event, text, parsed.newline)
    return "tool_args"


_BLOCK_MUTATIONS: tuple[tuple[Callable[[_Stream, Rng], str], int], ...] = (
    (_m_drop, 6),
    (_m_duplicate, 5),
    (_m_swap, 5),
    (_m_move, 4),
    (_m_reverse_run, 2),
    (_m_second_start, 3),
    (_m_early_terminal, 3),
    (_m_payload, 16),
    (_m_index, 5),
    (_m_synthetic, 10),
    (_m_foreign, 2),
    (_m_junk_line, 4),
    (_m_corrupt_json, 4),
    (_m_merge_events, 2),
    (_m_split_data, 2),
    (_m_tool_args, 3),
)
_BYTE_MUTATIONS: tuple[tuple[Callable[[_Stream, Rng], str], int], ...] = (
    (_m_truncate, 6),
    (_m_flip, 3),
    (_m_inject_bytes, 3),
    (_m_newlines, 2),
    (_m_no_space, 1),
    (_m_bom, 1),
)


def _pick(
    rng: Rng, table: tuple[tuple[Callable[[_Stream, Rng], str], int], ...]
) -> Callable[[_Stream, Rng], str]:
    total = sum(w for _, w in table)
    r = rng.randrange(total)
    for fn, weight in table:
        r -= weight
        if r < 0:
            return fn
    return table[-1][0]


def mutate(data: bytes, api: str, rng: Rng, steps: int | None = None) -> tuple[bytes, list[str]]:
    """Apply ``steps`` (default: 1 to about 6) random mutations to ``data``.

    Block-level mutations come first, byte-level ones (which may destroy the
    block structure) last. Returns the bytes and the names of the mutations.
    """
    stream = _Stream(api, split_blocks(data))
    if steps is None:
        steps = 1
        while steps < 8 and rng.random() < 0.55:
            steps += 1
    names: list[str] = []
    byte_steps = sum(rng.random() < 0.25 for _ in range(steps))
    for _ in range(steps - byte_steps):
        names.append(_pick(rng, _BLOCK_MUTATIONS)(stream, rng))
    for _ in range(byte_steps):
        names.append(_pick(rng, _BYTE_MUTATIONS)(stream, rng))
    return stream.bytes(), names


# --------------------------------------------------------------------------
# Cases


@dataclass
class Case:
    """One generated input: bytes, the api it is fed as, and normalizer options."""

    api: str
    data: bytes
    source: str
    mutations: list[str] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)
    split_seed: int = 0

    def describe(self) -> str:
        return f"{self.source} as {self.api} {self.options} after {self.mutations}"


#: Big fixtures are cut to a window of blocks (their head and tail kept) so
#: that the average case stays small and fast.
_WINDOW_BLOCKS = 48


def _base(api: str, rng: Rng) -> tuple[str, list[bytes]]:
    paths = fixture_paths(api)
    if not paths or rng.random() < 0.08:
        newline = b"\r\n" if api == "google-generative-ai" else b"\n"
        return "synthetic", [
            synthetic_block(api, rng, newline) for _ in range(rng.randrange(1, 12))
        ]
    path = rng.choice(paths)
    blocks = list(_fixture(path)[1])
    if len(blocks) > _WINDOW_BLOCKS and rng.random() < 0.9:
        start = rng.randrange(2, len(blocks) - _WINDOW_BLOCKS + 1)
        blocks = blocks[:2] + blocks[start : start + _WINDOW_BLOCKS - 4] + blocks[-2:]
    return f"{path.parent.name}/{path.name}", blocks


def _options(rng: Rng) -> dict[str, Any]:
    options: dict[str, Any] = {}
    r = rng.random()
    if r < 0.04:
        options["max_event_bytes"] = rng.choice((1, 16, 100, 300, 1000, 4096))
    elif r < 0.07:
        options["max_stream_bytes"] = rng.choice((0, 1, 50, 500, 2000, 10_000))
    elif r < 0.10:
        options["max_json_depth"] = rng.choice((0, 1, 2, 3, 5))
    elif r < 0.12:
        options["choice"] = rng.choice((1, 2, 5))
    return options


def generate(seed: int) -> Case:
    """The case of ``seed``: its api is ``APIS[seed % 4]``, everything else
    follows from ``random.Random(seed)``."""
    rng = random.Random(seed)
    api = APIS[seed % len(APIS)]
    return generate_from(api, rng)


def generate_from(api: str, rng: Rng) -> Case:
    source, blocks = _base(api, rng)
    data, names = mutate(join_blocks(blocks), api, rng)
    feed_as = api if rng.random() < 0.85 else "auto"
    return Case(feed_as, data, source, names, _options(rng), rng.randrange(2**32))


def cases(api: str | None = None) -> Any:
    """A hypothesis strategy of :class:`Case` (hypothesis drives every decision)."""
    from hypothesis import strategies as st

    apis = st.sampled_from(APIS) if api is None else st.just(api)
    return st.builds(generate_from, apis, st.randoms(use_true_random=False))
