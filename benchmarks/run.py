"""Throughput of streamnorm against the floor and against the libraries people
use instead, on the same bytes.

Run from the repository root::

    python benchmarks/run.py [--quick] [--reps N] [--markdown]
    python benchmarks/run.py --profile [--quick]      # where streamnorm's time goes

Every contender reads the same byte streams, cut into the same seeded chunks
of 1-4 KiB, in one process:

* the floor: ``body.split(b"\\n\\n")`` (``\\r\\n\\r\\n`` for Gemini) of the
  whole body plus one JSON parse per event, with orjson and with jiter: no
  chunking, no accumulation, nothing but framing and parsing;
* the floor plus output: the orjson floor, then streamnorm's own delta and
  usage events for the stream built again as its builder builds them — the
  least a pure-Python normalizer spends on its output alone;
* the minimal normalizer (text workloads): the same chunks framed at blank
  lines with the unfinished block carried over, jiter, a ``TextDelta`` per
  text delta and a ``UsageUpdate`` per changed usage object, the text joined:
  a normalizer without any of streamnorm's checks and rules;
* streamnorm: ``StreamNormalizer(api).feed(chunk)`` for each chunk, then
  ``flush()`` — every canonical event and the final message;
* the official SDKs, each with its own accumulation (openai Chat Completions
  twice: ``create(stream=True)`` with ``ChatCompletionStreamState``, and
  ``.stream()`` with ``get_final_completion()``; openai ``responses.stream()``;
  anthropic ``messages.stream()``; google-genai ``generate_content_stream``
  plus concatenation of parts), reading through ``httpx.MockTransport``;
* httpx-sse's ``iter_sse()`` plus orjson plus hand accumulation of text,
  reasoning and tool arguments (what a user writes without a library);
* LiteLLM's ``stream_chunk_builder`` over the Chat Completions chunks.

Workloads (``benchmarks/workloads.py``): per api a 5 MB text-heavy,
thinking-heavy and tool-heavy stream, one tool call of 100 KB and one of 1 MB
of arguments in 20-100 byte deltas, the text stream again cut into one wire
event per chunk (``text-events``: a server that flushes per token, read from
a socket as it comes), and all recorded fixtures of the api (each normalized
separately, times summed).

Timing: CPU time of this process (``time.process_time``), with the garbage
collector paused during each timed call as ``timeit`` does; the order of the
contenders rotates from one repetition to the next. Each contender first
reads a small stream of the same kind untimed (the SDKs build their pydantic
schemas lazily). The SDKs build a request per stream, which has nothing to do
with streaming: the median time of a minimal stream is measured separately
and subtracted from each of their streams. Ratios are paired per repetition
(contender time / reference time in the same repetition); the table shows
their median and their min-max over the repetitions.

Verification: every contender's final text, reasoning and tool calls are
compared with streamnorm's in the first repetition, and streamnorm's with
what the synthetic stream contains. A mismatch is printed and the row is not
used. For the fixtures, a peer is timed only on the fixtures it reads without
raising and with the same text and reasoning as streamnorm; the ratio uses
streamnorm's time on the same subset, and the row says how many.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
try:
    import streamnorm  # noqa: F401
except ImportError:  # a checkout that is not installed
    sys.path.insert(0, str(HERE.parent / "src"))

from peers import CONTENDERS, Baseline, Contender, View, floor_events  # noqa: E402
from workloads import (  # noqa: E402
    APIS,
    MB,
    SYNTHETIC,
    Workload,
    fixture_workload,
    minimal_stream,
    synthetic_workload,
)

warnings.simplefilter("ignore")  # SDK deprecation notices, not results

SHORT = {
    "anthropic-messages": "anthropic",
    "openai-responses": "responses",
    "openai-completions": "completions",
    "google-generative-ai": "google",
}
TARGET_FLOOR = 2.0
TARGET_SDK_TEXT = 20.0
TARGET_SDK_TOOL = 50.0
#: The references of the first table: the floor with each JSON library, the
#: orjson floor plus the construction of streamnorm's output events, and the
#: minimal normalizer (text workloads only).
FLOORS = ("floor-orjson", "floor-jiter", "floor-output", "minimal")
SDK_KEYS = ("anthropic", "openai-responses", "openai-create", "openai-stream", "google-genai")


# ---------------------------------------------------------------------------
# Measuring


def timed(run: Callable[[bytes, list[bytes]], Any], body: bytes, chunks: list[bytes]) -> Any:
    """(CPU seconds, result) of one call, the garbage collector paused."""
    gc.disable()
    try:
        t0 = time.process_time()
        result = run(body, chunks)
        return time.process_time() - t0, result
    finally:
        gc.enable()


@dataclass
class Row:
    """One workload of one api: every contender's time per repetition and stream."""

    workload: Workload
    events: int
    #: contender → repetition → time per stream (NaN: not read)
    times: dict[str, list[list[float]]] = field(default_factory=lambda: defaultdict(list))
    #: contender → streams it is not timed on (raised, or disagreed on a fixture)
    skipped: dict[str, set[int]] = field(default_factory=lambda: defaultdict(set))
    #: contender → why its result cannot be trusted (synthetic workloads)
    problems: dict[str, str] = field(default_factory=dict)
    #: contender → stream → why it was not timed on that stream
    reasons: dict[str, dict[int, str]] = field(default_factory=lambda: defaultdict(dict))
    overhead: dict[str, float] = field(default_factory=dict)

    def total(self, key: str, rep: int, among: set[int] | None = None) -> float:
        """Time of ``key`` in repetition ``rep`` over the streams it read (or ``among``)."""
        skipped = self.skipped[key] if among is None else among
        return sum(t for i, t in enumerate(self.times[key][rep]) if i not in skipped)

    def ratios(self, key: str, reference: str) -> list[float]:
        """``key`` / ``reference`` per repetition, over the streams ``key`` read."""
        out = []
        skip = self.skipped[key] | self.skipped[reference]
        for rep in range(min(len(self.times[key]), len(self.times[reference]))):
            a = self.total(key, rep, skip)
            b = self.total(reference, rep, skip)
            if b > 0:
                out.append(a / b)
        return out

    def median_time(self, key: str) -> float:
        return statistics.median(self.total(key, r) for r in range(len(self.times[key])))

    def read_size(self, key: str) -> int:
        skip = self.skipped[key]
        return sum(len(b) for i, b in enumerate(self.workload.bodies) if i not in skip)


