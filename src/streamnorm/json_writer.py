"""JSON text written incrementally from values set at paths.

Some wires stream a tool call's arguments not as text but as values set at
JSON paths, one piece at a time (Gemini ``partialArgs``, providers.md §4.3:
``$.a.b[2]`` gets ``"par"``, then ``"tial"``). :class:`IncrementalJSONWriter`
turns such pieces back into the argument text, fragment by fragment, so that
the rest of the pipeline (``ArgumentBuffer``, previews, the final strict
parse in ``partial_json``) treats them like any streamed argument text. It is
the inverse direction of :class:`~streamnorm.partial_json.IncrementalJSONParser`.
"""

from __future__ import annotations

from itertools import pairwise
from json.encoder import encode_basestring
from typing import Any

from ._json import dumps_compact

__all__ = ["IncrementalJSONWriter"]


class IncrementalJSONWriter:
    """Turns values set at JSON paths (Gemini ``partialArgs`` entries) into
    JSON text fragments whose concatenation is the whole object.

    Entering a path closes the open string and any containers the new path
    leaves, writes ``,`` and ``"key":`` as needed and opens the containers
    it enters (the root ``{`` with the first value); then it writes the
    value, a string staying open so that later pieces for the same path
    extend it. :meth:`close` closes everything, root included.

    Cost: linear in the size of the entries. The open string's pieces are
    kept in a list and joined into :attr:`tree` once, when another path is
    entered, the call closes or the tree is read: adding each piece to the
    string so far would copy it again for every piece (quadratic).

    Paths that would reopen a closed container or string, set a value twice,
    skip an array index or change a container's type cannot be written
    incrementally: from then on :meth:`set` returns ``None`` and only
    :attr:`tree` (the value so far, always kept) is exact.
    """

    __slots__ = (
        "_failed_reported",
        "_frames",
        "_leaf",
        "_pieces",
        "_string_at",
        "_string_open",
        "_tree",
        "ok",
    )

    def __init__(self) -> None:
        self._tree: dict[str, Any] = {}
        self.ok = True
        self._frames: list[_Frame] = []  # the open containers, root first
        self._leaf: tuple[str | int, ...] | None = None
        self._string_open = False
        self._failed_reported = False
        # The string set last: its container and key in the tree (None if it
        # has no place there), and its value in pieces, ``_pieces[0]`` being
        # what the tree holds.
        self._string_at: tuple[Any, str | int] | None = None
        self._pieces: list[str] = []

    @property
    def tree(self) -> dict[str, Any]:
        """The value so far."""
        self._join()
        return self._tree

    def failed_now(self) -> bool:
        """True once, the first time synthesis has failed."""
        if self.ok or self._failed_reported:
            return False
        self._failed_reported = True
        return True

    def set(self, path: tuple[str | int, ...], value: Any) -> str | None:
        """Set ``value`` at ``path``; a string extends the string set just before
        at the same path. Returns the text to emit ("" for nothing), or
        ``None`` once incremental synthesis is impossible."""
        if isinstance(value, str) and self._string_open and path == self._leaf:
            if self._string_at is not None:
                self._pieces.append(value)
            # else the string has no place in the tree, nor have its pieces
            return encode_basestring(value)[1:-1] if self.ok else None
        self._join()
        self._assign(path, value)
        out: str | None = None
        if self.ok:
            entered = self._enter(path)
            if entered is None:
                self.ok = False
            else:
                text = dumps_compact(value)
                out = entered + (text[:-1] if isinstance(value, str) else text)
        self._leaf = path
        self._string_open = isinstance(value, str)
        return out

    def close(self) -> str:
        """The text that ends the argument object (everything still open)."""
        self._join()
        if not self.ok or not self._frames:
            return ""
        out = ['"'] if self._string_open else []
        out.extend("]" if frame.array else "}" for frame in reversed(self._frames))
        self._frames.clear()
        self._string_open = False
        return "".join(out)

    def _join(self) -> None:
        """Put the open string's pieces into the tree as one string."""
        pieces = self._pieces
        if len(pieces) > 1 and self._string_at is not None:
            node, key = self._string_at
            node[key] = pieces[0] = "".join(pieces)
            del pieces[1:]

    def _enter(self, path: tuple[str | int, ...]) -> str | None:
        if not path or not isinstance(path[0], str):
            return None  # the arguments are an object: the root takes keys only
        out: list[str] = []
        if not self._frames:
            self._frames.append(_Frame(None, array=False))
            out.append("{")
        containers = path[:-1]
        # Open containers below the root, compared with the new path's.
        common = 0
        while (
            common < len(containers)
            and common + 1 < len(self._frames)
            and self._frames[common + 1].segment == containers[common]
        ):
            common += 1
        if self._string_open:
            out.append('"')
            self._string_open = False
        while len(self._frames) > common + 1:
            out.append("]" if self._frames.pop().array else "}")
        for depth in range(common, len(path)):
            segment = path[depth]
            member = self._frames[-1].member(segment)
            if member is None:
                return None
            out.append(member)
            if depth < len(containers):
                child_is_array = isinstance(path[depth + 1], int)
                self._frames.append(_Frame(segment, array=child_is_array))
                out.append("[" if child_is_array else "{")
        return "".join(out)

    def _assign(self, path: tuple[str | int, ...], value: Any) -> None:
        """Set ``value`` in :attr:`tree` (containers made as needed); a string
        becomes the one later pieces extend."""
        self._string_at = None
        if not path:
            return
        node: Any = self._tree
        for segment, following in pairwise(path):
            empty: Any = [] if isinstance(following, int) else {}
            node = _child(node, segment, empty)
            if node is None:
                return
        last = path[-1]
        if isinstance(node, dict) and isinstance(last, str):
            node[last] = value
        elif isinstance(node, list) and isinstance(last, int):
            if last > len(node) + _MAX_INDEX_GAP:
                return  # a wire index far past the end: not padded into memory
            while len(node) <= last:
                node.append(None)
            node[last] = value
        else:
            return
        if isinstance(value, str):
            self._string_at = (node, last)
            self._pieces = [value]


