"""``google-generative-ai``: Gemini ``streamGenerateContent?alt=sse`` (providers.md §4).

Every payload is a whole ``GenerateContentResponse``. The candidate whose
``index`` equals ``choice`` is read; its ``parts`` are processed in order,
and consecutive parts of the same kind extend one block (a block key here is
simply the running number of the block this decoder opened). The wire has no
terminal event: end of input after a ``finishReason`` or a
``promptFeedback.blockReason`` is the normal end (``done_at_eof_after_stop``).

Streamed function-call arguments (``partialArgs``, §4.3) arrive as values set
at JSON paths; :class:`~streamnorm.json_writer.IncrementalJSONWriter` turns them
back into incremental JSON text.
"""

from __future__ import annotations

import marshal
from typing import Any

from ..._json import dumps_compact
from ...builder import MessageBuilder
from ...errors import body_retry_after
from ...json_writer import IncrementalJSONWriter
from ...messages import StopReason, Usage
from ..base import ERROR_WORDS, MAX_COUNT, Decoder, as_counts, as_dict, as_list, as_str, error_of
from .wire import METADATA_BLOCKS

__all__ = ["GoogleDecoder"]

_FILTERED = StopReason.CONTENT_FILTER

STOP_TABLE: dict[str, StopReason | None] = {
    "STOP": StopReason.STOP,
    "MAX_TOKENS": StopReason.LENGTH,
    "SAFETY": _FILTERED,
    "RECITATION": _FILTERED,
    "BLOCKLIST": _FILTERED,
    "PROHIBITED_CONTENT": _FILTERED,
    "SPII": _FILTERED,
    "IMAGE_SAFETY": _FILTERED,
    "LANGUAGE": _FILTERED,
    "MALFORMED_FUNCTION_CALL": None,
    "UNEXPECTED_TOOL_CALL": None,
    "OTHER": StopReason.STOP,
    "FINISH_REASON_UNSPECIFIED": StopReason.STOP,
    "NO_IMAGE": StopReason.STOP,
}

#: ``finishReason`` sent as a number (``enum-encoding=int``): the values the
#: Gemini API and Vertex protos number alike (they differ from 6 on).
_FINISH_NUMBERS = dict(
    enumerate(("FINISH_REASON_UNSPECIFIED", "STOP", "MAX_TOKENS", "SAFETY", "RECITATION", "OTHER"))
)

#: Part fields that qualify a part rather than say what it holds.
_PART_MODIFIERS = frozenset(
    ("thought", "thoughtSignature", "partMetadata", "videoMetadata", "mediaResolution")
)

_METADATA_BLOCKS = METADATA_BLOCKS
#: Every candidate field :meth:`GoogleDecoder._keep_metadata` reads (most
#: chunks have none of them).
_CANDIDATE_METADATA = frozenset((*_METADATA_BLOCKS, "citationMetadata"))

_TEXT, _THINKING, _CALL = "text", "thinking", "call"


def to_usage(raw: dict[str, Any]) -> Usage:
    """``usageMetadata`` → ``Usage`` (§4.4): the prompt count includes cached
    tokens; thoughts are reported beside the candidates, not inside them.

    Gemini sends one with every chunk: the five counts are checked in one
    expression, and only a snapshot that fails it goes through `as_counts`."""
    get = raw.get
    counts = cached, thoughts, prompt, tool_prompt, candidates = (
        get("cachedContentTokenCount", 0),
        get("thoughtsTokenCount", 0),
        get("promptTokenCount", 0),
        get("toolUsePromptTokenCount", 0),
        get("candidatesTokenCount", 0),
    )
    # (as_counts' checks, unrolled: five ints, and their OR a count, which
    # it is exactly when each one is.)
    if not (
        type(cached) is type(thoughts) is type(prompt) is type(tool_prompt) is int
        and type(candidates) is int
        and 0 <= cached | thoughts | prompt | tool_prompt | candidates < MAX_COUNT
    ):
        cached, thoughts, prompt, tool_prompt, candidates = as_counts(*counts)
    prompt += tool_prompt
    return Usage.of(
        prompt - cached if prompt > cached else 0, candidates + thoughts, cached, 0, thoughts, raw
    )


def _same_json(value: Any, other: Any) -> bool:
    """Whether two parsed JSON values are the same JSON. ``==`` alone takes
    ``1``, ``1.0`` and ``true`` (or ``0.0`` and ``-0.0``) for equal and
    ignores key order; their ``marshal`` bytes tell them apart."""
    try:
        return value == other and marshal.dumps(value, 2) == marshal.dumps(other, 2)
    except (RecursionError, ValueError):  # nested too deep to compare: taken as different
        return False