def compare(ours: View, theirs: View) -> str | None:
    """What differs between streamnorm's view and a peer's (None: nothing)."""
    diffs = []
    for name in ("text", "thinking", "calls"):
        mine, other = getattr(ours, name), getattr(theirs, name)
        if other is None or mine is None:
            continue
        if mine != other:
            if isinstance(mine, str) and isinstance(other, str):
                diffs.append(f"{name} {len(other)} chars vs {len(mine)}")
            else:
                diffs.append(f"{name} differ")
    return ", ".join(diffs) or None


def expected_view(wl: Workload) -> View:
    assert wl.expect is not None
    return View("".join(wl.expect.text), "".join(wl.expect.thinking), list(wl.expect.calls))


def warm_workload(wl: Workload) -> Workload:
    kind = "tool" if wl.name.startswith("tool") else wl.name
    return synthetic_workload(wl.api, kind, 60_000, seed=99)


def measure(
    wl: Workload,
    contenders: list[Contender],
    runs: dict[str, Any],
    reps: int,
    overhead: dict[str, float],
    log: Callable[[str], None],
) -> Row:
    row = Row(wl, sum(floor_events(b) for b in wl.bodies))
    row.overhead = {c.key: overhead.get(c.key, 0.0) for c in contenders}
    n = len(wl.bodies)
    views: dict[str, list[View | None]] = {c.key: [None] * n for c in contenders}

    def read(c: Contender, i: int) -> tuple[float, View | None]:
        t, result = timed(runs[c.key], wl.bodies[i], wl.chunks[i])
        return max(t - row.overhead[c.key], 0.0), result

    # Untimed first pass: warms every path up; for the fixtures it also
    # decides which streams each peer reads.
    if wl.expect is not None:
        warm = warm_workload(wl)
        for c in contenders:
            runs[c.key](warm.bodies[0], warm.chunks[0])
    else:
        for c in contenders:
            for i in range(n):
                try:
                    _, result = read(c, i)
                    views[c.key][i] = c.view(wl.api, result)
                except Exception as exc:
                    row.skipped[c.key].add(i)
                    row.reasons[c.key][i] = f"raised {type(exc).__name__}"
        for c in contenders:
            if c.is_floor or c.key == "streamnorm":
                continue
            for i in range(n):
                mine, theirs = views["streamnorm"][i], views[c.key][i]
                if i in row.skipped[c.key] or mine is None or theirs is None:
                    row.skipped[c.key].add(i)
                    continue
                differs = compare(mine, theirs)
                if differs:
                    row.skipped[c.key].add(i)
                    row.reasons[c.key][i] = differs
    for c in contenders:
        for i in range(n):
            c.prime(wl.api, wl.bodies[i], wl.chunks[i])
    for rep in range(reps):
        shift = rep % len(contenders)
        for c in contenders[shift:] + contenders[:shift]:
            gc.collect()
            times = []
            for i in range(n):
                if i in row.skipped[c.key]:
                    times.append(math.nan)
                    continue
                try:
                    t, result = read(c, i)
                except Exception as exc:
                    if wl.expect is not None:
                        row.problems[c.key] = f"raised {type(exc).__name__}: {exc}"[:200]
                    row.skipped[c.key].add(i)
                    times.append(math.nan)
                    continue
                times.append(t)
                if rep == 0 and wl.expect is not None:
                    views[c.key][i] = c.view(wl.api, result)
            row.times[c.key].append(times)
        log(f"  rep {rep + 1}/{reps}")
    if wl.expect is not None:
        ours = views["streamnorm"][0]
        assert ours is not None
        problem = compare(expected_view(wl), ours)
        if problem:
            row.problems["streamnorm"] = f"differs from the stream's content: {problem}"
        for c in contenders:
            theirs = views[c.key][0]
            # (The floors return nothing to compare, except the minimal
            # normalizer: its text, like a peer's, is checked.)
            if c.key == "streamnorm" or c.key in row.problems or theirs is None:
                continue
            problem = compare(ours, theirs)
            if problem:
                row.problems[c.key] = f"result differs from streamnorm's: {problem}"
    return row


