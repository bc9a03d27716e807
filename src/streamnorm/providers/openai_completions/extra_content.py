"""Gemini's thought signatures in Google's OpenAI-compatible Chat form.

Google's Chat Completions endpoint (``…/v1beta/openai/``) carries a Gemini
``thoughtSignature`` as ``extra_content.google.thought_signature``: on a tool
call (Gemini 3 refuses the next turn when a call comes back without it), and
on the assistant message for a signed text. The stream decoder and the
request codec read it into the call's or the text's ``signature``; the
request encoder and the stream and response encoders write it back, for the
issuer's own turns only (sanitize removes another issuer's signatures first).
"""

from __future__ import annotations

from typing import Any

__all__ = ["google_extra", "google_signature"]


def google_signature(value: Any) -> str | None:
    """The thought signature in an object's ``extra_content``, or None."""
    if not isinstance(value, dict):
        return None
    extra = value.get("extra_content")
    google = extra.get("google") if isinstance(extra, dict) else None
    signature = google.get("thought_signature") if isinstance(google, dict) else None
    return signature if isinstance(signature, str) and signature else None


def google_extra(signature: str) -> dict[str, Any]:
    """The ``extra_content`` that carries ``signature``."""
    return {"google": {"thought_signature": signature}}