class GoogleDecoder(Decoder):
    api = "google-generative-ai"
    alt_framings = ("json-array",)  # without alt=sse: one streamed JSON array
    stop_table = STOP_TABLE
    done_at_eof_after_stop = True
    last_event_has_stop = True
    closing_words = (b"finishReason", b"blockReason", *ERROR_WORDS)

    def __init__(self, builder: MessageBuilder, choice: int = 0) -> None:
        super().__init__(builder, choice)
        self._blocks = 0  # block keys: 0, 1, 2 … in the order this decoder opens them
        self._current: int | None = None  # the open text / thinking block or streamed call
        self._current_kind = ""
        self._args: IncrementalJSONWriter | None = None  # the open streamed call's arguments
        self._call_ids: dict[str, int] = {}  # wire call id → key, to merge repeats
        self._last_text: int | None = None
        self._metadata: dict[str, dict[str, Any]] = {}
        self._citations: list[Any] = []
        # Once a model and a response id have been passed on, start() does nothing.
        self._have_model = self._have_id = False
        self._usage_raw: dict[str, Any] | None = None  # the usageMetadata last passed on
        # The last partialArgs jsonPath and its parse: a streamed string repeats it.
        self._path_text: Any = None
        self._path: tuple[str | int, ...] | None = None

    # ------------------------------------------------------------------
    # Payloads

    def handle(self, event: str, payload: dict[str, Any]) -> None:
        error = payload.get("error")
        if error is not None or event == "error":
            self._error(error)
            return
        text = self._sole_text(payload)
        if text is not None:  # the commonest chunk of all, the shortest way
            self.builder.append_text(self._current, text)
        else:
            self._content(payload)
        usage = payload.get("usageMetadata")
        last = self._usage_raw
        if type(usage) is dict and (usage != last or not _same_json(usage, last)):
            # Gemini repeats usageMetadata on every chunk, mostly unchanged:
            # an identical snapshot would change nothing. (Unequal is
            # different JSON: the exact comparison only for an equal one.)
            self._usage_raw = usage
            self.builder.set_usage(to_usage(usage))

    def _content(self, payload: dict[str, Any]) -> None:
        """A chunk's model, response id, prompt feedback and candidate."""
        if not (self._have_model and self._have_id):
            self._identify(payload)
        feedback = payload.get("promptFeedback")
        if feedback is not None:
            block_reason = as_str(as_dict(feedback).get("blockReason"))
            if block_reason:
                self.builder.set_stop_reason(block_reason, mapped=StopReason.CONTENT_FILTER)
        candidate = self._candidate(payload.get("candidates"))
        if candidate is not None:
            content = candidate.get("content")
            parts = content.get("parts") if type(content) is dict else None
            if type(parts) is list:
                self._parts(parts)
            self._candidate_end(candidate)

    def _sole_text(self, payload: dict[str, Any]) -> str | None:
        """The text of a chunk that is one more text part of the open text
        block and nothing else (but usage): model and response id known, no
        prompt feedback, one candidate, the selected one, without finish
        reason or metadata, whose content is one part ``{"text": …}``.
        `_content` would do just what the caller then does with it."""
        try:
            (candidate,) = payload["candidates"]
            (part,) = candidate["content"]["parts"]
            text = part["text"]
        except (KeyError, TypeError, ValueError):
            return None
        index = candidate.get("index", 0)
        if (
            type(text) is not str
            or len(part) != 1
            or self._current_kind != _TEXT
            or index != self.choice
            or type(index) is bool
            or not (self._have_model and self._have_id)
            or candidate.get("finishReason") is not None
            or payload.get("promptFeedback") is not None
            or not _CANDIDATE_METADATA.isdisjoint(candidate)
        ):
            return None
        self.choices.selected_seen = True
        return text

    def _error(self, error: Any) -> None:
        reason, code = error_of(error, codes=("status", "code"))
        self._before_terminal()
        self.builder.fail("upstream", reason, code, body_retry_after(error))

    def _identify(self, payload: dict[str, Any]) -> None:
        model = as_str(payload.get("modelVersion"))
        response_id = as_str(payload.get("responseId"))
        self._have_model = self._have_model or bool(model)
        self._have_id = self._have_id or bool(response_id)
        self.builder.start(model or None, response_id or None)

    def _parts(self, parts: list[Any]) -> None:
        for part in parts:
            # More of the open streamed call, the commonest part of a tool
            # stream, goes the shortest way (a chunk of one more text part
            # does, before this: `_sole_text`); the rest through _part.
            if type(part) is dict and len(part) == 1 and self._current_kind == _CALL:
                call = part.get("functionCall")
                if type(call) is dict and not call.get("name") and self._args is not None:
                    self._continue_call(call)
                    continue
            self._part(as_dict(part))

    def _candidate_end(self, candidate: dict[str, Any]) -> None:
        """The candidate's metadata and finish reason, when it carries them."""
        if not _CANDIDATE_METADATA.isdisjoint(candidate):
            self._keep_metadata(candidate)
        finish = candidate.get("finishReason")
        if type(finish) is int:  # enum-encoding=int: the proto number
            finish = _FINISH_NUMBERS.get(finish, str(finish))
        if finish and isinstance(finish, str):
            message = as_str(candidate.get("finishMessage")) or None
            self.builder.set_stop_reason(finish, error_reason=message)

    def end_of_input(self) -> None:
        self.choices.check(self.builder, "candidate")
        self._before_terminal()
        super().end_of_input()

    def _candidate(self, candidates: Any) -> dict[str, Any] | None:
        """The selected candidate of a chunk (the first with its index); the
        others are noted, also those after it."""
        found = None
        for candidate in candidates if type(candidates) is list else ():
            if type(candidate) is dict:
                index = candidate.get("index", 0)
                if index == self.choice and not isinstance(index, bool):
                    self.choices.selected_seen = True
                    if found is None:
                        found = candidate
                else:
                    self.choices.saw(index)
        return found

    def _keep_metadata(self, candidate: dict[str, Any]) -> None:
        """The last non-empty value of each metadata field wins (§4.1)."""
        for field in _METADATA_BLOCKS:
            value = candidate.get(field)
            if isinstance(value, dict) and value:
                self._metadata[field] = value
        citation = as_dict(candidate.get("citationMetadata"))
        sources = as_list(citation.get("citationSources")) or as_list(citation.get("citations"))
        if sources:
            self._citations = sources

    def _before_terminal(self) -> None:
        """Write the end of a streamed call that is still open (the builder
        then ends it as incomplete) and add the candidate metadata."""
        if self._args is not None and self._current is not None:
            self._finish_args(self._current, self._args)
        self._args = None
        if self._citations and self._last_text is not None:
            self.builder.backfill_citations(self._last_text, self._citations)
        for field in _METADATA_BLOCKS:
            if field in self._metadata:
                self.builder.open_provider(self._new_key(), field, self._metadata[field])
        self._metadata.clear()
        self._citations = []

    # ------------------------------------------------------------------
    # Parts

    def _new_key(self) -> int:
        self._blocks += 1
        return self._blocks - 1

    def _end_current(self) -> None:
        key = self._current
        if key is None:
            return
        if self._args is not None:
            self._finish_args(key, self._args)
            self._args = None
        self.builder.end_block(key)
        self._current = None
        self._current_kind = ""

    def _part(self, part: dict[str, Any]) -> None:
        signature = as_str(part.get("thoughtSignature"))
        call = part.get("functionCall")
        text = part.get("text")
        if isinstance(call, dict):
            self._function_call(call, signature)
        elif isinstance(text, str):
            self._text(text, part.get("thought") is True, signature)
        else:
            kind = next((k for k in part if k not in _PART_MODIFIERS), None)
            if kind is None:
                # Only qualifiers: a bare signature behaves as an empty text part.
                self._text("", part.get("thought") is True, signature)
                return
            self._end_current()
            key = self._new_key()
            self.builder.open_provider(key, kind, part)
            self.builder.end_block(key)

    def _text(self, text: str, thought: bool, signature: str) -> None:
        kind = _THINKING if thought else _TEXT
        key = self._current
        if key is not None and self._current_kind == kind:
            if kind == _THINKING:
                self.builder.append_thinking(key, text, signature=signature or None)
            else:
                self.builder.append_text(key, text)
                if signature:
                    self.builder.set_signature(key, signature)
            return
        if not text and not signature:
            return  # Gemini ends many streams with an empty text part
        self._end_current()
        key = self._current = self._new_key()
        self._current_kind = kind
        if kind == _THINKING:
            self.builder.open_thinking(key, text=text, signature=signature or None)
        else:
            self.builder.open_text(key, text=text, signature=signature or None)
            self._last_text = key

    def _function_call(self, call: dict[str, Any], signature: str) -> None:
        name = as_str(call.get("name"))
        streaming = call.get("willContinue") is True
        if not name:
            if self._args is None or self._current is None:
                self.builder.diagnostic(
                    "delta_for_unknown_block",
                    "a functionCall part without a name and no streamed call open",
                    dumps_compact(call),
                )
                return
            self._continue_call(call)
            return
        self._end_current()
        call_id = as_str(call.get("id"))
        if call_id and not streaming and call_id in self._call_ids:
            # A repeat of an earlier call: merged; a signature-less repeat
            # keeps the signature the first one carried.
            earlier = self._call_ids[call_id]
            if signature and not self.builder.signature(earlier):
                detail = f"signature of the repeated call {call_id!r}"
                self.builder.backfill_signature(earlier, signature, detail)
            return
        key = self._new_key()
        if call_id:
            self._call_ids.setdefault(call_id, key)
        self.builder.open_tool_call(
            key, id=call_id or None, name=name, signature=signature or None, synthesize_id=True
        )
        raw_args = call.get("args")
        if not streaming:
            self.builder.append_arguments(
                key, "{}" if raw_args is None else dumps_compact(raw_args)
            )
            self.builder.end_block(key)
            return
        args = self._args = IncrementalJSONWriter()
        self._current, self._current_kind = key, _CALL
        if isinstance(raw_args, dict):
            for member, value in raw_args.items():
                self._write(key, args, args.set((member,), value))
        self._partial_args(key, args, as_list(call.get("partialArgs")))

    def _continue_call(self, call: dict[str, Any]) -> None:
        """More of the open streamed call (a ``functionCall`` without a name):
        its ``partialArgs``; the call ends unless ``willContinue``."""
        assert self._args is not None and self._current is not None
        self._partial_args(self._current, self._args, as_list(call.get("partialArgs")))
        if call.get("willContinue") is not True:
            self._end_current()

    def _partial_args(self, key: int, args: IncrementalJSONWriter, entries: list[Any]) -> None:
        for entry in map(as_dict, entries):
            json_path = entry.get("jsonPath")
            if not (type(json_path) is str and json_path == self._path_text):
                # Parsed once for all the pieces of a string, which repeat it.
                self._path_text, self._path = json_path, _parse_path(json_path)
            path = self._path
            if "stringValue" in entry:
                value: Any = as_str(entry.get("stringValue"))
            elif "numberValue" in entry:
                value = entry.get("numberValue")
            elif "boolValue" in entry:
                value = entry.get("boolValue")
            elif "nullValue" in entry:
                value = None
            else:
                continue
            if path is None:
                args.ok = False  # nowhere to put the value: synthesis stops
                self._write(key, args, None, entry)
            else:
                self._write(key, args, args.set(path, value), entry)

    def _write(
        self,
        key: int,
        args: IncrementalJSONWriter,
        text: str | None,
        entry: dict[str, Any] | None = None,
    ) -> None:
        """Emit synthesised argument text; ``None`` means synthesis has failed
        (reported once, with the entry that made it fail)."""
        if text is None:
            if args.failed_now():
                self.builder.diagnostic(
                    "partial_args_out_of_order",
                    "partialArgs paths cannot be written as incremental JSON; "
                    "the arguments become the serialisation of the final value",
                    dumps_compact(entry) if entry is not None else None,
                )
            return
        self.builder.append_arguments(key, text)

    def _finish_args(self, key: int, args: IncrementalJSONWriter) -> None:
        closing = args.close()
        if args.ok:
            self.builder.append_arguments(key, closing)
        else:
            self.builder.reconcile(key, dumps_compact(args.tree), None)


def _parse_path(path: Any) -> tuple[str | int, ...] | None:
    """``$.a.b[2].c`` or ``$['odd key'][0]`` → ``("a", "b", 2, "c")``; None if malformed."""
    if not isinstance(path, str) or not path.startswith("$"):
        return None
    segments: list[str | int] = []
    i, n = 1, len(path)
    while i < n:
        char = path[i]
        if char == ".":
            j = i + 1
            while j < n and path[j] not in ".[":
                j += 1
            if j == i + 1:
                return None
            segments.append(path[i + 1 : j])
            i = j
        elif char == "[":
            if i + 1 < n and path[i + 1] in "'\"":
                quote, j, name = path[i + 1], i + 2, []
                while j < n and path[j] != quote:
                    if path[j] == "\\" and j + 1 < n:
                        j += 1
                    name.append(path[j])
                    j += 1
                if j + 1 >= n or path[j + 1] != "]":
                    return None
                segments.append("".join(name))
                i = j + 2
            else:
                j = path.find("]", i)
                digits = path[i + 1 : j] if j > 0 else ""
                if not digits.isdigit() or not digits.isascii():
                    return None
                segments.append(int(digits))
                i = j + 1
        else:
            return None
    return tuple(segments) if segments else None
