"""A fake Bedrock Runtime on 127.0.0.1 that refuses what Bedrock refuses.

Its checks are botocore's, not streamnorm's: the SigV4 signature recomputed
with botocore's signer from what arrived, a Converse body validated against
botocore's service model of ``bedrock-runtime`` (an unknown field, a wrong
type or a missing member is refused), and an Invoke body held to the rules
Bedrock's Anthropic models apply (``anthropic_version`` set, no ``model`` or
``stream``). A refused request gets Bedrock's own error answer: a JSON body
with ``message`` and the exception's name in ``x-amzn-ErrorType``.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any
from urllib.parse import unquote

import botocore.session
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.model import Shape
from botocore.validate import ParamValidator

from .client_support import ScriptedServer, Seen, Step
from .support import aws_event, invoke_chunk

KEY_ID, SECRET = "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
SERVICE = botocore.session.get_session().get_service_model("bedrock-runtime")
EVENT_STREAM = {"content-type": "application/vnd.amazon.eventstream"}

_AUTH = re.compile(
    r"Credential=([^/]+)/\d+/([^/]+)/([^/]+)/aws4_request, SignedHeaders=([^,]+), Signature=(\w+)"
)
_OPERATIONS = {
    "converse": "Converse",
    "converse-stream": "ConverseStream",
    "invoke": "InvokeModel",
    "invoke-with-response-stream": "InvokeModelWithResponseStream",
}
_PATH = re.compile(r"/model/([^/]+)/([a-z-]+)")
#: The fields of an Anthropic Messages body that Bedrock's Claude models take.
INVOKE_FIELDS = frozenset(
    {
        "anthropic_version",
        "anthropic_beta",
        "max_tokens",
        "messages",
        "system",
        "stop_sequences",
        "temperature",
        "top_p",
        "top_k",
        "tools",
        "tool_choice",
        "thinking",
    }
)


def verify_sigv4(seen: Seen, base: str, secret: str = SECRET) -> tuple[str, str]:
    """Recompute the signature of the request the fake got with botocore,
    from what the fake received (method, path, the signed headers, body);
    returns the region and service it was signed for."""
    match = _AUTH.search(seen.headers["authorization"])
    assert match, seen.headers["authorization"]
    key_id, region, service, signed, signature = match.groups()
    headers = {name: seen.headers[name] for name in signed.split(";")}
    request = AWSRequest(method=seen.method, url=base + seen.path, data=seen.body, headers=headers)
    request.context["timestamp"] = seen.headers["x-amz-date"]
    auth = SigV4Auth(Credentials(key_id, secret), service, region)
    expected = auth.signature(
        auth.string_to_sign(request, auth.canonical_request(request)), request
    )
    assert signature == expected, "the SigV4 signature does not verify"
    return region, service


def as_params(value: Any, shape: Shape) -> Any:
    """A JSON body as botocore's parameters: blobs (base64 on the wire) as bytes."""
    if shape.type_name == "blob":
        return base64.b64decode(value)
    if shape.type_name == "structure" and isinstance(value, dict):
        members = shape.members
        return {k: as_params(v, members[k]) if k in members else v for k, v in value.items()}
    if shape.type_name == "list" and isinstance(value, list):
        return [as_params(v, shape.member) for v in value]
    return value


def bedrock_error(status: int, kind: str, message: str) -> Step:
    """Bedrock's answer to a refused request."""
    headers = {
        "content-type": "application/json",
        "x-amzn-errortype": f"{kind}:http://internal.amazon.com/coral/com.amazon.bedrock/",
    }
    return Step(status=status, body=json.dumps({"message": message}).encode(), headers=headers)


def _body_problems(operation: str, model: str, body: bytes) -> str | None:
    """What Bedrock would say of the body, or None when it takes it."""
    try:
        value = json.loads(body)
    except ValueError:
        return "Malformed input request, please reformat your input and try again."
    if not isinstance(value, dict):
        return "Malformed input request: expected an object"
    if operation.startswith("Invoke"):
        return _invoke_problems(value)
    shape = SERVICE.operation_model(operation).input_shape
    report = ParamValidator().validate({"modelId": model, **as_params(value, shape)}, shape)
    return report.generate_report() if report.has_errors() else None


