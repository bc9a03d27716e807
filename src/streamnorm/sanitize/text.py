"""Removal of unpaired surrogates from every outbound string (``sanitize.md`` §7).

Python strings can hold lone surrogates (``surrogateescape`` decoding, JSON
``\\ud83d`` escapes, JavaScript-origin data); they cannot be encoded as UTF-8
and providers reject the request. A high surrogate directly followed by a low
one is joined into the code point the pair encodes; any other surrogate is
removed. Every function returns its argument itself when nothing changed, so
unchanged data stays shared and changed data is always a new object.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, TypeVar

from ..messages import (
    ContentBlock,
    DocumentBlock,
    ImageBlock,
    ProviderBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    UserContent,
)

__all__ = ["clean_block", "clean_content", "clean_str", "clean_value", "has_surrogate"]

_SURROGATES = re.compile("[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]")
_ANY_SURROGATE = re.compile("[\ud800-\udfff]")

B = TypeVar(
    "B",
    bound="TextBlock | ThinkingBlock | ToolCallBlock | ProviderBlock | ImageBlock | DocumentBlock",
)


def _join_or_drop(m: re.Match[str]) -> str:
    s = m.group()
    if len(s) == 2:
        return chr(0x10000 + ((ord(s[0]) - 0xD800) << 10) + (ord(s[1]) - 0xDC00))
    return ""


def has_surrogate(s: str) -> bool:
    return not s.isascii() and _ANY_SURROGATE.search(s) is not None


def clean_str(s: str) -> str:
    """``s`` with surrogate pairs joined and lone surrogates removed."""
    if not has_surrogate(s):
        return s
    return _SURROGATES.sub(_join_or_drop, s)


def clean_value(v: Any) -> Any:
    """Clean strings inside JSON-like data (keys too), at any depth.

    A walk with its own stack rather than recursion: arguments or content
    nested deeper than Python's recursion limit are data like any other."""
    if not isinstance(v, (Mapping, list, tuple)):
        return clean_str(v) if isinstance(v, str) else v
    stack: list[tuple[Any, list[Any], list[Any]]] = [(v, _children(v), [])]
    while True:
        node, pending, done = stack[-1]
        if len(done) < len(pending):
            child = pending[len(done)]
            if isinstance(child, (Mapping, list, tuple)):
                stack.append((child, _children(child), []))
            else:
                done.append(clean_str(child) if isinstance(child, str) else child)
            continue
        stack.pop()
        result = _rebuilt(node, pending, done)
        if not stack:
            return result
        stack[-1][2].append(result)


def _children(v: Mapping[Any, Any] | list[Any] | tuple[Any, ...]) -> list[Any]:
    """The values under ``v`` in order (a mapping's keys and values alternating)."""
    if isinstance(v, Mapping):
        return [part for item in v.items() for part in item]
    return list(v)


def _rebuilt(node: Any, before: list[Any], after: list[Any]) -> Any:
    """``node`` itself when no child changed, else a new one holding ``after``."""
    if all(a is b for a, b in zip(after, before, strict=True)):
        return node
    if isinstance(node, Mapping):
        return dict(zip(after[0::2], after[1::2], strict=True))
    return tuple(after) if isinstance(node, tuple) else after


def _changed(block: B, **fields: Any) -> B:
    """``replace`` only the fields that changed; the block itself otherwise."""
    diff = {k: v for k, v in fields.items() if v is not getattr(block, k)}
    return replace(block, **diff) if diff else block


def clean_block(block: B) -> B:
    """A content block with every string field cleaned."""
    if isinstance(block, TextBlock):
        return _changed(
            block,
            text=clean_str(block.text),
            signature=clean_value(block.signature),
            citations=clean_value(block.citations),
        )
    if isinstance(block, ThinkingBlock):
        return _changed(
            block, thinking=clean_str(block.thinking), signature=clean_value(block.signature)
        )
    if isinstance(block, ToolCallBlock):
        return _changed(
            block,
            name=clean_str(block.name),
            arguments=clean_value(block.arguments),
            raw_arguments=clean_str(block.raw_arguments),
            signature=clean_value(block.signature),
            error=clean_value(block.error),
        )
    if isinstance(block, ProviderBlock):
        return _changed(block, kind=clean_str(block.kind), data=clean_value(block.data))
    return _changed(
        block,
        mime_type=clean_str(block.mime_type),
        data=clean_value(block.data),
        url=clean_value(block.url),
    )


def clean_content(
    content: str | tuple[UserContent, ...],
) -> str | tuple[UserContent, ...]:
    """User or tool-result content: a string or a tuple of blocks."""
    if isinstance(content, str):
        return clean_str(content)
    parts = tuple(clean_block(b) for b in content)
    return content if all(p is b for p, b in zip(parts, content, strict=True)) else parts


def blocks_changed(new: tuple[ContentBlock, ...], old: tuple[ContentBlock, ...]) -> bool:
    """Whether a rebuilt content tuple differs from the original by identity."""
    return len(new) != len(old) or any(a is not b for a, b in zip(new, old, strict=True))
