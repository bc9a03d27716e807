"""The ``streamnorm`` command, run as a user runs it: the installed console
script in a subprocess (``python -m streamnorm`` only when no script is found).

Exit status: 0 the stream ended in Done, 1 it ended in an Error event (or the
demo does not line up), 2 usage errors, 3 chunk-dependent events in inspect.
"""

from __future__ import annotations

import json
import os
import pty
import select
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from streamnorm import Done, Error
from streamnorm import samples as sample_streams
from streamnorm.apis import APIS
from streamnorm.normalizer import normalize

from .support import FIXTURES, needs_fixtures


def _command() -> list[str]:
    beside = Path(sys.executable).with_name("streamnorm")
    if beside.is_file() and os.access(beside, os.X_OK):
        return [str(beside)]
    found = shutil.which("streamnorm")
    if found:
        return [found]
    return [sys.executable, "-m", "streamnorm"]


CMD = _command()

#: One recording per api with thinking or tool calls.
STREAMS = {
    "anthropic-messages": "anthropic-messages/thinking-then-tool-use.sse",
    "openai-responses": "openai-responses/reasoning-summary-text.sse",
    "openai-completions": "openai-completions/deepseek-tool-call.sse",
    "google-generative-ai": "google-generative-ai/function-call-partial-args.sse",
}


def cli(
    *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    full_env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS")}
    full_env.update(env or {})
    return subprocess.run(
        [*CMD, *args],
        input=stdin if stdin is not None else b"",
        capture_output=True,
        env=full_env,
        timeout=60,
        check=False,
    )


def one_error_line(proc: subprocess.CompletedProcess[bytes]) -> str:
    """stderr is exactly one ``streamnorm: error:`` line, never a traceback."""
    err = proc.stderr.decode()
    assert "Traceback" not in err, err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("streamnorm: error: "), err
    return lines[0]


def json_lines(proc: subprocess.CompletedProcess[bytes]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in proc.stdout.decode().splitlines()]


def in_process(data: bytes, **options: Any) -> list[dict[str, Any]]:
    # through JSON, as the command prints it
    return [json.loads(json.dumps(e.to_dict())) for e in normalize([data], **options)]


def fixture_cases() -> list[Any]:
    return [pytest.param(f, id=api, marks=needs_fixtures) for api, f in STREAMS.items()]


# --------------------------------------------------------------------------
# help and usage


@pytest.mark.parametrize("command", [None, "normalize", "inspect", "render", "demo"])
def test_help(command: str | None) -> None:
    proc = cli(*([command] if command else []), "--help")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode()
    assert out.startswith(f"usage: streamnorm{' ' + command if command else ''}")
    assert not proc.stderr


def test_top_level_help_lists_commands_and_exit_status() -> None:
    out = cli("--help").stdout.decode()
    for command in ("normalize", "inspect", "render", "demo"):
        assert command in out
    assert "exit status" in out


def test_version() -> None:
    proc = cli("--version")
    assert proc.returncode == 0
    assert proc.stdout.decode().startswith("streamnorm ")


def test_no_command_is_a_usage_error() -> None:
    proc = cli()
    assert proc.returncode == 2
    assert b"usage: streamnorm" in proc.stderr


def test_python_dash_m() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "streamnorm", "normalize", "--final", "sample:gemini"],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["api"] == "google-generative-ai"


# --------------------------------------------------------------------------
# normalize


@pytest.mark.parametrize("path", fixture_cases())
def test_normalize_final_per_api(path: str) -> None:
    data = (FIXTURES / path).read_bytes()
    proc = cli("normalize", "--final", str(FIXTURES / path))
    assert proc.returncode == 0, proc.stderr
    assert not proc.stderr
    (message,) = json_lines(proc)
    assert message == in_process(data)[-1]["message"]
    assert message["api"] == path.split("/")[0]


@pytest.mark.parametrize("api", APIS)
def test_normalize_events_of_each_sample(api: str) -> None:
    proc = cli("normalize", f"sample:{api}")
    assert proc.returncode == 0, proc.stderr
    events = json_lines(proc)
    assert events == in_process(sample_streams.read(api))
    assert events[0]["type"] == "start" and events[-1]["type"] == "done"
    # compact JSON, non-ASCII kept: one event per line, no spaces after separators
    assert b'", "' not in proc.stdout


