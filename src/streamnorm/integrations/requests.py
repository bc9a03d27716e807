"""requests adapter: canonical events from a ``requests.Response``.

    with requests.post(url, json=body, headers=headers, stream=True,
                       timeout=(10, 60)) as response:
        for event in iter_events(response, api="openai-completions"):
            ...

Open the request with ``stream=True``, or the whole body is downloaded before
the first event. A chunked body is read with ``iter_content(chunk_size=None)``,
every piece as it arrives; a body without chunked framing (``Content-Length``
or read until close), for which that call would wait for the end, is read with
urllib3's ``read1``. Both are decompressed, and transport failures surface as
the same ``requests`` exceptions ``iter_content`` raises.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..apis import ApiName
from ..events import Event
from ..hosts.identity import with_provider
from ..normalizer import normalize
from ..options import NormalizerOptions
from .status import iter_with_status

if TYPE_CHECKING:
    import requests
    from typing_extensions import Unpack

__all__ = ["iter_events"]

_READ_SIZE = 64 * 1024

#: requests' own flag for a body already read (``iter_content`` refuses to
#: read it twice); not part of its type stubs, so it is reached by name.
_CONSUMED = "_content_consumed"


def iter_events(
    response: requests.Response,
    api: ApiName = "auto",
    *,
    raise_source_errors: bool = False,
    **options: Unpack[NormalizerOptions],
) -> Iterator[Event]:
    """Canonical events of a ``requests.Response`` opened with ``stream=True``.

    A transport error while reading (``requests.ConnectionError`` for a read
    timeout, ``requests.exceptions.ChunkedEncodingError`` for a connection cut
    mid-body …) ends the events with ``Error(kind="truncated")`` naming it;
    with ``raise_source_errors=True`` it is re-raised after that event.
    ``options`` go to ``StreamNormalizer``; ``provider`` defaults to the host
    of ``response.url`` (:mod:`.hosts`). An error response's ``Error``
    carries its HTTP status and ``Retry-After``.
    """
    options = with_provider(options, response.url)
    events = normalize(_body(response), api, raise_source_errors=raise_source_errors, **options)
    return iter_with_status(events, response)


def _body(response: requests.Response) -> Iterator[bytes]:
    raw = response.raw
    read1 = getattr(raw, "read1", None)
    if getattr(response, _CONSUMED, False) or read1 is None or getattr(raw, "chunked", True):
        for chunk in response.iter_content(chunk_size=None):
            if isinstance(chunk, bytes):
                yield chunk
        return
    yield from _read1_chunks(response, read1)


def _read1_chunks(response: requests.Response, read1: Any) -> Iterator[bytes]:
    """What has arrived of a body without chunked framing, mapping urllib3's
    exceptions to requests' as ``iter_content`` does."""
    from requests.exceptions import (
        ChunkedEncodingError,
        ContentDecodingError,
    )
    from requests.exceptions import ConnectionError as RequestsConnectionError
    from requests.exceptions import SSLError as RequestsSSLError
    from urllib3.exceptions import DecodeError, ProtocolError, ReadTimeoutError, SSLError

    try:
        while True:
            data = read1(_READ_SIZE, decode_content=True)
            if not data:
                break
            yield bytes(data)
    except ProtocolError as exc:
        raise ChunkedEncodingError(exc) from exc
    except DecodeError as exc:
        raise ContentDecodingError(exc) from exc
    except ReadTimeoutError as exc:
        raise RequestsConnectionError(exc) from exc
    except SSLError as exc:
        raise RequestsSSLError(exc) from exc
    setattr(response, _CONSUMED, True)
