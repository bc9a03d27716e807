"""Everything ``benchmarks/run.py`` times on the same chunks: the floor,
streamnorm, and the libraries people use instead.

A :class:`Contender` prepares itself once per api (client construction and
imports stay outside the timed region) and returns a ``run(body, chunks)``
callable that reads one stream and accumulates it to the end; ``view`` turns
what ``run`` returned into a :class:`View` (text, reasoning, tool calls), so
that every contender's result is checked against streamnorm's before its
time is trusted. ``view`` runs outside the timed region.

The SDKs read the chunks through ``httpx.MockTransport`` — a streaming
response whose body yields the chunks as they are — and so build a request
on every run. That cost does not depend on the stream, so ``overhead`` is set
and the benchmark subtracts the median time of a minimal stream from theirs.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import orjson

from streamnorm import (
    StreamNormalizer,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCallBlock,
    ToolCallDelta,
    Usage,
    UsageUpdate,
)
from streamnorm.apis import resolve_api
from streamnorm.events import text_delta, thinking_delta, tool_call_delta, usage_update

__all__ = ["CONTENDERS", "Baseline", "Contender", "View", "floor_events"]

Run = Callable[[bytes, list[bytes]], Any]
#: How to build one event again: a constructor and its arguments.
Recipe = tuple[Callable[..., Any], tuple[Any, ...]]

ANTHROPIC, RESPONSES, COMPLETIONS, GOOGLE = (
    "anthropic-messages",
    "openai-responses",
    "openai-completions",
    "google-generative-ai",
)


@dataclass
class View:
    """What a contender made of a stream. ``None``: it does not expose that
    (or, for the floor, does not accumulate at all)."""

    text: str | None = None
    thinking: str | None = None
    calls: list[tuple[str, Any]] | None = None


class Contender:
    key = ""
    label = ""
    #: Which apis it reads; empty: all.
    apis: tuple[str, ...] = ()
    #: Which workloads it is timed on; empty: all.
    workloads: tuple[str, ...] = ()
    #: Whether it builds a request per run (the time of a minimal stream is subtracted).
    overhead = False
    #: The floor is the reference for streamnorm; peers are compared with streamnorm.
    is_floor = False

    def available(self) -> str | None:
        """None when it can run here, else why not."""
        return None

    def reads(self, api: str) -> bool:
        return not self.apis or api in self.apis

    def prepare(self, api: str) -> Run:
        raise NotImplementedError

    def prime(self, api: str, body: bytes, chunks: list[bytes]) -> None:
        """Untimed work a stream needs before its runs are timed (default: none)."""

    def view(self, api: str, result: Any) -> View:
        return View()


def _missing(*modules: str) -> str | None:
    import importlib.util

    for name in modules:
        if importlib.util.find_spec(name) is None:
            return f"{name} is not installed"
    return None


# ---------------------------------------------------------------------------
# The floor: split the whole body at blank lines, parse each event's data.


def floor_events(body: bytes) -> int:
    """How many events with data the body has (what the floor parses)."""
    sep = b"\r\n\r\n" if b"\r\n" in body[:4096] else b"\n\n"
    return sum(1 for block in body.split(sep) if b"data:" in block)


class Floor(Contender):
    is_floor = True

    def __init__(self, key: str, label: str, loads: str) -> None:
        self.key = key
        self.label = label
        self.loads = loads

    def available(self) -> str | None:
        return _missing(self.loads)

    def prepare(self, api: str) -> Run:
        if self.loads == "orjson":
            loads: Callable[[bytes], Any] = orjson.loads
        else:
            import jiter

            loads = jiter.from_json

        def run(body: bytes, chunks: list[bytes]) -> int:
            n = 0
            sep = b"\r\n\r\n" if body.find(b"\r\n", 0, 4096) >= 0 else b"\n\n"
            for block in body.split(sep):
                i = block.find(b"data:")
                if i < 0:
                    continue
                try:
                    loads(block[i + 5 :])
                except ValueError:  # [DONE], or a malformed recorded event
                    continue
                n += 1
            return n

        return run


class FloorAndOutput(Floor):
    """The orjson floor, then the canonical events streamnorm emits for the
    same stream, built the way its builder builds them (the same fast
    constructors; a fresh ``Usage`` for each ``UsageUpdate``).

    What any pure-Python normalizer spends at the least, before it has read a
    chunk, kept any state or joined any text: it shows how much of the floor
    budget the output objects alone take. The events of each stream are
    listed untimed, by :meth:`prime`.
    """

    def __init__(self) -> None:
        super().__init__(
            "floor-output",
            "floor-orjson + streamnorm's output events (each built as its builder builds it)",
            "orjson",
        )
        self.recipes: dict[bytes, list[Recipe]] = {}

    def prime(self, api: str, body: bytes, chunks: list[bytes]) -> None:
        if body not in self.recipes:
            self.recipes[body] = _output_recipe(api, chunks)

    def prepare(self, api: str) -> Run:
        floor = super().prepare(api)

        def run(body: bytes, chunks: list[bytes]) -> int:
            recipe = self.recipes.get(body)
            if recipe is None:  # a stream not primed (a warm-up run)
                self.prime(api, body, chunks)
                recipe = self.recipes[body]
            n: int = floor(body, chunks)
            for make, args in recipe:
                make(*args)
            return n

        return run


def _usage_event(usage: Usage) -> UsageUpdate:
    return usage_update(
        Usage.of(
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_tokens,
            usage.cache_write_tokens,
            usage.reasoning_tokens,
            usage.raw,
        )
    )


def _output_recipe(api: str, chunks: list[bytes]) -> list[Recipe]:
    """How to build again each delta and usage event streamnorm emits for
    ``chunks`` (the few start, end and terminal events are left out)."""
    n = StreamNormalizer(resolve_api(api))
    events = [e for chunk in chunks for e in n.feed(chunk)] + n.flush()
    recipe: list[Recipe] = []
    for e in events:
        if isinstance(e, TextDelta):
            recipe.append((text_delta, (e.index, e.delta)))
        elif isinstance(e, ThinkingDelta):
            recipe.append((thinking_delta, (e.index, e.delta, e.signature)))
        elif isinstance(e, ToolCallDelta):
            recipe.append(
                (tool_call_delta, (e.index, e.id, e.name, e.raw_json_delta, e.buffer, e.end))
            )
        elif isinstance(e, UsageUpdate):
            recipe.append((_usage_event, (e.usage,)))
    return recipe


#: Per api: the text of a text delta payload (else None), and the usage object
#: a payload carries (else None) with its input and output count fields.
_MINIMAL: dict[
    str, tuple[Callable[[dict[str, Any]], Any], Callable[[dict[str, Any]], Any], str, str]
] = {
    ANTHROPIC: (
        lambda p: p["delta"].get("text") if p.get("type") == "content_block_delta" else None,
        lambda p: p.get("usage") or (p.get("message") or {}).get("usage"),
        "input_tokens",
        "output_tokens",
    ),
    RESPONSES: (
        lambda p: p.get("delta") if p.get("type") == "response.output_text.delta" else None,
        lambda p: (p.get("response") or {}).get("usage"),
        "input_tokens",
        "output_tokens",
    ),
    COMPLETIONS: (
        lambda p: p["choices"][0]["delta"].get("content") if p.get("choices") else None,
        lambda p: p.get("usage"),
        "prompt_tokens",
        "completion_tokens",
    ),
    GOOGLE: (
        lambda p: (
            p["candidates"][0]["content"]["parts"][0].get("text") if p.get("candidates") else None
        ),
        lambda p: p.get("usageMetadata"),
        "promptTokenCount",
        "candidatesTokenCount",
    ),
}


class Minimal(Contender):
    """The least a pure-Python normalizer of a text stream does, for a
    reference that reads the chunks as streamnorm does: each chunk framed at
    blank lines with the unfinished block carried to the next, each data
    parsed with jiter, a ``TextDelta`` per text delta and a ``UsageUpdate``
    per changed usage object (built as streamnorm builds them), the text
    joined at the end. No checks, no state but the tail, the text and the
    last usage: what streamnorm costs beyond it is what its rules cost."""

    key = "minimal"
    label = "minimal normalizer: chunks framed at blank lines + jiter + text and usage events"
    is_floor = True
    workloads = ("text", "text-events")

    def available(self) -> str | None:
        return _missing("jiter")

    def prepare(self, api: str) -> Run:
        import jiter

        parse = jiter.from_json
        text_of, usage_of, input_key, output_key = _MINIMAL[api]

        def run(body: bytes, chunks: list[bytes]) -> str:
            sep = b"\r\n\r\n" if body.find(b"\r\n", 0, 4096) >= 0 else b"\n\n"
            tail, parts, last = b"", [], None
            for chunk in chunks:
                events: list[Any] = []  # (a chunk's events, dropped as streamnorm's are)
                data = tail + chunk if tail else chunk
                cut = data.rfind(sep) + len(sep)
                tail = data[cut:]
                for block in data[:cut].split(sep):
                    i = block.find(b"data:")
                    try:
                        payload = parse(block[i + 5 :], allow_inf_nan=False)
                    except ValueError:  # [DONE], or no data
                        continue
                    text = text_of(payload)
                    if text:
                        parts.append(text)
                        events.append(text_delta(0, text))
                    usage = usage_of(payload)
                    if usage and usage != last:
                        last = usage
                        get = usage.get
                        events.append(
                            usage_update(Usage.of(get(input_key, 0), get(output_key, 0), raw=usage))
                        )
            return "".join(parts)

        return run

    def view(self, api: str, result: Any) -> View:
        return View(text=result)


# ---------------------------------------------------------------------------
# streamnorm


def message_view(message: Any) -> View:
    """What a streamnorm message holds; its blocks are told apart by class
    name, so that a message of the copy `Baseline` loads reads the same."""
    blocks = [(type(b).__name__, b) for b in message.content]
    return View(
        "".join(b.text for k, b in blocks if k == TextBlock.__name__ and not b.refusal),
        "".join(b.thinking for k, b in blocks if k == ThinkingBlock.__name__),
        [(b.name, b.arguments) for k, b in blocks if k == ToolCallBlock.__name__],
    )


def normalizing(normalizer: Any, api: str) -> Run:
    """A run that feeds the chunks to ``normalizer(api)`` and returns its message."""

    def run(body: bytes, chunks: list[bytes]) -> Any:
        n = normalizer(api)
        feed = n.feed
        for chunk in chunks:
            feed(chunk)
        n.flush()
        return n.message

    return run


class Streamnorm(Contender):
    key = "streamnorm"
    label = "streamnorm"

    def prepare(self, api: str) -> Run:
        return normalizing(StreamNormalizer, resolve_api(api))

    def view(self, api: str, result: Any) -> View:
        return message_view(result)


class Baseline(Contender):
    """streamnorm from another checkout's ``src`` (``run.py --baseline DIR``),
    loaded beside this one under its own module name, so that a change is
    measured before and after in one run, on the same chunks."""

    key = "streamnorm-before"

    def __init__(self, src: str) -> None:
        self.src = os.path.abspath(src)
        self.label = f"streamnorm from {self.src}"

    def available(self) -> str | None:
        if not os.path.exists(os.path.join(self.src, "streamnorm", "__init__.py")):
            return f"no streamnorm package under {self.src}"
        return None

    def prepare(self, api: str) -> Run:
        import importlib.util
        import sys

        name = "streamnorm_before"
        module = sys.modules.get(name)
        if module is None:
            init = os.path.join(self.src, "streamnorm", "__init__.py")
            spec = importlib.util.spec_from_file_location(name, init)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module  # (its relative imports find it here)
            spec.loader.exec_module(module)
        return normalizing(module.StreamNormalizer, module.apis.resolve_api(api))

    def view(self, api: str, result: Any) -> View:
        return message_view(result)


# ---------------------------------------------------------------------------
# The official SDKs, through httpx.MockTransport


class _Served:
    """A mock transport that answers every request with the current chunks.

    ``sdk`` names the SDK package: recent openai and anthropic releases are
    built on ``httpx2`` and want its client; the transport is made with the
    HTTP library the SDK itself imports.
    """

    def __init__(self, sdk: str = "") -> None:
        import importlib

        name = "httpx"
        with contextlib.suppress(ImportError, TypeError):
            if hasattr(importlib.import_module(f"{sdk}._base_client"), "httpx2"):
                name = "httpx2"
        httpx = importlib.import_module(name)
        self.chunks: list[bytes] = []
        self.httpx = httpx
        self.transport = httpx.MockTransport(self.respond)

    def respond(self, request: Any) -> Any:
        return self.httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content=iter(self.chunks)
        )


def _sdk_client(sdk: str, factory: str, base_url: str) -> tuple[_Served, Any]:
    """A client of package ``sdk`` (``factory`` names its client class) whose
    every request is answered with the current chunks, and the transport."""
    import importlib

    served = _Served(sdk)
    client = getattr(importlib.import_module(sdk), factory)(
        api_key="x",
        base_url=base_url,
        max_retries=0,
        http_client=served.httpx.Client(transport=served.transport),
    )
    return served, client


def _args(raw: str | None) -> Any:
    try:
        return json.loads(raw or "{}")
    except ValueError:
        return raw


class OpenAIChatState(Contender):
    key = "openai-create"
    label = "openai SDK create(stream=True) + ChatCompletionStreamState"
    apis = (COMPLETIONS,)
    overhead = True

    def available(self) -> str | None:
        return _missing("openai")

    def _client(self) -> tuple[_Served, Any]:
        return _sdk_client("openai", "OpenAI", "http://bench.invalid/v1")

    def prepare(self, api: str) -> Run:
        from openai.lib.streaming.chat import ChatCompletionStreamState

        served, client = self._client()
        create = client.chat.completions.create
        messages = [{"role": "user", "content": "hi"}]

        def run(body: bytes, chunks: list[bytes]) -> Any:
            served.chunks = chunks
            state: Any = ChatCompletionStreamState()
            with create(model="gpt-4o", messages=messages, stream=True) as chunks_in:
                for chunk in chunks_in:
                    state.handle_chunk(chunk)
            return state.get_final_completion()

        return run

    def view(self, api: str, result: Any) -> View:
        message = result.choices[0].message
        extra = message.model_extra or {}
        return View(
            message.content or "",
            extra.get("reasoning_content"),
            [(t.function.name, _args(t.function.arguments)) for t in message.tool_calls or []],
        )


class OpenAIChatHelper(OpenAIChatState):
    """The helper accumulates with the same ``ChatCompletionStreamState`` as
    ``OpenAIChatState`` (plus a filter on ``object``): timed on the target
    workloads only, to keep a full run short."""

    key = "openai-stream"
    label = "openai SDK chat.completions.stream() + get_final_completion()"
    workloads = ("text", "tool-1MB", "fixtures")

    def prepare(self, api: str) -> Run:
        served, client = self._client()
        stream = client.chat.completions.stream
        messages = [{"role": "user", "content": "hi"}]

        def run(body: bytes, chunks: list[bytes]) -> Any:
            served.chunks = chunks
            with stream(model="gpt-4o", messages=messages) as s:
                return s.get_final_completion()

        return run


class OpenAIResponses(Contender):
    key = "openai-responses"
    label = "openai SDK responses.stream() + get_final_response()"
    apis = (RESPONSES,)
    overhead = True

    def available(self) -> str | None:
        return _missing("openai")

    def prepare(self, api: str) -> Run:
        served, client = _sdk_client("openai", "OpenAI", "http://bench.invalid/v1")
        stream = client.responses.stream

        def run(body: bytes, chunks: list[bytes]) -> Any:
            served.chunks = chunks
            with stream(model="gpt-5", input="hi") as s:
                return s.get_final_response()

        return run

    def view(self, api: str, result: Any) -> View:
        text, thinking, calls = [], [], []
        for item in result.output:
            if item.type == "message":
                text += [p.text for p in item.content if p.type == "output_text"]
            elif item.type == "reasoning":
                parts = [p.text for p in item.summary] + [p.text for p in item.content or []]
                thinking.append("\n\n".join(parts))
            elif item.type == "function_call":
                calls.append((item.name, _args(item.arguments)))
        return View("".join(text), "".join(thinking), calls)


class AnthropicStream(Contender):
    key = "anthropic"
    label = "anthropic SDK messages.stream() + get_final_message()"
    apis = (ANTHROPIC,)
    overhead = True

    def available(self) -> str | None:
        return _missing("anthropic")

    def prepare(self, api: str) -> Run:
        served, client = _sdk_client("anthropic", "Anthropic", "http://bench.invalid")
        stream = client.messages.stream
        messages = [{"role": "user", "content": "hi"}]

        def run(body: bytes, chunks: list[bytes]) -> Any:
            served.chunks = chunks
            with stream(model="claude-sonnet-4-5", max_tokens=64000, messages=messages) as s:
                return s.get_final_message()

        return run

    def view(self, api: str, result: Any) -> View:
        text, thinking, calls = [], [], []
        for block in result.content:
            if block.type == "text":
                text.append(block.text)
            elif block.type == "thinking":
                thinking.append(block.thinking)
            elif block.type == "tool_use":
                calls.append((block.name, block.input))
        return View("".join(text), "".join(thinking), calls)


_PATH = re.compile(r"\.([^.\[]+)|\[(\d+)\]")


def _set_path(tree: Any, path: str, value: Any, extend: bool) -> None:
    """Set ``value`` at a ``$.a[0].b`` path; a string for the same path as
    the previous entry extends it (as a user assembling partial args does)."""
    keys: list[Any] = [name or int(index) for name, index in _PATH.findall(path[1:])]
    node = tree
    for key, following in pairwise(keys):
        empty: Any = [] if isinstance(following, int) else {}
        if isinstance(node, list):
            node.extend([None] * (key + 1 - len(node)))
            if node[key] is None:
                node[key] = empty
        elif key not in node:
            node[key] = empty
        node = node[key]
    last = keys[-1]
    if isinstance(node, list):
        node.extend([None] * (last + 1 - len(node)))
    if extend:
        node[last].append(value)  # pieces are joined once, at the end
    else:
        node[last] = [value] if isinstance(value, str) else value


def _join_pieces(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _join_pieces(v) for k, v in node.items()}
    if isinstance(node, list):
        if node and all(isinstance(p, str) for p in node):
            return "".join(node)
        return [_join_pieces(v) for v in node]
    return node


class GoogleGenAI(Contender):
    key = "google-genai"
    label = "google-genai generate_content_stream() + concatenation of parts"
    apis = (GOOGLE,)
    overhead = True

    def available(self) -> str | None:
        return _missing("google.genai")

    def prepare(self, api: str) -> Run:
        from google import genai
        from google.genai import types

        served = _Served()
        client = genai.Client(
            api_key="key",
            http_options=types.HttpOptions(client_args={"transport": served.transport}),
        )
        # The client closes its HTTP client when collected: keep it alive.
        self._client = client
        generate = client.models.generate_content_stream

        def run(body: bytes, chunks: list[bytes]) -> Any:
            served.chunks = chunks
            text: list[str] = []
            thoughts: list[str] = []
            calls: list[tuple[str, Any]] = []
            last_path = None
            for response in generate(model="gemini-2.5-flash", contents="hi"):
                for candidate in response.candidates or ():
                    content = candidate.content
                    for part in (content.parts if content else None) or ():
                        if part.text is not None:
                            (thoughts if part.thought else text).append(part.text)
                        fc = part.function_call
                        if fc is None:
                            continue
                        if fc.name:
                            calls.append((fc.name, dict(fc.args or {})))
                            last_path = None
                        for arg in fc.partial_args or ():
                            if arg.string_value is not None:
                                value: Any = arg.string_value
                            elif arg.number_value is not None:
                                value = arg.number_value
                            else:
                                value = arg.bool_value
                            extend = arg.json_path == last_path and isinstance(value, str)
                            _set_path(calls[-1][1], arg.json_path or "$", value, extend)
                            last_path = arg.json_path
            calls = [(name, _join_pieces(args)) for name, args in calls]
            return View("".join(text), "".join(thoughts), calls)

        return run

    def view(self, api: str, result: Any) -> View:
        view: View = result  # run() made it
        return view


# ---------------------------------------------------------------------------
# httpx-sse plus orjson plus the accumulation a user writes by hand


def _accumulate(api: str, events: Any) -> View:
    text: list[str] = []
    thinking: list[str] = []
    args: dict[Any, list[str]] = {}
    names: dict[Any, str] = {}
    loads = orjson.loads
    if api == ANTHROPIC:
        for sse in events:
            event = loads(sse.data)
            kind = event["type"]
            if kind == "content_block_delta":
                delta = event["delta"]
                dtype = delta["type"]
                if dtype == "text_delta":
                    text.append(delta["text"])
                elif dtype == "thinking_delta":
                    thinking.append(delta["thinking"])
                elif dtype == "input_json_delta" and event["index"] in args:
                    args[event["index"]].append(delta["partial_json"])
            elif kind == "content_block_start" and event["content_block"]["type"] == "tool_use":
                names[event["index"]] = event["content_block"]["name"]
                args[event["index"]] = []
    elif api == COMPLETIONS:
        for sse in events:
            if sse.data == "[DONE]":
                break
            chunk = loads(sse.data)
            for choice in chunk["choices"]:
                delta = choice["delta"]
                if delta.get("content"):
                    text.append(delta["content"])
                if delta.get("reasoning_content"):
                    thinking.append(delta["reasoning_content"])
                for call in delta.get("tool_calls") or ():
                    i = call["index"]
                    function = call.get("function") or {}
                    if "name" in function:
                        names[i] = function["name"]
                        args[i] = []
                    args[i].append(function.get("arguments") or "")
    elif api == RESPONSES:
        parts: list[list[str]] = []
        for sse in events:
            event = loads(sse.data)
            kind = event["type"]
            if kind == "response.output_text.delta":
                text.append(event["delta"])
            elif kind == "response.reasoning_summary_text.delta":
                parts[-1].append(event["delta"])
            elif kind == "response.reasoning_summary_part.added":
                parts.append([])
            elif kind == "response.function_call_arguments.delta":
                args[event["output_index"]].append(event["delta"])
            elif kind == "response.output_item.added" and event["item"]["type"] == "function_call":
                names[event["output_index"]] = event["item"]["name"]
                args[event["output_index"]] = []
        thinking = ["\n\n".join("".join(p) for p in parts)]
    else:
        tree: dict[str, Any] = {}
        last_path = None
        n = -1
        for sse in events:
            chunk = loads(sse.data)
            for part in chunk["candidates"][0]["content"]["parts"]:
                if "text" in part:
                    (thinking if part.get("thought") else text).append(part["text"])
                elif "functionCall" in part:
                    fc = part["functionCall"]
                    if "name" in fc:
                        n += 1
                        names[n] = fc["name"]
                        tree = dict(fc.get("args") or {})
                        args[n] = tree  # type: ignore[assignment]
                        last_path = None
                    for entry in fc.get("partialArgs") or ():
                        path = entry["jsonPath"]
                        value = entry.get("stringValue", entry.get("numberValue"))
                        extend = path == last_path and isinstance(value, str)
                        _set_path(tree, path, value, extend)
                        last_path = path
        calls = [(names[i], _join_pieces(args[i])) for i in sorted(names)]
        return View("".join(text), "".join(thinking), calls)
    calls = [(names[i], _args("".join(args[i]))) for i in sorted(names)]
    return View("".join(text), "".join(thinking), calls)


class HttpxSSE(Contender):
    key = "httpx-sse"
    label = "httpx-sse iter_sse() + orjson + hand accumulation"

    def available(self) -> str | None:
        return _missing("httpx_sse", "httpx")

    def prepare(self, api: str) -> Run:
        import httpx
        from httpx_sse import EventSource

        headers = {"content-type": "text/event-stream"}

        def run(body: bytes, chunks: list[bytes]) -> View:
            response = httpx.Response(200, headers=headers, content=iter(chunks))
            return _accumulate(api, EventSource(response).iter_sse())

        return run

    def view(self, api: str, result: Any) -> View:
        view: View = result  # run() made it
        return view


# ---------------------------------------------------------------------------
# LiteLLM


class _Lines:
    """The SSE framing a LiteLLM user's own client would do: chunks to data lines."""

    @staticmethod
    def payloads(chunks: list[bytes]) -> Any:
        rest = b""
        for chunk in chunks:
            blocks = (rest + chunk).split(b"\n\n")
            rest = blocks.pop()
            for block in blocks:
                i = block.find(b"data:")
                if i >= 0:
                    yield block[i + 5 :].strip()
        if rest.strip():
            i = rest.find(b"data:")
            if i >= 0:
                yield rest[i + 5 :].strip()


