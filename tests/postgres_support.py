"""A throwaway PostgreSQL server on 127.0.0.1 for the store tests.

The server comes from the machine's PostgreSQL installation (Debian's
``postgresql`` package: ``/usr/lib/postgresql/<version>/bin``, which
``.ci/run`` installs). It runs from a fresh data directory in a temporary
folder, with trust authentication on 127.0.0.1 only, on a free port; as
root it runs as the ``postgres`` user (PostgreSQL refuses to run as root).
Tests that need it skip, saying why, only where no installation is found
or ``psycopg`` is missing.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from .gateway_support import free_port


def _bin_dir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _as_server_user(command: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return command
    return ["runuser", "-u", "postgres", "--", *command]


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """A running server; yields its URL. Skips if PostgreSQL is not installed."""
    pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")
    bindir = _bin_dir()
    if bindir is None:
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql)")
    root = Path(tempfile.mkdtemp(prefix="streamnorm-pg-"))
    data = root / "data"
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
    port = free_port()
    run = {"check": True, "capture_output": True, "timeout": 120}
    subprocess.run(
        _as_server_user([str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres"]),
        **run,  # type: ignore[call-overload]
    )
    options = f"-h 127.0.0.1 -p {port} -k {root} -c fsync=off"
    ctl = [str(bindir / "pg_ctl"), "-D", str(data), "-l", str(root / "log"), "-w"]
    subprocess.run(_as_server_user([*ctl, "-o", options, "start"]), **run)  # type: ignore[call-overload]
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            _as_server_user([*ctl, "-m", "immediate", "stop"]),
            check=False,
            capture_output=True,
            timeout=60,
        )
        shutil.rmtree(root, ignore_errors=True)
