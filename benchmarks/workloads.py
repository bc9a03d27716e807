"""The byte streams that ``benchmarks/run.py`` measures.

Synthetic streams, one writer per wire API, reproduce the event shapes of the
recorded fixtures (envelope fields, padding, line ends, the ``*.done`` and
terminal events that repeat the content) with delta sizes drawn from the
fixtures' own distributions:

* ``text``: one long answer;
* ``thinking``: mostly reasoning, then a short answer;
* ``tool``: a short preamble, then tool calls of about 200 KB of arguments each;
* ``tool-100KB``, ``tool-1MB``: one tool call whose arguments are 100 KB / 1 MB
  of JSON text, streamed in deltas of 20-100 bytes;
* ``text-events``: the ``text`` stream cut into one wire event per chunk, as
  a socket delivers a stream that the server flushes per token (every other
  workload is cut into seeded chunks of 1-4 KiB).

``fixtures`` is every recorded stream of an api under ``../shared/fixtures``
(read at run time, never copied), each normalized on its own.

Every synthetic workload knows what it contains (:class:`Expect`), so that the
benchmark can check each contender's final result before trusting its time.
The chunking is seeded: the same workload is always cut the same way.
"""

from __future__ import annotations

import json
import math
import os
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "APIS",
    "FIXTURES",
    "SYNTHETIC",
    "Expect",
    "Workload",
    "chunked",
    "fixture_workload",
    "minimal_stream",
    "per_event",
    "synthetic_workload",
]

APIS = ("anthropic-messages", "openai-responses", "openai-completions", "google-generative-ai")
SYNTHETIC = ("text", "text-events", "thinking", "tool", "tool-100KB", "tool-1MB")
FIXTURES = Path(
    os.environ.get("STREAMNORM_FIXTURES")
    or Path(__file__).resolve().parent.parent.parent / "shared" / "fixtures"
)

MB = 1_000_000


@dataclass
class Expect:
    """What a synthetic stream carries: the answer text, the reasoning text
    (parts joined by a blank line where the api has parts), and each tool
    call's name and arguments."""

    text: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    calls: list[tuple[str, Any]] = field(default_factory=list)


@dataclass
class Workload:
    name: str
    api: str
    bodies: list[bytes]
    labels: list[str]
    expect: Expect | None = None
    chunks: list[list[bytes]] = field(default_factory=list)

    @property
    def size(self) -> int:
        return sum(map(len, self.bodies))


def chunked(body: bytes, seed: int, lo: int = 1024, hi: int = 4096) -> list[bytes]:
    """``body`` cut into chunks of seeded random sizes between ``lo`` and ``hi``."""
    rng = random.Random(seed)
    out: list[bytes] = []
    i = 0
    while i < len(body):
        n = rng.randint(lo, hi)
        out.append(body[i : i + n])
        i += n
    return out


# ---------------------------------------------------------------------------
# Content


_WORDS = " ".join(
    (
        "the of and to in is that for it as with was on be by this are or from at an",
        "stream token model response value index content function return result error",
        "usage input output cache request server client buffer parser event delta",
        "message answer however because therefore example first second finally",
    )
).split()
_CODE = (
    "def f(x):",
    "return x",
    "if not data:",
    "for i in range(n):",
    'print(f"{i}")',
    "self.value = 0",
    'raise ValueError("bad input")',
    "x = {'a': 1}",
    "# note",
    "path\\to\\file",
)
_OTHER = ("café", "naïve", "—", "’s", "über", "東京", "数据", "🙂", "±", "→")


