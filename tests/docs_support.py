"""The code samples of README.md and docs/*.md, found, classified and run.

Every fenced block names its language. A ``python`` block runs as written,
as a user would paste it into a file; what its info string may add:

* ``no-run <reason>`` — not meant to run (a fragment of a larger program, the
  body of a coroutine); it must still compile, and the reason must be given.
* ``continues`` — runs after the previous ``python`` block of the same file,
  in the names that block left (a page that builds one program step by step).
* ``given=a,b:api`` — names the sample leaves to the reader ("your key",
  "the stream you received"); the test binds each from :data:`GIVEN`, where
  every name has one meaning across the docs. ``name:api`` picks the wire
  API of a name that depends on one (``response:bedrock-converse-stream``).

Any other word after ``python``, and a fence without a language, is a block
that cannot be classified: the test fails on it, naming file and line.

A sample that names a provider's host (``https://api.openai.com`` …) runs
with that host replaced by the fake server on 127.0.0.1, and the official
SDKs reach it through their ``*_BASE_URL`` variables; keys are test values.
The fake answers every API at its own path with a recorded stream (or, when
the request does not stream, a recorded response body) of a plain text
answer, and, like OpenAI, sends Chat Completions usage only to a request that
asked for it with ``stream_options.include_usage``.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from streamnorm import (
    AssistantMessage,
    Done,
    Error,
    Event,
    Request,
    UserMessage,
    normalize,
)

from .gateway_support import FakeUpstream, Received, Reply, fixture_reply
from .support import FIXTURES, REPO

#: The documents whose samples run.
DOCUMENTS = (REPO / "README.md", *sorted((REPO / "docs").glob("*.md")))

PYTHON = frozenset(("python", "py", "python3"))
#: The provider hosts a sample may name; each is served by the fake.
HOSTS = (
    "https://api.openai.com",
    "https://api.anthropic.com",
    "https://generativelanguage.googleapis.com",
)
#: The recorded plain-text answer the fake gives on each API.
STREAMS = {
    "anthropic-messages": "text-basic",
    "openai-responses": "text-basic",
    "openai-completions": "openai-text-include-usage",
    "google-generative-ai": "text-basic",
}
ANSWERS = {
    "anthropic-messages": "a01_text_simple",
    "openai-responses": "r01_text_basic",
    "openai-completions": "c01_text_basic",
    "google-generative-ai": "g01_text_basic",
}
#: The read-only APIs' recordings, for samples that read one.
EXTRA_STREAMS = {
    "bedrock-converse-stream": "extra-apis/bedrock-converse-stream/text-nova-micro.bin",
}
KEY = "sk-docs-test-0000"

_FENCE = re.compile(r"^( *)(`{3,}|~{3,})(.*)$")


@dataclass
class Block:
    """One fenced block: where it is, its info string and its text."""

    path: Path
    line: int  # of the opening fence, 1-based
    info: str
    text: str
    unclosed: bool = False

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"

    @property
    def language(self) -> str:
        return self.info.split(" ", 1)[0].lower() if self.info else ""


@dataclass
class Sample:
    """A ``python`` block classified: ``run`` (with ``given`` names, maybe
    ``continues``) or not (``no_run`` holds the reason)."""

    block: Block
    no_run: str | None = None
    continues: bool = False
    given: tuple[str, ...] = ()
    problem: str | None = None  # why it cannot be classified


@dataclass
class Program:
    """A runnable sample with the blocks it continues, run in one namespace."""

    samples: list[Sample] = field(default_factory=list)

    @property
    def id(self) -> str:
        return self.samples[-1].block.where


def blocks_of(path: Path) -> list[Block]:
    """The fenced blocks of one Markdown file, an unclosed fence's included
    (it cannot be classified)."""
    lines = path.read_text(encoding="utf-8").split("\n")
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if match is None:
            i += 1
            continue
        indent, fence, info = len(match.group(1)), match.group(2), match.group(3).strip()
        end = i + 1
        while end < len(lines) and not _closes(lines[end], fence):
            end += 1
        body = [line[indent:] if line[:indent].isspace() else line for line in lines[i + 1 : end]]
        text = "\n".join(body) + "\n"
        blocks.append(Block(path, i + 1, info, text, unclosed=end == len(lines)))
        i = end + 1
    return blocks


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return stripped.startswith(fence) and set(stripped) == {fence[0]}


def classify(block: Block) -> Sample | None:
    """The sample a ``python`` block is; None for a block in another
    language; a sample with ``problem`` set for one that cannot be told."""
    if block.unclosed:
        return Sample(block, problem="a fence that is never closed")
    if not block.language:
        return Sample(block, problem="a fence without a language (```text for plain output)")
    if block.language not in PYTHON:
        return None
    rest = block.info.split(" ", 1)[1].strip() if " " in block.info else ""
    if rest.startswith("no-run"):
        reason = rest[len("no-run") :].strip(" :—-")
        problem = None if reason else "no-run without a reason"
        return Sample(block, no_run=reason, problem=problem)
    sample = Sample(block)
    for word in rest.split():
        if word == "continues":
            sample.continues = True
        elif word.startswith("given="):
            sample.given = tuple(n for n in word[len("given=") :].split(",") if n)
        else:
            sample.problem = f"unknown word {word!r} after python"
    unknown = [name for name in sample.given if name.split(":")[0] not in GIVEN]
    if unknown:
        sample.problem = f"given names with no meaning in tests/docs_support.py: {unknown}"
    return sample


def all_blocks() -> list[Block]:
    return [block for path in DOCUMENTS for block in blocks_of(path)]


def programs(samples: list[Sample]) -> list[Program]:
    """The runnable samples, each with the blocks it continues."""
    out: list[Program] = []
    last: dict[Path, Program] = {}
    for sample in samples:
        if sample.no_run is not None or sample.problem is not None:
            continue
        before = last.get(sample.block.path)
        chain = list(before.samples) if sample.continues and before is not None else []
        program = Program([*chain, sample])
        last[sample.block.path] = program
        out.append(program)
    return out


# -- the fake server ---------------------------------------------------------


class DocsUpstream(FakeUpstream):
    """Answers every request at an API's path with that API's recorded text
    answer, whatever the model; counts tokens at the count endpoints."""

    def _reply(self, record: Received) -> Reply:
        if record.path.endswith((":countTokens", "/count_tokens", "/input_tokens")):
            key = "totalTokens" if record.path.endswith(":countTokens") else "input_tokens"
            return Reply(200, [json.dumps({key: 12}).encode()], "application/json")
        if record.api is None:
            return super()._reply(record)
        stream = record.body.get("stream") is True or ":streamGenerateContent" in record.path
        stem = STREAMS[record.api] if stream else ANSWERS[record.api]
        reply = fixture_reply(record.api, stem, stream=stream, sse="alt=sse" in record.query)
        if record.api == "openai-completions" and stream and not _asks_usage(record.body):
            reply.chunks = [c for c in reply.chunks if b'"choices":[]' not in c]
        return reply


def _asks_usage(body: dict[str, Any]) -> bool:
    options = body.get("stream_options")
    return isinstance(options, dict) and options.get("include_usage") is True


def rewrite_hosts(text: str, base: str) -> str:
    """The sample with every provider host it names replaced by ``base``."""
    for host in HOSTS:
        text = text.replace(host, base)
    return text


def environment(base: str) -> dict[str, str]:
    """What the SDKs read to find the fake and a key."""
    return {
        "OPENAI_API_KEY": KEY,
        "OPENAI_BASE_URL": f"{base}/v1",
        "ANTHROPIC_API_KEY": KEY,
        "ANTHROPIC_BASE_URL": base,
        "ANTHROPIC_API_BASE": base,
        "GEMINI_API_KEY": KEY,
        "STREAMNORM_GATEWAY_KEYS": KEY,
        # LiteLLM reads its bundled price list instead of fetching one
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }


# -- the names a sample may leave to the reader -------------------------------


@dataclass
class Context:
    """What a given name is made from: the fake's URL, the chosen API, and
    the exit stack that closes what a name opened."""

    base: str
    api: str
    stack: contextlib.ExitStack

    @classmethod
    @contextlib.contextmanager
    def open(cls, base: str) -> Iterator[Context]:
        """A context on the fake at ``base``; what its names opened is closed
        on leaving."""
        with contextlib.ExitStack() as stack:
            yield cls(base, "openai-responses", stack)


def recorded(api: str) -> bytes:
    """The recorded stream the fake sends for ``api``."""
    if api in EXTRA_STREAMS:
        return (FIXTURES / EXTRA_STREAMS[api]).read_bytes()
    return (FIXTURES / api / f"{STREAMS[api]}.sse").read_bytes()


def _chunks(ctx: Context) -> list[bytes]:
    data = recorded(ctx.api)
    return [data[i : i + 97] for i in range(0, len(data), 97)]


async def _achunks(ctx: Context) -> AsyncIterator[bytes]:
    for chunk in _chunks(ctx):
        yield chunk


def _events(ctx: Context) -> list[Event]:
    return list(normalize(_chunks(ctx), ctx.api))


def _message(ctx: Context) -> AssistantMessage:
    last = _events(ctx)[-1]
    assert isinstance(last, Done), f"the recorded {ctx.api} stream failed: {last}"
    return last.message


def _response(ctx: Context) -> httpx.Response:
    path = {
        "anthropic-messages": "/v1/messages",
        "openai-responses": "/v1/responses",
        "openai-completions": "/v1/chat/completions",
    }.get(ctx.api)
    if path is None:  # read-only APIs: the recording itself, as an HTTP body
        return httpx.Response(200, content=recorded(ctx.api))
    body = {"model": "gpt-5", "stream": True, "stream_options": {"include_usage": True}}
    client = ctx.stack.enter_context(httpx.Client(timeout=10))
    return ctx.stack.enter_context(client.stream("POST", ctx.base + path, json=body))


def _ignore(*args: Any) -> None:
    """A function of the reader's (``send``, ``handle`` …)."""


