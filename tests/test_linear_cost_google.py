"""Gemini streamed function-call arguments (``partialArgs``, providers.md §4.3)
cost work linear in their size (DESIGN.md §6), shown without a clock.

The string pieces are fed as :class:`Piece`, a ``str`` that counts the
characters copied by every concatenation it takes part in (``piece + s`` and
``s + piece`` alike). Adding each piece to the string so far copies the whole
string again for every piece: n pieces copy about n²/2 pieces' worth.
Linear work copies each character a bounded number of times, so twice the
pieces copy at most twice as much.
"""

from __future__ import annotations

import json
from typing import Any

from streamnorm import Done, NormalizationError, ToolCallBlock, ToolCallDelta
from streamnorm.builder import MessageBuilder
from streamnorm.events import Event
from streamnorm.json_writer import IncrementalJSONWriter as _ArgsWriter
from streamnorm.providers.google.decoder import GoogleDecoder

PIECE = "0123456789"


class Piece(str):
    """A string piece that counts what concatenations involving it copy."""

    copied = 0

    def __add__(self, other: str) -> str:
        result = str.__add__(self, other)
        Piece.copied += len(result)
        return result

    def __radd__(self, other: str) -> str:
        result = str.__add__(other, self)
        Piece.copied += len(result)
        return result


def _chunk(part: dict[str, Any], **candidate: Any) -> dict[str, Any]:
    return {
        "candidates": [{"content": {"parts": [part], "role": "model"}, "index": 0, **candidate}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5},
        "modelVersion": "gemini-3-pro-preview",
        "responseId": "resp",
    }


def _call_part(**call: Any) -> dict[str, Any]:
    return {"functionCall": call}


def _piece(path: str, value: str, *, more: bool = True) -> dict[str, Any]:
    entry: dict[str, Any] = {"jsonPath": path, "stringValue": value}
    if more:
        entry["willContinue"] = True
    return _call_part(partialArgs=[entry], willContinue=True)


def _decode(payloads: list[dict[str, Any]]) -> list[Event]:
    """Feed parsed payloads straight to the decoder, so that the pieces stay
    :class:`Piece` objects (parsing JSON would make plain strings of them)."""
    builder = MessageBuilder(
        GoogleDecoder.api,
        stop_table=GoogleDecoder.stop_table,
        blocks_end_implicitly=GoogleDecoder.blocks_end_implicitly,
    )
    decoder = GoogleDecoder(builder)
    for payload in payloads:
        decoder.handle("", payload)
    decoder.end_of_input()
    return builder.events


def _long_string(pieces: int) -> list[dict[str, Any]]:
    return [
        _chunk(_call_part(name="write_file", willContinue=True)),
        _chunk(_piece("$.path", "a.txt", more=False)),
        *(_chunk(_piece("$.content", Piece(PIECE))) for _ in range(pieces)),
        _chunk(_piece("$.content", "", more=False)),
        _chunk(_call_part(), finishReason="STOP"),
    ]


def _copied_for(pieces: int) -> int:
    Piece.copied = 0
    events = _decode(_long_string(pieces))
    end = events[-1]
    assert isinstance(end, Done)
    (block,) = end.message.content
    assert isinstance(block, ToolCallBlock) and block.error is None
    assert block.arguments == {"path": "a.txt", "content": PIECE * pieces}
    assert json.loads(block.raw_arguments) == block.arguments
    deltas = [e.raw_json_delta for e in events if isinstance(e, ToolCallDelta)]
    assert "".join(deltas) == block.raw_arguments
    return Piece.copied


def test_piece_counter_sees_concatenation() -> None:
    """The proxy itself: both operand orders are counted."""
    Piece.copied = 0
    grown = "ab" + Piece("cd")
    grown = Piece("ef") + grown
    assert grown == "efabcd" and Piece.copied == 4 + 6


def test_a_long_streamed_string_is_copied_a_bounded_number_of_times() -> None:
    small, large = _copied_for(1000), _copied_for(2000)
    # Each character is copied by concatenation at most once...
    assert small <= 1000 * len(PIECE), small
    assert large <= 2000 * len(PIECE), large
    # ... so twice the pieces cost at most twice the copying (quadratic: 4x).
    assert large <= 2 * small or large == small == 0, (small, large)


def test_several_strings_and_containers_stay_linear() -> None:
    """Strings at nested paths and array items, each in many pieces."""

    def copied(pieces: int) -> int:
        Piece.copied = 0
        payloads = [_chunk(_call_part(name="f", willContinue=True))]
        for path in ("$.a.b", "$.a.c[0]", "$.a.c[1]", "$['odd key']"):
            payloads += [_chunk(_piece(path, Piece(PIECE))) for _ in range(pieces)]
        payloads.append(_chunk(_call_part(), finishReason="STOP"))
        end = _decode(payloads)[-1]
        assert isinstance(end, Done)
        (block,) = end.message.content
        assert isinstance(block, ToolCallBlock)
        text = PIECE * pieces
        assert block.arguments == {"a": {"b": text, "c": [text, text]}, "odd key": text}
        return Piece.copied

    small, large = copied(500), copied(1000)
    assert small <= 4 * 500 * len(PIECE) and large <= 4 * 1000 * len(PIECE), (small, large)


def test_out_of_order_paths_keep_an_exact_value() -> None:
    """When synthesis fails the arguments become the final value tree: its
    open string is assembled from every piece, including those after the
    failure."""
    payloads = [
        _chunk(_call_part(name="f", willContinue=True)),
        _chunk(_piece("$.a", "x")),
        _chunk(_piece("$.a", "y")),
        _chunk(_call_part(partialArgs=[{"jsonPath": "$.b", "numberValue": 1}], willContinue=True)),
        _chunk(_piece("$.a", "new")),  # sets a twice: cannot be written incrementally
        *(_chunk(_piece("$.a", Piece("!"))) for _ in range(3)),
        _chunk(_call_part(), finishReason="STOP"),
    ]
    events = _decode(payloads)
    assert [e.kind for e in events if isinstance(e, NormalizationError)] == [
        "partial_args_out_of_order"
    ]
    end = events[-1]
    assert isinstance(end, Done)
    (block,) = end.message.content
    assert isinstance(block, ToolCallBlock)
    assert block.arguments == {"a": "new!!!", "b": 1}
    assert block.raw_arguments == '{"a":"new!!!","b":1}'


def test_writer_tree_read_while_a_string_is_open() -> None:
    """Reading the tree joins the pieces so far; later pieces still extend."""
    writer = _ArgsWriter()
    assert writer.set(("a",), "x") == '{"a":"x'
    assert writer.set(("a",), "y") == "y"
    assert writer.tree == {"a": "xy"}
    assert writer.set(("a",), 'z"') == 'z\\"'
    assert writer.tree == {"a": 'xyz"'}
    assert writer.set(("b", 0), 1) == '","b":[1'
    assert writer.set(("b", 1), "p") == ',"p'
    assert writer.set(("b", 1), "q") == "q"
    assert writer.close() == '"]}'
    assert writer.tree == {"a": 'xyz"', "b": [1, "pq"]}
    assert writer.ok
