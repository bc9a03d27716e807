"""The keyword options of :class:`~streamnorm.normalizer.StreamNormalizer`, as a type.

Entry points that hand their options on (the HTTP and SDK integrations)
declare ``**options: Unpack[NormalizerOptions]``: a type checker then knows
every option by name and type (``modle=`` is an error before anything runs),
and the options are written once. ``tests/test_entry_points.py`` keeps the
keys equal to the normalizer's keyword parameters.
"""

from __future__ import annotations

from typing import TypedDict

__all__ = ["NormalizerOptions"]


class NormalizerOptions(TypedDict, total=False):
    """``model``, ``provider``, ``choice``, the limits and ``keep_content``
    (see ``StreamNormalizer``)."""

    model: str | None
    provider: str | None
    choice: int
    max_event_bytes: int
    max_stream_bytes: int | None
    max_json_depth: int
    keep_content: bool
