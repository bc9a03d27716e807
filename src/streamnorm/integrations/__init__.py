"""Thin adapters from HTTP clients to the sans-IO core.

Each submodule imports its client library and nothing here does, so
``import streamnorm`` never pulls in httpx, aiohttp or requests:

* :mod:`streamnorm.integrations.httpx` — ``iter_events`` / ``aiter_events``
  over an ``httpx.Response`` (``client.stream(...)``);
* :mod:`streamnorm.integrations.aiohttp` — ``aiter_events`` over an
  ``aiohttp.ClientResponse``;
* :mod:`streamnorm.integrations.requests` — ``iter_events`` over a
  ``requests.Response`` opened with ``stream=True``;
* :mod:`streamnorm.integrations.sdk` — ``iter_events`` / ``aiter_events`` over
  the raw streaming responses of the official ``openai`` and ``anthropic``
  SDKs (``with_streaming_response``).

Every adapter yields canonical events and ends with exactly one ``Done`` or
``Error``. A transport failure while reading the body (connection reset, a
read timeout) becomes ``Error(kind="truncated")`` whose ``reason`` names the
exception, with everything received so far; pass ``raise_source_errors=True``
to have the client's exception re-raised after that event. The HTTP status is
not checked: an error body (``{"error": …}``) becomes ``Error(kind="upstream")``
and anything else that is not an event stream ``Error(kind="protocol")``.
Further keyword arguments are those of ``StreamNormalizer`` (``model``,
``provider``, ``choice``, the size limits). ``provider`` defaults to the host
the adapter talked to (:mod:`.hosts`), so that sanitize keeps opaque state for
that host only. The async adapters take ``idle_timeout=`` seconds: no bytes for
that long ends the events with ``Error(kind="truncated")`` (:mod:`.idle`).
"""
