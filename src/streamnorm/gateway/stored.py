"""Stored Responses at the Responses front door (docs/gateway.md, "Stored responses").

``POST /v1/responses`` with ``store`` true (the default) keeps the answer:
its whole input in canonical form, its output message (which names the
issuer of every opaque state) and the response object the client received.
A later ``previous_response_id`` is expanded to that history before the
request is translated, for whatever API the upstream speaks. The record is
written before the client sees the end of the answer, so a client that sends
its next turn at once, to any worker or host, finds it.

``GET /v1/responses/{id}``, ``DELETE /v1/responses/{id}`` and
``GET /v1/responses/{id}/input_items`` answer as the Responses API does.

A ``previous_response_id`` this gateway does not hold goes on unchanged to a
Responses upstream (which may hold it); for any other upstream it is a 400
naming the id. ``conversation`` (the Conversations API) is refused where
the request is translated: it is not kept here.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from .._json import dumps_bytes, dumps_compact
from ..codec import encode_request
from ..encoder import encode_response
from ..messages import AssistantMessage, Message, StopReason
from ..providers.wire_writer import derive_id
from ..request import Request
from .errors import GatewayError, redact
from .exchange import Exchange
from .state import ResponseStore, Retention, StoredResponse, open_store
from .telemetry import LOGGER

__all__ = ["Prefetched", "StoredResponses", "stored_path"]

API = "openai-responses"
_T = TypeVar("_T")
_A = TypeVar("_A")
_PATH = re.compile(r"/v1/responses/(resp_[A-Za-z0-9_\-]{1,200})(/input_items)?")
_JSON = "application/json"
_ITEM_PREFIXES = {"message": "msg_", "function_call": "fc_", "function_call_output": "fco_"}


def stored_path(method: str, path: str) -> re.Match[str] | None:
    """The match of a stored-response endpoint at ``method path``, or None."""
    if method not in ("GET", "DELETE"):
        return None
    m = _PATH.fullmatch(path)
    if m is None or (method == "DELETE" and m[2]):
        return None
    return m


class Prefetched:
    """What a request continues, read before it is decoded (``decode_request``'s
    store: the relay never waits on more than one read): the stored response
    its ``previous_response_id`` names and the stored items its
    ``item_reference`` inputs name, those this gateway holds."""

    def __init__(
        self,
        stored: StoredResponse | None,
        configured: bool,
        items: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        self.stored = stored
        self.items = items or {}
        self._configured = configured

    @property
    def holds_any(self) -> bool:
        """Whether the request continues something only this gateway holds."""
        return self.stored is not None or bool(self.items)

    def history(self, response_id: str) -> Sequence[Message] | None:
        if not self._configured:
            raise ValueError(
                "previous_response_id: this gateway keeps no responses (gateway.store is not set)"
            )
        stored = self.stored
        return stored.history if stored is not None and stored.id == response_id else None

    def item(self, item_id: str) -> Mapping[str, Any] | None:
        return self.items.get(item_id)


def _references(body: Mapping[str, Any]) -> list[str]:
    """The ids the ``item_reference`` inputs of a Responses body name."""
    items = body.get("input")
    return [
        item["id"]
        for item in (items if isinstance(items, list) else ())
        if isinstance(item, dict)
        and item.get("type") == "item_reference"
        and isinstance(item.get("id"), str)
    ]


def _wants_store(body: Mapping[str, Any]) -> bool:
    return body.get("store", True) is not False


class StoredResponses:
    """The gateway's use of its response store (None: nothing is kept)."""

    def __init__(
        self,
        location: str | None,
        retention: Retention | None = None,
        secrets: Sequence[str] = (),
    ) -> None:
        self._secrets = secrets
        self.store: ResponseStore | None = (
            open_store(location, retention) if location is not None else None
        )
        self._pruning: asyncio.Task[None] | None = None

    def close(self) -> None:
        if self.store is not None:
            self.store.close()

    def keeps(self, body: Mapping[str, Any]) -> bool:
        """Whether an answer to ``body`` is to be kept (a store, and ``store`` not false)."""
        return self.store is not None and _wants_store(body)

    async def prefetch(self, body: Mapping[str, Any]) -> Prefetched:
        """The stored response ``body``'s ``previous_response_id`` names and
        the stored items its ``item_reference`` inputs name, those held here."""
        previous = body.get("previous_response_id")
        references = _references(body)
        stored, items = None, None
        if self.store is not None and isinstance(previous, str) and previous:
            stored = await self._read(self.store.get, previous)
        if self.store is not None and references:
            items = await self._read(self.store.items, references)
        return Prefetched(stored, self.store is not None, items)

    async def _read(self, method: Callable[[_A], _T], key: _A) -> _T:
        """A store call on the request's path; a store that fails is a 503."""
        try:
            return await asyncio.to_thread(method, key)
        except Exception as exc:
            self._log_failure("store_unavailable", exc, key if isinstance(key, str) else None)
            raise GatewayError(503, "the response store is unavailable") from None

    async def keep(
        self,
        body: Mapping[str, Any],
        request: Request,
        message: AssistantMessage,
        *,
        response_id: str | None,
        model: str,
        created: int,
    ) -> None:
        """Keep a finished answer when the client asked for it (``store`` true).

        A failed or aborted answer is not kept: no conversation continues
        from it. A failing store is logged, never turned into a broken answer.
        """
        rid = response_id or message.response_id
        if self.store is None or not _wants_store(body) or not rid:
            return
        if message.stop_reason in (StopReason.ERROR, StopReason.ABORTED):
            return
        message = dataclasses.replace(message, response_id=rid)
        response = encode_response(message, API, model=model, created=created, request=body)
        previous = body.get("previous_response_id")
        record = StoredResponse(
            rid,
            created,
            request.messages,
            message,
            response,
            previous if isinstance(previous, str) else None,
        )
        try:
            await asyncio.to_thread(self.store.put, record, prune=False)
        except Exception as exc:  # the answer stands; the log says it was not kept
            self._log_failure("store_failed", exc, rid)
        if self._pruning is None or self._pruning.done():
            self._pruning = asyncio.create_task(self._prune())

    async def _prune(self) -> None:
        """Retention, off the answer's path (at most once per ``prune_every``)."""
        assert self.store is not None
        try:
            await asyncio.to_thread(self.store.maybe_prune)
        except Exception as exc:
            self._log_failure("prune_failed", exc)

    def _log_failure(self, event: str, exc: Exception, response_id: str | None = None) -> None:
        error = redact(str(exc), self._secrets)
        LOGGER.warning(dumps_compact({"event": event, "response_id": response_id, "error": error}))

    # -- the endpoints ------------------------------------------------------

    async def serve(self, ex: Exchange, match: re.Match[str]) -> None:
        """``GET``/``DELETE /v1/responses/{id}`` and ``GET …/input_items``."""
        if self.store is None:
            raise GatewayError(404, "this gateway keeps no responses (gateway.store is not set)")
        rid = match[1]
        if ex.method == "DELETE":
            if not await self._read(self.store.delete, rid):
                raise _not_found(rid)
            body: dict[str, Any] = {"id": rid, "object": "response", "deleted": True}
        else:
            if ex.query.get("stream") == "true":
                raise GatewayError(
                    400, "stream: a stored response is returned whole here", param="stream"
                )
            stored = await self._read(self.store.get, rid)
            if stored is None:
                raise _not_found(rid)
            body = dict(stored.response) if not match[2] else _input_items(stored, ex.query)
        await ex.respond(200, _JSON, dumps_bytes(body))


