"""Call blocks between an open and a close marker: ``<tool_call>…</tool_call>`` and kin.

The Qwen family shares the block markers and differs in the body:

* ``hermes`` — a JSON call object (or several, or a JSON list of them),
  optionally fenced with ```` ```json ````; an XML body is accepted too;
* ``qwen3_coder`` — ``<function=NAME><parameter=KEY>…`` XML, several
  functions per block; a JSON body is accepted too;
* ``glm45`` / ``glm47`` — ``NAME`` then ``<arg_key>``/``<arg_value>`` pairs.

Other block dialects reuse the same section with their own markers:
``jamba`` and ``minimax`` (``<tool_calls>`` holding a JSON array or one
object per line), ``minimax_m2`` (``<minimax:tool_call>`` with
``<invoke name=…>`` XML), ``seed_oss`` (``<seed:tool_call>``), ``internlm``
(``<|action_start|><|plugin|>`` … ``<|action_end|>``), ``delimited``
(markers given as options), and DeepSeek V3.2 DSML (:mod:`.deepseek`).

The opener counts only when the body start confirms it (``{``, ``[``,
```` ``` ````, ``<function=``, or for GLM a name followed by ``<arg_key>`` or
the close), so prose that mentions ``<tool_call>`` stays text. MiniMax M2
(like DSML) also counts a body start that the end of input cut off
(``<minimax:tool_call>\n<inv``): its long ``<invoke name="`` header spans
several tokens, so a length stop can land inside it, and the call is then
reported as cut (reference §2.5) instead of its markup falling into the text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import Enum
from typing import ClassVar

from .base import ParserOptions, ToolCallParser
from .calllist import CallList
from .calls import SectionContext
from .engine import InlineParser, Opener
from .jsonargs import DONE
from .scanner import MAX_WS, MORE, MarkerSet, body_starts, expect_after_ws
from .xmlargs import GLM, MINIMAX, QWEN, XmlGrammar, XmlReader

__all__ = ["TagBlock", "TagDialect", "tag_parser"]

_FENCE = re.compile(r"```[A-Za-z]*")


@dataclass(frozen=True, slots=True)
class TagDialect:
    """Block markers and the bodies a block may hold.

    ``open`` and ``close`` are tuples of accepted spellings; the first close
    spelling is the canonical one, used in messages.
    """

    open: tuple[str, ...]
    close: tuple[str, ...]
    json: bool
    xml: XmlGrammar | None


_BODY, _NEXT, _ENTRIES, _XML, _JUNK = range(5)


class _Framing(Enum):
    """What :meth:`TagBlock._json_framing` answers for text that is no JSON framing."""

    NOT_JSON = 0


class TagBlock:
    """Section for one block: JSON call entries or XML functions up to the close.

    A JSON body is read entry by entry by :class:`.CallList`, the reader the
    Mistral-style lists use, so a bad entry costs only itself: a JSON list
    (``[…]``) is read as a list; outside one, each ``{`` starts a call
    object, and other text runs as one bad entry up to the next ``{``,
    ``[``, fence or the close. Whitespace, fences, and ``,``/``]`` left
    between entries are framing. XML bodies are read by :class:`.XmlReader`;
    text after an XML function that broke off is reported with its raw
    text. A block that yields no call at all is ``malformed_tool_call`` with
    the whole block as ``raw``.
    """

    __slots__ = (
        "_closeset",
        "_ctx",
        "_d",
        "_entries",
        "_junk",
        "_made",
        "_state",
        "_textends",
        "_xml",
    )

    def __init__(self, ctx: SectionContext, dialect: TagDialect) -> None:
        self._ctx = ctx
        self._d = dialect
        self._closeset = MarkerSet(dialect.close)
        self._textends = MarkerSet((*dialect.close, "{", "[", "```"))
        self._state = _BODY
        self._entries = CallList(ctx, self._closeset)
        self._xml: XmlReader | None = None
        self._junk: list[str] = []
        self._made = 0  # XML calls made in this block

    def _called(self) -> bool:
        xml = self._xml
        return self._entries.called or self._made > 0 or (xml is not None and xml.completed > 0)

    def feed(self) -> bool:
        """Read as far as the buffered text allows; True when the block is
        over. One step per state: each returns None to go on, else the
        answer (False: more text needed)."""
        while True:
            done = self._STEPS[self._state](self)
            if done is not None:
                return done

    def _in_entries(self) -> bool | None:
        if self._entries.feed() == MORE:
            return False
        self._state = _NEXT  # a stop marker, if one ended it, is the close
        return None

    def _in_xml(self) -> bool | None:
        assert self._xml is not None
        r = self._xml.feed(self._ctx.cur)
        if r == MORE:
            return False
        if r == DONE:
            return True
        xml, self._xml = self._xml, None
        self._made += xml.completed
        self._abandon(xml.call)
        return None

    def _in_junk(self) -> bool | None:
        return self._junk_until_close()

    def _framing(self) -> bool | None:
        """Between entries (and, in ``_BODY``, before the first): the block's
        close, JSON framing, an XML function, or text that is none of them."""
        cur, d = self._ctx.cur, self._d
        cur.take_ws()
        buf, i = cur.buf, cur.pos
        if i >= len(buf):
            return False
        if buf[i] in self._closeset.first:
            hit = self._closeset.at(buf, i, cur.final)
            if hit == MORE:
                return False
            if isinstance(hit, str):
                return self._close(i + len(hit))
        if d.json:
            framed = self._json_framing(buf, i)
            if not isinstance(framed, _Framing):
                return framed
        if d.xml is not None and self._state == _BODY:
            starts = d.xml.function_starts(buf, i, cur.final)
            if starts is None:
                return False
            if starts:
                self._xml = XmlReader(self._ctx.calls, d.xml)
                self._state = _XML
                return None
        if d.json:
            self._entries.open_text(self._textends)
            self._state = _ENTRIES
        else:
            self._state = _JUNK
        return None

    def _close(self, end: int) -> bool:
        """The block's close marker ends at ``end``: the block is over."""
        cur = self._ctx.cur
        cur.take(end)
        if not self._called():
            self._ctx.calls.malformed(
                "malformed_tool_call", "the block holds no call", cur.raw(), self._ctx.prose
            )
        return True

    def _json_framing(self, buf: str, i: int) -> bool | _Framing | None:
        """A code fence, an entry's ``{``/``[`` or list framing at ``i``; the
        step's answer, or ``_Framing.NOT_JSON`` when the text is none of them."""
        cur = self._ctx.cur
        c = buf[i]
        fence = _FENCE.match(buf, i)
        if fence is not None:
            if fence.end() == len(buf) and not cur.final:
                return False  # the language tag may go on
            cur.take(fence.end())
            return None
        if len(buf) - i < 3 and "```".startswith(buf[i:]) and not cur.final:
            return False
        if c == "[":
            cur.take(i + 1)
            self._entries.open_list()
        elif c == "{":
            self._entries.open_object()
        elif c in ",]":
            cur.take(i + 1)  # list framing left between entries
            self._state = _NEXT
            return None
        else:
            return _Framing.NOT_JSON
        self._state = _ENTRIES
        return None

    #: The step of each state, indexed by the state's number.
    _STEPS: ClassVar[tuple[Callable[[TagBlock], bool | None], ...]] = (
        _framing,
        _framing,
        _in_entries,
        _in_xml,
        _in_junk,
    )

    def _abandon(self, call: int | None) -> None:
        """An XML function broke off: close its call and look for the block close."""
        if call is not None:
            self._made += 1
            self._ctx.calls.close(call, "incomplete")
            self._ctx.calls.error(
                "malformed_tool_call",
                "the call's arguments were not complete where its markup broke off",
                self._ctx.cur.raw(),
            )
            self._ctx.cur.start_log()
        self._state = _JUNK

    def _junk_until_close(self) -> bool:
        cur = self._ctx.cur
        i, marker = self._closeset.find(cur.buf, cur.pos, cur.final)
        self._junk.append(cur.take(i))
        if marker is None:
            return False
        junk = "".join(self._junk)
        self._junk.clear()
        cur.take(i + len(marker))
        if not self._called():
            self._ctx.calls.malformed(
                "malformed_tool_call",
                "the block holds no readable call",
                cur.raw(),
                self._ctx.prose,
            )
        elif junk.strip():
            self._ctx.calls.error(
                "malformed_tool_call", "unexpected text inside the call block", junk
            )
        return True

    def finish(self) -> None:
        calls, cur, prose = self._ctx.calls, self._ctx.cur, self._ctx.prose
        raw = cur.raw()  # since the opener, or since the last complete call or entry start
        xml = self._xml
        if xml is not None and xml.call is not None:
            if xml.between_params:
                xml.close_open_function()
            calls.cut(xml.call, xml.between_params, raw, prose)
        elif self._entries.finish():
            pass
        elif not self._called():
            calls.cut(None, False, raw, prose)
        elif self._state in (_XML, _JUNK) and raw.strip():
            calls.error("unclosed_tool_call", "the input ended inside the call block", raw)
        else:
            calls.error("missing_close_marker", f"the input ended before {self._d.close[0]}", "")


# --------------------------------------------------------------------------
# Confirmation rules and registration

_GLM_NAME = re.compile(rf"\s{{0,{MAX_WS}}}[^\s<>{{}}\[\]\"]{{1,128}}")


def _glm_confirm(buf: str, i: int, final: bool) -> bool | None:
    """A GLM body: a name, then (after whitespace) ``<arg_key>`` or the close."""
    m = _GLM_NAME.match(buf, i)
    if m is None:
        k, _ = expect_after_ws(buf, i, final, ("{", "["))
        return None if k == MORE else k >= 0
    if m.end() == len(buf) and not final:
        return None
    k, _ = expect_after_ws(buf, m.end(), final, ("<arg_key>", "</tool_call>"))
    return None if k == MORE else k >= 0


def tag_parser(
    dialect: TagDialect, confirm: Callable[[str, int, bool], bool | None]
) -> Callable[[ParserOptions], ToolCallParser]:
    """A parser factory for a block dialect: one opener per open spelling."""

    def section(ctx: SectionContext, _marker: str) -> TagBlock:
        return TagBlock(ctx, dialect)

    openers = tuple(Opener(m, section, confirm) for m in dialect.open)

    def make(options: ParserOptions) -> ToolCallParser:
        return InlineParser(options, openers)

    return make


_HERMES = TagDialect(("<tool_call>",), ("</tool_call>",), json=True, xml=QWEN)
_GLM = TagDialect(("<tool_call>",), ("</tool_call>",), json=True, xml=GLM)
_JSON_OR_XML = body_starts("{", "[", "```", "<function=")

#: The Qwen/Hermes block: a JSON object or Qwen XML between ``<tool_call>`` tags.
hermes = tag_parser(_HERMES, _JSON_OR_XML)
#: GLM 4.5+: ``<tool_call>name`` then ``<arg_key>``/``<arg_value>`` pairs.
glm = tag_parser(_GLM, _glm_confirm)


# Block dialects beyond the Qwen family: same section, other markers.
_TOOL_CALLS = TagDialect(("<tool_calls>",), ("</tool_calls>",), json=True, xml=None)
_MINIMAX_M2 = TagDialect(
    ("<minimax:tool_call>",), ("</minimax:tool_call>",), json=False, xml=MINIMAX
)
_SEED = TagDialect(
    ("<seed:tool_call>",),
    ("</seed:tool_call>",),
    json=True,
    xml=replace(QWEN, block_close=("</seed:tool_call>",)),
)
_INTERNLM = TagDialect(("<|action_start|><|plugin|>",), ("<|action_end|>",), json=True, xml=None)

#: ``<tool_calls>[…]</tool_calls>`` (Jamba, MiniMax M1).
tool_calls_list = tag_parser(_TOOL_CALLS, body_starts("[", "{"))
minimax_m2 = tag_parser(_MINIMAX_M2, body_starts(*MINIMAX.func_open, cut_at_end=True))
seed_oss = tag_parser(_SEED, body_starts("<function=", "{"))
internlm = tag_parser(_INTERNLM, body_starts("{"))


def delimited(options: ParserOptions) -> ToolCallParser:
    """Custom block markers: ``open``/``close`` options, ``body="json"|"xml"``."""
    if not options.open or not options.close:
        raise ValueError("the delimited parser needs the open= and close= options")
    close = (options.close,)
    xml = replace(QWEN, block_close=close) if options.body == "xml" else None
    dialect = TagDialect((options.open,), close, json=options.body == "json", xml=xml)
    starts = ("<function=",) if xml is not None else ("{", "[", "```")
    return tag_parser(dialect, body_starts(*starts))(options)