def _invoke_problems(body: dict[str, Any]) -> str | None:
    extra = sorted(set(body) - INVOKE_FIELDS)
    if extra:
        return f"Malformed input request: #: extraneous key [{extra[0]}] is not permitted"
    missing = [k for k in ("anthropic_version", "max_tokens", "messages") if k not in body]
    if missing:
        return f"Malformed input request: #: required key [{missing[0]}] not found"
    if body["anthropic_version"] != "bedrock-2023-05-31":
        return "Malformed input request: #/anthropic_version: unsupported version"
    return None


class FakeBedrock(ScriptedServer):
    """Bedrock Runtime: each request is checked as Bedrock checks it, then
    answered with the next step (``secret``: the AWS secret key the
    signature must verify with)."""

    def __init__(self, steps: list[Step], secret: str = SECRET) -> None:
        super().__init__(steps)
        self.secret = secret

    def __enter__(self) -> FakeBedrock:
        super().__enter__()
        return self

    @property
    def exceptions(self) -> list[str]:
        """The names of the exceptions it answered with."""
        return [step.headers["x-amzn-errortype"].split(":")[0] for step in self.refused]

    def refusal(self, seen: Seen) -> Step | None:
        """Bedrock's error answer to ``seen``, or None when it is taken."""
        try:
            verify_sigv4(seen, self.url, self.secret)
        except (AssertionError, KeyError):
            return bedrock_error(
                403,
                "InvalidSignatureException",
                "The request signature we calculated does not match",
            )
        match = _PATH.fullmatch(seen.path)
        operation = _OPERATIONS.get(match.group(2)) if match else None
        if match is None or operation is None:
            return bedrock_error(404, "UnknownOperationException", "Unknown operation")
        problem = _body_problems(operation, unquote(match.group(1)), seen.body)
        if problem is not None:
            return bedrock_error(400, "ValidationException", problem)
        return None


# -- Bedrock's answers ----------------------------------------------------------------

TEXT = ("Hello from ", "Bedrock")


def converse_stream(*tail: bytes) -> bytes:
    """A ConverseStream answer: two text deltas, the stop, the usage; or the
    first delta and then ``tail`` (an exception frame)."""
    head = aws_event("messageStart", {"role": "assistant"}) + aws_event(
        "contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": TEXT[0]}, "p": "abc"}
    )
    if tail:
        return head + b"".join(tail)
    return (
        head
        + aws_event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": TEXT[1]}})
        + aws_event("contentBlockStop", {"contentBlockIndex": 0})
        + aws_event("messageStop", {"stopReason": "end_turn"})
        + aws_event(
            "metadata",
            {"usage": {"inputTokens": 7, "outputTokens": 3, "totalTokens": 10}, "metrics": {}},
        )
    )


CONVERSE_WHOLE = json.dumps(
    {
        "output": {"message": {"role": "assistant", "content": [{"text": "".join(TEXT)}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 7, "outputTokens": 3, "totalTokens": 10},
        "metrics": {"latencyMs": 120},
    }
).encode()


_OUT = {"usage": {"output_tokens": 3}}


def invoke_stream(*tail: bytes) -> bytes:
    """An InvokeModelWithResponseStream answer for Claude (or its start and ``tail``)."""
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_bdrk_01",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": 7, "output_tokens": 1},
        },
    }
    block = {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "text", "text": ""},
    }

    def delta(text: str) -> dict[str, Any]:
        return {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": text},
        }

    head = invoke_chunk(start) + invoke_chunk(block) + invoke_chunk(delta(TEXT[0]))
    if tail:
        return head + b"".join(tail)
    metrics = {"inputTokenCount": 7, "outputTokenCount": 3, "invocationLatency": 120}
    return (
        head
        + invoke_chunk(delta(TEXT[1]))
        + invoke_chunk({"type": "content_block_stop", "index": 0})
        + invoke_chunk(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": 3},
            }
        )
        + invoke_chunk({"type": "message_stop", "amazon-bedrock-invocationMetrics": metrics})
    )


INVOKE_WHOLE = json.dumps(
    {
        "id": "msg_bdrk_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [{"type": "text", "text": "".join(TEXT)}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 7, "output_tokens": 3},
    }
).encode()
