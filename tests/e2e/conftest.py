"""The e2e matrix in the terminal summary: every cell's outcome, what became
of its reasoning state, and its time (the xdist workers send each test's
recorded properties to the controller with its report)."""

from __future__ import annotations

from _pytest.terminal import TerminalReporter


def pytest_terminal_summary(terminalreporter: TerminalReporter) -> None:
    rows = []
    for outcome in ("passed", "failed", "xfailed", "xpassed"):
        for report in terminalreporter.stats.get(outcome, []):
            properties = dict(getattr(report, "user_properties", ()))
            if "e2e_seconds" in properties and report.when == "call":
                cell = report.nodeid.split("[", 1)[-1].rstrip("]")
                rows.append((cell, outcome, properties["e2e_state"], properties["e2e_seconds"]))
    if not rows:
        return
    terminalreporter.section("e2e matrix (cell, outcome, reasoning state, seconds)")
    for cell, outcome, state, seconds in sorted(rows):
        terminalreporter.write_line(f"{cell:<48} {outcome:<8} {state!s:<13} {seconds:>6}")
    total = sum(float(row[3]) for row in rows)
    terminalreporter.write_line(f"{len(rows)} cells, {total:.1f} s in the clients")
