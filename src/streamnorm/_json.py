"""The core's JSON: one fast parser behind a small, stable surface.

Every SSE payload of a stream goes through :func:`loads`, so it must be fast on
many small documents (50 bytes to 2 KB). The core depends on one fast JSON
library at most; that library is jiter (``docs/json-library.md`` has the
measurements and the reasons). jiter only parses, so :func:`dumps_compact`
uses the standard library, which also makes its output exactly
``json.dumps``'s.

:func:`loads` behaves like :func:`json.loads` on valid JSON, with four
deliberate differences, all of which keep the canonical output encodable and
replayable:

* ``NaN``, ``Infinity`` and ``-Infinity`` are rejected (they are not JSON, and
  providers reject them on replay);
* an unpaired surrogate escape (``"\\ud800"``) decodes to U+FFFD instead of a
  lone surrogate, which could not be encoded to UTF-8; this is also what
  ``parse_partial_json`` reports for it;
* nesting deeper than ``max_depth`` raises :class:`JSONDepthError` instead of
  ``RecursionError`` (or a crash);
* an integer with more digits than Python converts
  (``sys.get_int_max_str_digits()``, 4300 by default) raises
  :class:`JSONDecodeError` instead of a bare ``ValueError``: converting it
  would cost quadratic time, and a float or string stand-in would silently
  change the value.

Every failure is a :class:`JSONDecodeError` (a :class:`json.JSONDecodeError`,
so a :class:`ValueError`) whose message is the standard library's.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from itertools import accumulate
from typing import Any

import jiter

__all__ = [
    "MAX_DEPTH",
    "JSONDecodeError",
    "JSONDepthError",
    "dumps_bytes",
    "dumps_compact",
    "fast_parser",
    "loads",
]

#: Default limit on the nesting of arrays and objects.
MAX_DEPTH = 512


class JSONDecodeError(json.JSONDecodeError):
    """The input is not JSON that :func:`loads` accepts.

    Constructed like :class:`json.JSONDecodeError` (``msg, doc, pos``); ``str()``
    gives the message with its line and column.
    """


class JSONDepthError(JSONDecodeError):
    """Arrays and objects are nested deeper than the ``max_depth`` allowed."""


# --- Parsing ---------------------------------------------------------------

_from_json = jiter.from_json


def loads(data: str | bytes | bytearray, max_depth: int = MAX_DEPTH) -> Any:
    """Parse one JSON document, like :func:`json.loads` (see the module doc).

    Bytes are decoded the way :func:`json.loads` decodes them (UTF-8, or the
    UTF-16/32 it detects). Raises :class:`JSONDepthError` when containers nest
    deeper than ``max_depth``, :class:`JSONDecodeError` on anything else that
    is not accepted. Cost: linear in ``len(data)``; on valid input, one jiter
    call plus well under a microsecond.
    """
    if isinstance(data, str):
        try:
            raw = data.encode()
        except UnicodeEncodeError:  # raw lone surrogates: only the slow path copes
            return _loads_slow(data, max_depth)
    elif isinstance(data, bytes):
        raw = data
    else:
        raw = bytes(data)
    # jiter refuses nesting deeper than _JITER_DEPTH itself, so when that is
    # at most max_depth, jiter accepting a document proves it shallow enough;
    # otherwise check first (two C-speed counts for nearly all input).
    if max_depth < _JITER_DEPTH and _too_deep(raw, max_depth):
        return _loads_slow(data, max_depth)
    try:
        return _from_json(raw, allow_inf_nan=False)
    except ValueError:
        # Invalid input, or valid input jiter declines (nesting deeper than its
        # limit, huge integers, surrogate escapes, UTF-16 or a BOM): the
        # standard library decides, and words the error.
        return _loads_slow(data, max_depth)


def _jiter_depth(ceiling: int = 1 << 16) -> int:
    """The deepest nesting the installed jiter accepts (``ceiling`` if deeper).

    Its limit is not part of its API, so it is measured, once, at import:
    about a dozen tiny parses.
    """

    def accepts(depth: int) -> bool:
        probes = (b"[" * depth + b"]" * depth, b'{"":' * (depth - 1) + b"{}" + b"}" * (depth - 1))
        for probe in probes:
            try:
                _from_json(probe)
            except ValueError:
                continue
            return True
        return False

    low, high = 1, 2  # invariant: jiter accepts depth `low`
    while high < ceiling and accepts(high):
        low, high = high, high * 2
    if high >= ceiling and accepts(ceiling):
        return ceiling
    while high - low > 1:  # invariant: accepts(low) and not accepts(high)
        middle = (low + high) // 2
        if accepts(middle):
            low = middle
        else:
            high = middle
    return low


_JITER_DEPTH = _jiter_depth()


def fast_parser(max_depth: int) -> Callable[..., Any] | None:
    """jiter's parser, for a hot loop that can do without :func:`loads`'s
    wrapper: None unless, for this ``max_depth``, the parser's result is
    always exactly what :func:`loads` returns. Call it as
    ``parse(data, allow_inf_nan=False)`` on bytes; on ``ValueError`` call
    :func:`loads`, which decides and words the error."""
    return _from_json if max_depth >= _JITER_DEPTH else None


# A complete JSON string, escapes included (unrolled, so no backtracking).
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def _too_deep(data: str | bytes, max_depth: int) -> bool:
    """Whether arrays and objects in ``data`` nest deeper than ``max_depth``.

    Exact for valid JSON; may over-count brackets after an unterminated string,
    which only matters for input that is invalid anyway. Cost: two ``count``
    calls; past that (more than ``max_depth`` brackets) a few C-speed linear
    passes.
    """
    if isinstance(data, bytes):
        # Brackets, quotes and backslashes are ASCII and never occur inside a
        # multi-byte UTF-8 sequence, so a latin-1 view gives the same answer.
        data = data.decode("latin-1")
    if data.count("[") + data.count("{") <= max_depth:
        return False
    brackets = _NOT_BRACKETS.sub("", _STRING.sub("", data))
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0) > max_depth


# A string to skip, or a token of interest outside strings.
_DEPTH_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)


def _depth_error(text: str, max_depth: int) -> JSONDepthError:
    """The error for ``text``, at the bracket that first goes too deep."""
    depth = 0
    pos = 0
    for match in _DEPTH_TOKENS.finditer(text):
        char = text[match.start()]
        if char == '"':
            continue
        depth += 1 if char in "[{" else -1
        if depth > max_depth:
            pos = match.start()
            break
    return JSONDepthError(f"Nesting deeper than {max_depth} levels", text, pos)


_CONSTANTS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|(-?Infinity|NaN)', re.DOTALL)
_SURROGATE_HINT = re.compile(r"\\u[dD][89a-fA-F]|[\ud800-\udfff]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _int_max_str_digits() -> int:
    # Python 3.10 before 3.10.7 has no limit (and never takes this path).
    get: Any = getattr(sys, "get_int_max_str_digits", None)
    return int(get()) if get is not None else 0


class _RejectedConstant(Exception):
    pass


def _reject_constant(name: str) -> Any:
    raise _RejectedConstant(name)


def _locate(pattern: re.Pattern[str], text: str) -> int:
    """Offset of the first match of ``pattern``'s group 1 outside strings, else 0."""
    for match in pattern.finditer(text):
        if match.group(1) is not None:
            return match.start(1)
    return 0


