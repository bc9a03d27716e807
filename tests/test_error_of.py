"""``error_of``: the one reading of a wire error object, for every api."""

from __future__ import annotations

from typing import Any

import pytest

from streamnorm.providers.base import error_of


@pytest.mark.parametrize(
    ("value", "options", "expected"),
    [
        ({"message": "slow down", "type": "rate_limit"}, {}, ("slow down", "rate_limit")),
        ({"message": "m", "code": "c", "type": "t"}, {}, ("m", "c")),
        ({"message": "m", "code": "", "type": "t"}, {}, ("m", "t")),
        (
            {"code": 429, "status": "RESOURCE_EXHAUSTED"},
            {"codes": ("status", "code")},
            ("error", "RESOURCE_EXHAUSTED"),
        ),
        ({"code": 429}, {"codes": ("status", "code")}, ("error", "429")),
        ({"code": True, "type": "t"}, {}, ("error", "t")),  # a bool is not a code
        ("plain text", {}, ("plain text", None)),
        ("", {"default": "error event"}, ("error event", None)),
        (None, {}, ("error", None)),
        ([1, 2], {"default": "d"}, ("d", None)),
        ({"message": 5, "type": "t"}, {"codes": ()}, ("error", None)),
    ],
)
def test_message_and_code_of_every_error_shape(
    value: Any, options: dict[str, Any], expected: tuple[str, str | None]
) -> None:
    assert error_of(value, **options) == expected
