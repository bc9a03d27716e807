"""Who may call the gateway, for which models, how much (docs/gateway.md, "Keys, limits, usage").

Two kinds of client keys are accepted. The keys in ``keys_env`` (the
environment) are unscoped: any model, no limit. With ``ledger = true`` the
store's keys (``streamnorm keys create``) are accepted too, each with its
scope (:class:`~.state.ledger.ClientKey`): a model outside its globs is a
403, a request over its requests or tokens per minute a 429 with
``retry-after``, a request once its budget is spent the client API's own
quota error (Anthropic's 402 ``billing_error``, OpenAI's 429
``insufficient_quota``, Gemini's 429 ``RESOURCE_EXHAUSTED``), also with
``retry-after`` (the end of the period). A store key is looked up at every
request (one indexed read), so a revoked key is refused at once.

Every front-door request that got past the key check leaves a row in the
ledger when it ends; a failing ledger is logged and never breaks an answer,
but a scoped key cannot be admitted without it (503).
"""

from __future__ import annotations

import asyncio
import hmac
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from .._json import dumps_compact
from .config import GatewayConfig
from .errors import GatewayError, redact
from .state.ledger import ClientKey, Ledger, LedgerRow, Refusal, key_label, open_ledger
from .telemetry import LOGGER, RequestRecord

__all__ = ["Accounts", "ledger_row"]

_T = TypeVar("_T")

#: Status and OpenAI code of a spent budget, per client API.
_BUDGET_STATUS = {"anthropic-messages": 402}
_BUDGET_CODE = "insufficient_quota"


class Accounts:
    """The gateway's client keys (environment and store) and its ledger."""

    def __init__(self, config: GatewayConfig, secrets: Sequence[str] = ()) -> None:
        self._env_keys = sorted(config.keys)
        self._secrets = secrets
        self.ledger: Ledger | None = (
            open_ledger(config.store, config.ledger_retention_days)
            if config.ledger and config.store
            else None
        )

    @property
    def open(self) -> bool:
        """Whether the gateway takes requests without a key."""
        return not self._env_keys and self.ledger is None

    def close(self) -> None:
        if self.ledger is not None:
            self.ledger.close()

    async def authorize(self, presented: list[str]) -> ClientKey | None:
        """The scope of the key the client presented (None: the gateway is
        open); 401 when it presented no valid key."""
        if self.open:
            return None
        # compare_digest on every configured key: the time taken says nothing
        # about which key, or how much of one, matched.
        matched = None
        for key in presented:
            for expected in self._env_keys:
                if hmac.compare_digest(key.encode(), expected.encode()):
                    matched = expected
        if matched is not None:
            return ClientKey(key_label(matched))
        if self.ledger is not None:
            for key in presented:
                scoped = await self._store_call(self.ledger.find_key, key)
                if scoped is not None:
                    return scoped
        raise GatewayError(401, "a valid gateway key is required")

    async def admit(self, record: RequestRecord, key: ClientKey | None, model: str) -> None:
        """Refuse a model outside ``key``'s globs (403), or a request over one
        of its limits (429 / the API's quota error); else count it."""
        if key is None:
            return
        if not key.allows(model):
            raise GatewayError(403, f"model: this key may not use {model!r}", param="model")
        if self.ledger is None or (key.rpm is None and key.tpm is None and key.budget is None):
            return
        refusal = await self._store_call(self.ledger.admit, record.request_id, key)
        if refusal is not None:
            raise _refused(refusal, record.client_api or "openai-completions")

    async def _store_call(self, method: Callable[..., _T], *args: Any) -> _T:
        """A ledger call on the request's path; a ledger that fails is a 503."""
        try:
            return await asyncio.to_thread(method, *args)
        except Exception as exc:
            self._log_failure("ledger_unavailable", exc)
            raise GatewayError(503, "the gateway's key store is unavailable") from None

    async def record(self, record: RequestRecord) -> None:
        """Write ``record``'s ledger row (a failure is logged, not raised)."""
        if self.ledger is None:
            return
        try:
            await asyncio.to_thread(self.ledger.record, ledger_row(record))
        except Exception as exc:
            self._log_failure("ledger_failed", exc)

    def _log_failure(self, event: str, exc: Exception) -> None:
        error = redact(str(exc), self._secrets)
        LOGGER.warning(dumps_compact({"event": event, "error": error}))


def ledger_row(record: RequestRecord) -> LedgerRow:
    """The ledger's row for a finished request. A request that no admission
    counted is written as admitted when it reached an upstream or did not
    fail (one the gateway refused itself does not count against a limit)."""
    return LedgerRow(
        request_id=record.request_id,
        key=record.client_key,
        at=time.time() - record.duration_ms / 1000,
        admitted=int(record.upstream is not None or record.status < 400),
        route=record.client_api,
        upstream=record.upstream,
        model=record.upstream_model or record.model,
        input_tokens=record.input_tokens,
        output_tokens=record.output_tokens,
        cache_read_tokens=record.cache_read_tokens,
        cache_write_tokens=record.cache_write_tokens,
        reasoning_tokens=record.reasoning_tokens,
        cost_usd=record.cost_usd,
        status=record.status,
        latency_ms=record.duration_ms,
        error=record.error,
    )


def _refused(refusal: Refusal, api: str) -> GatewayError:
    headers = {"retry-after": str(refusal.retry_after)}
    if refusal.kind != "budget":
        return GatewayError(429, refusal.message, headers=headers)
    status = _BUDGET_STATUS.get(api, 429)
    return GatewayError(status, refusal.message, code=_BUDGET_CODE, headers=headers)