def corpus(rng: random.Random, size: int) -> str:
    """Model-like prose of about ``size`` characters: sentences, markdown,
    now and then a code line with quotes and backslashes, a few non-ASCII words."""
    out: list[str] = []
    n = 0
    while n < size:
        roll = rng.random()
        if roll < 0.06:
            piece = "\n\n" + rng.choice(("## ", "- ", "1. ", "**")) + rng.choice(_WORDS).title()
        elif roll < 0.10:
            piece = "\n    " + rng.choice(_CODE)
        elif roll < 0.13:
            piece = " " + rng.choice(_OTHER)
        elif roll < 0.20:
            piece = rng.choice((". ", ", ", "; ", ": ")) + rng.choice(_WORDS).capitalize()
        else:
            piece = " " + rng.choice(_WORDS)
        out.append(piece)
        n += len(piece)
    return "".join(out)


class _Source:
    """Consecutive slices of one corpus, cycling."""

    def __init__(self, rng: random.Random, size: int = 400_000) -> None:
        self.text = corpus(rng, size)
        self.pos = 0

    def take(self, n: int) -> str:
        """The next ``n`` characters; from the start again where the rest is
        too short. More than the whole corpus is the corpus cycled, so that a
        1 MB argument is 1 MB (one slice of a 400,000-character corpus was
        all ``tool-1MB`` carried)."""
        text = self.text
        if n > len(text):
            whole, rest = divmod(n, len(text))
            return text * whole + self.take(rest)
        if self.pos + n > len(text):
            self.pos = 0
        piece = text[self.pos : self.pos + n]
        self.pos += n
        return piece