def measure_overhead(c: Contender, run: Any, api: str, reps: int) -> float:
    """Median time of a minimal stream: the SDK's request and setup cost."""
    body = minimal_stream(api)
    chunks = [body]
    run(body, chunks)
    times: list[float] = [timed(run, body, chunks)[0] for _ in range(max(reps, 9))]
    return statistics.median(times)


# ---------------------------------------------------------------------------
# Reporting


def fmt_ratio(values: Sequence[float]) -> str:
    if not values:
        return "—"
    med = statistics.median(values)
    lo, hi = min(values), max(values)
    digits = 2 if med < 10 else (1 if med < 100 else 0)
    return f"{med:.{digits}f} ({lo:.{digits}f}–{hi:.{digits}f})"


def table(headers: list[str], rows: list[list[str]], markdown: bool, right: set[int]) -> str:
    if markdown:
        out = ["| " + " | ".join(headers) + " |"]
        out.append(
            "|" + "|".join("---:" if i in right else "---" for i in range(len(headers))) + "|"
        )
        out += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(out)
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)
    ]

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    return "\n".join([line(headers), line(["-" * w for w in widths]), *map(line, rows)])


def mbps(size: int, seconds: float) -> str:
    return f"{size / MB / seconds:,.1f}" if seconds > 0 else "—"


