"""DeepSeek V3.2 DSML (``deepseek_v32``) and Granite 3.x (``granite``) beyond
their samples: streaming order, declared parameter types, the ``<response>``
wrapper and cut-off input through ``NormalizingStream``.

The samples of both dialects (``test_inline_samples.SAMPLES``) are fed whole,
per character and under 500 random splits by ``test_inline_dialects``; the
malformed and truncated cases live in ``test_inline_errors``.
"""

from __future__ import annotations

import json

from streamnorm.events import Done, TextDelta, ThinkingDelta, ToolCallDelta
from streamnorm.inline import CallArgs, CallClose, CallOpen, get_parser
from streamnorm.inline.deepseek import DSML
from streamnorm.inline.scanner import body_starts
from streamnorm.inline.xmlargs import plain_key
from streamnorm.messages import StopReason, TextBlock, ToolCallBlock

from .test_inline_samples import SAMPLES, fold, random_splits, run_stream, summary, upstream

D = "｜DSML｜"


def dsml_call(name: str, *params: tuple[str, str, str | None]) -> str:
    """One ``invoke`` with ``(key, value, string attribute)`` parameters."""
    parts = [f'<{D}invoke name="{name}">\n']
    for key, value, string in params:
        attr = f' string="{string}"' if string is not None else ""
        parts.append(f'<{D}parameter name="{key}"{attr}>{value}</{D}parameter>\n')
    parts.append(f"</{D}invoke>\n")
    return "".join(parts)


def dsml_block(*calls: str) -> str:
    return f"<{D}function_calls>\n" + "".join(calls) + f"</{D}function_calls>"


# --------------------------------------------------------------------------
# DSML


def test_dsml_string_value_streams_before_its_close() -> None:
    """A ``string="true"`` value streams as it arrives; a JSON value is
    emitted when its parameter closes (reference §2.4)."""
    p = get_parser("deepseek_v32")
    head = f'<{D}function_calls>\n<{D}invoke name="write">\n'
    out = p.push_text(head + f'<{D}parameter name="body" string="true">first half, ')
    assert [type(x) for x in out.pieces][:1] == [CallOpen]
    assert "".join(x.delta for x in out.pieces if isinstance(x, CallArgs)).endswith(
        '"body": "first half, '
    )
    out = p.push_text(f'second</{D}parameter>\n<{D}parameter name="n" string="false">4')
    args = "".join(x.delta for x in out.pieces if isinstance(x, CallArgs))
    assert args == 'second", "n": '  # the number waits for its close
    out = p.push_text(f"2</{D}parameter>\n</{D}invoke>\n</{D}function_calls>")
    assert [x.delta for x in out.pieces if isinstance(x, CallArgs)] == ["42", "}"]
    assert isinstance(out.pieces[-1], CallClose) and out.pieces[-1].error is None
    assert p.finish().pieces == ()


def test_dsml_declared_types() -> None:
    """The ``string`` attribute types a value whatever the schema says; without
    it the schema decides, and without either the no-schema rule applies."""
    assert DSML.param_header('city" string="true') == ("city", ("string",))
    assert DSML.param_header('n" string="FALSE') == (
        "n",
        ("null", "boolean", "integer", "number", "array", "object", "json"),
    )
    assert DSML.param_header("city") == ("city", None)
    assert DSML.param_header("flag string=true") == ("flag string=true", None)
    assert DSML.param_header('n" string=true') == ("n", ("string",))
    assert DSML.param_header(' " string="true') is None
    assert plain_key(" k ") == ("k", None) and plain_key("  ") is None
    src = dsml_block(
        dsml_call(
            "f",
            ("a", "7", None),
            ("b", "Paris", None),
            ("c", "7", "true"),
            ("d", "[1, 'x']", "false"),
            ("e", "False", "false"),
            ("f", '"Paris"', "false"),
        )
    )
    out = get_parser("dsml").parse_all(src)
    (call,) = out.calls
    assert call.arguments == (
        '{"a": 7, "b": "Paris", "c": "7", "d": [1, "x"], "e": false, "f": "Paris"}'
    )
    assert not out.errors


def test_dsml_string_false_value_that_is_not_json() -> None:
    """``string="false"`` promises JSON: text that is none stays a string,
    reported as ``invalid_parameter_value``."""
    out = get_parser("dsml").parse_all(dsml_block(dsml_call("f", ("a", "hello", "false"))))
    (call,) = out.calls
    assert call.arguments == '{"a": "hello"}'
    assert [(e.kind, e.raw) for e in out.errors] == [("invalid_parameter_value", "hello")]