def _client(ctx: Context) -> Any:
    if ctx.api == "anthropic-messages":
        import anthropic

        return ctx.stack.enter_context(anthropic.Anthropic())
    import openai

    return ctx.stack.enter_context(openai.OpenAI())


def _answer(ctx: Context) -> bytes:
    api = ctx.api if ctx.api in ANSWERS else "openai-responses"
    return (FIXTURES / "responses" / api / f"{ANSWERS[api]}.json").read_bytes()


_TEXT = (
    'Checking.<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
)
_USER_TEXT = "What's the weather in Paris?"

#: Every name a sample may leave to the reader, with the one thing it means.
GIVEN: dict[str, Callable[[Context], Any]] = {
    # a streaming OpenAI Responses request: where, what, with which key
    "url": lambda ctx: f"{ctx.base}/v1/responses",
    "body": lambda ctx: {"model": "gpt-5", "input": _USER_TEXT, "stream": True},
    "headers": lambda ctx: {"Authorization": f"Bearer {KEY}"},
    "key": lambda ctx: KEY,
    # a stream received: byte chunks, async byte chunks, an HTTP response
    "upstream": _chunks,
    "byte_source": _chunks,
    "source": _achunks,
    "response": _response,
    # what reading a stream gave: its events, one event, its message
    "events": _events,
    "event": lambda ctx: _events(ctx)[0],
    "message": _message,
    # a conversation: canonical (history), as the SDKs take it (messages)
    "history": lambda ctx: [UserMessage(_USER_TEXT)],
    "messages": lambda ctx: [{"role": "user", "content": _USER_TEXT}],
    "prompt": lambda ctx: _USER_TEXT,
    "tools": lambda ctx: [],
    "request": lambda ctx: Request("gemini-2.5-flash", (UserMessage(_USER_TEXT),)),
    # a response body as received, parsed or not
    "data": lambda ctx: json.loads(_answer(ctx)),
    "response_body": lambda ctx: _answer(ctx),
    # an SDK client of the API (openai unless the api says anthropic)
    "client": _client,
    # the reader's own functions, which do nothing here
    **{
        name: lambda ctx: _ignore
        for name in (
            "send",
            "handle",
            "save",
            "report",
            "show_reasoning",
            "show_text",
            "show_call_preview",
            "preview",
        )
    },
    # inline tool calls: model text with a Hermes call, and the same in pieces
    "text": lambda ctx: _TEXT,
    "chunks": lambda ctx: [_TEXT[i : i + 7] for i in range(0, len(_TEXT), 7)],
    # where and how to reach a provider, for samples that build the URL
    "base_url": lambda ctx: ctx.base,
    "auth": lambda ctx: {"x-goog-api-key": KEY},
    "AUTH": lambda ctx: {
        "anthropic-messages": {"x-api-key": KEY},
        "openai-responses": {"authorization": f"Bearer {KEY}"},
        "google-generative-ai": {"x-goog-api-key": KEY},
    },
    "get_weather": lambda ctx: lambda **arguments: "18 °C and sunny",
}


def bind(given: tuple[str, ...], ctx: Context) -> dict[str, Any]:
    """The values of a sample's given names (``name`` or ``name:api``)."""
    values: dict[str, Any] = {}
    for entry in given:
        name, _, api = entry.partition(":")
        sub = Context(ctx.base, api or "openai-responses", ctx.stack)
        values[name] = GIVEN[name](sub)
    return values


def failed_result(names: dict[str, Any]) -> str | None:
    """What a finished sample left that shows it did not work as the doc
    says: a list of ``events`` without its terminal event, a final ``Error``,
    a failed message, a message without usage (every recorded answer reports
    usage, when it was asked for)."""
    events = names.get("events")
    if isinstance(events, list) and not (events and isinstance(events[-1], (Done, Error))):
        return "events does not end with the terminal event"
    for name in ("event", "message", "final"):
        value = names.get(name)
        if isinstance(value, Error):
            return f"{name} is an Error: {value.kind} {value.reason}"
        message = value.message if isinstance(value, Done) else value
        if isinstance(message, AssistantMessage):
            if message.error is not None or message.stop_reason in ("error", "aborted"):
                return f"{name} failed: {message.error}"
            if message.usage.total_tokens == 0:
                return f"{name} reports no usage"
    return None