def report(
    rows: list[Row],
    contenders: list[Contender],
    markdown: bool,
    reps: int,
    verbose: bool = False,
    size: int = 5 * MB,
) -> str:
    labels = {c.key: c.label for c in contenders}
    out: list[str] = []

    def h(title: str) -> str:
        return f"\n### {title}\n" if markdown else f"\n== {title} =="

    out.append(h("streamnorm against the floor (time ratio; lower is better)"))
    before = any(Baseline.key in row.times for row in rows)
    body = []
    for row in rows:
        wl = row.workload
        if "streamnorm" not in row.times:
            continue
        t_sn = row.median_time("streamnorm")
        cells = [
            wl.name,
            SHORT[wl.api],
            f"{wl.size / MB:.2f}",
            f"{row.events:,}",
        ]
        for key in FLOORS:
            cells.append(mbps(wl.size, row.median_time(key)) if key in row.times else "—")
        cells.append(mbps(wl.size, t_sn))
        cells.append(f"{row.events / t_sn / 1e3:,.0f}k")
        for key in FLOORS:
            cells.append(fmt_ratio(row.ratios("streamnorm", key)) if key in row.times else "—")
        if "streamnorm" in row.problems:
            cells[-1] += " MISMATCH"
        if before:
            cells.append(fmt_ratio(row.ratios(Baseline.key, FLOORS[0])))
        body.append(cells)
    out.append(
        table(
            [
                "workload",
                "api",
                "MB",
                "events",
                "floor orjson MB/s",
                "floor jiter MB/s",
                "floor + output MB/s",
                "minimal MB/s",
                "streamnorm MB/s",
                "events/s",
                "÷ floor orjson",
                "÷ floor jiter",
                "÷ floor + output",
                "÷ minimal",
                *(["before ÷ floor orjson"] if before else []),
            ],
            body,
            markdown,
            set(range(2, 15)),
        )
    )

    out.append(
        h("peers against streamnorm (peer time ÷ streamnorm time; higher = streamnorm faster)")
    )
    body = []
    for row in rows:
        wl = row.workload
        for c in contenders:
            if c.is_floor or c.key == "streamnorm" or c.key not in row.times:
                continue
            read = len(wl.bodies) - len(row.skipped[c.key])
            if read == 0:
                continue
            note = ""
            if c.key in row.problems:
                note = " NOT VERIFIED: " + row.problems[c.key]
            elif len(wl.bodies) > 1:
                note = f" ({read}/{len(wl.bodies)} fixtures)"
            body.append(
                [
                    wl.name,
                    SHORT[wl.api],
                    c.key + note,
                    mbps(row.read_size(c.key), row.median_time(c.key)),
                    fmt_ratio(row.ratios(c.key, "streamnorm"))
                    if not row.problems.get(c.key)
                    else "—",
                ]
            )
    out.append(table(["workload", "api", "peer", "MB/s", "÷ streamnorm"], body, markdown, {3, 4}))

    out.append(h("targets"))
    if size != 5 * MB:
        out.append(
            f"(streams of {size / MB:g} MB here; the targets are quoted on the 5 MB streams, "
            "and the SDKs' ratios grow with the stream)" + ("\n" if markdown else "")
        )
    body = []
    by = {(r.workload.name, r.workload.api): r for r in rows}
    for api in [a for a in APIS if any(r.workload.api == a for r in rows)]:
        text = by.get(("text", api))
        tool = by.get(("tool-1MB", api))
        cells = [SHORT[api]]
        if text is not None and "floor-orjson" in text.times:
            med = statistics.median(text.ratios("streamnorm", "floor-orjson"))
            cells.append(f"{med:.2f} {'met' if med <= TARGET_FLOOR else 'NOT met'}")
        else:
            cells.append("—")
        for key in ("floor-output", "minimal"):
            if text is not None and key in text.times:
                cells.append(f"{statistics.median(text.ratios(key, 'floor-orjson')):.2f}")
            else:
                cells.append("—")
        events = by.get(("text-events", api))
        if events is not None and "floor-orjson" in events.times:
            cells.append(f"{statistics.median(events.ratios('streamnorm', 'floor-orjson')):.2f}")
        else:
            cells.append("—")
        for found, goal in ((text, TARGET_SDK_TEXT), (tool, TARGET_SDK_TOOL)):
            parts = []
            for key in SDK_KEYS:
                if found is None or key not in found.times or key in found.problems:
                    continue
                med = statistics.median(found.ratios(key, "streamnorm"))
                parts.append(f"{key} {med:.1f}x {'met' if med >= goal else 'NOT met'}")
            cells.append("; ".join(parts) or "—")
        body.append(cells)
    out.append(
        table(
            [
                "api",
                f"text: ÷ floor (≤ {TARGET_FLOOR:g})",
                "text: floor + output ÷ floor",
                "text: minimal ÷ floor",
                "text, one event per chunk: ÷ floor",
                f"text: SDK ÷ streamnorm (≥ {TARGET_SDK_TEXT:g})",
                f"tool 1 MB: SDK ÷ streamnorm (≥ {TARGET_SDK_TOOL:g})",
            ],
            body,
            markdown,
            set(),
        )
    )

    notes = [
        f"Median of {reps} repetitions; (min–max) of the paired per-repetition ratios. "
        "CPU time of the process, garbage collector paused while timing.",
        "SDK times exclude the request set-up, measured on a minimal stream and subtracted: "
        + ", ".join(
            f"{k} {v * 1e3:.2f} ms"
            for k, v in sorted({k: v for r in rows for k, v in r.overhead.items() if v}.items())
        )
        + " per stream.",
    ]
    problems = [
        f"{r.workload.name}/{SHORT[r.workload.api]} {k}: {v}"
        for r in rows
        for k, v in r.problems.items()
    ]
    if problems:
        notes.append("Results that did not verify (left out of the ratios): " + "; ".join(problems))
    if verbose:
        for r in rows:
            for key, reasons in r.reasons.items():
                listed = ", ".join(f"{r.workload.labels[i]} ({why})" for i, why in reasons.items())
                notes.append(f"{SHORT[r.workload.api]} fixtures not timed for {key}: {listed}")
    unavailable = [f"{c.key} ({why})" for c in CONTENDERS if (why := c.available())]
    if unavailable:
        notes.append("Not measured: " + ", ".join(unavailable))
    out.append(h("notes"))
    out += [f"* {n}" if markdown else f"- {n}" for n in notes]
    out.append(h("contenders"))
    out += [
        f"* `{c.key}`: {labels[c.key]}" if markdown else f"- {c.key}: {labels[c.key]}"
        for c in contenders
    ]
    return "\n".join(out)


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        cpu = platform.processor() or cpu
    versions = []
    for dist in (
        "streamnorm",
        "orjson",
        "jiter",
        "httpx",
        "httpx-sse",
        "openai",
        "anthropic",
        "google-genai",
        "litellm",
    ):
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions.append(f"{dist} {metadata.version(dist)}")
    return (
        f"{cpu}, {os.cpu_count()} CPUs; Python {platform.python_version()} "
        f"({platform.python_implementation()}); " + ", ".join(versions)
    )


