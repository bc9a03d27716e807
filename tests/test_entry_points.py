"""The front door: api names are a type (a ``Literal`` of the known names, or any ``str``
checked at run time) that cannot drift from
what ``resolve_api`` accepts, the entry points take real keyword parameters
(a type checker catches ``modle=``), and every
argument is checked when the call is made, not at the first ``next()``."""

from __future__ import annotations

import dataclasses
import inspect
import textwrap
import typing
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
import requests

from streamnorm import StreamNormalizer, anormalize, normalize
from streamnorm.apis import APIS, READ_ONLY_APIS, KnownApiName, WireApi, resolve_api
from streamnorm.inline.base import ParserKeywords, ParserOptions
from streamnorm.integrations import aiohttp as sn_aiohttp
from streamnorm.integrations import httpx as sn_httpx
from streamnorm.integrations import requests as sn_requests
from streamnorm.integrations import sdk as sn_sdk
from streamnorm.options import NormalizerOptions
from streamnorm.providers import DECODERS

from .support import REPO, mypy_cache_held


def _names_resolve_api_lists() -> set[str]:
    with pytest.raises(ValueError, match="valid names: ") as info:
        resolve_api("\x00", allow_auto=True)
    return set(str(info.value).split("valid names: ", 1)[1].split(", "))


def test_api_name_literal_is_every_name_resolve_api_accepts() -> None:
    # A new api or alias in apis.py must be added to KnownApiName (and WireApi) too.
    accepted = set(typing.get_args(KnownApiName))
    assert accepted == _names_resolve_api_lists()
    canonical = {resolve_api(name, allow_auto=True) for name in accepted} - {"auto"}
    wire_apis = {*APIS, *READ_ONLY_APIS}
    assert canonical == set(typing.get_args(WireApi)) == wire_apis == set(DECODERS)


def _fake_aiohttp_response() -> Any:
    async def iter_any() -> Any:  # never iterated by these tests
        yield b""

    return SimpleNamespace(content=SimpleNamespace(iter_any=iter_any), url="http://127.0.0.1/")


#: Each entry point, called with the given keyword arguments (nothing iterated).
ENTRY_POINTS: dict[str, Callable[..., object]] = {
    "normalize": lambda **kw: normalize([b""], **kw),
    "anormalize": lambda **kw: anormalize([b""], **kw),
    "StreamNormalizer": lambda **kw: StreamNormalizer(**kw),
    "httpx.iter_events": lambda **kw: sn_httpx.iter_events(httpx.Response(200), **kw),
    "httpx.aiter_events": lambda **kw: sn_httpx.aiter_events(httpx.Response(200), **kw),
    "requests.iter_events": lambda **kw: sn_requests.iter_events(requests.Response(), **kw),
    "aiohttp.aiter_events": lambda **kw: sn_aiohttp.aiter_events(_fake_aiohttp_response(), **kw),
    "sdk.iter_events": lambda **kw: sn_sdk.iter_events(httpx.Response(200), **kw),
    "sdk.iter_chunk_events": lambda **kw: sn_sdk.iter_chunk_events([], **kw),
    "sdk.aiter_chunk_events": lambda **kw: sn_sdk.aiter_chunk_events(_no_chunks(), **kw),
}


async def _no_chunks() -> AsyncIterator[bytes]:
    for chunk in [b""][:0]:
        yield chunk


BAD_CALLS = [
    ({"api": "antrhopic"}, ValueError, "unknown api 'antrhopic'"),
    ({"modle": "claude"}, TypeError, "modle"),
    ({"model": 5}, TypeError, "model must be a str"),
    ({"provider": b"x"}, TypeError, "provider must be a str"),
    ({"choice": -1}, ValueError, "choice must be >= 0"),
    ({"choice": "0"}, TypeError, "choice must be an int"),
    ({"max_event_bytes": 0}, ValueError, "max_event_bytes must be >= 1"),
    ({"max_stream_bytes": -5}, ValueError, "max_stream_bytes must be >= 0"),
    ({"max_json_depth": 2.5}, TypeError, "max_json_depth must be an int"),
    ({"max_event_bytes": True}, TypeError, "max_event_bytes must be an int"),
]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the never-started async generators
@pytest.mark.parametrize("entry", ENTRY_POINTS)
@pytest.mark.parametrize(("kwargs", "error", "message"), BAD_CALLS, ids=lambda v: str(v)[:24])
def test_bad_arguments_raise_at_the_call(
    entry: str, kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        ENTRY_POINTS[entry](**kwargs)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_good_arguments_are_accepted(entry: str) -> None:
    ENTRY_POINTS[entry](
        api="anthropic", model="m", provider="p", choice=1, max_event_bytes=1000,
        max_stream_bytes=None, max_json_depth=10,
    )  # fmt: skip


def test_the_call_reads_no_chunk() -> None:
    read: list[bytes] = []

    def chunks() -> Iterator[bytes]:
        read.append(b"x")
        yield b""

    events = normalize(chunks(), "anthropic")
    assert read == []
    list(events)
    assert read == [b"x"]


def _keyword_parameters(function: Callable[..., object]) -> dict[str, object]:
    return {
        name: p.default
        for name, p in inspect.signature(function).parameters.items()
        if p.kind is inspect.Parameter.KEYWORD_ONLY or name == "model"
    }


def test_options_are_written_once_as_a_type() -> None:
    options = _keyword_parameters(StreamNormalizer)
    assert set(NormalizerOptions.__annotations__) == set(options)
    for function in (normalize, anormalize):
        mine = _keyword_parameters(function)
        assert mine.pop("raise_source_errors") is False
        assert mine == options  # same names, same defaults
    assert set(ParserKeywords.__annotations__) == {
        f.name for f in dataclasses.fields(ParserOptions)
    }


TYPOS = """
    import httpx

    from streamnorm import StreamNormalizer, get_parser, normalize
    from streamnorm.integrations.httpx import iter_events

    normalize([b""], modle="m")
    iter_events(httpx.Response(200), choice="first")
    get_parser("hermes", reasonin="think")
    normalize([b""], api="anthropic", model="m", max_stream_bytes=None)
    StreamNormalizer(str({"api": "gemini"}["api"]))
"""


@pytest.mark.xdist_group("mypy-cache")  # the cache test_static.py's mypy run writes
def test_a_type_checker_catches_typos_at_the_front_door(tmp_path: Path) -> None:
    mypy_api = pytest.importorskip("mypy.api")
    source = tmp_path / "typos.py"
    source.write_text(textwrap.dedent(TYPOS))
    cache = str(REPO / ".mypy_cache")
    with mypy_cache_held():
        out, err, status = mypy_api.run(
            [str(source), "--strict", "--no-error-summary", "--cache-dir", cache]
        )
    assert status == 1, out + err
    errors = [line for line in out.splitlines() if ": error:" in line]
    lines = {int(line.split(":")[1]) for line in errors}
    # every typo line (7-9 of the dedented text), and not the good calls: an
    # api name is any str (read from a config file), checked at run time
    assert lines == {7, 8, 9}, out
    assert any('"modle"' in line for line in errors), out
    assert any('"reasonin"' in line for line in errors), out
