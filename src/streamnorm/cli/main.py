"""The top-level parser and :func:`main`: one subcommand per module in :data:`COMMANDS`."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence

from . import demo, inspect, keys, normalize, render, serve, translate, usage
from .common import (
    EXIT_BROKEN_PIPE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    PROG,
    CLIError,
    error_line,
    write_stderr,
)
from .options import ArgumentParser, SharedOptions, Subcommands
from .output import OutputError, stdout, unicode_ok

#: Each subcommand's ``register(commands, shared)``, in the order ``--help`` lists them.
COMMANDS: tuple[Callable[[Subcommands, SharedOptions], None], ...] = (
    normalize.register,
    translate.register,
    inspect.register,
    render.register,
    demo.register,
    serve.register,
    keys.register,
    usage.register,
)

DESCRIPTION = (
    "Normalize the streaming responses of LLM APIs (Anthropic Messages, OpenAI "
    "Responses, Chat Completions and compatibles, Google Gemini) into one canonical "
    "event sequence."
)

EPILOG = (
    "exit status: 0 success; 1 the stream ended in an Error event; 2 usage error "
    "(bad arguments, unknown api or parser, unreadable input); 3 inspect found "
    "events that depend on the chunking; 74 the output cannot be written. "
    "Try 'streamnorm demo'."
)


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("streamnorm")
    except Exception:
        return "unknown"


def build_parser() -> ArgumentParser:
    """The ``streamnorm`` parser, every subcommand in :data:`COMMANDS` added."""
    parser = ArgumentParser(prog=PROG, description=DESCRIPTION, epilog=EPILOG)
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=ArgumentParser)
    shared = SharedOptions.build()
    for register in COMMANDS:
        register(commands, shared)
    return parser


def _escape_unshowable_characters() -> None:
    """A terminal or pipe that cannot show some character gets an escape for
    it rather than an exception (JSON output goes out as UTF-8 bytes)."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and not unicode_ok(stream):
            reconfigure(errors="backslashreplace")


def _silence_stdout() -> None:
    """The reader went away (``| head``): silence the flush at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def _run(parser: ArgumentParser, argv: Sequence[str] | None) -> int:
    stdout()  # every command writes there: no stdout is an OutputError at once
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    status: int = handler(args)
    return status


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    _escape_unshowable_characters()
    try:
        return _run(parser, argv)
    except OutputError as exc:
        error_line(str(exc))
        _silence_stdout()
        return exc.status
    except CLIError as exc:
        error_line(str(exc))
        return exc.status
    except KeyboardInterrupt:
        write_stderr("\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except Exception as exc:
        error_line(f"internal error: {type(exc).__name__}: {exc}")
        return EXIT_INTERNAL
