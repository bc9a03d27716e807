"""The end-to-end harness: gateways in front of the scripted upstream, the
real client programs in front of the gateways, and the verdict of a cell.

One ``streamnorm serve`` process (real uvicorn, a free port) per upstream
API routes every model name to that API of the scripted upstream, so each
client keeps asking for a model name of its own family (Claude Code's
thinking, Codex's reasoning effort and Gemini CLI's thinking settings all
depend on it) while the gateway sends it to any API.

A cell is one client (in one mode: a provider, streaming or not) against one
upstream API. It passes when the client exits 0, the tool really ran (its
output is in the turn-2 request), the final text is in the client's output,
and the turn-2 request carries the reasoning state the upstream issued in
turn 1 byte-identical — where the client returns reasoning at all.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .upstream import FINAL_TEXT, TOOL_OUTPUT, Exchange, ScriptedUpstream, base64_form

HERE = Path(__file__).resolve().parent
NODE_DIR = HERE / "node"
NODE_BIN = NODE_DIR / "node_modules" / ".bin"
PROMPT = "Run the shell tool to print the e2e marker, then tell me what it printed."
CLIENT_KEY = "e2e-client-key-4f1d"
UPSTREAM_KEY = "e2e-upstream-key-9c2a"
#: A proxy address nothing listens on (the discard port).
DEAD_PROXY = "http://127.0.0.1:9"
#: Seconds one client run may take before the cell fails.
CELL_TIMEOUT = 90

#: The upstream APIs, their short names in cell ids and the model each serves.
UPSTREAMS = {
    "anthropic-messages": ("anthropic", "claude-sonnet-4-6"),
    "openai-responses": ("responses", "gpt-5"),
    "openai-completions": ("chat", "deepseek-reasoner"),
    "google-generative-ai": ("gemini", "gemini-3-pro-preview"),
}
#: The APIs whose upstream issues opaque reasoning state (Chat Completions has none).
STATEFUL = {"anthropic-messages", "openai-responses", "google-generative-ai"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _toml_config(upstream_url: str, api: str) -> str:
    model = UPSTREAMS[api][1]
    return (
        '[gateway]\nkeys_env = "E2E_GATEWAY_KEYS"\nlog_content = true\n\n'
        f'[upstreams.scripted]\napi = "{api}"\nbase_url = "{upstream_url}"\n'
        f'api_key_env = "E2E_UPSTREAM_KEY"\nmodel = "{model}"\ntimeout = 60\n\n'
        '[[routes]]\nmodels = ["*"]\nupstreams = ["scripted"]\n'
    )


@dataclass
class Gateway:
    """A running ``streamnorm serve`` process."""

    api: str
    url: str
    proc: subprocess.Popen[bytes]
    log: Path

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


def start_gateway(upstream: ScriptedUpstream, api: str, workdir: Path) -> Gateway:
    config = workdir / f"gateway-{UPSTREAMS[api][0]}.toml"
    config.write_text(_toml_config(upstream.base_url, api))
    port = free_port()
    log = workdir / f"gateway-{UPSTREAMS[api][0]}.log"
    env = dict(os.environ, E2E_GATEWAY_KEYS=CLIENT_KEY, E2E_UPSTREAM_KEY=UPSTREAM_KEY)
    command = [sys.executable, "-m", "streamnorm", "serve", "--config", str(config)]
    command += ["--port", str(port), "--log-level", "warning"]
    with log.open("wb") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
    gateway = Gateway(api, f"http://127.0.0.1:{port}", proc, log)
    _wait_healthy(gateway)
    return gateway


def _wait_healthy(gateway: Gateway) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if gateway.proc.poll() is not None:
            raise RuntimeError("the gateway exited: " + gateway.log.read_text())
        with (
            contextlib.suppress(OSError),
            urllib.request.urlopen(gateway.url + "/healthz", timeout=1) as answer,
        ):
            if answer.status == 200:
                return
        time.sleep(0.1)
    raise RuntimeError("the gateway did not become healthy: " + gateway.log.read_text())


@dataclass
class Stack:
    """The scripted upstream and one gateway per upstream API."""

    upstream: ScriptedUpstream
    gateways: dict[str, Gateway]
    workdir: Path

    def gateway_log(self, api: str, since: int = 0) -> str:
        return self.gateways[api].log.read_text(errors="replace")[since:]


@contextlib.contextmanager
def running_stack() -> Iterator[Stack]:
    upstream = ScriptedUpstream().start()
    workdir = Path(tempfile.mkdtemp(prefix="streamnorm-e2e-"))
    gateways: dict[str, Gateway] = {}
    try:
        for api in UPSTREAMS:
            gateways[api] = start_gateway(upstream, api, workdir)
        yield Stack(upstream, gateways, workdir)
    finally:
        for gateway in gateways.values():
            gateway.stop()
        upstream.stop()
        shutil.rmtree(workdir, ignore_errors=True)


@dataclass
class Run:
    """What one client run did."""

    returncode: int
    output: str
    stderr: str
    seconds: float


@dataclass
class Verdict:
    """Everything a cell checks, and why it failed."""

    cell: str
    seconds: float
    problems: list[str] = field(default_factory=list)
    state: str = "n/a"

    def report(self) -> str:
        return f"{self.cell} ({self.seconds:.1f} s): " + "; ".join(self.problems)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _turns(exchanges: list[Exchange]) -> tuple[Exchange | None, Exchange | None]:
    call = next((e for e in exchanges if e.kind == "call"), None)
    final = next(
        (e for e in exchanges if e.kind == "final" and TOOL_OUTPUT in json.dumps(e.body)),
        None,
    )
    return call, final


def judge(cell: str, run: Run, exchanges: list[Exchange], api: str, returns_state: bool) -> Verdict:
    """The verdict of a cell from the client's run and the upstream's records."""
    verdict = Verdict(cell, run.seconds)
    problems = verdict.problems
    if run.returncode != 0:
        problems.append(f"exit {run.returncode}")
    refused = [f"{e.path}: {e.refusal}" for e in exchanges if e.kind == "refused"]
    problems += [f"upstream refused {r}" for r in refused]
    call, final = _turns(exchanges)
    if call is None:
        problems.append("the upstream never got a turn-1 request with the tool")
    elif final is None:
        problems.append(f"no turn-2 request carried the tool's output {TOOL_OUTPUT!r}")
    if FINAL_TEXT.split(":")[0] not in run.output:
        problems.append("the final text is not in the client's output")
    if call is not None and final is not None and api in STATEFUL:
        verdict.state = _state(call, final, returns_state, problems)
    if problems:
        problems.append(
            f"client output tail: {run.output[-600:]!r} stderr tail: {run.stderr[-900:]!r}"
        )
    return verdict


def _state(call: Exchange, final: Exchange, returns_state: bool, problems: list[str]) -> str:
    if not call.issued:
        problems.append(
            "the upstream issued no reasoning state in turn 1 (the request asked for none)"
        )
        return "none issued"
    sent = {base64_form(value) for value in _strings(final.body)}
    kept = [value for value in call.issued if value in sent]
    if len(kept) == len(call.issued):
        return "kept"
    if returns_state:
        problems.append(
            f"turn 2 lost {len(call.issued) - len(kept)} of {len(call.issued)} "
            "reasoning states of turn 1"
        )
    return "not returned"


def run_process(
    command: list[str], env: dict[str, str], cwd: Path, timeout: float = CELL_TIMEOUT
) -> Run:
    """Run one client program, stdin closed, and time it."""
    started = time.monotonic()
    try:
        done = subprocess.run(
            command,
            env=env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as timeout_error:
        out = (timeout_error.stdout or b"").decode(errors="replace")
        err = (timeout_error.stderr or b"").decode(errors="replace")
        return Run(-9, out, err + f"\n(timed out after {timeout} s)", time.monotonic() - started)
    return Run(
        done.returncode,
        done.stdout.decode(errors="replace"),
        done.stderr.decode(errors="replace"),
        time.monotonic() - started,
    )


def mark_cell(upstream: ScriptedUpstream, cell: str) -> None:
    upstream.cell = cell


def base_env(home: Path) -> dict[str, str]:
    """A clean environment: a temp HOME, no keys of the machine, no way out."""
    keep = ("PATH", "LANG", "LC_ALL", "TERM", "SYSTEMROOT", "PYTHONPYCACHEPREFIX")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        TMPDIR=str(home / "tmp"),
        # Anything a client tries to reach beyond 127.0.0.1 meets a closed port.
        HTTP_PROXY=DEAD_PROXY,
        HTTPS_PROXY=DEAD_PROXY,
        ALL_PROXY=DEAD_PROXY,
        NO_PROXY="127.0.0.1,localhost",
        NO_COLOR="1",
        CI="1",
    )
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    env["PATH"] = f"{NODE_BIN}:{Path(sys.executable).parent}:{env.get('PATH', '')}"
    return env
