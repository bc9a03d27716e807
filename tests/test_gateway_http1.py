"""The gateway's own upstream client (``http1.py``) where it differs from
the libraries: what it refuses, what it decodes, its bounds. What every
client does alike is tested in test_gateway_upstream.py, on it too."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import gzip
import ssl
import sys
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from streamnorm.gateway.errors import GatewayError
from streamnorm.gateway.http1 import DECODED_ITEM, MAX_HEAD_BYTES, BuiltinClient
from streamnorm.gateway.upstream import Clients, Outgoing, open_first

from .test_gateway_upstream import (
    BODY,
    Handler,
    Served,
    chunked,
    events,
    keep_alive,
    raw_server,
    read_all,
    read_request,
    upstream,
)


async def test_a_gzip_body_is_decoded_in_bounded_items() -> None:
    """A body that inflates 1,000-fold comes decoded, whole, and in items of
    at most DECODED_ITEM bytes, however little of it one read held."""
    plain = b"data: " + b"a" * (8 * 1024 * 1024) + b"\n\n"
    packed = gzip.compress(plain)
    assert len(packed) < 64 * 1024
    answer = chunked([packed], headers=b"content-encoding: gzip\r\n")
    async with raw_server(keep_alive(answer)) as (url, _):
        clients = Clients()
        try:
            items = await read_all(clients, upstream(url))
        finally:
            await clients.aclose()
    assert b"".join(items) == plain
    assert max(map(len, items)) <= DECODED_ITEM


async def refusal(answer: bytes) -> GatewayError:
    """The error a read of an upstream that answers ``answer`` ends in."""
    async with raw_server(keep_alive(answer)) as (url, _):
        clients = Clients()
        try:
            with pytest.raises(GatewayError) as caught:
                await read_all(clients, upstream(url))
        finally:
            await clients.aclose()
    return caught.value


async def read_twice(handler: Handler) -> tuple[bytes, bytes, Served]:
    """Two answers read one after the other from ``handler``'s server."""
    async with raw_server(handler) as (url, served):
        clients = Clients()
        try:
            first = await read_all(clients, upstream(url))
            second = await read_all(clients, upstream(url))
        finally:
            await clients.aclose()
    return b"".join(first), b"".join(second), served


async def test_a_content_coding_it_does_not_decode_is_refused() -> None:
    error = await refusal(chunked([b"\x1b\x00\x00garbage"], headers=b"content-encoding: br\r\n"))
    assert error.status == 502 and "content-encoding 'br'" in error.message


async def test_a_body_ended_by_the_connection_is_read_whole_and_not_kept() -> None:
    body = b"".join(events())
    answer = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n" + body

    async def once(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, served: Served
    ) -> None:
        await read_request(reader, served)
        writer.write(answer)
        await writer.drain()

    first, second, served = await read_twice(once)
    assert first == second == body and served.opened == 2


@pytest.mark.parametrize("header", [("x-a", "1\r\nx-b: 2"), ("x a", "1"), ("x-a", "1\x002")])
async def test_a_header_that_would_write_another_is_refused_unsent(
    header: tuple[str, str],
) -> None:
    async with raw_server(keep_alive(chunked(events()))) as (url, served):
        clients = Clients()
        try:
            out = Outgoing(BODY.path, dict([header]), BODY.body)
            with pytest.raises(GatewayError) as caught:
                await open_first(clients.get(), [upstream(url)], lambda _: out)
        finally:
            await clients.aclose()
    assert caught.value.status == 502 and served.requests == []


async def test_a_head_beyond_the_limit_is_a_502() -> None:
    error = await refusal(b"HTTP/1.1 200 OK\r\nx-filler: " + b"a" * MAX_HEAD_BYTES + b"\r\n")
    assert error.status == 502 and "limit" in error.message


async def test_bytes_after_the_answer_spend_the_connection() -> None:
    """A second answer to one request: the first is read whole, the
    connection is not used again (the extra bytes would be read as the next
    request's answer)."""
    first, second, served = await read_twice(keep_alive(chunked(events()) * 2))
    assert first == second == b"".join(events()) and served.opened == 2


def test_without_httptools_the_builtin_client_says_what_it_needs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "httptools", None)  # an import of it fails
    monkeypatch.delitem(sys.modules, "streamnorm.gateway.http1")
    with pytest.raises(ValueError, match=r"httptools.*aiohttp"):
        Clients("builtin").open()


async def test_reading_pauses_while_the_body_waits_unread() -> None:
    """An upstream that sends far faster than the relay takes: the client
    stops reading its socket once HIGH_WATER bytes wait, so the upstream's
    writes stall instead of the worker buffering the whole body."""
    piece = b"data: " + b"x" * (1 << 20) + b"\n\n"
    sent = 0

    async def flood(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, served: Served
    ) -> None:
        nonlocal sent
        await read_request(reader, served)
        writer.write(chunked([])[: -len(b"0\r\n\r\n")])
        for _ in range(64):
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            await writer.drain()
            sent += len(piece)
        writer.write(b"0\r\n\r\n")

    async with raw_server(flood) as (url, _):
        clients = Clients()
        try:
            opened = await open_first(clients.get(), [upstream(url)], lambda _: BODY)
            await asyncio.sleep(0.5)  # the relay takes nothing meanwhile
            assert sent < 32 * len(piece)  # 64 MB unread would all be here by now
            total = len(opened.first) + sum([len(item) async for item in opened.rest])
        finally:
            await clients.aclose()
    assert total == 64 * len(piece) and sent == total


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for ``localhost`` and its key, as PEM files in ``folder``."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


async def test_an_https_upstream_is_read_over_verified_tls(tmp_path: Path) -> None:
    """TLS to the upstream's host by name: a certificate the client's
    context trusts is read like plain HTTP (the connection kept); one the
    default context does not trust is refused before any request is sent."""
    cert, key = self_signed(tmp_path)
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_tls.load_cert_chain(cert, key)
    served = Served()

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        served.opened += 1
        with contextlib.suppress(ConnectionError, ssl.SSLError):
            await keep_alive(chunked(events()))(reader, writer, served)
        writer.close()

    server = await asyncio.start_server(connection, "127.0.0.1", 0, ssl=server_tls)
    url = f"https://localhost:{server.sockets[0].getsockname()[1]}"
    trusting = BuiltinClient(ssl.create_default_context(cafile=str(cert)), 4.0)
    try:
        for _ in range(2):
            opened = await open_first(trusting, [upstream(url)], lambda _: BODY)
            body = opened.first + b"".join([item async for item in opened.rest])
            await opened.response.aclose()
            assert body == b"".join(events())
        assert served.opened == 1 and len(served.requests) == 2
        assert served.requests[0].lower().startswith(b"post /v1/chat/completions http/1.1\r\n")
        assert f"host: localhost:{url.rsplit(':', 1)[1]}".encode() in served.requests[0]
        clients = Clients()
        try:
            with pytest.raises(GatewayError) as caught:
                await open_first(clients.get(), [upstream(url)], lambda _: BODY)
        finally:
            await clients.aclose()
        assert caught.value.status == 502 and len(served.requests) == 2
    finally:
        await trusting.aclose()
        server.close()
        await server.wait_closed()