# ---------------------------------------------------------------------------
# Profiling


CATEGORIES = (
    ("sse.py", "SSE framing"),
    ("_json.py", "JSON parse"),
    ("jiter", "JSON parse"),
    ("normalizer.py", "normalizer glue"),
    ("providers/", "decoder dispatch"),
    ("builder.py", "builder"),
    ("events.py", "event construction"),
    ("_frozen.py", "event construction"),
    ("<string>", "event construction"),
    ("messages.py", "messages / usage"),
    ("partial_json.py", "tool arguments"),
)


def category(filename: str) -> str | None:
    for needle, name in CATEGORIES:
        if needle in filename:
            return name
    return None


def _spin(api: str, name: str, size: int, seconds: float) -> None:
    """The process py-spy samples: streamnorm on one workload, over and over."""
    from streamnorm import StreamNormalizer
    from streamnorm.apis import resolve_api

    wl = synthetic_workload(api, name, size)
    chunks = wl.chunks[0]
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        n = StreamNormalizer(resolve_api(api))
        for chunk in chunks:
            n.feed(chunk)
        n.flush()


def cprofile_shares(api: str, wl: Workload) -> tuple[dict[str, float], list[tuple[str, float]]]:
    """Share of time per category under cProfile; a builtin's own time goes
    to its callers' categories in proportion to the calls they made."""
    import cProfile
    import pstats

    runner = next(c for c in CONTENDERS if c.key == "streamnorm").prepare(api)
    runner(wl.bodies[0], wl.chunks[0])
    prof = cProfile.Profile()
    prof.enable()
    runner(wl.bodies[0], wl.chunks[0])
    prof.disable()
    stats: Any = vars(pstats.Stats(prof))["stats"]  # (not in the type stubs)
    shares: dict[str, float] = defaultdict(float)
    funcs: list[tuple[str, float]] = []
    for (filename, line, fn), (_cc, _nc, tt, _ct, callers) in stats.items():
        cat = category(filename)
        if cat is None and callers:
            total = sum(v[2] for v in callers.values()) or 1.0
            for (cfile, _cl, _cf), v in callers.items():
                shares[category(cfile) or "other"] += tt * v[2] / total
        else:
            shares[cat or "other"] += tt
        funcs.append((f"{Path(filename).name}:{line} {fn}", tt))
    total = sum(shares.values()) or 1.0
    funcs.sort(key=lambda x: -x[1])
    return {k: v / total for k, v in shares.items()}, [(f, t / total) for f, t in funcs[:12]]


