"""``openai-completions``: Chat Completions and every OpenAI-compatible server
(providers.md §3).

One chunk at a time: the selected choice's ``delta`` is translated in the
order thinking, text, refusal, tool calls; then its ``finish_reason``; then
the chunk's usage; then a top-level ``error``. The wire has no per-block end,
so every block ends at the terminal (``[DONE]``, or end of input after a
``finish_reason``).

Tool-call fragments are keyed by ``(index, id)`` (§3.2): a new non-empty id
at a known index is a new call; an entry without an index joins the call with
its id, or the most recent call.

Host quirks are data here, not branches: which field carries reasoning, where
usage lives, which cache field is present. Every field is read defensively;
unknown fields are ignored.

Where providers.md leaves the shape open:

* Groq ``executed_tools`` (server-side, so thinking, executed tools, text,
  refusal, tool calls is the order within a chunk) become one
  ``ProviderBlock(kind="executed_tools", data={"executed_tools": [...]})``.
* OpenRouter ``reasoning_details`` sign the thinking block when an entry is
  ``reasoning.encrypted`` or carries a non-empty ``signature`` (signed
  ``reasoning.text`` from Anthropic models must be replayed too).
* An error's ``metadata.raw`` / ``failed_generation`` is appended to its
  message after a newline.
* A tool-call entry with no id, no name and no arguments opens nothing.
"""

from __future__ import annotations

from typing import Any

from ..._json import dumps_compact
from ...builder import MessageBuilder
from ...errors import error_type_of
from ...messages import StopReason, Usage
from ..base import ERROR_WORDS, Decoder, as_dict, as_int, as_list, as_str, error_of
from .extra_content import google_signature

__all__ = ["OpenAICompletionsDecoder", "to_usage"]

STOP_TABLE: dict[str, StopReason | None] = {
    "stop": StopReason.STOP,
    "end": StopReason.STOP,  # Ollama, LM Studio
    "length": StopReason.LENGTH,
    "tool_calls": StopReason.TOOL_USE,
    "function_call": StopReason.TOOL_USE,  # legacy functions
    "content_filter": StopReason.CONTENT_FILTER,
    "error": None,  # gateways: the generation failed
    "network_error": None,
}

#: Delta fields that carry reasoning text, in order of preference; the first
#: non-empty one is used (chutes sends the same text in two of them).
REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")

#: Fields of cache reads, first present wins: OpenAI and most hosts; DeepSeek;
#: Moonshot/Kimi and Together (top level of the usage object).
#: Each entry is a path into the usage object.
CACHE_READ_PATHS: tuple[tuple[str, ...], ...] = (
    ("prompt_tokens_details", "cached_tokens"),
    ("prompt_cache_hit_tokens",),
    ("cached_tokens",),
)
CACHE_WRITE_PATHS: tuple[tuple[str, ...], ...] = (("prompt_tokens_details", "cache_write_tokens"),)

#: The delta fields the generic path reads; any other field is ignored, and
#: every one of these counts as absent when it is ``null``.
DELTA_FIELDS = frozenset(
    (
        "content",
        "refusal",
        *REASONING_FIELDS,
        "reasoning_details",
        "executed_tools",
        "annotations",
        "tool_calls",
        "function_call",
        "extra_content",
    )
)

#: OpenRouter ``reasoning_details`` fields that stream in pieces; other fields
#: of a later entry with the same ``index`` replace the earlier value.
DETAIL_TEXT_FIELDS = frozenset(("text", "summary"))
#: ``reasoning_details`` entry types whose text is thinking text.
DETAIL_THINKING = {"reasoning.text": "text", "reasoning.summary": "summary"}

# Builder keys of the single blocks; tool calls are ("tool", n). _DETAILS
# names the merged reasoning_details the builder holds.
_DETAILS = "reasoning_details"
_THINKING, _TEXT, _REFUSAL, _EXECUTED, _FUNCTION_CALL = (
    "thinking",
    "text",
    "refusal",
    "executed_tools",
    "function_call",
)

#: The delta fields :meth:`OpenAICompletionsDecoder._sole_piece` reads as text.
_FAST_TEXT_FIELDS = frozenset(("content", *REASONING_FIELDS))
#: Chunk fields that take a chunk off the shortest way even when null (they
#: are rare; ``usage``, null in every chunk of some streams, is looked at).
_RARE_CHUNK_FIELDS = frozenset(("x_groq", "error", "prompt_progress", "citations"))


