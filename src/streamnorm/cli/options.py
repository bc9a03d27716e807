"""The argument parser class and the option groups several subcommands share.

A subcommand module adds its own parser with :func:`register`'s signature::

    def register(commands: Subcommands, shared: SharedOptions) -> None

and lists itself in :data:`streamnorm.cli.main.COMMANDS`.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, NoReturn, TypeAlias

from .. import samples
from ..apis import ALIASES, APIS
from ..normalizer import DEFAULT_MAX_STREAM_BYTES
from .common import CLIError, api_arg, byte_limit, nonnegative
from .output import stdout, write_text

if TYPE_CHECKING:
    from _typeshed import SupportsWrite


class ArgumentParser(argparse.ArgumentParser):
    """argparse that reports a usage error as one ``streamnorm: error:`` line."""

    def error(self, message: str) -> NoReturn:
        raise CLIError(f"{message} (see '{self.prog} --help')")

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        # --help and --version: a failed write to stdout is an OutputError, as
        # for every command's output (argparse itself would ignore it).
        if message and file is not None and file is sys.stdout:
            write_text(stdout(), message)
        else:
            super()._print_message(message, file)


if TYPE_CHECKING:
    #: What ``ArgumentParser.add_subparsers`` returns.
    Subcommands: TypeAlias = argparse._SubParsersAction[ArgumentParser]
else:
    Subcommands = argparse._SubParsersAction


API_HELP = (
    "wire api: auto (detect from the first event), "
    + ", ".join(APIS)
    + ", or an alias ("
    + ", ".join(ALIASES)
    + ", openai)"
)

INPUT_HELP = (
    "the SSE stream: a file, '-' for stdin (the default when stdin is a pipe), "
    "or 'sample:NAME' for a stream shipped with the package "
    f"({', '.join(samples.names())})"
)

COLOR_CHOICES = ("auto", "always", "never")


@dataclass(frozen=True)
class SharedOptions:
    """Parent parsers a subcommand may inherit (``parents=[...]``).

    ``stream``: ``--api``, ``--model``, ``--provider``, ``--choice`` (what
    :func:`streamnorm.cli.common.event_stream` reads); ``tool_parser``:
    ``--tool-parser``.
    """

    stream: ArgumentParser
    tool_parser: ArgumentParser

    @staticmethod
    def build() -> SharedOptions:
        """The shared option groups, each in a parser of its own."""
        stream = ArgumentParser(add_help=False)
        group = stream.add_argument_group("stream options")
        group.add_argument("--api", type=api_arg, default="auto", metavar="NAME", help=API_HELP)
        group.add_argument(
            "--model", metavar="M", help="the model you asked for (recorded on the message)"
        )
        group.add_argument(
            "--provider", metavar="P", help="the host that served the stream, e.g. deepseek"
        )
        group.add_argument(
            "--choice",
            type=nonnegative,
            default=0,
            metavar="N",
            help="choice / candidate of an n>1 stream (default 0)",
        )
        group.add_argument(
            "--max-stream-bytes",
            type=byte_limit,
            default=DEFAULT_MAX_STREAM_BYTES,
            metavar="BYTES",
            help=f"end the stream with a limit error past this many bytes (default "
            f"{DEFAULT_MAX_STREAM_BYTES}; 'none' lifts the limit)",
        )
        tool_parser = ArgumentParser(add_help=False)
        tool_parser.add_argument(
            "--tool-parser",
            metavar="NAME",
            help="lift tool calls and reasoning written inline in the text "
            "(hermes, qwen3_coder, mistral, llama3_json, deepseek_v3, kimi_k2, harmony …)",
        )
        return SharedOptions(stream=stream, tool_parser=tool_parser)
