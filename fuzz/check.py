"""The invariants every input must satisfy, whatever its bytes.

:func:`check` feeds one input to :class:`StreamNormalizer` whole, cut into
random chunks and (when small) one byte at a time, and raises
:class:`InvariantError` naming the first broken rule:

* no exception escapes ``feed`` or ``flush``;
* exactly one terminal event (``Done`` or ``Error``), last;
* at most one ``Start``, and it is the first event; a stream that ends with
  ``Done`` has one;
* every ``index`` of a delta or ``BlockEnd`` names a block of the final
  content, of the matching kind; every block ends exactly once, and nothing
  refers to it after its end;
* a text / thinking block holds what its deltas streamed, a tool call's raw
  arguments are its fragments joined (unless a ``*_mismatch`` diagnostic
  said a final value replaced them);
* ``Done`` never carries stop reason ``error`` / ``aborted``; ``Error`` always
  does, with a known ``kind`` and, for limits, the limit's name in ``code``;
* ``normalizer.message`` is the terminal event's message;
* no ``decoder_error`` diagnostic (a decoder raised: a bug);
* the same events for every chunking;
* ``to_dict()`` of every event is JSON: ``json.dumps(..., ensure_ascii=False)``
  succeeds and so does its UTF-8 encoding (no lone surrogates), and
  ``orjson.dumps`` accepts it, except for integers beyond 64 bits and
  nesting beyond 255 levels, which orjson cannot write. (A payload number
  that overflows a double, such as ``1e400``, is read as ``inf``, as
  ``json.loads`` reads it; ``strict_floats`` also rejects that.)
"""

from __future__ import annotations

import json
import random
from typing import Any

import orjson

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
)
from streamnorm.apis import resolve_api
from streamnorm.normalizer import StreamNormalizer

__all__ = ["BYTE_AT_A_TIME_MAX", "InvariantError", "check", "run_chunks", "structure"]

#: Inputs up to this size are also fed one byte at a time.
BYTE_AT_A_TIME_MAX = 2048

ERROR_KINDS = frozenset(("upstream", "truncated", "protocol", "limit", "aborted"))
LIMIT_CODES = frozenset(("max_event_bytes", "max_stream_bytes", "max_json_depth"))
_CONTENT_EVENTS = (TextDelta, ThinkingDelta, ToolCallDelta, BlockEnd)
_KIND_OF_DELTA: dict[type, type] = {
    TextDelta: TextBlock,
    ThinkingDelta: ThinkingBlock,
    ToolCallDelta: ToolCallBlock,
}
#: Diagnostics after which a block's final value may differ from its deltas.
_REPLACING = frozenset(("text_mismatch", "arguments_mismatch", "partial_args_out_of_order"))


class InvariantError(AssertionError):
    """An input broke a rule; ``rule`` names it (stable across runs)."""

    def __init__(self, rule: str, detail: str = "") -> None:
        super().__init__(f"{rule}: {detail}" if detail else rule)
        self.rule = rule


def run_chunks(
    chunks: list[bytes], api: str, options: dict[str, Any]
) -> tuple[list[Event], StreamNormalizer]:
    normalizer = StreamNormalizer(resolve_api(api, allow_auto=True), **options)
    events: list[Event] = []
    try:
        for chunk in chunks:
            events.extend(normalizer.feed(chunk))
        events.extend(normalizer.flush())
    except Exception as exc:
        raise InvariantError("exception", f"{type(exc).__name__}: {exc}") from exc
    return events, normalizer