def pyspy_shares(api: str, name: str, size: int, seconds: float) -> Any:
    """Share of samples per category (innermost streamnorm frame) and per line."""
    import shutil

    if shutil.which("py-spy") is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "stacks.txt"
        cmd = [
            "py-spy", "record", "--rate", "997", "--format", "raw", "--output", str(out), "--",
            sys.executable, __file__, "--spin", api, name, str(size), str(seconds),
        ]  # fmt: skip
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0 or not out.exists():
            return None
        lines = out.read_text().splitlines()
    shares: dict[str, float] = defaultdict(float)
    spots: dict[str, float] = defaultdict(float)
    total = 0
    for line in lines:
        stack, _, count = line.rpartition(" ")
        n = int(count)
        frames = stack.split(";")
        if not any("normalizer.py" in f for f in frames):
            continue  # building the workload, or the loop itself
        total += n
        cat, spot = "other", frames[-1]
        for frame in reversed(frames):
            c = category(frame)
            if c is not None:
                cat, spot = c, frame
                break
        shares[cat] += n
        spots[spot] += n
    if not total:
        return None
    top = sorted(spots.items(), key=lambda x: -x[1])[:15]
    return {k: v / total for k, v in shares.items()}, [(s, v / total) for s, v in top], total


STAGES = [
    "SSE framing",
    "JSON parse",
    "normalizer glue",
    "decoder dispatch",
    "builder",
    "event construction",
    "messages / usage",
    "tool arguments",
    "other",
]


def stage_times(api: str, wl: Workload, reps: int) -> dict[str, float]:
    """Median CPU ms of the pipeline cut after each stage: the floor, SSE
    framing alone (``SSEDecoder.feed_raw``, as the normalizer reads it),
    framing plus the payload parse the normalizer does (jiter on the data
    bytes), and the whole normalizer. Differences between them are the
    stages' own cost, free of any profiler's overhead."""
    import jiter

    from streamnorm.sse import SSEDecoder

    body, chunks = wl.bodies[0], wl.chunks[0]
    floor = next(c for c in CONTENDERS if c.key == "floor-orjson").prepare(api)
    full = next(c for c in CONTENDERS if c.key == "streamnorm").prepare(api)
    parse = jiter.from_json

    def framing(body: bytes, chunks: list[bytes]) -> None:
        dec = SSEDecoder()
        for chunk in chunks:
            dec.feed_raw(chunk)
        dec.flush()

    def parsing(body: bytes, chunks: list[bytes]) -> None:
        dec = SSEDecoder()
        for chunk in chunks:
            for _, data, _, _ in dec.feed_raw(chunk):
                if data[:1] == b"{":
                    parse(data, allow_inf_nan=False)
        dec.flush()

    stages = {"floor": floor, "framing": framing, "parse": parsing, "full": full}
    times: dict[str, list[float]] = defaultdict(list)
    for _ in range(reps):
        for name, run in stages.items():
            gc.collect()
            times[name].append(timed(run, body, chunks)[0] * 1e3)
    return {name: statistics.median(ts) for name, ts in times.items()}


def profile(args: argparse.Namespace) -> int:
    """Where streamnorm's time goes, per stage, on each api's text and tool streams."""
    size = int((args.size or (1 if args.quick else 5)) * MB)
    names = args.workload or ["text", "tool"]
    apis = args.api or list(APIS)
    seconds = 3.0 if args.quick else 8.0
    print(f"machine: {machine()}")
    results: dict[str, list[tuple[str, str, dict[str, float], list[tuple[str, float]]]]] = {}
    for api in apis:
        for name in names:
            spy = pyspy_shares(api, name, size, seconds)
            if spy is not None:
                shares, spots, _samples = spy
                results.setdefault("py-spy (sampling; native time counts for the calling line)", [])
                results["py-spy (sampling; native time counts for the calling line)"].append(
                    (api, name, shares, spots)
                )
            wl = synthetic_workload(api, name, size)
            shares, spots = cprofile_shares(api, wl)
            results.setdefault("cProfile (own time; builtins counted for their callers)", [])
            results["cProfile (own time; builtins counted for their callers)"].append(
                (api, name, shares, spots)
            )
    print("\n== stage costs by subtraction: CPU µs per wire event (ms per MB), median of 5 ==")
    body = []
    for api in apis:
        for name in names:
            wl = synthetic_workload(api, name, size)
            st = stage_times(api, wl, 5)
            events = floor_events(wl.bodies[0])
            per = wl.size / MB
            parts = {
                "floor": st["floor"],
                "SSE framing": st["framing"],
                "payload parse": st["parse"] - st["framing"],
                "decoder+builder+events": st["full"] - st["parse"],
                "streamnorm": st["full"],
            }
            cells = [SHORT[api], name, f"{events / per:,.0f}"]
            cells += [f"{ms * 1e3 / events:.2f} ({ms / per:.1f})" for ms in parts.values()]
            cells.append(f"{st['full'] / st['floor']:.1f}x")
            body.append(cells)
    header = [
        "api",
        "workload",
        "events/MB",
        "floor",
        "SSE framing",
        "payload parse",
        "decoder+builder+events",
        "streamnorm",
        "÷ floor",
    ]
    print(table(header, body, args.markdown, set(range(2, len(header)))))
    if not any(k.startswith("py-spy") for k in results):
        print("py-spy is not installed or cannot attach: sampling profile skipped")
    for tool, entries in results.items():
        print(f"\n== {tool}: share of streamnorm's time per stage ==")
        body = [
            [SHORT[api], name] + [f"{shares.get(k, 0) * 100:.0f}%" for k in STAGES]
            for api, name, shares, _ in entries
        ]
        header = ["api", "workload", *STAGES]
        print(table(header, body, args.markdown, set(range(2, len(header)))))
        print(f"\n== {tool}: hottest spots ==")
        for api, name, _, spots in entries:
            print(f"{SHORT[api]} {name}:")
            for spot, share in spots[:10]:
                print(f"  {share * 100:5.1f}%  {spot}")
    return 0


