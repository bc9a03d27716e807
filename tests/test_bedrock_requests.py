"""Bedrock request encoders (issue 32 item 2): Converse / ConverseStream and
Invoke bodies, judged by botocore's own service model (its parameter
validator, and its serializer, which must write the very body and path
streamnorm writes) and read back to the same request."""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

import pytest
from botocore.model import OperationModel
from botocore.serialize import create_serializer
from botocore.validate import ParamValidator

from streamnorm import (
    AssistantMessage,
    ImageBlock,
    Reasoning,
    Request,
    ResponseFormat,
    StopReason,
    TextBlock,
    ThinkingBlock,
    Tool,
    ToolCallBlock,
    ToolResultMessage,
    Usage,
    UserMessage,
    decode_request,
    encode_request,
    validate_request_body,
)

from .bedrock_support import SERVICE, as_params

MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n fake").decode()


def _call() -> ToolCallBlock:
    return ToolCallBlock("tooluse_1", "get_weather", {"city": "Paris"}, '{"city": "Paris"}')


def _history() -> tuple[Any, ...]:
    turn = AssistantMessage(
        (
            ThinkingBlock("Look it up.", "c2lnbmF0dXJl"),
            TextBlock("Checking."),
            _call(),
        ),
        "bedrock-converse-stream",
        MODEL,
        StopReason.TOOL_USE,
        "tool_use",
        Usage(),
        None,
        "bedrock",
    )
    return (
        UserMessage((TextBlock("Weather in Paris?"), ImageBlock("image/png", PNG))),
        turn,
        ToolResultMessage("tooluse_1", "get_weather", "18C", is_error=False),
    )


def _request(stream: bool = True) -> Request:
    return Request(
        model=MODEL,
        messages=_history(),
        system="Be brief.",
        tools=(Tool("get_weather", "Weather of a city", {"type": "object", "properties": {}}),),
        tool_choice="required",
        max_tokens=512,
        temperature=0.5,
        top_k=20,
        stop=("END",),
        reasoning=Reasoning(budget_tokens=1024),
        response_format=ResponseFormat(schema={"type": "object"}, name="answer"),
        stream=stream,
        metadata={"user": "u1"},
    )


def _botocore(operation: str, model_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """botocore's validation of the body, then the request it serializes."""
    op: OperationModel = SERVICE.operation_model(operation)
    params = {"modelId": model_id, **as_params(body, op.input_shape)}
    report = ParamValidator().validate(params, op.input_shape)
    assert not report.has_errors(), report.generate_report()
    serialized: dict[str, Any] = create_serializer("rest-json").serialize_to_request(params, op)
    return serialized


@pytest.mark.parametrize(("stream", "operation"), [(True, "ConverseStream"), (False, "Converse")])
def test_converse_body_is_what_botocore_validates_and_sends(stream: bool, operation: str) -> None:
    wire = encode_request(_request(stream), "bedrock-converse-stream")
    sent = _botocore(operation, MODEL, wire.body)
    assert wire.path == sent["url_path"]
    assert json.loads(sent["body"]) == wire.body
    assert validate_request_body(wire.body, "bedrock-converse-stream") == []


def test_converse_body_carries_every_part() -> None:
    body = encode_request(_request(), "bedrock").body
    user, assistant, results = body["messages"]
    assert user["content"][1] == {"image": {"format": "png", "source": {"bytes": PNG}}}
    assert assistant["content"][0]["reasoningContent"]["reasoningText"]["signature"]
    assert assistant["content"][2]["toolUse"]["input"] == {"city": "Paris"}
    assert results["content"][0]["toolResult"]["toolUseId"] == "tooluse_1"
    assert body["toolConfig"]["toolChoice"] == {"any": {}}
    assert body["additionalModelRequestFields"] == {
        "top_k": 20,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
    }


def test_converse_round_trip() -> None:
    request = _request()
    wire = encode_request(request, "bedrock-converse-stream")
    back = decode_request(wire.body, "bedrock-converse-stream", path=wire.path)
    assert back.model == MODEL and back.stream is True
    assert back.system == (TextBlock("Be brief."),)
    assert back.tools == request.tools and back.tool_choice == "required"
    assert (back.max_tokens, back.temperature, back.top_k, back.stop) == (512, 0.5, 20, ("END",))
    assert back.reasoning == Reasoning(budget_tokens=1024)
    assert back.response_format == request.response_format
    assert back.metadata == {"user": "u1"}
    assert back.extra is None
    again = encode_request(back, "bedrock-converse-stream")
    assert again.body == wire.body and again.path == wire.path


def test_converse_unknown_fields_survive_a_round_trip() -> None:
    body = {
        "messages": [{"role": "user", "content": [{"text": "hi"}]}],
        "guardrailConfig": {"guardrailIdentifier": "g", "guardrailVersion": "1"},
    }
    path = "/model/amazon.nova-pro-v1%3A0/converse"
    request = decode_request(body, "bedrock-converse-stream", path=path)
    assert request.model == "amazon.nova-pro-v1:0" and request.stream is False
    assert encode_request(request, "bedrock-converse-stream").body == body


def test_converse_refuses_an_image_by_url() -> None:
    request = Request(
        model=MODEL, messages=(UserMessage((ImageBlock("image/png", url="https://x/y.png"),)),)
    )
    with pytest.raises(ValueError, match="bytes"):
        encode_request(request, "bedrock-converse-stream")


def test_converse_tool_choice_none_is_warned() -> None:
    request = Request(
        model=MODEL, messages=(UserMessage("hi"),), tools=(Tool("f"),), tool_choice="none"
    )
    wire = encode_request(request, "bedrock-converse-stream")
    assert "toolChoice" not in wire.body["toolConfig"]
    assert [w.kind for w in wire.warnings] == ["tool_choice_dropped"]


@pytest.mark.parametrize(
    ("stream", "operation"), [(True, "InvokeModelWithResponseStream"), (False, "InvokeModel")]
)
def test_invoke_request_is_what_botocore_sends(stream: bool, operation: str) -> None:
    request = Request(model=MODEL, messages=(UserMessage("hi"),), max_tokens=64, stream=stream)
    wire = encode_request(request, "bedrock-invoke-stream")
    body = json.dumps(wire.body).encode()
    sent = _botocore(operation, MODEL, {"body": base64.b64encode(body).decode()})
    assert wire.path == sent["url_path"]
    assert wire.body["anthropic_version"] == "bedrock-2023-05-31"
    assert "model" not in wire.body and "stream" not in wire.body


def test_invoke_round_trip_keeps_model_stream_and_betas() -> None:
    request = Request(
        model=MODEL,
        messages=(UserMessage("hi"),),
        max_tokens=64,
        headers={"anthropic-messages": {"anthropic-beta": "context-1m-2025-08-07"}},
    )
    wire = encode_request(request, "bedrock-invoke-stream")
    assert wire.body["anthropic_beta"] == ["context-1m-2025-08-07"]
    back = decode_request(wire.body, "bedrock-invoke-stream", path=wire.path)
    assert (back.model, back.stream, back.max_tokens) == (MODEL, True, 64)
    assert back.headers == request.headers
    assert back.extra is None
    assert encode_request(back, "bedrock-invoke-stream").body == wire.body
