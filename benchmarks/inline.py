"""Throughput and linearity of ``NormalizingStream`` with inline tool calls.

Feeds N MB of model text — prose with tool calls mixed in — as 1-character
``TextDelta`` events through ``NormalizingStream`` for several dialects and
reports MB/s and the growth ratio time(2N) / time(N); linear work gives ~2
(the target band is 1.6–2.6). Times are CPU seconds of this process, best of
``--repeat`` runs with the two sizes alternated, so other jobs on a shared
machine disturb them less. Also checks the reference's single-call target: a
300 KB argument in 10-character deltas.

Usage: python benchmarks/inline.py [--mb 1] [--dialects hermes,qwen3_coder,deepseek_v3]
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from collections.abc import Callable, Iterator

from streamnorm.events import BlockEnd, Done, Event, Start, TextDelta, ToolCallDelta
from streamnorm.inline import NormalizingStream, get_parser
from streamnorm.messages import AssistantMessage, StopReason, TextBlock, ToolCallBlock, Usage

PROSE = (
    "The quick brown fox jumps over the lazy dog; a < b and c > d hold, "
    "[citations] and {braces} appear in prose, as do <html> tags. "
)


def _args(i: int) -> dict[str, object]:
    return {"path": f"src/file_{i}.py", "content": "print('hello, world')\n" * 8, "n": i}


def hermes_call(i: int) -> str:
    body = json.dumps({"name": "write_file", "arguments": _args(i)}, ensure_ascii=False)
    return f"\n<tool_call>\n{body}\n</tool_call>\n"


def qwen_call(i: int) -> str:
    a = _args(i)
    params = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in a.items())
    return f"\n<tool_call>\n<function=write_file>\n{params}</function>\n</tool_call>\n"


def deepseek_call(i: int) -> str:
    body = json.dumps(_args(i), ensure_ascii=False)
    return (
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>write_file\n"
        f"```json\n{body}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    )


CALLS: dict[str, Callable[[int], str]] = {
    "hermes": hermes_call,
    "qwen3_coder": qwen_call,
    "deepseek_v3": deepseek_call,
}


def make_text(size: int, call: Callable[[int], str]) -> str:
    """About ``size`` characters: prose paragraphs with a call every ~2 KB."""
    parts: list[str] = []
    n = i = 0
    while n < size:
        chunk = PROSE * 12 if i % 2 == 0 else call(i)
        parts.append(chunk)
        n += len(chunk)
        i += 1
    return "".join(parts)[:size]


def events_for(chunks: list[str]) -> Iterator[Event]:
    """The upstream events, made lazily so that memory stays flat."""
    text = "".join(chunks)
    msg = AssistantMessage(
        (TextBlock(text),), "openai-completions", "m", StopReason.STOP, "stop", Usage(), "r"
    )
    yield Start("openai-completions", "m", "r")
    for c in chunks:
        yield TextDelta(0, c)
    yield BlockEnd(0, TextBlock(text))
    yield Done(msg)


def run(dialect: str, chunks: list[str]) -> tuple[float, Done]:
    """CPU seconds of this process (other jobs on the machine do not count)."""
    gc.collect()
    gc.disable()
    try:
        t0 = time.process_time()
        last: Event | None = None
        for ev in NormalizingStream(events_for(chunks), get_parser(dialect)):
            last = ev
        elapsed = time.process_time() - t0
    finally:
        gc.enable()
    assert isinstance(last, Done)
    return elapsed, last


def best_of(n: int, dialect: str, chunks: list[str]) -> tuple[float, Done]:
    results = [run(dialect, chunks) for _ in range(n)]
    return min(r[0] for r in results), results[0][1]


def big_argument() -> None:
    """One call whose arguments hold a 300 KB string, in 10-character deltas."""
    content = ("x = compute(value) # 300 KB file line\n" * 8000)[:300_000]
    body = json.dumps({"name": "write_file", "arguments": {"path": "a.py", "content": content}})
    text = f"<tool_call>\n{body}\n</tool_call>"
    chunks = [text[i : i + 10] for i in range(0, len(text), 10)]
    elapsed, done = best_of(3, "hermes", chunks)
    call = done.message.content[0]
    assert isinstance(call, ToolCallBlock) and call.arguments["content"] == content
    print(f"300 KB argument, 10-char deltas (hermes): {elapsed * 1000:.0f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--mb", type=float, default=1.0, help="base size in MB (default 1)")
    ap.add_argument("--dialects", default="hermes,qwen3_coder,deepseek_v3")
    ap.add_argument("--repeat", type=int, default=3, help="best of N runs (default 3)")
    args = ap.parse_args()
    base = int(args.mb * 1_000_000)
    print(f"{'dialect':<14}{'size':>8}{'calls':>7}{'seconds':>10}{'MB/s':>8}")
    for dialect in args.dialects.split(","):
        inputs = [list(make_text(size, CALLS[dialect])) for size in (base, 2 * base)]
        best = [float("inf"), float("inf")]
        calls = [0, 0]
        # Alternate the sizes so that drift in machine load hits both alike.
        for _ in range(args.repeat):
            for k, chunks in enumerate(inputs):
                elapsed, done = run(dialect, chunks)
                best[k] = min(best[k], elapsed)
                calls[k] = sum(isinstance(b, ToolCallBlock) for b in done.message.content)
        for k, chunks in enumerate(inputs):
            mb = len(chunks) / 1e6
            print(f"{dialect:<14}{mb:>6.1f}MB{calls[k]:>7}{best[k]:>10.2f}{mb / best[k]:>8.3f}")
        print(f"{dialect:<14}growth 2x/1x: {best[1] / best[0]:.2f}")
    big_argument()
    # Output event mix, for reference: one output delta per input character.
    sample = make_text(20_000, hermes_call)
    out = list(NormalizingStream(events_for(list(sample)), get_parser("hermes")))
    deltas = sum(isinstance(e, (TextDelta, ToolCallDelta)) for e in out)
    print(f"output deltas per input character (hermes): {deltas / len(sample):.2f}")


if __name__ == "__main__":
    main()