def _loads_slow(data: str | bytes | bytearray, max_depth: int) -> Any:
    """The standard library's parse, made safe: the path for everything jiter declines."""
    if isinstance(data, str):
        text = data
    else:
        data = bytes(data)
        try:
            text = data.decode(json.detect_encoding(data), "surrogatepass")
        except UnicodeDecodeError as exc:
            raise JSONDecodeError(
                f"Invalid {exc.encoding}: {exc.reason}", data.decode("latin-1"), exc.start
            ) from None
    if _too_deep(text, max_depth):
        raise _depth_error(text, max_depth) from None
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise JSONDecodeError(exc.msg, exc.doc, exc.pos) from None
    except _RejectedConstant:
        raise JSONDecodeError("Expecting value", text, _locate(_CONSTANTS, text)) from None
    except RecursionError:
        # Only reachable when the caller's own stack is already deep.
        raise JSONDepthError("Nesting too deep for the stack", text, 0) from None
    except ValueError:
        # The interpreter's integer-string conversion limit.
        limit = _int_max_str_digits()
        big_int = re.compile(_STRING.pattern + f"|(-?[0-9]{{{limit + 1},}})", re.DOTALL)
        raise JSONDecodeError(
            f"Integer with more than {limit} digits", text, _locate(big_int, text)
        ) from None
    if _SURROGATE_HINT.search(text) is not None:
        value = _replace_surrogates(value)
    return value


def _fix(text: str) -> str:
    return _SURROGATE.sub("\ufffd", text)


def _replace_surrogates(value: Any) -> Any:
    """Replace every surrogate code point in strings and keys by U+FFFD, in place.

    Iterative (no recursion limit). Two keys that become equal keep the last
    value, as duplicate keys do. Cost: linear in the size of ``value``.
    """
    if isinstance(value, str):
        return _fix(value)
    pending = [value]
    while pending:
        container = pending.pop()
        if isinstance(container, dict):
            items = list(container.items())
            container.clear()
            for key, item in items:
                if isinstance(item, str):
                    item = _fix(item)
                elif isinstance(item, (dict, list)):
                    pending.append(item)
                container[_fix(key)] = item
        elif isinstance(container, list):
            for i, item in enumerate(container):
                if isinstance(item, str):
                    container[i] = _fix(item)
                elif isinstance(item, (dict, list)):
                    pending.append(item)
    return value


# --- Serialising -----------------------------------------------------------

# ``json.dumps(v, **options)`` builds this same encoder on every call.
_compact_encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def dumps_compact(value: Any) -> str:
    """``json.dumps(value, separators=(",", ":"), ensure_ascii=False)``, exactly.

    Key order is kept. Used where the canonical form of a value is text (Gemini
    ``args``, eagerly streamed Anthropic ``input``, signatures); once per
    block, never per delta, so the standard library's speed is enough and its
    float formatting (``1e+16``, ``1e-07``) is the reference by definition.
    """
    return _compact_encode(value)


try:  # orjson is optional (the gateway extra); where it is missing, the stdlib writes.
    import orjson

    _orjson_dumps: Callable[[Any], bytes] | None = orjson.dumps
except ImportError:  # pragma: no cover - orjson is in the dev extra
    _orjson_dumps = None


def dumps_bytes(value: Any) -> bytes:
    """Compact JSON as UTF-8 bytes, for bytes that go out (stream events,
    request bodies, response bodies, log lines): read as JSON, never
    compared as text. orjson writes them when it is installed (a tenth of
    the standard library's CPU on a log line, a quarter on cold caches); a
    value it refuses (an integer beyond 64 bits, a non-string key) and every
    value without it go to :func:`dumps_compact`. The two differ
    only in how some floats are written, not in their values (``0.00001``
    and ``1e16`` where the standard library writes ``1e-05``, ``1e+16``)."""
    if _orjson_dumps is not None:
        try:
            return _orjson_dumps(value)
        except TypeError:
            pass
    return _compact_encode(value).encode()