@needs_fixtures
def test_normalize_reads_in_chunks_identically() -> None:
    path = FIXTURES / STREAMS["openai-responses"]
    whole = cli("normalize", str(path))
    tiny = cli("normalize", "--chunk-size", "7", str(path))
    assert whole.returncode == tiny.returncode == 0
    assert whole.stdout == tiny.stdout


def test_normalize_stdin_dash_and_implicit() -> None:
    data = sample_streams.read("openai-completions")
    expected = in_process(data)
    assert json_lines(cli("normalize", "-", stdin=data)) == expected
    assert json_lines(cli("normalize", stdin=data)) == expected


def test_normalize_options_reach_the_normalizer() -> None:
    data = sample_streams.read("anthropic")
    proc = cli(
        "normalize", "--final", "--api", "anthropic", "--model", "my-alias",
        "--provider", "proxy", "-", stdin=data,
    )  # fmt: skip
    message = json.loads(proc.stdout)
    assert (message["model"], message["provider"]) == ("my-alias", "proxy")
    assert message["response_model"] == "claude-sonnet-4-6"


def test_normalize_pretty_final() -> None:
    proc = cli("normalize", "--final", "--pretty", "sample:responses")
    assert proc.returncode == 0
    assert proc.stdout.startswith(b"{\n  ")
    assert json.loads(proc.stdout)["stop_reason"] == "tool_use"


def test_normalize_streams_events_before_the_input_ends() -> None:
    """The first events are printed while stdin is still open."""
    data = sample_streams.read("anthropic")
    head, tail = data[:600], data[600:]
    proc = subprocess.Popen(
        [*CMD, "normalize", "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(head)
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], 20)
        assert ready, "no event printed while the input was still open"
        first = json.loads(proc.stdout.readline())
        assert first["type"] == "start"
        proc.stdin.write(tail)
        proc.stdin.close()
        rest = proc.stdout.read()
        assert proc.wait(30) == 0
    finally:
        proc.kill()
        proc.wait()
    assert json.loads(rest.splitlines()[-1])["type"] == "done"


