"""Events as values: each class names its ``type``, ``event_from_dict`` is
the inverse of ``to_dict`` (also through JSON, as a queue or a browser relays
them), and pydantic can build a ``TypeAdapter(Event)``."""

from __future__ import annotations

import dataclasses
import json
import typing
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, TypeAdapter

import streamnorm
from streamnorm import (
    Event,
    ToolCallDelta,
    event_from_dict,
    normalize,
    samples,
)
from streamnorm.apis import resolve_api
from streamnorm.events import EVENT_TYPES
from streamnorm.partial_json import apply_ops

from .support import api_of, fixture_id, fixture_paths

EVENT_CLASSES = typing.get_args(Event)


def test_every_event_class_names_its_type() -> None:
    assert len(EVENT_CLASSES) == 10
    types = [cls.type for cls in EVENT_CLASSES]
    assert len(set(types)) == len(types)
    assert {cls.type: cls for cls in EVENT_CLASSES} == EVENT_TYPES
    assert "type" not in {f.name for cls in EVENT_CLASSES for f in dataclasses.fields(cls)}


def _all_events() -> list[Event]:
    events: list[Event] = []
    for name in samples.names():
        events.extend(normalize([samples.read(name)], resolve_api(name)))
    return events


def test_type_matches_to_dict_for_every_kind_of_event() -> None:
    events = _all_events()
    for path in fixture_paths():
        events.extend(normalize([path.read_bytes()], api_of(path)))
    seen = {type(e) for e in events}
    # the corpus (or, without it, the samples) shows most kinds
    assert len(seen) >= 6, seen
    for event in events:
        assert event.type == type(event).type == event.to_dict()["type"]


def _round_trip(events: list[Event]) -> None:
    for event in events:
        d = event.to_dict()
        for relayed in (d, json.loads(json.dumps(d))):
            rebuilt = event_from_dict(relayed)
            assert type(rebuilt) is type(event)
            assert rebuilt == event
            assert rebuilt.to_dict() == d
            if isinstance(event, ToolCallDelta):
                assert isinstance(rebuilt, ToolCallDelta)
                assert rebuilt.ops == event.ops


def test_event_from_dict_inverts_to_dict_on_the_samples() -> None:
    _round_trip(_all_events())


@pytest.mark.parametrize("path", fixture_paths(), ids=fixture_id)
def test_event_from_dict_inverts_to_dict_on_every_fixture(path: Path) -> None:
    _round_trip(list(normalize([path.read_bytes()], api_of(path))))


def test_event_from_dict_is_exported() -> None:
    assert streamnorm.event_from_dict is event_from_dict
    assert "event_from_dict" in streamnorm.__all__


@pytest.mark.parametrize(
    ("bad", "named"),
    [
        ({"type": "text_delat", "index": 0, "delta": "x"}, "text_delat"),
        ({"index": 0, "delta": "x"}, "type"),
        ({"type": "text_delta", "delta": "x"}, "index"),
        ({"type": "done"}, "message"),
        ({"type": "done", "message": {"type": "user", "content": "hi"}}, "assistant"),
        ({"type": "block_end", "index": 0, "block": {"type": "image", "mime_type": "x"}}, "image"),
        ("not a dict", "mapping"),
    ],
)
def test_event_from_dict_rejects_what_no_event_gives(bad: Any, named: str) -> None:
    with pytest.raises(ValueError, match=named):
        event_from_dict(bad)


def test_pydantic_type_adapter_of_event() -> None:
    adapter: TypeAdapter[Event] = TypeAdapter(Event)
    events = _all_events()
    for event in events:
        assert adapter.validate_python(event) == event
    dumped = TypeAdapter(list[Event]).dump_python(events, mode="json")
    assert len(dumped) == len(events)
    json.dumps(dumped)  # JSON-ready
    assert TypeAdapter(list[Event]).json_schema()["type"] == "array"

    class Relay(BaseModel):  # an application model holding an event
        event: Event

    assert Relay(event=events[0]).event == events[0]


def test_relayed_tool_call_dicts_rebuild_every_preview_from_their_ops() -> None:
    events = [e for e in _all_events() if isinstance(e, ToolCallDelta)]
    assert events
    previews: dict[tuple[str | None, int], dict[str, object]] = {}
    for event in events:
        rebuilt = event_from_dict(json.loads(json.dumps(event.to_dict())))
        assert isinstance(rebuilt, ToolCallDelta)
        preview = apply_ops(previews.setdefault((event.id, event.index), {}), rebuilt.ops)
        assert preview == event.partial_args