def _random_chunks(data: bytes, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    out: list[bytes] = []
    i = 0
    while i < len(data):
        n = rng.choice((1, 2, 3, rng.randint(1, 64), rng.randint(1, 4096)))
        out.append(data[i : i + n])
        i += n
    return out


def _to_json(event: Event, strict_floats: bool = False) -> Any:
    try:
        d = event.to_dict()
    except Exception as exc:
        raise InvariantError("to_dict", f"{type(event).__name__}: {exc!r}") from exc
    try:
        json.dumps(d, ensure_ascii=False, allow_nan=not strict_floats).encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise InvariantError("json", f"{type(event).__name__}: {exc}") from exc
    try:
        orjson.dumps(d)
    except TypeError as exc:
        # orjson writes neither integers beyond 64 bits nor more than 255
        # levels of nesting (payloads may nest up to max_json_depth): for
        # those json.dumps above is the reference, as in the CLI.
        if "64-bit" not in str(exc) and "Recursion limit" not in str(exc):
            raise InvariantError("orjson", f"{type(event).__name__}: {exc}") from exc
    return d


def structure(events: list[Event], normalizer: StreamNormalizer | None = None) -> Done | Error:
    """Check everything about one event sequence except chunk invariance."""
    ends = [e for e in events if isinstance(e, (Done, Error))]
    if len(ends) != 1:
        raise InvariantError("one_terminal", f"{len(ends)} terminal events")
    end = ends[0]
    if events[-1] is not end:
        raise InvariantError("nothing_after_terminal")
    if normalizer is not None and normalizer.message != end.message:
        raise InvariantError("message", "normalizer.message differs from the terminal's")
    message = end.message
    content = message.content

    if isinstance(end, Done):
        if message.stop_reason in (StopReason.ERROR, StopReason.ABORTED):
            raise InvariantError("done_stop_reason", str(message.stop_reason))
    else:
        if end.kind not in ERROR_KINDS:
            raise InvariantError("error_kind", end.kind)
        if message.stop_reason not in (StopReason.ERROR, StopReason.ABORTED):
            raise InvariantError("error_stop_reason", str(message.stop_reason))
        if end.kind == "limit" and end.code not in LIMIT_CODES:
            raise InvariantError("limit_code", repr(end.code))

    starts = [i for i, e in enumerate(events) if isinstance(e, Start)]
    if len(starts) > 1:
        raise InvariantError("one_start", f"{len(starts)} Start events")
    if starts and starts[0] != 0:
        raise InvariantError("start_first", f"{type(events[0]).__name__} before Start")
    if isinstance(end, Done) and not starts:
        raise InvariantError("start_first", "Done without Start")
    first_content = next((i for i, e in enumerate(events) if isinstance(e, _CONTENT_EVENTS)), None)
    if first_content is not None and (not starts or starts[0] > first_content):
        raise InvariantError("start_first", "content before Start")

    ended: dict[int, int] = {}
    streamed: dict[int, list[str]] = {}
    replaced = False
    for e in events:
        if isinstance(e, NormalizationError):
            if e.kind == "decoder_error":
                raise InvariantError("decoder_error", e.detail)
            if e.kind in _REPLACING:
                replaced = True
            continue
        if not isinstance(e, _CONTENT_EVENTS):
            continue
        index = e.index
        if not 0 <= index < len(content):
            raise InvariantError("index_range", f"{type(e).__name__} index {index}")
        if index in ended:
            raise InvariantError("after_block_end", f"{type(e).__name__} for ended {index}")
        if isinstance(e, BlockEnd):
            ended[index] = ended.get(index, 0) + 1
            if type(e.block) is not type(content[index]):
                raise InvariantError("block_kind", f"block {index} changed kind")
            continue
        expected = _KIND_OF_DELTA[type(e)]
        if not isinstance(content[index], expected):
            raise InvariantError(
                "delta_kind", f"{type(e).__name__} for {type(content[index]).__name__}"
            )
        if isinstance(e, (TextDelta, ThinkingDelta)):
            streamed.setdefault(index, []).append(e.delta)
        else:
            streamed.setdefault(index, []).append(e.raw_json_delta)
            if not isinstance(e.partial_args, dict):
                raise InvariantError("partial_args", type(e.partial_args).__name__)
    if sorted(ended) != list(range(len(content))) or any(n != 1 for n in ended.values()):
        raise InvariantError("blocks_end_once", f"ended {sorted(ended)} of {len(content)}")
    if not replaced:
        for index, parts in streamed.items():
            block = content[index]
            text = "".join(parts)
            if isinstance(block, TextBlock):
                final = block.text
            elif isinstance(block, ThinkingBlock):
                final = block.thinking
            elif isinstance(block, ToolCallBlock):
                final = block.raw_arguments
            else:
                continue
            if final != text:
                raise InvariantError("deltas_make_block", f"block {index}")
    for block in content:
        if isinstance(block, ToolCallBlock) and not isinstance(block.arguments, dict):
            raise InvariantError("arguments_type", type(block.arguments).__name__)
        if isinstance(block, ProviderBlock) and not isinstance(block.data, dict):
            raise InvariantError("provider_data", type(block.data).__name__)
    return end


def check(
    data: bytes,
    api: str = "auto",
    options: dict[str, Any] | None = None,
    *,
    split_seed: int = 0,
    byte_at_a_time_max: int = BYTE_AT_A_TIME_MAX,
    strict_floats: bool = False,
) -> Done | Error:
    """Run every invariant on ``data``; return the terminal event."""
    options = options or {}
    events, normalizer = run_chunks([data], api, options)
    end = structure(events, normalizer)
    whole = [_to_json(e, strict_floats) for e in events]
    chunkings = [("random split", _random_chunks(data, split_seed))]
    if len(data) <= byte_at_a_time_max:
        chunkings.append(("byte at a time", [data[i : i + 1] for i in range(len(data))]))
    for name, chunks in chunkings:
        other, _ = run_chunks(chunks, api, options)
        if len(other) != len(events) or [e.to_dict() for e in other] != whole:
            raise InvariantError("chunk_invariance", name)
    return end
