"""The request log line's way out: straight to the gateway's own stderr
handler when nothing else could see it, through ``logging`` otherwise."""

from __future__ import annotations

import contextlib
import io
import logging
from collections.abc import Iterator

import pytest

from streamnorm.gateway.telemetry import LOGGER, Lines, log_info


@contextlib.contextmanager
def served() -> Iterator[io.StringIO]:
    """``LOGGER`` as ``streamnorm serve`` sets it up, writing to a buffer, and
    nothing else (pytest's own capture handlers, added for each test, are
    set aside meanwhile)."""
    saved = (LOGGER.handlers, LOGGER.level, LOGGER.propagate, LOGGER.filters)
    stream = io.StringIO()
    LOGGER.handlers, LOGGER.filters = [Lines(stream)], []
    LOGGER.setLevel(logging.INFO)
    LOGGER.propagate = False
    try:
        yield stream
    finally:
        LOGGER.handlers, LOGGER.propagate, LOGGER.filters = saved[0], saved[2], saved[3]
        LOGGER.setLevel(saved[1])


class Seen(logging.Filter):
    """Records the messages it is shown; lets them through or not."""

    def __init__(self, passes: bool) -> None:
        super().__init__()
        self.passes = passes
        self.messages: list[str] = []

    def filter(self, record: logging.LogRecord) -> bool:
        self.messages.append(record.getMessage())
        return self.passes


def test_a_line_is_written_as_logging_writes_it() -> None:
    """The direct way and ``logging``'s own (taken when a filter is there)
    give the same bytes: the message and a line end."""
    line = '{"request_id":"req_1","status":200}'
    with served() as direct:
        log_info(line)
    with served() as through_logging:
        LOGGER.addFilter(Seen(passes=True))
        log_info(line)
    assert direct.getvalue() == through_logging.getvalue() == line + "\n"


def test_a_filter_on_the_logger_or_its_handler_sees_every_line() -> None:
    with served() as lines:
        for owner in (LOGGER, LOGGER.handlers[0]):
            seen = Seen(passes=False)
            owner.addFilter(seen)
            log_info("a line")
            owner.removeFilter(seen)
            assert seen.messages == ["a line"]
    assert lines.getvalue() == ""


def test_a_level_above_info_silences_the_lines() -> None:
    with served() as lines:
        LOGGER.setLevel(logging.WARNING)
        log_info("a line")
        LOGGER.setLevel(logging.INFO)
        LOGGER.handlers[0].setLevel(logging.ERROR)
        log_info("another")
    assert lines.getvalue() == ""


def test_another_handler_or_propagation_gets_the_line_too() -> None:
    """A second handler, or the root logger's through propagation, is shown
    the record as ``logging`` makes it, and the gateway's handler still writes."""
    other = io.StringIO()
    root = Seen(passes=False)
    handler = logging.StreamHandler(io.StringIO())
    handler.addFilter(root)
    with served() as lines:
        extra = logging.StreamHandler(other)
        LOGGER.addHandler(extra)
        log_info("one")
        LOGGER.removeHandler(extra)
        logging.getLogger().addHandler(handler)
        LOGGER.propagate = True
        try:
            log_info("two")
        finally:
            logging.getLogger().removeHandler(handler)
    assert other.getvalue() == "one\n" and root.messages == ["two"]
    assert lines.getvalue() == "one\ntwo\n"


def test_a_failed_write_is_reported_the_logging_way(capsys: pytest.CaptureFixture[str]) -> None:
    """A destination that cannot be written: the line goes the logging
    module's way, which reports the failure (``handleError``), never raises."""
    with served() as lines:
        lines.close()
        log_info("a line")
    assert "Logging error" in capsys.readouterr().err


def test_a_formatter_set_on_the_handler_formats_every_line() -> None:
    with served() as lines:
        LOGGER.handlers[0].setFormatter(logging.Formatter("%(levelname)s %(message)s"))
        log_info("a line")
    assert lines.getvalue() == "INFO a line\n"