#: How far past the end of an array a ``partialArgs`` index may point (the gap
#: is filled with nulls); further entries are left out of the value, so a
#: path like ``$.a[99999999999]`` cannot make the decoder allocate for it.
_MAX_INDEX_GAP = 16


class _Frame:
    """One open container of :class:`IncrementalJSONWriter`."""

    __slots__ = ("array", "count", "keys", "segment")

    def __init__(self, segment: str | int | None, *, array: bool) -> None:
        self.segment = segment
        self.array = array
        self.count = 0
        self.keys: set[str] = set()

    def member(self, segment: str | int) -> str | None:
        """The text that starts member ``segment``, or None if it cannot come next."""
        comma = "," if self.count else ""
        if self.array:
            if not isinstance(segment, int) or segment != self.count:
                return None
            self.count += 1
            return comma
        if not isinstance(segment, str) or segment in self.keys:
            return None
        self.keys.add(segment)
        self.count += 1
        return comma + dumps_compact(segment) + ":"


def _child(node: Any, segment: str | int, empty: Any) -> Any:
    """``node[segment]``, created as ``empty`` when missing or of the wrong type."""
    if isinstance(node, dict) and isinstance(segment, str):
        child = node.get(segment)
        if not isinstance(child, type(empty)):
            child = node[segment] = empty
        return child
    if isinstance(node, list) and isinstance(segment, int):
        if segment > len(node) + _MAX_INDEX_GAP:
            return None
        while len(node) <= segment:
            node.append(None)
        child = node[segment]
        if not isinstance(child, type(empty)):
            child = node[segment] = empty
        return child
    return None
