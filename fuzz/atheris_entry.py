"""Coverage-guided fuzzing with atheris (libFuzzer for Python).

    pip install atheris
    python fuzz/atheris_entry.py -atheris_runs=0 -max_total_time=600 /tmp/corpus
    python fuzz/atheris_entry.py crash-<hash>        # replay one input

How an input is read: byte 0 picks the api (``APIS[b % 4]``), byte 1 the mode,
the rest is

* mode 0 (raw): the stream itself, fed to the normalizer as that api (or,
  for an odd byte 1, as ``"auto"``): libFuzzer mutates the SSE bytes directly;
* otherwise (mutation): the decisions of :func:`fuzz.mutate.generate_from`,
  read by :class:`fuzz.mutate.ByteRandom`: which fixture, which mutations,
  which values. libFuzzer then mutates *decisions*, so its coverage feedback
  steers the structure-aware mutations too.

Every input goes through :func:`fuzz.check.check` (every invariant; whole,
random chunks, and one byte at a time up to 512 bytes); a broken invariant
raises and libFuzzer saves the input. On exit
the number of inputs checked is printed. ``--seed-corpus DIR`` writes one raw
input per fixture into DIR to start from.
"""

from __future__ import annotations

import atexit
import sys
from pathlib import Path

import atheris  # type: ignore[import-untyped]

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

with atheris.instrument_imports(include=["streamnorm"]):
    import streamnorm
    import streamnorm.normalizer  # noqa: F401

from fuzz.check import check
from fuzz.mutate import APIS, ByteRandom, fixture_paths, generate_from

_count = [0]


def test_one_input(data: bytes) -> None:
    if len(data) < 2:
        return
    api = APIS[data[0] % len(APIS)]
    _count[0] += 1
    if data[1] % 4 == 0:
        check(data[2:], "auto" if data[1] & 4 else api, split_seed=data[0], byte_at_a_time_max=512)
        return
    case = generate_from(api, ByteRandom(data[2:]))
    check(case.data, case.api, case.options, split_seed=case.split_seed, byte_at_a_time_max=512)


def write_seed_corpus(directory: Path) -> int:
    """One raw-mode input per fixture (and one mutation-mode input per api)."""
    directory.mkdir(parents=True, exist_ok=True)
    n = 0
    for path in fixture_paths():
        api = APIS.index(path.parent.name)
        (directory / f"raw-{path.parent.name}-{path.stem}").write_bytes(
            bytes((api, 0)) + path.read_bytes()
        )
        n += 1
    for api in range(len(APIS)):
        (directory / f"mutate-{APIS[api]}").write_bytes(bytes((api, 1)) + bytes(range(64)))
        n += 1
    return n


def _report() -> None:
    print(f"streamnorm fuzz: {_count[0]} inputs checked", file=sys.stderr)


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--seed-corpus":
        print(f"{write_seed_corpus(Path(sys.argv[2]))} inputs written")
        return
    atexit.register(_report)
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
