"""What encoding costs: the stream encoders against a floor, their growth,
and decode + encode (translation) for every pair of APIs.

* **floor**: for the events of a workload, ``orjson.dumps`` of one
  equivalent payload per event (``{"type", "index", "delta"}``) — the least
  any encoder that writes one JSON object per event must spend. Each
  encoder's time is given as a ratio to it, in the same run.
* **linear**: one tool call of 1 MB and of 4 MB of arguments, in fragments of
  20-100 characters, encoded for every api: the ratio should be about 4.
* **translation**: the 5 MB text stream and the 1 MB tool stream of every
  api (``workloads.py``), decoded by streamnorm and encoded for every api,
  beside the decode alone (the floor of a translation).

CPU time, best of a few runs. Runs in well under two minutes.

    python benchmarks/encode.py
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.workloads import APIS, MB, synthetic_workload

from streamnorm import (
    BlockEnd,
    Done,
    Event,
    Start,
    StreamEncoder,
    TextBlock,
    TextDelta,
    ToolCallBlock,
    ToolCallDelta,
    normalize,
)
from streamnorm.messages import AssistantMessage, StopReason, Usage

SHORT = {
    "anthropic-messages": "anthropic",
    "openai-responses": "responses",
    "openai-completions": "chat",
    "google-generative-ai": "gemini",
}


def best_of(reps: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(reps):
        started = time.process_time()
        work()
        times.append(time.process_time() - started)
    return min(times)


def encode_all(events: Sequence[Event], api: str) -> int:
    encoder = StreamEncoder(api)
    total = sum(len(encoder.feed(event)) for event in events)
    return total + len(encoder.close())


def floor(events: Sequence[Event]) -> int:
    """One ``orjson.dumps`` of an equivalent payload per event."""
    total = 0
    dumps = orjson.dumps
    for event in events:
        delta = getattr(event, "delta", None) or getattr(event, "raw_json_delta", "")
        total += len(dumps({"type": "delta", "index": getattr(event, "index", 0), "delta": delta}))
    return total


def tool_events(arguments: str, seed: int) -> list[Event]:
    """One tool call whose argument text arrives in 20-100 character fragments."""
    rng = random.Random(seed)
    events: list[Event] = [Start("openai-completions", "m", "chatcmpl-bench")]
    events.append(ToolCallDelta(0, "call_1", "write_file", ""))
    i = 0
    while i < len(arguments):
        n = rng.randint(20, 100)
        events.append(ToolCallDelta(0, "call_1", "write_file", arguments[i : i + n]))
        i += n
    block = ToolCallBlock("call_1", "write_file", json.loads(arguments), arguments)
    events.append(BlockEnd(0, block))
    message = AssistantMessage(
        (block,), "openai-completions", "m", StopReason.TOOL_USE, "tool_calls", Usage(), None
    )
    events.append(Done(message))
    return events


def text_events(text: str, seed: int) -> list[Event]:
    """One answer whose text arrives in 2-40 character deltas."""
    rng = random.Random(seed)
    events: list[Event] = [Start("openai-completions", "m", "chatcmpl-bench")]
    i = 0
    while i < len(text):
        n = rng.randint(2, 40)
        events.append(TextDelta(0, text[i : i + n]))
        i += n
    block = TextBlock(text)
    events.append(BlockEnd(0, block))
    message = AssistantMessage(
        (block,), "openai-completions", "m", StopReason.STOP, "stop", Usage(), None
    )
    events.append(Done(message))
    return events


def section_floor(one_mb_args: str, text: str) -> None:
    print("\nencoding against the floor (orjson.dumps of one payload per event)")
    print(f"{'events':30} {'floor ms':>9}" + "".join(f" {SHORT[a]:>10}" for a in APIS))
    cases = (
        ("1 MB text, 2-40 chars", text_events(text, 1)),
        ("1 MB tool args, 20-100 chars", tool_events(one_mb_args, 2)),
    )
    for label, events in cases:
        base = best_of(3, partial(floor, events))
        row = f"{label:30} {base * 1000:9.1f}"
        for api in APIS:
            spent = best_of(2, partial(encode_all, events, api))
            row += f" {spent / base:9.2f}x"
        print(row)


def section_linear(one_mb_args: str) -> None:
    four = '{"parts":[' + ",".join([one_mb_args] * 4) + "]}"
    small, large = tool_events(one_mb_args, 3), tool_events(four, 3)
    print("\nlinear: one tool call of 1 MB and 4 MB of arguments")
    print(f"{'api':12} {'1 MB ms':>9} {'4 MB ms':>9} {'ratio':>6}")
    for api in APIS:
        t1 = best_of(2, partial(encode_all, small, api))
        t4 = best_of(2, partial(encode_all, large, api))
        print(f"{SHORT[api]:12} {t1 * 1000:9.1f} {t4 * 1000:9.1f} {t4 / t1:6.2f}")


def section_translation() -> None:
    print("\ntranslation: decode + encode, ms (ratio to the decode alone)")
    print(f"{'stream':24} {'decode':>8}" + "".join(f" {'→ ' + SHORT[a]:>16}" for a in APIS))
    for name, size in (("text", 5 * MB), ("tool-1MB", MB)):
        for source in APIS:
            chunks = synthetic_workload(source, name, size).chunks[0]

            base = best_of(2, partial(decode, chunks, source))
            row = f"{SHORT[source] + ' ' + name:24} {base * 1000:8.0f}"
            for target in APIS:
                spent = best_of(2, partial(translate, chunks, source, target))
                row += f" {spent * 1000:8.0f} ({spent / base:4.2f}x)"
            print(row)


def decode(chunks: list[bytes], source: str) -> None:
    for _ in normalize(chunks, source):
        pass


def translate(chunks: list[bytes], source: str, target: str) -> None:
    encoder = StreamEncoder(target)
    for event in normalize(chunks, source):
        encoder.feed(event)
    encoder.close()


def main() -> None:
    tool = synthetic_workload("openai-completions", "tool-1MB", MB)
    events = list(normalize(tool.chunks[0], "openai-completions"))
    end = events[-1]
    assert isinstance(end, Done), end
    one_mb_args = end.message.tool_calls[0].raw_arguments
    # 1 MB of answer text: the synthetic text streams are mostly envelope.
    text = json.loads(one_mb_args)["content"]
    section_floor(one_mb_args, text)
    section_linear(one_mb_args)
    section_translation()


if __name__ == "__main__":
    main()