def test_dsml_calls_in_reasoning() -> None:
    """A rehearsed DSML block inside ``<think>`` stays reasoning by default and
    is lifted out with ``calls_in_reasoning="extract"``."""
    src = "<think>Plan: " + dsml_block(dsml_call("f")) + "</think>\n\nDone."
    literal = get_parser("deepseek_v32").parse_all(src)
    assert (literal.text, literal.calls) == ("\n\nDone.", ())
    assert literal.reasoning.startswith("Plan: <｜DSML｜function_calls>")
    extract = get_parser("deepseek_v32", calls_in_reasoning="extract").parse_all(src)
    assert [c.name for c in extract.calls] == ["f"]
    assert extract.reasoning == "Plan: "
    assert [e.kind for e in extract.errors] == ["stray_reasoning_close"]


def test_dsml_cut_by_length_through_the_stream() -> None:
    """Reference §6.8: a call cut inside a value is incomplete, the stop reason stays."""
    src = "Sure." + dsml_block(dsml_call("write", ("text", "all of it", "true")))[:-60]
    events = run_stream("deepseek_v32", upstream(list(src), stop=StopReason.LENGTH))
    done = events[-1]
    assert isinstance(done, Done)
    assert done.message.stop_reason == StopReason.LENGTH
    blocks = [b for b in done.message.content if isinstance(b, ToolCallBlock)]
    assert [(b.name, b.error) for b in blocks] == [("write", "incomplete")]


def test_body_starts_cut_at_end() -> None:
    """With ``cut_at_end`` a body start cut by the end of input confirms."""
    plain = body_starts("<invoke")
    cut = body_starts("<invoke", cut_at_end=True)
    assert plain(" <inv", 0, False) is None and cut(" <inv", 0, False) is None
    assert plain(" <inv", 0, True) is False
    assert cut(" <inv", 0, True) is True
    assert cut(" <x", 0, True) is False
    assert cut("  ", 0, True) is False


# --------------------------------------------------------------------------
# Granite


def test_granite_argument_bytes_as_generated() -> None:
    args = '{"z": 1,   "a": "\\u00e9 é \\"q\\"",\n "m": [ ]}'
    for opener in ("<|tool_call|>[", "<tool_call>[", "<function_call> "):
        tail = "]" if opener.endswith("[") else ""
        out = get_parser("granite").parse_all(
            opener + '{"name": "f", "arguments": ' + args + "}" + tail
        )
        assert [c.arguments for c in out.calls] == [args]
        assert list(json.loads(args)) == ["z", "a", "m"]


def test_granite_response_markers() -> None:
    """``<response>`` opens only where the answer begins, ``</response>`` only
    while one is open; both are consumed. Elsewhere they are text."""
    cases = [
        ("<response>Hi.</response>", "Hi."),
        ("<think>r</think>\n\n<response>\nHi.\n</response>\n", "\nHi.\n"),
        ("<response></response>Hi.", "Hi."),
        ("<response>a <response> b</response> c", "a <response> b c"),
        ("Say <response> and </response>.", "Say <response> and </response>."),
        ("</response>Hi.", "</response>Hi."),
        ("<response>Open to the end", "Open to the end"),
    ]
    for src, text in cases:
        want = get_parser("granite").parse_all(src)
        assert (want.text, want.errors) == (text, ()), src
        for chunks in random_splits(src, 60, seed=len(src)):
            assert summary(fold("granite", chunks)) == summary(want), chunks
    # Without the dialect, the wrapper is text like any other.
    assert get_parser("hermes").parse_all("<response>Hi.</response>").text == (
        "<response>Hi.</response>"
    )


def test_granite_stream_consumes_response_and_reports_tool_use() -> None:
    src = (
        "<think>Weather question.</think>\n<response>Checking.</response>\n"
        '<tool_call>[{"name": "get_weather", "arguments": {"city": "Paris"}}]'
    )
    events = run_stream("granite", upstream(list(src)))
    for ev in events:
        if isinstance(ev, (TextDelta, ThinkingDelta)):
            assert "response>" not in ev.delta and "think>" not in ev.delta
    assert sum(isinstance(ev, ToolCallDelta) for ev in events) > 1
    done = events[-1]
    assert isinstance(done, Done)
    assert done.message.stop_reason == StopReason.TOOL_USE
    content = done.message.content
    assert [type(b) for b in content][-2:] == [TextBlock, ToolCallBlock]
    call = content[-1]
    assert isinstance(call, ToolCallBlock)
    assert call.raw_arguments == '{"city": "Paris"}'


# --------------------------------------------------------------------------
# Coverage of the samples


def test_every_form_has_a_sample() -> None:
    """Each form and variant of both dialects is among the split-tested samples."""
    sources = {s.dialect: "" for s in SAMPLES}
    for s in SAMPLES:
        sources[s.dialect] += s.source
    dsml = sources["deepseek_v32"] + sources["dsml"]
    for form in (
        "<｜DSML｜function_calls>",
        "<|DSML|tool_calls>",
        "<||DSML||function_calls>",
        "<|DSML|/parameter>",
        'string="true"',
        'string="false"',
    ):
        assert form in dsml, form
    granite = sources["granite"] + sources["granite3"]
    for form in ("<|tool_call|>[", "<tool_call>[", "<function_call> {", "<response>"):
        assert form in granite, form