def tool_arguments(rng: random.Random, size: int, source: _Source, nested: bool) -> Any:
    """Arguments of a file-writing tool (or a multi-edit one) whose compact JSON
    text is about ``size`` characters."""
    if not nested:
        body = source.take(max(size - 60, 1))
        return {"path": f"src/module_{rng.randint(0, 999)}.py", "content": body}
    edits = []
    total = 40
    while total < size:
        n = rng.randint(200, 2000)
        edits.append({"old": source.take(n // 3), "new": source.take(n - n // 3), "line": n})
        total += n + 40
    return {"path": f"docs/page_{rng.randint(0, 999)}.md", "edits": edits}


def _split(rng: random.Random, text: str, median: float, sigma: float, hi: int) -> list[str]:
    """``text`` in pieces of log-normally distributed length (at least 1)."""
    out: list[str] = []
    i = 0
    mu = math.log(median)
    while i < len(text):
        n = min(hi, max(1, round(rng.lognormvariate(mu, sigma))))
        out.append(text[i : i + n])
        i += n
    return out


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _b64(rng: random.Random, n: int) -> str:
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    return "".join(rng.choice(alphabet) for _ in range(n - n % 4))


# ---------------------------------------------------------------------------
# Writers: one per wire API. ``text``/``thinking`` stream content until the
# body reaches ``until`` bytes; ``tool`` streams one call's arguments.


class _Writer:
    #: Delta length distribution of the api's text: median, sigma, maximum.
    text_delta: tuple[float, float, int] = (4, 0.7, 40)
    thinking_delta: tuple[float, float, int] = (4, 0.7, 40)
    newline = "\n"

    def __init__(self, rng: random.Random, source: _Source) -> None:
        self.rng = rng
        self.source = source
        self.parts: list[bytes] = []
        self.size = 0
        self.expect = Expect()
        self.blocks = 0

    def emit(self, event: str | None, data: str) -> None:
        nl = self.newline
        head = f"event: {event}{nl}" if event else ""
        raw = f"{head}data: {data}{nl}{nl}".encode()
        self.parts.append(raw)
        self.size += len(raw)

    def pieces(self, until: int, shape: tuple[float, float, int], out: list[str]) -> Any:
        """Yield corpus pieces (also collected in ``out``) while the body is
        shorter than ``until`` bytes; the caller emits each before the next."""
        median, sigma, hi = shape
        mu = math.log(median)
        while self.size < until:
            n = min(hi, max(1, round(self.rng.lognormvariate(mu, sigma))))
            piece = self.source.take(n)
            out.append(piece)
            yield piece

    def body(self) -> bytes:
        return b"".join(self.parts)

    def arg_pieces(self, args: Any) -> list[str]:
        return _split(self.rng, _json(args), 55, 0.4, 100)


class AnthropicWriter(_Writer):
    text_delta = (10, 1.0, 80)
    thinking_delta = (12, 1.0, 120)

    def __init__(self, rng: random.Random, source: _Source) -> None:
        super().__init__(rng, source)
        self.msg_id = "msg_01" + _b64(rng, 24)

    def _overhead(self) -> int:
        return 120

    def ev(self, kind: str, payload: str) -> None:
        # The API pads payloads with spaces before the closing brace.
        pad = " " * self.rng.randint(0, 15)
        self.emit(kind, payload[:-1] + pad + "}")

    def begin(self) -> None:
        usage = '{"input_tokens":2095,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0},"output_tokens":1,"service_tier":"standard"}'  # noqa: E501
        self.ev(
            "message_start",
            '{"type":"message_start","message":{"model":"claude-sonnet-4-5-20250929",'
            f'"id":"{self.msg_id}","type":"message","role":"assistant","content":[],'
            f'"stop_reason":null,"stop_sequence":null,"usage":{usage}}}}}',
        )

    def _block(self, start: str, deltas: Any, kind: str, field: str) -> None:
        index = self.blocks
        self.blocks += 1
        self.ev(
            "content_block_start",
            f'{{"type":"content_block_start","index":{index},"content_block":{start}}}',
        )
        if index == 0:
            self.emit("ping", '{"type": "ping"}')
        prefix = (
            f'{{"type":"content_block_delta","index":{index},"delta":{{"type":"{kind}","{field}":'
        )
        for piece in deltas:
            self.ev("content_block_delta", prefix + _json(piece) + "}}")

    def _stop(self) -> None:
        self.ev("content_block_stop", f'{{"type":"content_block_stop","index":{self.blocks - 1}}}')

    def text(self, until: int) -> None:
        deltas: list[str] = []
        pieces = self.pieces(until, self.text_delta, deltas)
        self._block('{"type":"text","text":""}', pieces, "text_delta", "text")
        self._stop()
        self.expect.text.append("".join(deltas))

    def thinking(self, until: int) -> None:
        deltas: list[str] = []
        pieces = self.pieces(until, self.thinking_delta, deltas)
        self._block(
            '{"type":"thinking","thinking":"","signature":""}', pieces, "thinking_delta", "thinking"
        )
        signature = _b64(self.rng, 600)
        self.ev(
            "content_block_delta",
            f'{{"type":"content_block_delta","index":{self.blocks - 1},'
            f'"delta":{{"type":"signature_delta","signature":"{signature}"}}}}',
        )
        self._stop()
        self.expect.thinking.append("".join(deltas))

    def tool(self, name: str, args: Any) -> None:
        call_id = "toolu_01" + _b64(self.rng, 24)
        start = f'{{"type":"tool_use","id":"{call_id}","name":"{name}","input":{{}}}}'
        self._block(start, self.arg_pieces(args), "input_json_delta", "partial_json")
        self._stop()
        self.expect.calls.append((name, args))

    def end(self) -> None:
        stop = "tool_use" if self.expect.calls else "end_turn"
        self.ev(
            "message_delta",
            f'{{"type":"message_delta","delta":{{"stop_reason":"{stop}","stop_sequence":null}},'
            '"usage":{"input_tokens":2095,"cache_creation_input_tokens":0,'
            '"cache_read_input_tokens":0,"output_tokens":50312}}',
        )
        self.ev("message_stop", '{"type":"message_stop"}')


class CompletionsWriter(_Writer):
    text_delta = (4, 0.7, 40)
    thinking_delta = (4, 0.7, 40)

    def __init__(self, rng: random.Random, source: _Source) -> None:
        super().__init__(rng, source)
        self.prefix = (
            '{"id":"chatcmpl-' + _b64(rng, 28) + '","object":"chat.completion.chunk",'
            '"created":1754688908,"model":"gpt-4o-2024-08-06","service_tier":"default",'
            '"system_fingerprint":"fp_ff25b2783a","choices":[{"index":0,"delta":'
        )
        self.calls = 0

    def _overhead(self) -> int:
        return 270

    def chunk(self, delta: str, finish: str = "null") -> None:
        pad = _b64(self.rng, self.rng.randint(4, 16))
        self.emit(
            None,
            f'{self.prefix}{delta},"logprobs":null,"finish_reason":{finish}}}],'
            f'"usage":null,"obfuscation":"{pad}"}}',
        )

    def begin(self) -> None:
        self.chunk('{"role":"assistant","content":"","refusal":null}')

    def text(self, until: int) -> None:
        deltas: list[str] = []
        for piece in self.pieces(until, self.text_delta, deltas):
            self.chunk('{"content":' + _json(piece) + "}")
        self.expect.text.append("".join(deltas))

    def thinking(self, until: int) -> None:
        deltas: list[str] = []
        for piece in self.pieces(until, self.thinking_delta, deltas):
            self.chunk('{"content":null,"reasoning_content":' + _json(piece) + "}")
        self.expect.thinking.append("".join(deltas))

    def tool(self, name: str, args: Any) -> None:
        index = self.calls
        self.calls += 1
        call_id = "call_" + _b64(self.rng, 24)
        self.chunk(
            f'{{"tool_calls":[{{"index":{index},"id":"{call_id}","type":"function",'
            f'"function":{{"name":"{name}","arguments":""}}}}]}}'
        )
        for piece in self.arg_pieces(args):
            self.chunk(
                f'{{"tool_calls":[{{"index":{index},"function":{{"arguments":{_json(piece)}}}}}]}}'
            )
        self.expect.calls.append((name, args))

    def end(self) -> None:
        self.chunk("{}", '"tool_calls"' if self.expect.calls else '"stop"')
        self.emit(
            None,
            self.prefix.split('"choices"')[0] + '"choices":[],"usage":{"prompt_tokens":2095,'
            '"completion_tokens":50312,"total_tokens":52407,"prompt_tokens_details":'
            '{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":'
            '{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,'
            '"rejected_prediction_tokens":0}},"obfuscation":""}',
        )
        self.emit(None, "[DONE]")


class ResponsesWriter(_Writer):
    text_delta = (4, 0.7, 40)
    thinking_delta = (4, 0.7, 40)

    def __init__(self, rng: random.Random, source: _Source) -> None:
        super().__init__(rng, source)
        self.resp_id = "resp_" + _b64(rng, 48)
        self.seq = 0
        self.output: list[str] = []  # final items, as JSON

    def _overhead(self) -> int:
        return 240

    def ev(self, kind: str, body: str) -> None:
        self.emit(kind, f'{{"type":"{kind}",{body},"sequence_number":{self.seq}}}')
        self.seq += 1

    def response(self, status: str, output: str, usage: str) -> str:
        return (
            f'"response":{{"id":"{self.resp_id}","object":"response","created_at":1768618532,'
            f'"status":"{status}","background":false,"error":null,"incomplete_details":null,'
            '"instructions":null,"max_output_tokens":null,"model":"gpt-5-2025-08-07",'
            f'"output":[{output}],"parallel_tool_calls":true,"previous_response_id":null,'
            '"reasoning":{"effort":"medium","summary":"detailed"},"service_tier":"auto",'
            '"store":true,"temperature":1.0,"text":{"format":{"type":"text"},'
            '"verbosity":"medium"},"tool_choice":"auto","tools":[],"top_p":1.0,'
            f'"truncation":"disabled","usage":{usage},"user":null,"metadata":{{}}}}'
        )

    def begin(self) -> None:
        self.ev("response.created", self.response("in_progress", "", "null"))
        self.ev("response.in_progress", self.response("in_progress", "", "null"))

    def _item_id(self, prefix: str) -> str:
        return prefix + "_" + _b64(self.rng, 48)

    def text(self, until: int) -> None:
        index = len(self.output)
        item_id = self._item_id("msg")
        where = f'"item_id":"{item_id}","output_index":{index}'
        self.ev(
            "response.output_item.added",
            f'"item":{{"id":"{item_id}","type":"message","status":"in_progress","content":[],'
            f'"role":"assistant"}},"output_index":{index}',
        )
        self.ev(
            "response.content_part.added",
            f'"content_index":0,{where},"part":{{"type":"output_text","annotations":[],'
            '"logprobs":[],"text":""}',
        )
        deltas: list[str] = []
        # The closing events repeat the text four times: about 2% of the body.
        for piece in self.pieces(int(until * 0.98), self.text_delta, deltas):
            pad = _b64(self.rng, self.rng.randint(4, 16))
            self.ev(
                "response.output_text.delta",
                f'"content_index":0,"delta":{_json(piece)},{where},"logprobs":[],'
                f'"obfuscation":"{pad}"',
            )
        text = "".join(deltas)
        t = _json(text)
        self.ev("response.output_text.done", f'"content_index":0,{where},"logprobs":[],"text":{t}')
        part = f'{{"type":"output_text","annotations":[],"logprobs":[],"text":{t}}}'
        self.ev("response.content_part.done", f'"content_index":0,{where},"part":{part}')
        item = (
            f'{{"id":"{item_id}","type":"message","status":"completed","content":[{part}],'
            '"role":"assistant"}'
        )
        self.ev("response.output_item.done", f'"item":{item},"output_index":{index}')
        self.output.append(item)
        self.expect.text.append(text)

    def thinking(self, until: int) -> None:
        index = len(self.output)
        item_id = self._item_id("rs")
        where = f'"item_id":"{item_id}","output_index":{index}'
        self.ev(
            "response.output_item.added",
            f'"item":{{"id":"{item_id}","type":"reasoning","summary":[]}},"output_index":{index}',
        )
        texts: list[str] = []
        s = 0
        while self.size < until * 0.98:
            self.ev(
                "response.reasoning_summary_part.added",
                f'{where},"part":{{"type":"summary_text","text":""}},"summary_index":{s}',
            )
            # Summary parts of 500-3,000 characters.
            limit = self.rng.randint(500, 3000)
            pieces: list[str] = []
            for piece in self.pieces(int(until * 0.98), self.thinking_delta, pieces):
                pad = _b64(self.rng, self.rng.randint(4, 16))
                self.ev(
                    "response.reasoning_summary_text.delta",
                    f'"delta":{_json(piece)},{where},"obfuscation":"{pad}","summary_index":{s}',
                )
                if sum(map(len, pieces)) >= limit:
                    break
            text = "".join(pieces)
            texts.append(text)
            t = _json(text)
            self.ev(
                "response.reasoning_summary_text.done", f'{where},"summary_index":{s},"text":{t}'
            )
            self.ev(
                "response.reasoning_summary_part.done",
                f'{where},"part":{{"type":"summary_text","text":{t}}},"summary_index":{s}',
            )
            s += 1
        summary = ",".join(f'{{"type":"summary_text","text":{_json(t)}}}' for t in texts)
        enc = _b64(self.rng, 1200)
        item = (
            f'{{"id":"{item_id}","type":"reasoning","encrypted_content":"{enc}",'
            f'"summary":[{summary}]}}'
        )
        self.ev("response.output_item.done", f'"item":{item},"output_index":{index}')
        self.output.append(item)
        self.expect.thinking.append("\n\n".join(texts))

    def tool(self, name: str, args: Any) -> None:
        index = len(self.output)
        item_id = self._item_id("fc")
        call_id = "call_" + _b64(self.rng, 24)
        where = f'"item_id":"{item_id}","output_index":{index}'
        self.ev(
            "response.output_item.added",
            f'"item":{{"id":"{item_id}","type":"function_call","status":"in_progress",'
            f'"arguments":"","call_id":"{call_id}","name":"{name}"}},"output_index":{index}',
        )
        for piece in self.arg_pieces(args):
            pad = _b64(self.rng, self.rng.randint(4, 16))
            self.ev(
                "response.function_call_arguments.delta",
                f'"delta":{_json(piece)},{where},"obfuscation":"{pad}"',
            )
        a = _json(_json(args))
        self.ev("response.function_call_arguments.done", f'"arguments":{a},{where}')
        item = (
            f'{{"id":"{item_id}","type":"function_call","status":"completed",'
            f'"arguments":{a},"call_id":"{call_id}","name":"{name}"}}'
        )
        self.ev("response.output_item.done", f'"item":{item},"output_index":{index}')
        self.output.append(item)
        self.expect.calls.append((name, args))

    def end(self) -> None:
        usage = (
            '{"input_tokens":2095,"input_tokens_details":{"cached_tokens":0},'
            '"output_tokens":50312,"output_tokens_details":{"reasoning_tokens":1024},'
            '"total_tokens":52407}'
        )
        self.ev("response.completed", self.response("completed", ",".join(self.output), usage))


class GoogleWriter(_Writer):
    text_delta = (90, 0.5, 400)
    thinking_delta = (300, 0.4, 1200)
    newline = "\r\n"

    def __init__(self, rng: random.Random, source: _Source) -> None:
        super().__init__(rng, source)
        self.resp_id = _b64(rng, 20) + "Qk"
        self.tokens = 0
        self.signature: str | None = None

    def _overhead(self) -> int:
        return 330

    def chunk(self, parts: str, finish: str = "") -> None:
        self.tokens += 7
        usage = (
            f'{{"promptTokenCount": 2095, "candidatesTokenCount": {self.tokens}, '
            f'"totalTokenCount": {2095 + self.tokens}, "promptTokensDetails": '
            '[{"modality": "TEXT", "tokenCount": 2095}]}'
        )
        self.emit(
            None,
            f'{{"candidates": [{{"content": {{"parts": [{parts}], "role": "model"}}'
            f'{finish}, "index": 0}}], "usageMetadata": {usage}, '
            f'"modelVersion": "gemini-2.5-flash", "responseId": "{self.resp_id}"}}',
        )

    def begin(self) -> None:
        pass

    def text(self, until: int) -> None:
        deltas: list[str] = []
        for i, piece in enumerate(self.pieces(until, self.text_delta, deltas)):
            extra = ""
            if i == 0 and self.signature:
                extra = f', "thoughtSignature": "{self.signature}"'
                self.signature = None
            self.chunk(f'{{"text": {json.dumps(piece, ensure_ascii=False)}{extra}}}')
        self.expect.text.append("".join(deltas))

    def thinking(self, until: int) -> None:
        deltas: list[str] = []
        for piece in self.pieces(until, self.thinking_delta, deltas):
            self.chunk(f'{{"text": {json.dumps(piece, ensure_ascii=False)}, "thought": true}}')
        self.signature = _b64(self.rng, 800)
        self.expect.thinking.append("".join(deltas))

    def tool(self, name: str, args: Any) -> None:
        """A Gemini 3 streamed call: ``partialArgs`` string pieces per JSON path."""
        sig = _b64(self.rng, 400)
        self.chunk(
            f'{{"functionCall": {{"name": "{name}", "willContinue": true}}, '
            f'"thoughtSignature": "{sig}"}}'
        )
        for path, value in _leaves(args, "$"):
            if isinstance(value, str):
                for piece in _split(self.rng, value, 55, 0.4, 100):
                    self.chunk(
                        f'{{"functionCall": {{"partialArgs": [{{"jsonPath": "{path}", '
                        f'"stringValue": {_json(piece)}, "willContinue": true}}], '
                        '"willContinue": true}}'
                    )
                entry = f'"jsonPath": "{path}", "stringValue": ""'
            else:
                entry = f'"jsonPath": "{path}", "numberValue": {value}'
            self.chunk(
                f'{{"functionCall": {{"partialArgs": [{{{entry}}}], "willContinue": true}}}}'
            )
            self.chunk('{"functionCall": {"willContinue": true}}')
        self.expect.calls.append((name, args))

    def end(self) -> None:
        self.chunk(
            '{"functionCall": {}}' if self.expect.calls else '{"text": ""}',
            ', "finishReason": "STOP"',
        )


def _leaves(value: Any, path: str) -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in _leaves(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [leaf for i, v in enumerate(value) for leaf in _leaves(v, f"{path}[{i}]")]
    return [(path, value)]


WRITERS: dict[str, type[_Writer]] = {
    "anthropic-messages": AnthropicWriter,
    "openai-completions": CompletionsWriter,
    "openai-responses": ResponsesWriter,
    "google-generative-ai": GoogleWriter,
}


def _write(api: str, name: str, size: int, seed: int) -> _Writer:
    # text-events is the text stream, cut differently: the same bytes.
    rng = random.Random(f"{seed}:{api}:{'text' if name == 'text-events' else name}")
    w: Any = WRITERS[api](rng, _Source(random.Random(seed)))
    w.begin()
    if name in ("text", "text-events"):
        w.text(size)
    elif name == "thinking":
        w.thinking(int(size * 0.9))
        w.text(size)
    elif name == "tool":
        w.text(int(size * 0.02))
        n = 0
        # Calls of up to 200 KB of arguments; the last one sized to fill the budget.
        per_char = 4.0  # body bytes per argument character, measured after the first call
        while w.size < size * 0.97:
            nested = n % 2 == 1
            before = w.size
            arg_size = int(min(200_000, max(2_000, (size - w.size) / per_char)))
            w.tool(
                "edit_file" if nested else "write_file",
                tool_arguments(rng, arg_size, w.source, nested),
            )
            per_char = (w.size - before) / arg_size
            n += 1
    elif name.startswith("tool-"):
        arg_size = {"tool-100KB": 100_000, "tool-1MB": MB}[name]
        w.tool("write_file", tool_arguments(rng, arg_size, w.source, nested=False))
    else:
        raise ValueError(name)
    w.end()
    writer: _Writer = w
    return writer


def synthetic_workload(api: str, name: str, size: int = 5 * MB, seed: int = 1) -> Workload:
    """One synthetic stream (``size`` is the target of the 5 MB kinds)."""
    w = _write(api, name, size, seed)
    body = w.body()
    wl = Workload(name, api, [body], [f"{api}/{name}"], w.expect)
    wl.chunks = [per_event(body) if name.endswith("-events") else chunked(body, seed)]
    return wl


def per_event(body: bytes) -> list[bytes]:
    """``body`` cut after each blank line: one wire event (with its blank line) per chunk."""
    end = b"\r\n\r\n" if b"\r\n\r\n" in body[:4096] else b"\n\n"
    pieces = body.split(end)
    out = [piece + end for piece in pieces[:-1]]
    if pieces[-1]:
        out.append(pieces[-1])
    return out


def minimal_stream(api: str) -> bytes:
    """The smallest complete stream of ``api``: one short answer."""
    rng = random.Random(f"minimal:{api}")
    w: Any = WRITERS[api](rng, _Source(rng, 1000))
    w.begin()
    w.text(w.size + 1)
    w.end()
    body: bytes = w.body()
    return body


def fixture_workload(api: str, seed: int = 1) -> Workload | None:
    paths = sorted((FIXTURES / api).glob("*.sse"))
    if not paths:
        return None
    bodies = [p.read_bytes() for p in paths]
    wl = Workload("fixtures", api, bodies, [p.stem for p in paths])
    wl.chunks = [chunked(b, seed + i) for i, b in enumerate(bodies)]
    return wl