# ---------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1 MB streams, fewer workloads")
    parser.add_argument("--reps", type=int, default=5, help="repetitions (median; default 5)")
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables")
    parser.add_argument("--api", action="append", choices=APIS, help="only this api (repeatable)")
    parser.add_argument(
        "--workload",
        action="append",
        choices=(*SYNTHETIC, "fixtures"),
        help="only this workload (repeatable)",
    )
    parser.add_argument(
        "--only", action="append", help="only this contender key (repeatable; floors and "
        "streamnorm always run)"
    )  # fmt: skip
    parser.add_argument("--size", type=float, help="size of the large synthetic streams in MB")
    parser.add_argument("--profile", action="store_true", help="profile streamnorm instead")
    parser.add_argument(
        "--baseline",
        metavar="SRC",
        help="also time the streamnorm package under SRC (another checkout's src/): before/after",
    )
    parser.add_argument(
        "--verbose", action="store_true", help="list the fixtures each peer was not timed on"
    )
    parser.add_argument("--spin", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.spin:
        api, name, size, seconds = args.spin
        _spin(api, name, int(size), float(seconds))
        return 0
    if args.profile:
        return profile(args)

    started = time.perf_counter()

    def log(message: str) -> None:
        print(f"[{time.perf_counter() - started:6.1f}s] {message}", file=sys.stderr, flush=True)

    size = int((args.size or (1 if args.quick else 5)) * MB)
    names = args.workload or (
        ["text", "tool-100KB", "fixtures"] if args.quick else [*SYNTHETIC, "fixtures"]
    )
    apis = args.api or list(APIS)
    candidates = [*CONTENDERS, *([Baseline(args.baseline)] if args.baseline else [])]
    available = [c for c in candidates if c.available() is None]
    if args.only:
        available = [
            c
            for c in available
            if c.is_floor or c.key in ("streamnorm", Baseline.key) or c.key in args.only
        ]
    rows: list[Row] = []
    for api in apis:
        every = [c for c in available if c.reads(api)]
        runs = {c.key: c.prepare(api) for c in every}
        # Everything imported so far is never garbage: keep collections cheap.
        gc.collect()
        gc.freeze()
        overhead = {
            c.key: measure_overhead(c, runs[c.key], api, args.reps) for c in every if c.overhead
        }
        for name in names:
            wl = (
                fixture_workload(api) if name == "fixtures" else synthetic_workload(api, name, size)
            )
            if wl is None:
                log(f"{api} {name}: no fixtures under ../shared/fixtures, skipped")
                continue
            log(f"{api} {name}: {wl.size / MB:.2f} MB in {len(wl.bodies)} stream(s)")
            contenders = [c for c in every if not c.workloads or name in c.workloads]
            rows.append(measure(wl, contenders, runs, args.reps, overhead, log))
    print(f"machine: {machine()}")
    print(
        f"chunks: seeded random 1-4 KiB (text-events: one wire event each); "
        f"repetitions: {args.reps}; "
        f"large streams: {size / MB:g} MB; total run {time.perf_counter() - started:.0f} s"
    )
    print(report(rows, available, args.markdown, args.reps, args.verbose, size))
    return 0


if __name__ == "__main__":
    sys.exit(main())