class LiteLLM(Contender):
    key = "litellm"
    label = "LiteLLM ModelResponseStream per chunk + stream_chunk_builder()"
    apis = (COMPLETIONS,)

    def available(self) -> str | None:
        return _missing("litellm")

    def prepare(self, api: str) -> Run:
        # Without this, importing litellm fetches a price list over the network.
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import litellm
            from litellm.types.utils import ModelResponseStream
        litellm.suppress_debug_info = True
        build = litellm.stream_chunk_builder
        loads = orjson.loads

        def run(body: bytes, chunks: list[bytes]) -> Any:
            out = []
            for data in _Lines.payloads(chunks):
                if data == b"[DONE]":
                    break
                out.append(ModelResponseStream(**loads(data)))
            return build(out)

        return run

    def view(self, api: str, result: Any) -> View:
        message = result.choices[0].message
        return View(
            message.content or "",
            getattr(message, "reasoning_content", None),
            [(t.function.name, _args(t.function.arguments)) for t in message.tool_calls or []],
        )


CONTENDERS: list[Contender] = [
    Floor("floor-orjson", 'floor: split(b"\\n\\n") + orjson.loads', "orjson"),
    Floor("floor-jiter", 'floor: split(b"\\n\\n") + jiter.from_json', "jiter"),
    FloorAndOutput(),
    Minimal(),
    Streamnorm(),
    AnthropicStream(),
    OpenAIResponses(),
    OpenAIChatState(),
    OpenAIChatHelper(),
    GoogleGenAI(),
    HttpxSSE(),
    LiteLLM(),
]
