"""Building instances of frozen, slotted dataclasses on hot paths.

A frozen dataclass's generated ``__init__`` stores each field through
``object.__setattr__``, about 100 ns a field: for an event per wire delta, as
much as parsing the delta's JSON. :func:`twin` makes a plain class with the
same slots and no ``__init__``. A hot-path constructor calls the twin
(``_Twin()``: an empty instance, 20 ns sooner than ``object.__new__(_Twin)``),
fills it with ordinary attribute stores and then sets its ``__class__`` to
the frozen class, which Python allows exactly when the two layouts are the same (and
refuses with ``TypeError`` otherwise, so a mismatch cannot go unnoticed).
The result is an ordinary instance of the frozen class, equal to one made
by calling it.

Measured on CPython 3.11: ``TextDelta`` 184 → 146 ns, ``Usage`` (seven
fields) 851 → 197 ns. Users build these objects with the classes; the
constructors using this are internal.
"""

from __future__ import annotations

from typing import Any

__all__ = ["twin"]


def twin(cls: type) -> Any:
    """A mutable class with the slot layout of the slotted class ``cls``."""
    return type(f"_{cls.__name__}Fields", (), {"__slots__": cls.__dict__["__slots__"]})
