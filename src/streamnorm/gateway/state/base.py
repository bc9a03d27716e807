"""The response store's interface and what it keeps (DESIGN.md §5b).

A stored response is one answer the gateway gave on ``/v1/responses`` with
``store`` true: the whole input it answered (the history a
``previous_response_id`` expanded to, then the request's own items), its
output as a canonical ``AssistantMessage`` (whose ``api``, ``provider`` and
``model`` name the issuer of every opaque state it holds), and the response
object the client received. Expanding a later ``previous_response_id`` is
then one indexed read: ``history`` is ``input`` plus ``output``.

What is stored is as sensitive as the conversation itself: prompts, answers,
tool arguments and results. Keys and headers are never stored. Ids carry
192 random bits, so an id cannot be guessed from another.

Retention bounds the store: a response is invisible once older than
``ttl_seconds`` and removed at the next pruning; when the stored bytes pass
``max_bytes`` the oldest responses go first.
"""

from __future__ import annotations

import secrets
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..._json import dumps_compact, loads
from ...messages import AssistantMessage, Message, message_from_dict

__all__ = ["ResponseStore", "Retention", "StoredResponse", "new_response_id"]

#: Default retention: 30 days (as the Responses API keeps responses), 1 GiB.
DEFAULT_TTL_SECONDS = 30 * 24 * 3600
DEFAULT_MAX_BYTES = 1024 * 1024 * 1024


def new_response_id() -> str:
    """A fresh, unguessable response id (``resp_`` and 48 hex digits)."""
    return "resp_" + secrets.token_hex(24)


@dataclass(frozen=True, slots=True)
class Retention:
    """How long and how much the store keeps; ``prune_every`` is the most
    seconds between two prunings by one process (0: at every write)."""

    ttl_seconds: int = DEFAULT_TTL_SECONDS
    max_bytes: int = DEFAULT_MAX_BYTES
    prune_every: float = 60.0


@dataclass(frozen=True, slots=True)
class StoredResponse:
    """One kept answer: its whole input, its output, the object the client got."""

    id: str
    created_at: int
    input: tuple[Message, ...]
    output: AssistantMessage
    response: Mapping[str, Any]
    previous_response_id: str | None = None

    @property
    def history(self) -> tuple[Message, ...]:
        """The conversation a later ``previous_response_id`` continues."""
        return (*self.input, self.output)

    @property
    def item_ids(self) -> tuple[str, ...]:
        """The ids of the response's output items (an ``item_reference`` names one)."""
        output = self.response.get("output", ())
        ids = (item.get("id") for item in output if isinstance(item, Mapping))
        return tuple(i for i in ids if isinstance(i, str) and i)

    def to_json(self) -> bytes:
        return dumps_compact(
            {
                "id": self.id,
                "created_at": self.created_at,
                "input": [m.to_dict() for m in self.input],
                "output": self.output.to_dict(),
                "response": dict(self.response),
                "previous_response_id": self.previous_response_id,
            }
        ).encode()

    @classmethod
    def from_json(cls, data: bytes | str) -> StoredResponse:
        d = loads(data)
        output = message_from_dict(d["output"])
        if not isinstance(output, AssistantMessage):  # pragma: no cover - written by to_json
            raise ValueError("a stored output must be an assistant message")
        return cls(
            d["id"],
            int(d["created_at"]),
            tuple(message_from_dict(m) for m in d["input"]),
            output,
            d["response"],
            d.get("previous_response_id"),
        )


class ResponseStore(ABC):
    """``put``, ``get``, ``delete`` and the input items of stored responses.

    Every method is synchronous and short (one indexed read or write, plus
    an occasional pruning on ``put``); the gateway calls them in a thread,
    and prunes after the answer rather than before it.
    ``get`` of an unknown or expired id is None.
    """

    def __init__(self, retention: Retention | None = None) -> None:
        self.retention = retention or Retention()
        self._pruned = 0.0

    @abstractmethod
    def _save(self, response: StoredResponse) -> None:
        """Write ``response`` (replacing one of the same id)."""

    @abstractmethod
    def _load(self, response_id: str, not_before: int) -> bytes | None:
        """The stored JSON of a response created at or after ``not_before``."""

    @abstractmethod
    def _owners(self, item_ids: Sequence[str]) -> dict[str, str]:
        """The response id each known output item id belongs to."""

    @abstractmethod
    def delete(self, response_id: str) -> bool:
        """Remove a response; False: there was none."""

    @abstractmethod
    def prune(self) -> int:
        """Remove expired responses, then the oldest beyond ``max_bytes``; how many went."""

    @abstractmethod
    def close(self) -> None:
        """Release the connection(s)."""

    def put(self, response: StoredResponse, *, prune: bool = True) -> None:
        """Keep ``response`` (replacing one of the same id); with ``prune``,
        prune too when ``retention.prune_every`` seconds have passed."""
        self._save(response)
        if prune:
            self.maybe_prune()

    def get(self, response_id: str) -> StoredResponse | None:
        data = self._load(response_id, int(time.time()) - self.retention.ttl_seconds)
        return None if data is None else StoredResponse.from_json(data)

    def input_items(self, response_id: str) -> tuple[Message, ...] | None:
        """The input a stored response answered, history included; None: unknown."""
        stored = self.get(response_id)
        return None if stored is None else stored.input

    def history(self, response_id: str) -> tuple[Message, ...] | None:
        """What ``previous_response_id`` expands to (``decode_request``'s store)."""
        stored = self.get(response_id)
        return None if stored is None else stored.history

    def items(self, item_ids: Sequence[str]) -> dict[str, Mapping[str, Any]]:
        """The stored output items of these ids, as the responses gave them
        (what ``item_reference`` inputs name); unknown or expired ids are left
        out. Cost: one indexed read for the ids, one per response holding them."""
        owners = self._owners(item_ids)
        found: dict[str, Mapping[str, Any]] = {}
        for response_id in set(owners.values()):
            stored = self.get(response_id)
            for item in stored.response.get("output", ()) if stored is not None else ():
                item_id = item.get("id") if isinstance(item, Mapping) else None
                if isinstance(item_id, str) and owners.get(item_id) == response_id:
                    found[item_id] = item
        return found

    def item(self, item_id: str) -> Mapping[str, Any] | None:
        """One stored output item by its id (``decode_request``'s store)."""
        return self.items((item_id,)).get(item_id)

    def maybe_prune(self) -> None:
        """Prune unless this store pruned less than ``prune_every`` seconds ago."""
        now = time.monotonic()
        if now - self._pruned >= self.retention.prune_every:
            self._pruned = now
            self.prune()
