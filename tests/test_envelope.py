"""The envelope that carries one issuer's opaque state through another API."""

from __future__ import annotations

import base64

import pytest

from streamnorm.envelope import Envelope, Issuer, unwrap, wrap, wrap_bytes

ISSUER = Issuer("openai-responses", "openai", "gpt-5")
ITEM = '{"type":"reasoning","id":"rs_1","encrypted_content":"gAAAA=="}'


@pytest.mark.parametrize("spell", [wrap, wrap_bytes])
@pytest.mark.parametrize("kind", ["thinking", "redacted", "text", "toolcall"])
def test_round_trip(spell: object, kind: str) -> None:
    value = spell(ISSUER, kind, ITEM)  # type: ignore[operator]
    assert unwrap(value) == Envelope(ISSUER, kind, ITEM)


def test_turn_kind_carries_a_list() -> None:
    sigs = [[0, "text", "c2ln"], [2, "toolcall", None]]
    assert unwrap(wrap(Issuer("google-generative-ai"), "turn", sigs)) == Envelope(
        Issuer("google-generative-ai", None, None), "turn", sigs
    )


def test_gemini_spelling_is_standard_base64_of_prefixed_bytes() -> None:
    value = wrap_bytes(ISSUER, "thinking", "sig")
    assert base64.b64decode(value, validate=True).startswith(b"snv1\0")


def test_text_spelling_is_url_safe_without_padding() -> None:
    value = wrap(ISSUER, "thinking", "a" * 50)
    assert value.startswith("snv1.")
    assert "=" not in value and "+" not in value and "/" not in value


@pytest.mark.parametrize(
    "value",
    [
        None,
        "",
        "EqQBCkgIBRABGAIiQGx",  # a real Anthropic signature prefix
        "snv1.",
        "snv1.!!!!",
        "snv1." + base64.urlsafe_b64encode(b'{"k":"thinking"}').decode(),
        "snv1." + base64.urlsafe_b64encode(b'{"i":["a",1,null],"k":"thinking"}').decode(),
        "snv1." + base64.urlsafe_b64encode(b'{"i":["a",null,null],"k":"other"}').decode(),
        base64.b64encode(b"snv2\0{}").decode(),
        base64.b64encode(b"snv1\0not json").decode(),
    ],
)
def test_anything_else_is_not_an_envelope(value: object) -> None:
    assert unwrap(value) is None


def test_unknown_kind_is_refused_when_wrapping() -> None:
    with pytest.raises(ValueError, match="kind"):
        wrap(ISSUER, "secret", "x")
