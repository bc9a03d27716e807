"""Seeded fuzzing from the command line, and the reproducer of a failure.

    python -m fuzz.run --count 100000            # seeds 0 .. 99999
    python -m fuzz.run --seconds 600 --seed 10**6
    python -m fuzz.run --replay 4711             # one seed, with its minimal reproducer
    python -m fuzz.run --file crash.sse --api anthropic-messages
    python -m fuzz.run --target all --seconds 600  # every framing and codec, in turn

Seed ``s`` always makes the same input (:func:`fuzz.mutate.generate`), fed
as ``APIS[s % 4]``, so a failing seed is a complete bug report. A failure is
minimised (blocks, then lines, then bytes) while it still breaks the same
rule, and printed as a Python bytes literal.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `fuzz` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fuzz.check import InvariantError, check
from fuzz.mutate import APIS, Case, generate, split_blocks
from fuzz.targets import TARGETS
from streamnorm import Error

__all__ = ["Failure", "fuzz_seeds", "main", "minimize", "reproducer"]


@dataclass
class Failure:
    seed: int | None
    case: Case
    rule: str
    message: str
    minimal: bytes

    def report(self) -> str:
        seed = f"seed {self.seed} " if self.seed is not None else ""
        replay = (
            f"\n  replay: python -m fuzz.run --replay {self.seed}" if self.seed is not None else ""
        )
        return (
            f"{seed}broke {self.message}\n"
            f"  input: {self.case.describe()}{replay}\n"
            f"  minimal reproducer ({len(self.minimal)} bytes), fed as {self.case.api!r}"
            f" with {self.case.options}:\n    {self.minimal!r}"
        )


def _fails(case: Case, rule: str) -> Callable[[bytes], bool]:
    def fails(data: bytes) -> bool:
        try:
            check(data, case.api, case.options, split_seed=case.split_seed)
        except InvariantError as exc:
            return exc.rule == rule
        except Exception:
            return False
        return False

    return fails


def _reduce(items: list[bytes], fails: Callable[[bytes], bool], budget: list[int]) -> list[bytes]:
    """Delta debugging: drop ever smaller runs of items while ``fails`` holds."""
    size = max(1, len(items) // 2)
    while size >= 1 and budget[0] > 0:
        i = 0
        changed = False
        while i < len(items) and budget[0] > 0:
            candidate = items[:i] + items[i + size :]
            budget[0] -= 1
            if candidate and fails(b"".join(candidate)):
                items = candidate
                changed = True
            else:
                i += size
        if not changed:
            size //= 2
    return items


def minimize(data: bytes, fails: Callable[[bytes], bool], budget: int = 3000) -> bytes:
    """A small input that still ``fails``: whole SSE blocks, then lines,
    then bytes are removed (at most ``budget`` attempts)."""
    left = [budget]
    items = _reduce(split_blocks(data), fails, left)
    items = _reduce(b"".join(items).splitlines(keepends=True), fails, left)
    joined = b"".join(items)
    items = _reduce([joined[i : i + 1] for i in range(len(joined))], fails, left)
    return b"".join(items)


def reproducer(case: Case, seed: int | None = None, budget: int = 3000) -> Failure | None:
    """Check ``case``; on failure, its minimised reproducer."""
    try:
        check(case.data, case.api, case.options, split_seed=case.split_seed)
    except InvariantError as exc:
        minimal = minimize(case.data, _fails(case, exc.rule), budget)
        return Failure(seed, case, exc.rule, str(exc), minimal)
    return None


def fuzz_seeds(
    seeds: Iterable[int],
    *,
    deadline: float | None = None,
    stats: Counter[str] | None = None,
    budget: int = 3000,
    minimized: int = 5,
) -> tuple[int, list[Failure]]:
    """Check the case of every seed (until ``deadline``, a ``time.monotonic``
    value). Returns the number of inputs checked and the failures; only the
    first ``minimized`` failures are minimised (the rest keep their input)."""
    count = 0
    failures: list[Failure] = []
    for seed in seeds:
        if deadline is not None and time.monotonic() >= deadline:
            break
        case = generate(seed)
        count += 1
        try:
            end = check(case.data, case.api, case.options, split_seed=case.split_seed)
        except InvariantError as exc:
            if len(failures) < minimized:
                failure = reproducer(case, seed, budget)
                if failure is not None:
                    failures.append(failure)
            else:
                failures.append(Failure(seed, case, exc.rule, str(exc), case.data))
            continue
        if stats is not None:
            kind = f"({end.kind})" if isinstance(end, Error) else ""
            stats[f"{APIS[seed % len(APIS)]}: {type(end).__name__}{kind}"] += 1
    return count, failures


#: What ``--target all`` runs, seed ``s`` going to ``_ALL[s % len(_ALL)]``.
_ALL = ("streams", *TARGETS)


def fuzz_targets(
    names: Sequence[str], seeds: Iterable[int], *, deadline: float | None = None
) -> tuple[Counter[str], list[str]]:
    """Check the input of every seed, seed ``s`` going to target
    ``names[s % len(names)]`` (``streams`` is :func:`fuzz_seeds`). Returns
    the inputs checked per target and a report per failure."""
    counts: Counter[str] = Counter()
    reports: list[str] = []
    for seed in seeds:
        if deadline is not None and time.monotonic() >= deadline:
            break
        name = names[seed % len(names)]
        counts[name] += 1
        if name == "streams":
            reports += [f.report() for f in fuzz_seeds([seed], minimized=1)[1]]
            continue
        target = TARGETS[name]
        case = target.generate(random.Random(seed))
        try:
            target.check(case)
        except InvariantError as exc:
            reports.append(
                f"seed {seed} broke {exc}\n  input: {case.describe()}\n"
                f"  replay: python -m fuzz.run --target {name} --seed {seed} --count 1"
            )
    return counts, reports


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m fuzz.run",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    parser.add_argument("--count", type=int, default=10_000, help="number of seeds")
    parser.add_argument("--seconds", type=float, help="run until this much time has passed")
    parser.add_argument("--replay", type=int, help="check one seed and print its reproducer")
    parser.add_argument("--file", type=Path, help="check the bytes of a file")
    parser.add_argument("--api", default="auto", help="api for --file (default auto)")
    parser.add_argument("--stats", action="store_true", help="print outcome counts")
    parser.add_argument(
        "--target",
        choices=(*_ALL, "all"),
        default="streams",
        help="what to fuzz: the SSE streams (default), one of the other framings and "
        "codecs, or all of them in turn",
    )
    args = parser.parse_args(argv)

    if args.file is not None:
        case = Case(args.api, args.file.read_bytes(), str(args.file))
        failure = reproducer(case)
        print(failure.report() if failure else "ok")
        return 1 if failure else 0
    if args.replay is not None:
        case = generate(args.replay)
        print(f"seed {args.replay}: {case.describe()} ({len(case.data)} bytes)")
        failure = reproducer(case, args.replay)
        print(failure.report() if failure else "ok: every invariant holds")
        return 1 if failure else 0

    stats: Counter[str] = Counter()
    start = time.monotonic()
    if args.seconds is not None:
        seeds: Iterable[int] = _count_from(args.seed)
        deadline: float | None = start + args.seconds
    else:
        seeds = range(args.seed, args.seed + args.count)
        deadline = None
    if args.target != "streams":
        names = _ALL if args.target == "all" else (args.target,)
        counts, reports = fuzz_targets(names, seeds, deadline=deadline)
        elapsed = time.monotonic() - start
        total = sum(counts.values())
        print(
            f"{total} inputs in {elapsed:.1f}s ({total / max(elapsed, 1e-9):.0f}/s), "
            f"{len(reports)} failures; per target: "
            + ", ".join(f"{name} {counts[name]}" for name in names)
        )
        print("\n".join(reports))
        return 1 if reports else 0
    count, failures = fuzz_seeds(seeds, deadline=deadline, stats=stats)
    elapsed = time.monotonic() - start
    per_api = Counter(APIS[s % len(APIS)] for s in range(args.seed, args.seed + count))
    print(
        f"{count} inputs in {elapsed:.1f}s ({count / max(elapsed, 1e-9):.0f}/s), "
        f"{len(failures)} failures; per api: " + ", ".join(f"{api} {per_api[api]}" for api in APIS)
    )
    if args.stats:
        for key, n in sorted(stats.items()):
            print(f"  {n:7d}  {key}")
    for failure in failures:
        print(failure.report())
    return 1 if failures else 0


def _count_from(start: int) -> Iterable[int]:
    n = start
    while True:
        yield n
        n += 1


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
