"""Benchmark: tool-call argument previews while streaming, and the JSON library.

Run ``python benchmarks/partial_json.py`` (``--quick`` for fewer repetitions,
``--json-libraries`` for the library comparison behind docs/json-library.md).

The argument is 1 MB of mixed shape — a path, a list of 2,000 small edit
objects, one 300 KB string — streamed in 10,000 deltas. Measured, median of
the repetitions:

(a) appending every delta to an ArgumentBuffer and joining it once, no preview;
(b) the same, reading ``partial(len)`` after every delta;
(c) jiter re-parsing the accumulated bytes after every delta
    (``partial_mode="trailing-strings"``, as the anthropic SDK does);
(d) partial-json-parser re-parsing the accumulated text after every delta,
    over the first 100 KB only (it is pure Python and quadratic), with (b)
    over the same 100 KB beside it;
(e) one strict parse of the whole text.

Then the growth check: the cost of (a) and (b) for 2 MB (20,000 deltas of the
same size) over their cost for 1 MB. Linear work gives a ratio near 2.

Then the sweep (issue-sized shapes): one long string in 50-character deltas
and a wide object (``{"k0": 0, ...}``) in 3-character deltas, at 0.25, 1 and
4 MB of arguments, each delta a ``ToolCallDelta`` on one ArgumentBuffer, read
after every delta as

* ``partial_args``, the reader letting each preview go (a renderer that draws
  and forgets);
* ``partial_args``, the reader keeping the latest preview (the previous one is
  alive while the next is built, so the open string and containers are
  copied: quadratic by nature for a string that grows to n characters);
* ``ops``, what each delta changed (O(delta));
* ``json.dumps(to_dict())``, what ``streamnorm normalize`` prints per line.

``--before REV`` runs the same measurements on the package as of git revision
REV too (extracted with ``git archive`` into a temporary folder and run in a
subprocess), and prints both side by side: median CPU time, a cell skipped
("-") when the same contender, growing as it grew from the size before (16x
at first), would pass the budget (``--budget``, CPU seconds).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import jiter

from streamnorm import _json
from streamnorm.events import ToolCallDelta, tool_call_delta
from streamnorm.partial_json import (
    ArgumentBuffer,
    IncrementalJSONParser,
    parse_final_arguments,
    parse_partial_json,
)

try:
    import partial_json_parser  # type: ignore[import-untyped]
except ImportError:  # optional: pip install partial-json-parser
    partial_json_parser = None


# --------------------------------------------------------------------------
# The workload


def make_arguments(scale: int = 1, seed: int = 7) -> str:
    """About ``scale`` MB of tool-call arguments of mixed shape, as a model writes them."""
    rng = random.Random(seed)
    words = ["def", "return", "self", "value", "items", "None", "raise", "import", "for", "in"]

    def code_line() -> str:
        indent = "    " * rng.randint(0, 3)
        body = " ".join(rng.choice(words) for _ in range(rng.randint(2, 9)))
        extra = rng.choice(["", ' "quoted"', " # é ✓", "\t# tab", " \\d+"])
        return indent + body + extra

    edits = []
    for n in range(2000 * scale):
        edits.append(
            {
                "old": "\n".join(code_line() for _ in range(3)),
                "new": "\n".join(code_line() for _ in range(4)),
                "line": rng.randint(1, 90_000),
                "replace_all": rng.random() < 0.1,
                "note": None if n % 3 else f"edit {n}",
            }
        )
    content: list[str] = []
    size = 0
    while size < 300_000 * scale:
        line = code_line()
        content.append(line)
        size += len(line) + 1
    value = {"path": "src/app/service/handlers.py", "edits": edits, "content": "\n".join(content)}
    return json.dumps(value, ensure_ascii=False)


def make_deltas(text: str, count: int, seed: int = 11) -> list[str]:
    """``text`` cut into ``count`` deltas of random sizes (mean len/count)."""
    rng = random.Random(seed)
    mean = len(text) / count
    cuts = sorted(rng.sample(range(1, len(text)), count - 1))
    deltas, start = [], 0
    for cut in [*cuts, len(text)]:
        deltas.append(text[start:cut])
        start = cut
    assert abs(len(text) / len(deltas) - mean) < 1
    return deltas


# --------------------------------------------------------------------------
# The contenders


def stream_only(deltas: list[str]) -> None:
    buffer = ArgumentBuffer()
    for delta in deltas:
        buffer.append(delta)
    buffer.text()


def stream_and_read(deltas: list[str]) -> None:
    buffer = ArgumentBuffer()
    for delta in deltas:
        buffer.partial(buffer.append(delta))


def jiter_reparse(deltas: list[str]) -> None:
    accumulated = b""
    for delta in deltas:
        accumulated += delta.encode()
        jiter.from_json(accumulated, partial_mode="trailing-strings")


def pjp_reparse(deltas: list[str]) -> None:
    assert partial_json_parser is not None
    accumulated = ""
    for delta in deltas:
        accumulated += delta
        partial_json_parser.loads(accumulated)


# CPU time of this process: on a shared machine it varies far less than the
# wall clock, and everything measured here is single-threaded CPU work.
clock = time.process_time


def median_time(fn: Callable[[], Any], reps: int) -> float:
    times = []
    for _ in range(reps):
        start = clock()
        fn()
        times.append(clock() - start)
    return statistics.median(times)


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import os

    return f"{cpu}, {os.cpu_count()} CPUs, {platform.system()}, CPython {platform.python_version()}"


def run_partial(reps: int) -> int:
    text = make_arguments(1)
    deltas = make_deltas(text, 10_000)
    text2 = make_arguments(2)
    deltas2 = make_deltas(text2, 20_000)
    first_100k: list[str] = []
    size = 0
    for delta in deltas:
        if size >= 100_000:
            break
        first_100k.append(delta)
        size += len(delta)

    # Sanity: the incremental previews are what parse_partial_json says.
    buffer = ArgumentBuffer()
    for k, delta in enumerate(deltas):
        end = buffer.append(delta)
        preview = buffer.partial(end)
        if k % 997 == 0:
            assert preview == parse_partial_json(text[:end])
    assert preview == json.loads(text) == parse_final_arguments(text)[0]

    print(f"machine: {machine()}")
    print(
        f"argument: {len(text):,} chars in {len(deltas):,} deltas "
        f"(2 MB run: {len(text2):,} chars in {len(deltas2):,} deltas); median of {reps} reps"
    )
    rows: list[tuple[str, float | None]] = []
    a = median_time(lambda: stream_only(deltas), reps * 3)
    rows.append(("(a) append every delta, no preview", a))
    b = median_time(lambda: stream_and_read(deltas), reps)
    rows.append(("(b) append + partial(len) after every delta", b))
    c = median_time(lambda: jiter_reparse(deltas), 1)  # seconds a run: once is enough
    rows.append(("(c) jiter re-parse after every delta (1 run)", c))
    d = median_time(lambda: pjp_reparse(first_100k), 1) if partial_json_parser else None
    rows.append((f"(d) partial-json-parser re-parse, first {size // 1000} KB (1 run)", d))
    b100 = median_time(lambda: stream_and_read(first_100k), reps)
    rows.append((f"    (b) over the same first {size // 1000} KB", b100))
    e = median_time(lambda: _json.loads(text), reps * 3)
    rows.append(("(e) one strict parse (_json.loads, jiter)", e))
    parsers: tuple[tuple[str, Callable[[str], Any]], ...] = (
        ("    json.loads, for reference", json.loads),
        ("    parse_final_arguments", parse_final_arguments),
        ("    parse_partial_json once", parse_partial_json),
    )
    for label, fn in parsers:
        rows.append((label, median_time(partial(fn, text), reps)))
    a2 = median_time(lambda: stream_only(deltas2), reps * 3)
    rows.append(("(a) for 2 MB", a2))
    b2 = median_time(lambda: stream_and_read(deltas2), reps)
    rows.append(("(b) for 2 MB", b2))

    width = max(len(label) for label, _ in rows)
    for label, seconds in rows:
        shown = "n/a (not installed)" if seconds is None else f"{seconds * 1000:10.2f} ms CPU"
        print(f"  {label:<{width}}  {shown}")

    checks: list[tuple[str, bool | None]] = [
        (f"(a) <= 3x (e): (a)/(e) = {a / e:.2f}", a <= 3 * e),
        (
            f"(b) >= 10x faster than (c): (c)/(b) = {c / b:.1f}" if c else "(b) vs (c): n/a",
            c >= 10 * b if c else None,
        ),
        (f"growth of (a), 2 MB / 1 MB = {a2 / a:.2f} (target 1.6-2.6)", 1.6 <= a2 / a <= 2.6),
        (f"growth of (b), 2 MB / 1 MB = {b2 / b:.2f} (reported)", None),
    ]
    if d:
        checks.append((f"(d)/(b) over the first 100 KB = {d / b100:.0f}x (reported)", None))
    failed = False
    for label, ok in checks:
        mark = "ok  " if ok else ("FAIL" if ok is not None else "    ")
        failed = failed or ok is False
        print(f"  [{mark}] {label}")
    return 1 if failed else 0


# --------------------------------------------------------------------------
# The sweep, and the same measurements on an earlier revision

MB = 1_000_000
SIZES = (0.25, 1.0, 4.0)
BUDGET = 30.0  # CPU seconds a cell may take at most, were its work quadratic


def long_string(size: int) -> str:
    line = "    return self.value  # a line of code, as a file-writing tool sends it\n"
    return json.dumps({"path": "src/app.py", "content": line * (size // len(line))})


def wide_object(size: int) -> str:
    members = {f"k{i}": i for i in range(size // 12)}  # '"k12345": 12345, ' is ~12-16
    return json.dumps(members)


SHAPES: dict[str, tuple[Callable[[int], str], int]] = {
    "long string": (long_string, 50),
    "wide object": (wide_object, 3),
}


def make_events(text: str, size: int) -> Iterator[ToolCallDelta]:
    """One call's ToolCallDelta events, made as the builder makes them and
    dropped once read, as a stream's are (an event that cached its preview
    would otherwise hold it to the end)."""
    buffer = ArgumentBuffer()
    for i in range(0, len(text), size):
        piece = text[i : i + size]
        yield tool_call_delta(0, "call_1", "write", piece, buffer, buffer.append(piece))


def read_dropped(events: Iterator[ToolCallDelta]) -> None:
    for event in events:
        event.partial_args  # noqa: B018


def read_kept(events: Iterator[ToolCallDelta]) -> None:
    latest = None
    for event in events:
        latest = event.partial_args
    assert latest is not None


def read_ops(events: Iterator[ToolCallDelta]) -> None:
    for event in events:
        event.ops  # noqa: B018


def read_lines(events: Iterator[ToolCallDelta]) -> None:
    dumps = json.dumps
    for event in events:
        dumps(event.to_dict())


READERS: dict[str, Callable[[Iterator[ToolCallDelta]], None]] = {
    "partial_args, dropped": read_dropped,
    "partial_args, kept": read_kept,
    "ops": read_ops,
    "json.dumps(to_dict())": read_lines,
}


def scanner_rows(reps: int) -> dict[str, float]:
    """The scanner on the mixed 1 MB argument: whole, and in 10,000 deltas."""
    text = make_arguments(1)
    deltas = make_deltas(text, 10_000)
    small = [text[i : i + 3] for i in range(0, 300_000, 3)]

    def feed(pieces: list[str]) -> Callable[[], None]:
        def work() -> None:
            parser = IncrementalJSONParser()
            for piece in pieces:
                parser.feed(piece)
            parser.value()

        return work

    works = {
        "scanner: parse_partial_json, 1 MB mixed": lambda: parse_partial_json(text),
        "scanner: feed 10,000 deltas, 1 MB mixed": feed(deltas),
        "scanner: feed 3-char deltas, first 300 KB": feed(small),
        "scanner: (b) partial(len) after every delta": lambda: stream_and_read(deltas),
    }
    medians = interleaved_medians(list(works.values()), reps)
    return dict(zip(works, medians, strict=True))


def sweep(reps: int, budget: float = BUDGET) -> dict[str, float | None]:
    """Every (shape, reader, size) cell: median CPU seconds, None when skipped."""
    results: dict[str, float | None] = dict(scanner_rows(reps))
    has_ops = hasattr(ToolCallDelta, "ops")
    for shape, (make, delta) in SHAPES.items():
        for reader_name, reader in READERS.items():
            over = reader_name == "ops" and not has_ops
            previous = 0.0
            for mb in SIZES:
                key = f"{shape} {mb:g} MB: {reader_name}"
                if over:
                    results[key] = None
                    continue
                text = make(int(mb * MB))
                times: list[float] = []
                while len(times) < (reps if mb < 4 else 1) and sum(times) < budget / 4:
                    events = make_events(text, delta)
                    start = clock()
                    reader(events)
                    times.append(clock() - start)
                results[key] = seconds = statistics.median(times)
                # The next size is 4x larger: skip it when growing as it grew from
                # the size before (16x, quadratic, at first) would pass the budget.
                growth = seconds / previous if previous else 16
                over = seconds * growth > budget
                previous = seconds
    return results


def sweep_elsewhere(rev: str, reps: int, budget: float) -> dict[str, float | None]:
    """:func:`sweep` on the package as of ``rev``, in a subprocess."""
    repo = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as folder:
        archive = subprocess.run(
            ["git", "archive", rev, "src"], cwd=repo, capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
        env = {**os.environ, "PYTHONPATH": str(Path(folder) / "src")}
        out = subprocess.run(
            [sys.executable, __file__, "--sweep-json", f"--reps={reps}", f"--budget={budget}"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    result: dict[str, float | None] = json.loads(out)
    return result


def run_sweep(reps: int, before: str | None, budget: float) -> int:
    print(f"machine: {machine()}")
    print(f"sweep: median CPU time of up to {reps} runs (1 at 4 MB); budget {budget:g} s a cell")
    old = sweep_elsewhere(before, reps, budget) if before else None
    new = sweep(reps, budget)

    def cell(seconds: float | None) -> str:
        return "-" if seconds is None else f"{seconds * 1000:10.1f} ms"

    width = max(map(len, new))
    header = f"  {'':<{width}}  {f'before ({before})':>13}  {'after':>13}" if old else ""
    if header:
        print(header)
    for key, seconds in new.items():
        if old is not None:
            print(f"  {key:<{width}}  {cell(old.get(key)):>13}  {cell(seconds):>13}")
        else:
            print(f"  {key:<{width}}  {cell(seconds):>13}")
    return 0


# --------------------------------------------------------------------------
# The JSON library comparison (docs/json-library.md)


def sse_payloads() -> list[str]:
    """SSE ``data:`` JSON payloads of 50 to 2,000 bytes: the recorded fixtures when
    they are beside the repository, else synthetic delta events of the same shapes."""
    fixtures = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures"
    payloads = []
    for path in sorted(fixtures.glob("*/*.sse")) if fixtures.is_dir() else []:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("data:"):
                data = line[5:].strip()
                if data.startswith("{") and 50 <= len(data.encode()) <= 2000:
                    payloads.append(data)
    if payloads:
        return payloads
    rng = random.Random(3)
    for n in range(6000):
        text = " ".join(rng.choice(["the", "value", "é", "✓", "of", "x"]) for _ in range(8))
        payloads.append(
            json.dumps(
                rng.choice(
                    [
                        {
                            "type": "content_block_delta",
                            "index": 0,
                            "delta": {"type": "text_delta", "text": text},
                        },
                        {
                            "id": f"chatcmpl-{n}",
                            "object": "chat.completion.chunk",
                            "created": 1700000000 + n,
                            "model": "gpt-4o-mini",
                            "choices": [
                                {
                                    "index": 0,
                                    "delta": {"content": text},
                                    "finish_reason": None,
                                    "logprobs": None,
                                }
                            ],
                        },
                        {
                            "type": "response.output_text.delta",
                            "item_id": f"msg_{n:032x}",
                            "output_index": 0,
                            "content_index": 0,
                            "delta": text,
                            "sequence_number": n,
                        },
                    ]
                )
            )
        )
    return payloads


def interleaved_medians(works: list[Callable[[], Any]], reps: int) -> list[float]:
    """Median time of each work, repetitions taken in turn so drift hits all alike."""
    times: list[list[float]] = [[] for _ in works]
    for _ in range(reps):
        for k, work in enumerate(works):
            start = clock()
            work()
            times[k].append(clock() - start)
    return [statistics.median(t) for t in times]


def run_json_libraries(reps: int) -> int:
    import importlib

    strs = sse_payloads()
    raw = [s.encode() for s in strs]
    values = [json.loads(s) for s in strs]
    total = sum(map(len, raw))
    print(f"machine: {machine()}")
    print(f"{len(strs):,} payloads, mean {total / len(strs):.0f} bytes; median of {reps} reps")
    loads_cases: list[tuple[str, Callable[[Any], Any], list[Any]]] = [
        ("json.loads(str)", json.loads, strs),
        ("json.loads(bytes)", json.loads, raw),
    ]
    dumps_cases: list[tuple[str, Callable[[Any], Any], list[Any]]] = [
        (
            "json.dumps(compact)",
            lambda v: json.dumps(v, separators=(",", ":"), ensure_ascii=False),
            values,
        ),
        ("_json.dumps_compact", _json.dumps_compact, values),
    ]
    orjson: Any = None
    with contextlib.suppress(ImportError):
        orjson = importlib.import_module("orjson")
    if orjson is not None:
        loads_cases += [
            ("orjson.loads(bytes)", orjson.loads, raw),
            ("orjson.loads(str)", orjson.loads, strs),
        ]
        dumps_cases.append(("orjson.dumps().decode()", lambda v: orjson.dumps(v).decode(), values))
    from_json = jiter.from_json
    loads_cases += [
        ("jiter.from_json(bytes)", from_json, raw),
        ("jiter.from_json(str.encode())", lambda s: from_json(s.encode()), strs),
    ]
    loads_cases.append(("_json.loads(bytes)", _json.loads, raw))
    loads_cases.append(("_json.loads(str)", _json.loads, strs))
    cases = loads_cases + dumps_cases

    def make_work(fn: Callable[[Any], Any], docs: list[Any]) -> Callable[[], None]:
        def work() -> None:
            for doc in docs:
                fn(doc)

        return work

    medians = interleaved_medians([make_work(fn, docs) for _, fn, docs in cases], reps)
    for (label, _, docs), seconds in zip(cases, medians, strict=True):
        line = f"  {label:<30} {seconds * 1000:8.2f} ms  {seconds / len(docs) * 1e6:6.2f} us/doc"
        if docs is not values:
            line += f"  {total / seconds / 1e6:7.1f} MB/s"
        print(line)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (3)")
    parser.add_argument("--json-libraries", action="store_true", help="compare JSON libraries")
    parser.add_argument("--before", metavar="REV", help="also measure the sweep at git REV")
    parser.add_argument("--reps", type=int, help="repetitions of the sweep (default 3)")
    parser.add_argument("--sweep-only", action="store_true", help="only the sweep")
    parser.add_argument("--budget", type=float, default=BUDGET, help="CPU seconds a sweep cell")
    parser.add_argument("--sweep-json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.json_libraries:
        return run_json_libraries(5 if args.quick else 15)
    if args.sweep_json:
        print(json.dumps(sweep(args.reps or 3, args.budget)))
        return 0
    status = 0 if args.sweep_only else run_partial(3 if args.quick else 5)
    print()
    return status or run_sweep(args.reps or (1 if args.quick else 3), args.before, args.budget)


if __name__ == "__main__":
    sys.exit(main())