def _count(usage: dict[str, Any], paths: tuple[tuple[str, ...], ...]) -> int:
    """The first count present (an int, 0 included) along ``paths``."""
    for path in paths:
        node: Any = usage
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        if type(node) is int:
            return as_int(node)
    return 0


def to_usage(raw: dict[str, Any]) -> Usage:
    """A Chat Completions usage object as canonical ``Usage`` (§3.3)."""
    prompt = as_int(raw.get("prompt_tokens"))
    completion = as_int(raw.get("completion_tokens"))
    reasoning = as_int(as_dict(raw.get("completion_tokens_details")).get("reasoning_tokens"))
    cache_read = _count(raw, CACHE_READ_PATHS)
    cache_write = _count(raw, CACHE_WRITE_PATHS)
    output = completion
    total = as_int(raw.get("total_tokens"))
    if reasoning and total == prompt + completion + reasoning:
        # xAI reports reasoning beside completion_tokens, not inside it.
        output += reasoning
    return Usage.of(
        input_tokens=max(0, prompt - cache_read - cache_write),
        output_tokens=output,
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
        reasoning_tokens=reasoning,
        raw=raw,
    )


def error_reason(error: Any) -> tuple[str, str | None]:
    """``(reason, code)`` of a wire error object (§8): the message, with
    OpenRouter's ``metadata.raw`` and Groq's ``failed_generation`` appended."""
    message, code = error_of(error)
    err = as_dict(error)
    parts = [message]
    for extra in (as_dict(err.get("metadata")).get("raw"), err.get("failed_generation")):
        if isinstance(extra, str):
            if extra:
                parts.append(extra)
        elif extra is not None:
            parts.append(dumps_compact(extra))
    return "\n".join(parts), code


def _has_content(delta: dict[str, Any]) -> bool:
    """Whether a delta carries anything that would change the message."""
    for field in ("content", "refusal", *REASONING_FIELDS):
        value = delta.get(field)
        if (isinstance(value, str) and value) or (isinstance(value, list) and value):
            return True
    for field in ("tool_calls", "annotations", "executed_tools", "reasoning_details"):
        if as_list(delta.get(field)):
            return True
    return bool(as_dict(delta.get("function_call")))