def test_truncated_stream_exits_1_with_the_error_event(tmp_path: Path) -> None:
    data = sample_streams.read("anthropic")
    cut = tmp_path / "cut.sse"
    cut.write_bytes(data[: len(data) // 2])
    proc = cli("normalize", str(cut))
    assert proc.returncode == 1
    last = json_lines(proc)[-1]
    assert (last["type"], last["kind"]) == ("error", "truncated")
    line = one_error_line(proc)
    assert "truncated" in line and str(cut) in line


def test_truncated_stream_final_prints_the_partial_message(tmp_path: Path) -> None:
    data = sample_streams.read("openai-completions")
    proc = cli("normalize", "--final", "-", stdin=data[: len(data) * 2 // 3])
    assert proc.returncode == 1
    message = json.loads(proc.stdout)
    assert message["stop_reason"] == "error" and message["error"]
    assert message["content"]
    one_error_line(proc)


def test_upstream_error_exits_1() -> None:
    proc = cli(
        "normalize", "-", stdin=b'{"error": {"type": "rate_limit_error", "message": "Slow down"}}'
    )
    assert proc.returncode == 1
    start, event = json_lines(proc)  # Start is first, also of an error body
    assert start["type"] == "start"
    assert (event["kind"], event["code"], event["reason"]) == (
        "upstream", "rate_limit_error", "Slow down",
    )  # fmt: skip
    assert "Slow down" in one_error_line(proc)


def test_garbage_input() -> None:
    html = b"<!DOCTYPE html>\n<html><body><h1>502 Bad Gateway</h1>\n\x00\xff\xfe</body></html>\n"
    proc = cli("normalize", "-", stdin=html)
    assert proc.returncode == 1
    start, event = json_lines(proc)
    assert start == {"type": "start", "api": "unknown", "model": None, "response_id": None}
    assert (event["type"], event["kind"]) == ("error", "protocol")
    assert "protocol" in one_error_line(proc)


def test_empty_input() -> None:
    proc = cli("normalize", "-", stdin=b"")
    assert proc.returncode == 1
    assert json_lines(proc)[-1]["kind"] == "truncated"
    one_error_line(proc)


def test_missing_file() -> None:
    proc = cli("normalize", "no/such/file.sse")
    assert proc.returncode == 2
    assert one_error_line(proc) == "streamnorm: error: cannot open 'no/such/file.sse': no such file"
    assert not proc.stdout


def test_directory_is_unreadable(tmp_path: Path) -> None:
    proc = cli("normalize", str(tmp_path))
    assert proc.returncode == 2
    assert "is a directory" in one_error_line(proc)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads any file")
def test_unreadable_file(tmp_path: Path) -> None:
    path = tmp_path / "secret.sse"
    path.write_bytes(b"data: {}\n\n")
    path.chmod(0)
    proc = cli("normalize", str(path))
    assert proc.returncode == 2
    assert "permission denied" in one_error_line(proc).lower()


def test_unknown_api() -> None:
    proc = cli("normalize", "--api", "watsonx", "sample:anthropic")
    assert proc.returncode == 2
    line = one_error_line(proc)
    assert "unknown api 'watsonx'" in line and "anthropic-messages" in line
    assert not proc.stdout


def test_unknown_sample() -> None:
    proc = cli("normalize", "sample:bedrock")
    assert proc.returncode == 2
    assert "unknown sample 'bedrock'" in one_error_line(proc)


@pytest.mark.parametrize(
    "args",
    [
        ["normalize", "--choice", "-1", "sample:chat"],
        ["normalize", "--chunk-size", "0", "sample:chat"],
        ["normalize", "--no-such-option", "sample:chat"],
        ["inspect"],
        ["render", "--color", "purple", "sample:chat"],
        ["frobnicate"],
    ],
)
def test_bad_arguments(args: list[str]) -> None:
    proc = cli(*args)
    assert proc.returncode == 2
    assert "--help" in one_error_line(proc)


def test_unknown_tool_parser() -> None:
    proc = cli("normalize", "--tool-parser", "no_such_dialect", "sample:chat")
    assert proc.returncode == 2
    line = one_error_line(proc)
    assert line.startswith("streamnorm: error: --tool-parser:")
    assert "no_such_dialect" in line
    assert not proc.stdout


def _chat_stream(pieces: list[str]) -> bytes:
    out = []
    for piece in pieces:
        chunk = {
            "id": "chatcmpl-local-1",
            "object": "chat.completion.chunk",
            "model": "qwen3-8b",
            "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
        }
        out.append(f"data: {json.dumps(chunk)}\n\n")
    end = {
        "id": "chatcmpl-local-1",
        "object": "chat.completion.chunk",
        "model": "qwen3-8b",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
    }
    out.append(f"data: {json.dumps(end)}\n\ndata: [DONE]\n\n")
    return "".join(out).encode()


def test_tool_parser_lifts_inline_calls() -> None:
    data = _chat_stream(
        [
            "Checking.\n<tool_",
            'call>\n{"name": "get_weather", "argu',
            'ments": {"city": "Paris"}}\n</tool_call>',
        ]
    )
    plain = json.loads(cli("normalize", "--final", "-", stdin=data).stdout)
    assert [b["type"] for b in plain["content"]] == ["text"]
    proc = cli("normalize", "--final", "--tool-parser", "hermes", "-", stdin=data)
    assert proc.returncode == 0, proc.stderr
    message = json.loads(proc.stdout)
    calls = [b for b in message["content"] if b["type"] == "toolcall"]
    assert [(c["name"], c["arguments"]) for c in calls] == [("get_weather", {"city": "Paris"})]
    assert message["stop_reason"] == "tool_use"


def test_broken_pipe_is_quiet() -> None:
    data = b"".join(sample_streams.read("responses") for _ in range(1)) * 1
    proc = subprocess.Popen(
        [*CMD, "normalize", "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        proc.stdin.write(data[:4000])
        proc.stdin.flush()
        proc.stdout.readline()
        proc.stdout.close()  # the reader goes away
        proc.stdin.write(data[4000:])
        proc.stdin.close()
        status = proc.wait(30)
        err = proc.stderr.read().decode()
    finally:
        proc.kill()
        proc.wait()
    assert err == ""
    assert status in (0, 141)


def _pipe_capacity_bound() -> int:
    """The most a pipe can ever buffer on this system (Linux: pipe-max-size)."""
    try:
        return int(Path("/proc/sys/fs/pipe-max-size").read_text())
    except (OSError, ValueError):
        return 1 << 20


def _many_text_deltas(count: int) -> bytes:
    """An Anthropic stream of ``count`` one-word text deltas."""
    head = (
        b'event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message",'
        b'"role":"assistant","model":"c","content":[],"usage":{"input_tokens":1,"output_tokens":0}}}\n\n'
        b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
        b'"content_block":{"type":"text","text":""}}\n\n'
    )
    delta = (
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"text_delta","text":"word "}}\n\n'
    )
    tail = (
        b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
        b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},'
        b'"usage":{"output_tokens":1}}\n\n'
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    )
    return head + delta * count + tail


def test_broken_pipe_on_a_large_file(tmp_path: Path) -> None:
    # The events of this stream are several times more than any pipe can
    # hold, so the command cannot finish before it meets the closed pipe.
    count = 4 * _pipe_capacity_bound() // 40
    path = tmp_path / "long.sse"
    path.write_bytes(_many_text_deltas(count))
    line = json.dumps(in_process(_many_text_deltas(1))[1], separators=(",", ":"))
    assert count * len(line) > 2 * _pipe_capacity_bound()
    proc = subprocess.Popen([*CMD, "normalize", str(path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()
    assert proc.wait(30) == 141
    assert proc.stderr.read() == b""


OUTPUT_COMMANDS = [
    ["normalize", "sample:anthropic"],
    ["normalize", "--final", "sample:anthropic"],
    ["render", "sample:anthropic"],
    ["inspect", "--quick", "sample:anthropic"],
    ["demo"],
    ["--help"],
    ["--version"],
]


@pytest.mark.parametrize("args", OUTPUT_COMMANDS, ids=lambda a: "-".join(a[:2]))
def test_closed_stdout_is_an_output_error(args: list[str]) -> None:
    proc = subprocess.run(
        ["sh", "-c", 'exec "$@" >&-', "sh", *CMD, *args],
        capture_output=False,
        stderr=subprocess.PIPE,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 74, proc.stderr
    assert "stdout is closed" in one_error_line(proc)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
@pytest.mark.parametrize("args", OUTPUT_COMMANDS, ids=lambda a: "-".join(a[:2]))
def test_full_output_device_is_an_output_error(args: list[str]) -> None:
    with open("/dev/full", "wb") as full:
        proc = subprocess.run(
            [*CMD, *args], stdout=full, stderr=subprocess.PIPE, timeout=60, check=False
        )
    assert proc.returncode == 74, proc.stderr
    assert "cannot write the output" in one_error_line(proc)


@pytest.mark.parametrize(
    "args",
    [
        ["normalize", "--chunk-size", str(10**12), "sample:chat"],
        ["render", "--delay", str(10**12), "sample:chat"],
        ["demo", "--width", str(10**9)],
        ["inspect", "--chunkings", str(10**9), "sample:chat"],
        ["inspect", "--max-bytes", str(10**15), "sample:chat"],
    ],
    ids=lambda a: a[1],
)
def test_absurd_option_values_are_rejected_at_parse_time(args: list[str]) -> None:
    proc = cli(*args)
    assert proc.returncode == 2
    line = one_error_line(proc)
    assert f"argument {args[1]}" in line and "at most" in line
    assert not proc.stdout


def test_demo_width_from_an_absurd_terminal_is_bounded() -> None:
    proc = cli("demo", env={"COLUMNS": str(10**9)})
    assert proc.returncode == 0, proc.stderr
    assert max(len(line) for line in proc.stdout.decode().splitlines()) <= 1000


def test_inspect_of_an_endless_input_is_bounded() -> None:
    proc = cli("inspect", "--max-bytes", "1000000", "/dev/zero")
    assert proc.returncode == 2
    line = one_error_line(proc)
    assert "/dev/zero" in line and "1000000 bytes" in line and "--max-bytes" in line
    # the default limit holds too
    proc = cli("inspect", "--quick", "/dev/zero")
    assert proc.returncode == 2
    assert "--max-bytes" in one_error_line(proc)


# --------------------------------------------------------------------------
# inspect


def test_inspect_samples_table() -> None:
    specs = [f"sample:{api}" for api in APIS]
    proc = cli("inspect", *specs)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode().splitlines()
    assert out[0].split()[:3] == ["FILE", "API", "MODEL"]
    assert "CHUNKING" in out[0]
    rows = out[2:]
    assert len(rows) == 4
    for api, row in zip(APIS, rows, strict=True):
        assert api in row and "get_weather" in row and "tool_use" in row
        assert "thinking:1 text:1 toolcall:1" in row
        assert "in 100 out 64 (r 28) cache 20/0" in row


@pytest.mark.parametrize("path", fixture_cases())
def test_inspect_json_per_api(path: str) -> None:
    proc = cli("inspect", "--json", str(FIXTURES / path))
    assert proc.returncode == 0, proc.stderr
    (summary,) = json_lines(proc)
    assert summary["api"] == path.split("/")[0]
    assert summary["chunk_invariant"] is True
    assert set(summary["chunkings"]) >= {"1-byte"}
    assert all(v == "same" for v in summary["chunkings"].values())
    assert summary["outcome"] == "done"
    final = in_process((FIXTURES / path).read_bytes())[-1]["message"]
    assert summary["usage"] == final["usage"]
    assert summary["stop_reason"] == final["stop_reason"]


def test_inspect_reports_errors_and_diagnostics(tmp_path: Path) -> None:
    data = sample_streams.read("openai-completions")
    cut = tmp_path / "cut.sse"
    cut.write_bytes(data[: len(data) // 2])
    proc = cli("inspect", "--json", "--quick", "--chunkings", "1", str(cut))
    assert proc.returncode == 0  # inspect reports; the stream's own failure is data
    (summary,) = json_lines(proc)
    assert summary["outcome"] == "error" and summary["error"]["kind"] == "truncated"
    assert list(summary["chunkings"]) == ["random-16#0"]


def test_inspect_missing_file_among_others() -> None:
    proc = cli("inspect", "sample:gemini", "missing.sse", "sample:anthropic")
    assert proc.returncode == 2
    assert "missing.sse" in one_error_line(proc)
    rows = proc.stdout.decode().splitlines()[2:]
    assert [r.split()[0] for r in rows] == ["sample:gemini", "sample:anthropic"]


# --------------------------------------------------------------------------
# render

ANSI = b"\x1b["


def test_render_sample_plain_when_not_a_terminal() -> None:
    proc = cli("render", "sample:anthropic")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode()
    assert ANSI not in proc.stdout
    assert "thinking: The user wants the current weather in Paris." in out
    assert "Let me check the current weather in Paris for you." in out
    assert 'get_weather toolu_01SNSampleGetWeather {"city":"Paris","unit":"celsius"}' in out
    assert "stop: tool_use (tool_use)" in out
    assert "usage: input 100 · output 64 (reasoning 28) · cache read 20 · total 184" in out


def test_render_color_always_and_no_color() -> None:
    colored = cli("render", "--color", "always", "sample:gemini")
    assert b"\x1b[2;3mThe user wants" in colored.stdout  # thinking dimmed
    assert cli("render", "--color", "never", "sample:gemini").stdout.count(ANSI) == 0


def _render_on_terminal(env: dict[str, str]) -> bytes:
    master, slave = pty.openpty()
    full_env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    full_env.update(env)
    try:
        proc = subprocess.run(
            [*CMD, "render", "sample:chat"],
            stdin=subprocess.DEVNULL,
            stdout=slave,
            stderr=subprocess.PIPE,
            env=full_env,
            timeout=60,
            check=False,
        )
        os.close(slave)
        out = b""
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                break
            if not data:
                break
            out += data
    finally:
        os.close(master)
    assert proc.returncode == 0, proc.stderr
    return out


def test_render_colors_a_terminal_unless_no_color() -> None:
    assert ANSI in _render_on_terminal({"TERM": "xterm"})
    assert ANSI not in _render_on_terminal({"TERM": "xterm", "NO_COLOR": "1"})


def test_render_and_demo_on_an_ascii_only_output() -> None:
    data = _chat_stream(["Café ☕ ready"])
    proc = cli("render", "-", stdin=data, env={"PYTHONIOENCODING": "ascii"})
    assert proc.returncode == 0, proc.stderr
    assert b"Caf\\xe9 \\u2615 ready" in proc.stdout
    assert b"usage: input 0 | output 0 | total 0" in proc.stdout
    demo = cli("demo", env={"PYTHONIOENCODING": "ascii"})
    assert demo.returncode == 0 and b"= blocks, thinking" in demo.stdout


def test_render_truncated_stream(tmp_path: Path) -> None:
    data = sample_streams.read("responses")
    proc = cli("render", "-", stdin=data[: len(data) - 1500])
    assert proc.returncode == 1
    out = proc.stdout.decode()
    assert "error (truncated)" in out
    assert "Let me check" in out
    assert "the stream ended in an error (truncated)" in one_error_line(proc)


@needs_fixtures
def test_render_streamed_arguments_and_incomplete_call() -> None:
    proc = cli("render", str(FIXTURES / "anthropic-messages/max-tokens-mid-tool-input.sse"))
    out = proc.stdout.decode()
    assert "[incomplete]" in out
    assert "stop: length" in out


# --------------------------------------------------------------------------
# demo


def test_demo_lines_up_the_four_apis() -> None:
    proc = cli("demo", "--width", "180")
    assert proc.returncode == 0, proc.stderr
    assert not proc.stderr
    out = proc.stdout.decode()
    lines = out.splitlines()
    header = next(line for line in lines if "anthropic-messages" in line)
    for api in APIS:
        assert api in header
    # side by side: the row carries the same value once per api
    text_row = next(line for line in lines if line.startswith("text "))
    assert text_row.count("Let me check the current weather") == 4
    call_row = next(line for line in lines if line.startswith("tool call "))
    assert call_row.count("get_weather") == 4
    args_row = next(line for line in lines if line.startswith("arguments "))
    assert args_row.count('{"city": "Paris", "unit": "celsius"}') == 4
    usage_row = next(line for line in lines if line.startswith("usage "))
    assert usage_row.count("input 100") == 4
    stop_row = next(line for line in lines if line.startswith("stop "))
    assert "✓" in stop_row and stop_row.count("tool_use") == 4
    raw_row = next(line for line in lines if line.startswith("raw stop"))
    for raw in ("tool_use", "completed", "tool_calls", "STOP"):
        assert raw in raw_row
    assert "identical across all 4 wire APIs" in out
    assert ANSI.decode() not in out


def test_demo_narrow_terminal_and_default_width() -> None:
    narrow = cli("demo", env={"COLUMNS": "80"})
    assert narrow.returncode == 0
    assert max(len(line) for line in narrow.stdout.decode().splitlines()) <= 80
    assert cli("demo").returncode == 0


def test_in_process_main_matches(capsys: pytest.CaptureFixture[str]) -> None:
    from streamnorm.cli import main

    assert main(["normalize", "--final", "sample:anthropic"]) == 0
    message = json.loads(capsys.readouterr().out)
    terminal = list(normalize([sample_streams.read("anthropic")]))[-1]
    assert isinstance(terminal, (Done, Error))
    assert message == json.loads(json.dumps(terminal.message.to_dict()))
    assert main(["normalize", "--api", "nope", "sample:anthropic"]) == 2
    assert "unknown api 'nope'" in capsys.readouterr().err


def test_max_stream_bytes_option_applies_and_lifts() -> None:
    proc = cli("normalize", "--final", "--max-stream-bytes", "100", "sample:anthropic")
    assert proc.returncode == 1
    assert "max_stream_bytes" in one_error_line(proc)
    assert json.loads(proc.stdout)["stop_reason"] == "error"
    assert cli("render", "--max-stream-bytes", "none", "sample:anthropic").returncode == 0
    proc = cli("inspect", "--json", "--quick", "--max-stream-bytes", "100", "sample:anthropic")
    assert json.loads(proc.stdout)["error"]["kind"] == "limit"


@needs_fixtures
def test_a_choice_the_stream_does_not_have_is_an_error_naming_its_choices() -> None:
    path = FIXTURES / "openai-completions" / "openai-multiple-choices-n3.sse"
    events = in_process(path.read_bytes(), api="openai-completions", choice=5)
    end = events[-1]
    assert end["type"] == "error" and end["kind"] == "protocol", end
    assert "choice 5" in end["reason"] and "0, 1, 2" in end["reason"]
    assert end["message"]["content"] == [] and end["message"]["stop_reason"] == "error"
    proc = cli("normalize", "--final", "--choice", "5", str(path))
    assert proc.returncode == 1
    assert "choice 5" in one_error_line(proc) and "0, 1, 2" in one_error_line(proc)
    for choice in (0, 1, 2):  # every choice it has is still read
        last = in_process(path.read_bytes(), api="openai-completions", choice=choice)[-1]
        assert last["type"] == "done" and last["message"]["content"], choice


def test_a_choice_absent_from_a_stream_without_done_marker_is_an_error_too() -> None:
    chunk = {"id": "c", "model": "m", "choices": [{"index": 0, "delta": {"content": "hi"}}]}
    stop = {
        "id": "c",
        "model": "m",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
    }
    body = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in (chunk, stop))
    assert in_process(body, api="openai-completions", choice=0)[-1]["type"] == "done"
    end = in_process(body, api="openai-completions", choice=1)[-1]
    assert end["type"] == "error" and end["kind"] == "protocol"
    assert "choice 1" in end["reason"] and "choices: 0" in end["reason"]
