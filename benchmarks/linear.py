"""Growth of the normalization cost with stream length.

For each stream shape that once made streamnorm quadratic (an Anthropic
compaction block, OpenRouter ``reasoning_details`` signed early, Groq
``executed_tools``, many Anthropic blocks, Responses summary parts, Gemini
``partialArgs``), prints the CPU time for n and 4n events and their ratio:
about 4 is linear, about 16 quadratic. Timing lives here, not in the tests.

    python benchmarks/linear.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support import run_bytes, terminal
from tests.test_robustness import LINEAR_CASES

from streamnorm import Done


def best_of(data: bytes, api: str, reps: int = 5) -> float:
    times = []
    for _ in range(reps):
        started = time.process_time()
        events = run_bytes(data, api)
        times.append(time.process_time() - started)
    assert isinstance(terminal(events), Done)
    return min(times)


def main() -> None:
    print(f"{'stream':40} {'n=1000 ms':>10} {'n=4000 ms':>10} {'ratio':>6}")
    for name, (api, make) in LINEAR_CASES.items():
        small, large = best_of(make(1000), api), best_of(make(4000), api)
        print(f"{name:40} {small * 1000:10.1f} {large * 1000:10.1f} {large / small:6.2f}")


if __name__ == "__main__":
    main()