class OpenAICompletionsDecoder(Decoder):
    api = "openai-completions"
    stop_table = STOP_TABLE
    blocks_end_implicitly = True
    done_at_eof_after_stop = True
    closing_words = (b"[DONE]", *ERROR_WORDS)

    def __init__(self, builder: MessageBuilder, choice: int = 0) -> None:
        super().__init__(builder, choice)
        self._finished = False  # a finish_reason arrived for the selected choice
        self._dropped = False  # content_after_finish already reported
        # Tool calls: wire index → call number, id → call number, each call's id.
        self._by_index: dict[int, int] = {}
        self._by_id: dict[str, int] = {}
        self._call_ids: list[str] = []
        # OpenRouter reasoning_details are merged by the builder (_DETAILS);
        # whether they sign the thinking block.
        self._details_sign = False
        self._signing_chunk = False  # the chunk being read brought a signing entry
        self._signature_stale = False  # details merged since the signature was written
        # Perplexity's top-level citations: the last value wins.
        self._citations: list[Any] = []
        # Once a model and a response id have been passed on, start() does nothing.
        self._have_model = self._have_id = False

    # ------------------------------------------------------------------
    # Chunks

    def handle(self, event: str, payload: dict[str, Any]) -> None:
        if event == "error":
            self._fail(payload.get("error", payload))
            return
        piece = self._sole_piece(payload)
        if piece is not None:
            if not (self._have_model and self._have_id):
                self._start(payload, as_str(payload.get("id")))
            field, value = piece
            if field == "content":  # the commonest chunk of all
                if value:  # (_text, inlined: one call less on every text chunk)
                    self.builder.text(_TEXT, value)
            else:
                self._piece(field, value)
            return
        choices = as_list(payload.get("choices"))
        response_id = as_str(payload.get("id"))
        if response_id or choices:
            self._start(payload, response_id)
        progress = payload.get("prompt_progress")
        if isinstance(progress, dict):
            self._progress(progress)
        choice = self._selected(choices)
        if choice is not None:
            self._choice(payload, choice)
        usage = next(
            (
                u
                for u in (
                    payload.get("usage"),
                    choice.get("usage") if choice is not None else None,
                    as_dict(payload.get("x_groq")).get("usage"),
                )
                if isinstance(u, dict)
            ),
            None,
        )
        if usage is not None:
            self.builder.set_usage(to_usage(usage))
        error = payload.get("error")
        if error:
            self._fail(error)

    def _choice(self, payload: dict[str, Any], choice: dict[str, Any]) -> None:
        delta = self._choice_delta(choice)
        if not self._finished:
            citations = payload.get("citations")
            if isinstance(citations, list):
                self._citations = citations
            self._delta(delta)
        elif _has_content(delta) and not self._dropped:
            self._dropped = True
            self.builder.diagnostic(
                "content_after_finish",
                f"choice {self.choice}: content after its finish_reason is dropped",
                dumps_compact(delta),
            )
        finish = choice.get("finish_reason")
        if isinstance(finish, str) and finish:
            self.builder.set_stop_reason(finish)
            self._finished = True

    # -- the commonest chunk --------------------------------------------
    #
    # Almost every chunk of a stream carries one piece of text, of reasoning
    # or of an open tool call's arguments, and nothing else. _sole_piece
    # recognises that chunk in a few lookups; handle (content) and _piece (the
    # rest) then translate it with the same methods _delta uses, so the two
    # paths cannot disagree.

    def _sole_piece(self, payload: dict[str, Any]) -> tuple[str, Any] | None:
        """``(field, value)`` when the chunk is one piece of the selected,
        unfinished choice and nothing else: a single choice without
        finish_reason or usage; no top-level ``usage``, ``x_groq``,
        ``error``, ``prompt_progress`` or ``citations``; a delta whose only
        non-null field of :data:`DELTA_FIELDS` is ``content`` or a reasoning
        field (a string), or ``tool_calls`` with one fragment of string
        arguments, without id or name, for the call open at its ``index``
        (the value is then the call's number and the fragment)."""
        try:
            (choice,) = payload["choices"]
            delta, index = choice["delta"], choice.get("index", 0)
        except (KeyError, TypeError, ValueError, AttributeError):  # no single choice with a delta
            return None
        if (
            self._finished
            or type(delta) is not dict
            or (index if type(index) is int else 0) != self.choice
            or choice.get("finish_reason") is not None
            or choice.get("usage") is not None
            or payload.get("usage") is not None
            or not _RARE_CHUNK_FIELDS.isdisjoint(payload)
        ):
            return None
        if not self.choices.selected_seen:
            self.choices.selected_seen = True
        content = delta.get("content")
        if type(content) is str and len(delta) == 1:  # the commonest delta, without the loop
            return ("content", content)
        piece: tuple[str, Any] | None = None
        for name, item in delta.items():
            if item is not None and name in DELTA_FIELDS:
                if piece is not None:
                    return None  # two kinds of content: _delta orders them
                piece = (name, item)
        if piece is None:
            return ("", None)  # nothing that changes the message
        if piece[0] == "tool_calls":
            return self._sole_fragment(piece[1])
        return piece if type(piece[1]) is str and piece[0] in _FAST_TEXT_FIELDS else None

    def _sole_fragment(self, entries: Any) -> tuple[str, Any] | None:
        entry: Any = entries[0] if type(entries) is list and len(entries) == 1 else None
        if type(entry) is not dict or type(entry.get("function")) is not dict:
            return None
        tool_index, function = entry.get("index"), entry["function"]
        call = self._by_index.get(tool_index) if type(tool_index) is int else None
        fragment = function.get("arguments")
        if (
            call is None
            or entry.get("id") not in (None, "")
            or function.get("name") not in (None, "")
            or type(fragment) is not str
            or "extra_content" in entry
        ):
            return None
        return "tool_calls", (call, fragment)

    def _piece(self, field: str, value: Any) -> None:
        """A sole piece that is not content (`handle` takes that one)."""
        if field == "tool_calls":
            call, fragment = value
            self._arguments(("tool", call), fragment)
        elif field:  # a reasoning field
            self._reasoning(value, None)

    def _choice_delta(self, choice: dict[str, Any]) -> dict[str, Any]:
        """The choice's ``delta``; for the legacy ``/v1/completions`` stream
        (``choices[].text``, no ``delta``) the text as content. A choice with
        neither (a non-streaming ``message``, an unknown shape) says so with
        ``unknown_delta``, unless it only ends the choice."""
        delta = choice.get("delta")
        if isinstance(delta, dict):
            return delta
        text = choice.get("text")
        if isinstance(text, str):
            return {"content": text}
        if delta is not None or "message" in choice or choice.get("finish_reason") is None:
            shape = "a non-streaming message" if "message" in choice else "no delta"
            self.builder.diagnostic(
                "unknown_delta", f"choice {self.choice} has {shape}", dumps_compact(choice)
            )
        return {}

    def _start(self, payload: dict[str, Any], response_id: str) -> None:
        model = as_str(payload.get("model"))
        self.builder.start(model or None, response_id or None)
        self._have_model = self._have_model or bool(model)
        self._have_id = self._have_id or bool(response_id)

    def _selected(self, choices: list[Any]) -> dict[str, Any] | None:
        for position, choice in enumerate(choices):
            if not isinstance(choice, dict):
                continue
            index = choice.get("index")
            if type(index) is not int:
                index = position
            if index == self.choice:
                self.choices.selected_seen = True
                return choice
            self.choices.saw(index)
        return None

    def _progress(self, progress: dict[str, Any]) -> None:
        time_ms = progress.get("time_ms")
        self.builder.progress(
            as_int(progress.get("processed")),
            as_int(progress.get("total")),
            as_int(progress.get("cache")),
            float(time_ms)
            if isinstance(time_ms, float) or (type(time_ms) is int and -(2**63) < time_ms < 2**63)
            else 0.0,
        )

    def _delta(self, delta: dict[str, Any]) -> None:
        content = delta.get("content")
        parts = content if isinstance(content, list) else []
        self._thinking(delta, parts)
        executed = as_list(delta.get("executed_tools"))
        if executed:
            self._executed_tools(executed)
        if isinstance(content, str):
            self._text(_TEXT, content)
        elif content is not None and not isinstance(content, list):
            self.builder.diagnostic(
                "unknown_delta", f"content of type {type(content).__name__}", dumps_compact(content)
            )
        for part in parts:
            part = as_dict(part)
            kind = part.get("type")
            if kind == "text":
                self._text(_TEXT, as_str(part.get("text")))
            elif kind != "thinking":
                self.builder.diagnostic(
                    "unknown_delta", f"a content part of type {kind!r}", dumps_compact(part)
                )
        annotations = as_list(delta.get("annotations"))
        if annotations:
            self.builder.text(_TEXT, "")
            for annotation in annotations:
                self.builder.add_citation(_TEXT, annotation)
        refusal = delta.get("refusal")
        if isinstance(refusal, str) and refusal:
            self.builder.text(_REFUSAL, refusal, refusal=True)
        for entry in as_list(delta.get("tool_calls")):
            if isinstance(entry, dict):
                self._tool_call(entry)
        function_call = delta.get("function_call")
        if isinstance(function_call, dict) and function_call:
            self._function_call(function_call)
        signature = google_signature(delta)
        if signature is not None:  # Gemini signs the message's text
            self.builder.text(_TEXT, "")
            self.builder.set_signature(_TEXT, signature)

    # ------------------------------------------------------------------
    # Blocks

    def _text(self, key: str, text: str) -> None:
        if text:  # an empty piece opens nothing
            self.builder.text(key, text)

    def _thinking(self, delta: dict[str, Any], parts: list[Any]) -> None:
        text = ""
        for field in REASONING_FIELDS:
            text = as_str(delta.get(field))
            if text:
                break
        details = as_list(delta.get("reasoning_details"))
        if details:
            from_details = self._merge_details(details)
            if not text:
                text = from_details
        # Mistral Magistral: content as [{"type": "thinking", "thinking": [...]}, ...].
        for part in parts:
            part = as_dict(part)
            if part.get("type") == "thinking":
                thinking = part.get("thinking")
                if isinstance(thinking, str):
                    text += thinking
                for piece in as_list(thinking):
                    text += as_str(as_dict(piece).get("text"))
        # Serialising every merged entry on every chunk would cost the whole
        # reasoning per chunk (quadratic): the signature is written when a
        # chunk brings a signing entry, and brought up to date at the end.
        signature = None
        if details and self._details_sign:
            if self._signing_chunk:
                signature = self.builder.merged_json(_DETAILS)
            self._signature_stale = signature is None
        self._reasoning(text, signature)

    def _reasoning(self, text: str, signature: str | None) -> None:
        """Reasoning text (and a new signature) for the one thinking block."""
        if text or signature is not None:
            self.builder.thinking(_THINKING, text, signature=signature)

    def _merge_details(self, entries: list[Any]) -> str:
        """Merge OpenRouter ``reasoning_details`` by index; returns the
        thinking text these entries add."""
        text = ""
        self._signing_chunk = False
        for entry in entries:
            if not isinstance(entry, dict):
                continue
            kind = entry.get("type")
            field = DETAIL_THINKING.get(kind) if isinstance(kind, str) else None
            if field is not None:
                text += as_str(entry.get(field))
            if kind == "reasoning.encrypted" or as_str(entry.get("signature")):
                self._details_sign = self._signing_chunk = True
            self.builder.merge_entry(_DETAILS, entry, text_fields=DETAIL_TEXT_FIELDS)
        return text

    def _executed_tools(self, entries: list[Any]) -> None:
        """Groq compound ``executed_tools``: one provider block, entries merged
        by index (a later entry replaces fields one by one)."""
        self.builder.provider_entries(_EXECUTED, "executed_tools", "executed_tools", entries)

    def _tool_call(self, entry: dict[str, Any]) -> None:
        index = entry.get("index")
        call_id = as_str(entry.get("id"))
        function = as_dict(entry.get("function"))
        name = as_str(function.get("name"))
        call: int | None
        if type(index) is int:
            call = self._by_index.get(index)
            bound = self._call_ids[call] if call is not None else ""
            if call_id and bound and call_id != bound:
                call = None  # a new id at a known index is a new call
        elif call_id:
            call = self._by_id.get(call_id)
        else:
            call = len(self._call_ids) - 1 if self._call_ids else None
        if call is None:
            if not (call_id or name or function.get("arguments")):
                return  # an empty entry opens nothing
            call = len(self._call_ids)
            self._call_ids.append(call_id)
            self.builder.open_tool_call(("tool", call), id=call_id or None, name=name or None)
        else:
            self.builder.set_tool_identity(("tool", call), call_id or None, name or None)
            if call_id and not self._call_ids[call]:
                self._call_ids[call] = call_id
        if type(index) is int:
            self._by_index[index] = call
        if call_id:
            self._by_id.setdefault(call_id, call)
        self._arguments(("tool", call), function.get("arguments"))
        self.builder.set_signature(("tool", call), google_signature(entry))

    def _function_call(self, function_call: dict[str, Any]) -> None:
        """Legacy ``delta.function_call``: one call, never an id."""
        name = as_str(function_call.get("name"))
        self.builder.tool_call(_FUNCTION_CALL, name=name or None, synthesize_id=True)
        self._arguments(_FUNCTION_CALL, function_call.get("arguments"))

    def _arguments(self, key: Any, arguments: Any) -> None:
        if isinstance(arguments, str):
            self.builder.append_arguments(key, arguments)
        elif isinstance(arguments, dict):  # a host that sends an object
            self.builder.append_arguments(key, dumps_compact(arguments))

    # ------------------------------------------------------------------
    # Terminal

    def _before_terminal(self) -> None:
        """Perplexity's citations join the text block just before the end;
        the reasoning_details signature is brought up to date."""
        self.choices.check(self.builder, "choice")
        if self.builder.closed:
            return
        if self._signature_stale and self.builder.has(_THINKING):
            self.builder.set_signature(_THINKING, self.builder.merged_json(_DETAILS))
            self._signature_stale = False
        if not self._citations:
            return
        self.builder.text(_TEXT, "")
        for citation in self._citations:
            self.builder.add_citation(
                _TEXT, {"type": "url", "url": citation} if isinstance(citation, str) else citation
            )
        self._citations = []

    def _fail(self, error: Any) -> None:
        reason, code = error_reason(error)
        self._before_terminal()
        self.builder.fail("upstream", reason, code, error_type=error_type_of(error))

    def done_marker(self) -> None:
        self._before_terminal()
        self.builder.finish()

    def end_of_input(self) -> None:
        self._before_terminal()
        super().end_of_input()
