"""The ``streamnorm`` command: normalize, inspect, render and demo.

Every command reads raw SSE bytes (a file, ``-`` for stdin, or
``sample:NAME`` for a stream shipped in :mod:`streamnorm.samples`) in
realistic chunks and runs them through :func:`streamnorm.normalizer.normalize`.
One module per subcommand; :mod:`.main` lists them, :mod:`.options`,
:mod:`.source`, :mod:`.output` and :mod:`.common` hold what they share.

Exit status (documented in ``docs/cli.md``):

* ``0`` — success: the stream ended in ``Done`` (``normalize``, ``render``);
  every file was read and every chunking agreed (``inspect``); the four
  samples line up (``demo``);
* ``1`` — the stream ended in an ``Error`` event (``normalize``, ``render``),
  or the samples do not line up (``demo``);
* ``2`` — usage error: bad arguments, unknown api or tool parser, an input
  that cannot be opened or read;
* ``3`` — ``inspect`` found a stream whose events depend on the chunking;
* ``70`` — internal error (a bug: please report it);
* ``74`` — the output cannot be written (stdout closed, disk full);
* ``130`` — interrupted; ``141`` — the reader of stdout went away.

Errors are one line on stderr, ``streamnorm: error: …``, never a traceback.
"""

from __future__ import annotations

from .common import (
    EXIT_CHUNKING,
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_OUTPUT,
    EXIT_STREAM_ERROR,
    EXIT_USAGE,
)
from .main import build_parser, main

__all__ = [
    "EXIT_CHUNKING",
    "EXIT_INTERNAL",
    "EXIT_OK",
    "EXIT_OUTPUT",
    "EXIT_STREAM_ERROR",
    "EXIT_USAGE",
    "build_parser",
    "main",
]