def _not_found(rid: str) -> GatewayError:
    return GatewayError(404, f"Response with id {rid!r} not found.", code="not_found")


def _input_items(stored: StoredResponse, query: Mapping[str, str]) -> dict[str, Any]:
    """The list object of ``GET /v1/responses/{id}/input_items`` (``order``,
    ``limit`` 1-100, ``after``), its items in the Responses API's own form."""
    order = query.get("order", "desc")
    if order not in ("asc", "desc"):
        raise GatewayError(400, "order: must be 'asc' or 'desc'", param="order")
    limit_text = query.get("limit", "20")
    if not limit_text.isdigit() or not 1 <= int(limit_text) <= 100:
        raise GatewayError(400, "limit: an integer from 1 to 100 is required", param="limit")
    wire = encode_request(Request(model=None, messages=stored.input), API, sanitize=False)
    items = [_listed(item, stored.id, i) for i, item in enumerate(wire.body.get("input", []))]
    if order == "desc":
        items.reverse()
    after = query.get("after")
    if after is not None:
        ids = [item["id"] for item in items]
        if after not in ids:
            raise GatewayError(400, f"after: no input item {after!r}", param="after")
        items = items[ids.index(after) + 1 :]
    page = items[: int(limit_text)]
    return {
        "object": "list",
        "data": page,
        "first_id": page[0]["id"] if page else None,
        "last_id": page[-1]["id"] if page else None,
        "has_more": len(items) > len(page),
    }


def _listed(item: Mapping[str, Any], response_id: str, index: int) -> dict[str, Any]:
    """An input item as the list shows it: typed, with an id (derived where the
    item had none), a message's text as an ``input_text`` part."""
    kind = str(item.get("type", "message"))
    prefix = _ITEM_PREFIXES.get(kind, "item_")
    out = {"id": derive_id(prefix, response_id, "input", index), "type": kind, **item}
    if kind == "message":
        out.setdefault("status", "completed")
        if isinstance(out.get("content"), str):
            part = "output_text" if out.get("role") == "assistant" else "input_text"
            out["content"] = [{"type": part, "text": out["content"]}]
    return out
