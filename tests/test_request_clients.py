"""Request bodies in the shapes real clients send (Codex CLI, pydantic-ai,
Claude Code, google-genai, OpenAI's vision example), small and free of keys:
none is refused, nothing in them is dropped on the way to another api, and
what a target cannot take is refused naming the message and the part."""

from __future__ import annotations

import base64
import copy
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import httpx
import pytest

from streamnorm import (
    AssistantMessage,
    DocumentBlock,
    ImageBlock,
    Message,
    Request,
    StopReason,
    SystemMessage,
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
    Usage,
    UserMessage,
    decode_request,
    encode_request,
    message_from_dict,
    sanitize_messages_for_target,
    validate_request_body,
)

from .gateway_support import (
    GATEWAY_KEY,
    NAMED_MODELS,
    WAIT,
    FakeUpstream,
    Reply,
    ServerThread,
    running_gateway,
    sse_events,
)
from .request_support import sdk_validate
from .support import FIXTURES, needs_fixtures

APIS = ("anthropic-messages", "openai-responses", "openai-completions", "google-generative-ai")
GEMINI_PATH = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"


def _encode(request: Request, api: str) -> dict[str, Any]:
    """``request`` encoded for ``api`` (sanitized), which must keep its rules."""
    model = "gemini-2.5-flash" if api == "google-generative-ai" else "m-1"
    body = dict(encode_request(replace(request, model=model), api).body)
    assert validate_request_body(body, api) == []
    return body


def _texts(value: Any) -> list[str]:
    """Every string under a ``text`` key, in document order."""
    if isinstance(value, dict):
        own = [value["text"]] if isinstance(value.get("text"), str) else []
        return own + [t for k, v in value.items() if k != "text" for t in _texts(v)]
    if isinstance(value, list):
        return [t for v in value for t in _texts(v)]
    return []


# ---------------------------------------------------------------------------
# Several leading system / developer messages join the system prompt

CODEX_BASE = "You are Codex, a coding agent based on GPT-5."
CODEX_SKILLS = "<skills_instructions>## Skills\n- pdf: read PDFs</skills_instructions>"
CODEX_ENV = "<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>"


def _developer(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "developer",
        "content": [{"type": "input_text", "text": text}],
    }


def _user_item(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def codex_body(*, instructions: bool) -> dict[str, Any]:
    """Codex CLI's first request: base instructions (as ``instructions`` or
    as a first developer message), then the skills as a developer message."""
    leading = (
        [_developer(CODEX_SKILLS)]
        if instructions
        else [_developer(CODEX_BASE), _developer(CODEX_SKILLS)]
    )
    body: dict[str, Any] = {
        "model": "gpt-5-codex",
        "input": [*leading, _user_item(CODEX_ENV), _user_item("list the files")],
        "tools": [
            {
                "type": "function",
                "name": "shell",
                "description": "Runs a shell command",
                "strict": False,
                "parameters": {"type": "object", "properties": {"command": {"type": "array"}}},
            }
        ],
        "tool_choice": "auto",
        "parallel_tool_calls": False,
        "reasoning": {"effort": "medium", "summary": "auto"},
        "store": False,
        "stream": True,
        "include": ["reasoning.encrypted_content"],
        "prompt_cache_key": "0199a1b2-c3d4",
    }
    if instructions:
        body["instructions"] = CODEX_BASE
    return body


PYDANTIC_AI_CHAT: dict[str, Any] = {
    "model": "gpt-4o",
    "messages": [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "system", "content": "Reply in French."},
        {"role": "user", "content": "What is the capital of Italy?"},
    ],
    "stream": True,
    "stream_options": {"include_usage": True},
}


@pytest.mark.parametrize("instructions", [False, True], ids=["two-developers", "instructions"])
def test_codex_leading_developer_messages_join_the_system_prompt(instructions: bool) -> None:
    request = decode_request(codex_body(instructions=instructions), "openai-responses")
    assert request.system == (TextBlock(CODEX_BASE), TextBlock(CODEX_SKILLS))
    assert [type(m) for m in request.messages] == [UserMessage, UserMessage]
    anthropic = _encode(request, "anthropic-messages")
    assert anthropic["system"] == [
        {"type": "text", "text": CODEX_BASE},
        {"type": "text", "text": CODEX_SKILLS},
    ]
    gemini = _encode(request, "google-generative-ai")
    assert _texts(gemini["systemInstruction"]) == [CODEX_BASE, CODEX_SKILLS]
    chat = _encode(request, "openai-completions")
    assert _texts(chat["messages"][0]) == [CODEX_BASE, CODEX_SKILLS]
    assert [m["role"] for m in chat["messages"]] == [chat["messages"][0]["role"], "user", "user"]
    again = _encode(request, "openai-responses")
    if instructions:  # instructions first, then the developer message: one instructions text
        assert again["instructions"] == f"{CODEX_BASE}\n\n{CODEX_SKILLS}"
    else:  # one developer message with both texts in order
        assert "instructions" not in again
        assert again["input"][0]["role"] == "developer"
        assert _texts(again["input"][0]) == [CODEX_BASE, CODEX_SKILLS]
    assert [_texts(i) for i in again["input"][-2:]] == [[CODEX_ENV], ["list the files"]]


def test_pydantic_ai_system_system_user() -> None:
    request = decode_request(PYDANTIC_AI_CHAT, "openai-completions")
    assert request.system == (
        TextBlock("You are a helpful assistant."),
        TextBlock("Reply in French."),
    )
    assert request.messages == (UserMessage("What is the capital of Italy?"),)
    anthropic = _encode(request, "anthropic-messages")
    assert _texts(anthropic["system"]) == ["You are a helpful assistant.", "Reply in French."]
    responses = _encode(request, "openai-responses")
    assert responses["instructions"] == "You are a helpful assistant.\n\nReply in French."
    same = dict(encode_request(request, "openai-completions", sanitize=False).body)
    assert [m["role"] for m in same["messages"]] == ["system", "user"]
    assert _texts(same["messages"][0]) == ["You are a helpful assistant.", "Reply in French."]


# ---------------------------------------------------------------------------
# A system / developer message later in the conversation is carried


CHAT_MID: dict[str, Any] = {
    "model": "gpt-4o",
    "messages": [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello."},
        {"role": "system", "content": "The user is now on a phone: keep answers short."},
        {"role": "user", "content": "Weather?"},
    ],
}

RESPONSES_MID: dict[str, Any] = {
    "model": "gpt-5",
    "instructions": "You are Codex.",
    "input": [
        _user_item("fix the test"),
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Done.", "annotations": []}],
        },
        _developer(
            "<permissions instructions>approval policy is now never</permissions instructions>"
        ),
        _user_item("now commit"),
    ],
}

CLAUDE_CODE_MID: dict[str, Any] = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 32000,
    "system": [{"type": "text", "text": "You are Claude Code."}],
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": "read a.py"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "It defines f."}]},
        {"role": "system", "content": "The file a.py was modified by the user."},
        {"role": "user", "content": [{"type": "text", "text": "and now?"}]},
    ],
}

MID = "The user is now on a phone: keep answers short."


def test_chat_system_message_mid_conversation_is_kept_at_its_place() -> None:
    request = decode_request(CHAT_MID, "openai-completions")
    assert request.system == "You are terse."
    assert request.messages[2] == SystemMessage(MID)
    same = dict(encode_request(request, "openai-completions", sanitize=False).body)
    assert same == CHAT_MID  # the same body back
    responses = _encode(request, "openai-responses")
    assert responses["input"][2] == {"role": "system", "content": MID}
    assert [i.get("role") for i in responses["input"]] == ["user", "assistant", "system", "user"]


@pytest.mark.parametrize("api", ["anthropic-messages", "google-generative-ai"])
def test_mid_conversation_system_message_is_a_marked_user_note(api: str) -> None:
    request = decode_request(CHAT_MID, "openai-completions")
    body = _encode(request, api)
    turns = body["messages"] if api == "anthropic-messages" else body["contents"]
    assert [t["role"] for t in turns] == [
        "user",
        "assistant" if api != "google-generative-ai" else "model",
        "user",
    ]
    texts = _texts(turns[2])
    assert len(texts) == 2 and texts[1] == "Weather?"
    note = texts[0]
    assert MID in note and note != MID  # marked, not passed off as the user's words
    assert note.startswith("<system-message>") and note.endswith("</system-message>")


def test_codex_developer_message_mid_conversation() -> None:
    request = decode_request(RESPONSES_MID, "openai-responses")
    text = "<permissions instructions>approval policy is now never</permissions instructions>"
    assert request.messages[2] == SystemMessage((TextBlock(text),), "developer")
    same = dict(encode_request(request, "openai-responses", sanitize=False).body)
    assert same["input"][2] == {
        "role": "developer",
        "content": [{"type": "input_text", "text": text}],
    }
    chat = _encode(request, "openai-completions")
    assert [m["role"] for m in chat["messages"]] == [
        "system",
        "user",
        "assistant",
        "developer",
        "user",
    ]
    # Compatible servers other than OpenAI's know "system" only.
    other = encode_request(request, "openai-completions", provider="deepseek").body
    assert [m["role"] for m in other["messages"]] == [
        "system",
        "user",
        "assistant",
        "system",
        "user",
    ]
    codex = decode_request(codex_body(instructions=False), "openai-responses")
    assert (
        encode_request(codex, "openai-completions", provider="vllm").body["messages"][0]["role"]
        == "system"
    )
    anthropic = _encode(request, "anthropic-messages")
    assert anthropic["messages"][2]["content"][0]["text"] == (
        f"<developer-message>\n{text}\n</developer-message>"
    )


def test_claude_code_system_message_mid_conversation() -> None:
    request = decode_request(CLAUDE_CODE_MID, "anthropic-messages")
    assert request.messages[2] == SystemMessage("The file a.py was modified by the user.")
    chat = _encode(request, "openai-completions")
    assert chat["messages"][3] == {
        "role": "system",
        "content": "The file a.py was modified by the user.",
    }
    anthropic = _encode(request, "anthropic-messages")
    assert [m["role"] for m in anthropic["messages"]] == ["user", "assistant", "user"]


def test_system_message_survives_to_dict_and_sanitize() -> None:
    message = SystemMessage((TextBlock("a", cache="1h"),), "developer")
    assert message_from_dict(message.to_dict()) == message
    request = decode_request(RESPONSES_MID, "openai-responses")
    assert Request.from_dict(request.to_dict()) == request


def test_a_system_message_with_other_parts_names_the_field() -> None:
    body = copy.deepcopy(CHAT_MID)
    body["messages"][3]["content"] = [
        {"type": "image_url", "image_url": {"url": "https://x/y.png"}}
    ]
    with pytest.raises(
        ValueError, match=r"^messages\[3\]\.content: expected a string or text parts"
    ):
        decode_request(body, "openai-completions")


# ---------------------------------------------------------------------------
# Images: ``detail`` is a rendering hint, the image always goes

IMAGE_URL = "https://upload.wikimedia.org/wikipedia/commons/a/a7/Boardwalk.jpg"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQ"


def chat_vision(detail: str | None) -> dict[str, Any]:
    """OpenAI's Chat vision example: a question and an image URL part."""
    image: dict[str, Any] = {"url": IMAGE_URL}
    if detail is not None:
        image["detail"] = detail
    return {
        "model": "gpt-4o-mini",
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What's in this image?"},
                    {"type": "image_url", "image_url": image},
                ],
            }
        ],
        "max_tokens": 300,
    }


def responses_vision(detail: str | None) -> dict[str, Any]:
    """OpenAI's Responses vision example (no ``detail``), or with one."""
    image: dict[str, Any] = {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"}
    if detail is not None:
        image["detail"] = detail
    return {
        "model": "gpt-4.1-mini",
        "input": [
            {
                "role": "user",
                "content": [{"type": "input_text", "text": "what's in this image?"}, image],
            }
        ],
    }


def _image_in(body: dict[str, Any], api: str) -> dict[str, Any]:
    """The one image part of an encoded body's first user turn."""
    turns = {
        "anthropic-messages": "messages",
        "openai-responses": "input",
        "openai-completions": "messages",
        "google-generative-ai": "contents",
    }[api]
    parts = body[turns][0]["parts" if api == "google-generative-ai" else "content"]
    images = [
        p
        for p in parts
        if p.get("type") in ("image", "input_image", "image_url")
        or "inlineData" in p
        or "fileData" in p
    ]
    assert len(images) == 1, parts
    image: dict[str, Any] = images[0]
    return image


@pytest.mark.parametrize("detail", [None, "auto", "low", "high"])
def test_chat_image_with_any_detail_reaches_every_api(detail: str | None) -> None:
    body = chat_vision(detail)
    request = decode_request(body, "openai-completions")
    assert request.messages[0].content[1] == ImageBlock("", url=IMAGE_URL, detail=detail)
    assert dict(encode_request(request, "openai-completions", sanitize=False).body) == body
    anthropic = _image_in(_encode(request, "anthropic-messages"), "anthropic-messages")
    assert anthropic == {"type": "image", "source": {"type": "url", "url": IMAGE_URL}}
    gemini = _image_in(_encode(request, "google-generative-ai"), "google-generative-ai")
    assert gemini == {"fileData": {"mimeType": "image/jpeg", "fileUri": IMAGE_URL}}
    responses = _image_in(_encode(request, "openai-responses"), "openai-responses")
    assert responses == {"type": "input_image", "image_url": IMAGE_URL, "detail": detail or "auto"}


@pytest.mark.parametrize("detail", [None, "auto", "low", "high"])
def test_responses_image_with_or_without_detail_reaches_every_api(detail: str | None) -> None:
    body = responses_vision(detail)
    request = decode_request(body, "openai-responses")
    assert request.messages[0].content[1] == ImageBlock("image/png", PNG, detail=detail)
    same = dict(encode_request(request, "openai-responses", sanitize=False).body)
    # The same body; an absent detail is written as the API's default (the SDK requires one).
    assert same["input"][0]["content"][1] == {
        **body["input"][0]["content"][1],
        "detail": detail or "auto",
    }
    anthropic = _image_in(_encode(request, "anthropic-messages"), "anthropic-messages")
    assert anthropic["source"] == {"type": "base64", "media_type": "image/png", "data": PNG}
    gemini = _image_in(_encode(request, "google-generative-ai"), "google-generative-ai")
    assert gemini == {"inlineData": {"mimeType": "image/png", "data": PNG}}
    chat = _image_in(_encode(request, "openai-completions"), "openai-completions")
    expected = {"url": f"data:image/png;base64,{PNG}"}
    assert chat == {
        "type": "image_url",
        "image_url": {**expected, **({"detail": detail} if detail else {})},
    }


@pytest.mark.parametrize("api", APIS)
def test_a_message_holding_only_an_image_is_sent(api: str) -> None:
    body = chat_vision("high")
    del body["messages"][0]["content"][0]
    request = decode_request(body, "openai-completions")
    sent = _encode(request, api)
    assert _image_in(sent, api)


def test_image_detail_survives_to_dict() -> None:
    request = decode_request(chat_vision("low"), "openai-completions")
    assert Request.from_dict(request.to_dict()) == request


# ---------------------------------------------------------------------------
# Bytes from google-genai (URL-safe base64) cross into standard base64

#: Bytes whose base64 differs between the alphabets (``+``/``/`` vs ``-``/``_``).
RAW = b"\x89PNG\r\n\xfb\xef\xff\xfffi\xbf\xbf"


def genai_image_body(data: str) -> dict[str, Any]:
    """google-genai's body for ``[prompt, Part.from_bytes(data=…, mime_type=…)]``."""
    return {
        "contents": [
            {
                "role": "user",
                "parts": [
                    {"text": "Describe this image."},
                    {"inlineData": {"data": data, "mimeType": "image/png"}},
                ],
            }
        ],
        "generationConfig": {"temperature": 0.2},
    }


@pytest.mark.parametrize("padded", [True, False])
def test_gemini_url_safe_base64_becomes_standard_base64_elsewhere(padded: bool) -> None:
    url_safe = base64.urlsafe_b64encode(RAW).decode()
    standard = base64.b64encode(RAW).decode()
    assert url_safe != standard and "-" in url_safe and "_" in url_safe
    body = genai_image_body(url_safe if padded else url_safe.rstrip("="))
    request = decode_request(body, "google-generative-ai", path=GEMINI_PATH)
    same = dict(encode_request(request, "google-generative-ai", sanitize=False).body)
    assert same["contents"] == body["contents"]  # Gemini takes both alphabets: as it came
    anthropic = _image_in(_encode(request, "anthropic-messages"), "anthropic-messages")
    assert anthropic["source"]["data"] == standard
    assert base64.b64decode(anthropic["source"]["data"], validate=True) == RAW
    chat = _image_in(_encode(request, "openai-completions"), "openai-completions")
    assert chat["image_url"]["url"] == f"data:image/png;base64,{standard}"
    responses = _image_in(_encode(request, "openai-responses"), "openai-responses")
    assert responses["image_url"] == f"data:image/png;base64,{standard}"


def test_gemini_url_safe_pdf_becomes_standard_base64_elsewhere() -> None:
    url_safe = base64.urlsafe_b64encode(b"%PDF-1.4\n\xfb\xff\xfe").decode()
    standard = base64.b64encode(b"%PDF-1.4\n\xfb\xff\xfe").decode()
    body = genai_image_body(url_safe)
    body["contents"][0]["parts"][1]["inlineData"]["mimeType"] = "application/pdf"
    request = decode_request(body, "google-generative-ai", path=GEMINI_PATH)
    anthropic = _encode(request, "anthropic-messages")["messages"][0]["content"][1]
    assert anthropic["source"] == {
        "type": "base64",
        "media_type": "application/pdf",
        "data": standard,
    }
    chat = _encode(request, "openai-completions")["messages"][0]["content"][1]
    assert chat["file"]["file_data"] == f"data:application/pdf;base64,{standard}"
    responses = _encode(request, "openai-responses")["input"][0]["content"][1]
    assert responses["file_data"] == f"data:application/pdf;base64,{standard}"


# ---------------------------------------------------------------------------
# Audio and office documents: what each api takes, the rest refused by name

WAV = base64.b64encode(b"RIFF\x24\x00\x00\x00WAVEfmt ").decode()
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def genai_file_body(mime: str, data: str) -> dict[str, Any]:
    """google-genai's body for ``["Transcribe this.", Part.from_bytes(...)]``."""
    return {
        "contents": [
            {"role": "user", "parts": [{"text": "Hello"}]},
            {"role": "model", "parts": [{"text": "Hi! Send the file."}]},
            {
                "role": "user",
                "parts": [
                    {"text": "Transcribe this."},
                    {"inlineData": {"mimeType": mime, "data": data}},
                ],
            },
        ]
    }


def _gemini(mime: str, data: str = WAV) -> Request:
    return decode_request(genai_file_body(mime, data), "google-generative-ai", path=GEMINI_PATH)


@pytest.mark.parametrize(
    ("mime", "audio_format"),
    [("audio/x-wav", "wav"), ("audio/wav", "wav"), ("audio/mp3", "mp3"), ("audio/mpeg", "mp3")],
)
def test_wav_and_mp3_go_to_chat_as_input_audio(mime: str, audio_format: str) -> None:
    url_safe = base64.urlsafe_b64encode(b"ID3\xfb\xef\xff\xfe").decode()
    request = _gemini(mime, url_safe)
    part = _encode(request, "openai-completions")["messages"][2]["content"][1]
    standard = base64.b64encode(b"ID3\xfb\xef\xff\xfe").decode()
    assert part == {
        "type": "input_audio",
        "input_audio": {"data": standard, "format": audio_format},
    }
    assert sdk_validate("openai-completions", _encode(request, "openai-completions")) == []


def test_chat_input_audio_is_read_and_reaches_gemini() -> None:
    body = {
        "model": "gpt-4o-audio-preview",
        "modalities": ["text"],
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is in this recording?"},
                    {"type": "input_audio", "input_audio": {"data": WAV, "format": "wav"}},
                ],
            }
        ],
    }
    request = decode_request(body, "openai-completions")
    assert request.messages[0].content[1] == DocumentBlock("audio/wav", WAV)
    assert dict(encode_request(request, "openai-completions", sanitize=False).body) == body
    gemini = _encode(request, "google-generative-ai")["contents"][0]["parts"][1]
    assert gemini == {"inlineData": {"mimeType": "audio/wav", "data": WAV}}


@pytest.mark.parametrize(
    ("mime", "api"),
    [
        ("audio/x-wav", "anthropic-messages"),
        ("audio/mp3", "anthropic-messages"),
        (DOCX, "anthropic-messages"),
        ("audio/wav", "openai-responses"),
        ("audio/ogg", "openai-completions"),
        (DOCX, "openai-completions"),
        (DOCX, "google-generative-ai"),
    ],
)
def test_media_a_target_refuses_is_a_value_error_naming_the_part(mime: str, api: str) -> None:
    request = replace(_gemini(mime), model="m-1")
    where = r"messages\[2\]\.content\[1\]"
    with pytest.raises(ValueError, match=rf"^{where}: {re.escape(mime)} cannot be sent to {api}"):
        encode_request(request, api)


@pytest.mark.parametrize(
    ("mime", "api"),
    [
        ("application/pdf", "anthropic-messages"),
        ("text/plain", "anthropic-messages"),
        ("application/pdf", "openai-completions"),
        (DOCX, "openai-responses"),
        ("application/pdf", "openai-responses"),
        ("audio/x-wav", "google-generative-ai"),
    ],
)
def test_media_a_target_takes_is_sent(mime: str, api: str) -> None:
    document = DocumentBlock(mime, "SGVsbG8=", name="f")
    request = Request("m-1", (UserMessage((TextBlock("Summarise."), document)),))
    body = _encode(request, api)
    assert "SGVsbG8=" in str(body) or "Hello" in str(body)


def test_a_refused_part_in_a_tool_result_is_named() -> None:
    result = ToolResultMessage("call_1", "record", (DocumentBlock("audio/wav", WAV),))
    call = ToolCallBlock("call_1", "record", {}, "{}")
    turn = AssistantMessage(
        (call,), "openai-completions", "gpt-4o", StopReason.TOOL_USE, None, Usage(), None
    )
    request = Request("m-1", (UserMessage("record me"), turn, result))
    with pytest.raises(
        ValueError,
        match=r"^messages\[2\]\.content\[0\]: audio/wav cannot be sent to anthropic-messages",
    ):
        encode_request(request, "anthropic-messages")


# ---------------------------------------------------------------------------
# Through the gateway: the same bodies on cross-API routes


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeUpstream]:
    yield FakeUpstream()


@pytest.fixture(scope="module")
def gateway(fake: FakeUpstream) -> Iterator[str]:
    with ServerThread(fake) as up, running_gateway(up.url) as (_, gw):
        yield gw.url


def _upstream_answers(fake: FakeUpstream, api: str) -> str:
    model = NAMED_MODELS[api]
    fake.script(model, Reply(200, sse_events((FIXTURES / api / "text-basic.sse").read_bytes())))
    return model


@needs_fixtures
def test_gateway_serves_codex_on_an_anthropic_upstream(gateway: str, fake: FakeUpstream) -> None:
    model = _upstream_answers(fake, "anthropic-messages")
    body = {**codex_body(instructions=False), "model": "named.anthropic"}
    headers = {"authorization": f"Bearer {GATEWAY_KEY}"}
    reply = httpx.post(f"{gateway}/v1/responses", json=body, headers=headers, timeout=WAIT)
    assert reply.status_code == 200, reply.text
    sent = fake.requests_for(model)[-1].body
    assert _texts(sent["system"]) == [CODEX_BASE, CODEX_SKILLS]


@needs_fixtures
def test_gateway_carries_an_image_only_message_to_gemini(gateway: str, fake: FakeUpstream) -> None:
    model = _upstream_answers(fake, "google-generative-ai")
    body = {**chat_vision("high"), "model": "named.gemini", "stream": True}
    del body["messages"][0]["content"][0]
    headers = {"authorization": f"Bearer {GATEWAY_KEY}"}
    reply = httpx.post(f"{gateway}/v1/chat/completions", json=body, headers=headers, timeout=WAIT)
    assert reply.status_code == 200, reply.text
    sent = fake.requests_for(model)[-1].body
    assert sent["contents"][0]["parts"] == [
        {"fileData": {"mimeType": "image/jpeg", "fileUri": IMAGE_URL}}
    ]


@needs_fixtures
def test_gateway_refuses_audio_for_anthropic_in_the_clients_format(gateway: str) -> None:
    body = genai_file_body("audio/x-wav", WAV)
    path = "/v1beta/models/named.anthropic:generateContent"
    headers = {"x-goog-api-key": GATEWAY_KEY}
    reply = httpx.post(gateway + path, json=body, headers=headers, timeout=WAIT)
    assert reply.status_code == 400
    error = reply.json()["error"]
    assert error["message"].startswith("messages[2].content[1]: audio/x-wav cannot be sent")
    assert error["status"] == "INVALID_ARGUMENT"


# ---------------------------------------------------------------------------
# Plain text files: text in the canonical block, base64 only on the wire

NOTES = "Meeting notes: ship on Friday. Ünïcode ok."


def test_gemini_text_file_becomes_an_anthropic_text_document() -> None:
    url_safe = base64.urlsafe_b64encode(NOTES.encode()).decode().rstrip("=")
    request = _gemini("text/plain", url_safe)
    assert request.messages[2].content[1] == DocumentBlock("text/plain", NOTES)
    anthropic = _encode(request, "anthropic-messages")["messages"][2]["content"][1]
    assert anthropic == {
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": NOTES},
    }


def test_anthropic_text_document_is_base64_where_the_api_takes_bytes() -> None:
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "document",
                        "source": {"type": "text", "media_type": "text/plain", "data": NOTES},
                        "title": "notes.txt",
                    },
                    {"type": "text", "text": "When do we ship?"},
                ],
            }
        ],
    }
    request = decode_request(body, "anthropic-messages")
    encoded = base64.b64encode(NOTES.encode()).decode()
    gemini = _encode(request, "google-generative-ai")["contents"][0]["parts"][0]
    assert gemini == {"inlineData": {"mimeType": "text/plain", "data": encoded}}
    responses = _encode(request, "openai-responses")["input"][0]["content"][0]
    assert responses == {
        "type": "input_file",
        "file_data": f"data:text/plain;base64,{encoded}",
        "filename": "notes.txt",
    }
    chat = _encode(request, "openai-completions")["messages"][0]["content"][0]
    assert chat == {"type": "text", "text": f"[notes.txt]\n{NOTES}"}


@pytest.mark.parametrize("api", ["google-generative-ai", "openai-responses"])
def test_a_text_file_round_trips_on_its_own_api(api: str) -> None:
    encoded = base64.b64encode(NOTES.encode()).decode()
    if api == "google-generative-ai":
        body = genai_file_body("text/plain", encoded)
    else:
        part = {"type": "input_file", "file_data": f"data:text/plain;base64,{encoded}"}
        body = {"model": "gpt-5", "input": [{"role": "user", "content": [part]}]}
    request = decode_request(body, api, path=GEMINI_PATH)
    assert DocumentBlock("text/plain", NOTES) in request.messages[-1].content
    assert dict(encode_request(request, api, sanitize=False).body) == {
        k: v for k, v in body.items() if k != "model"
    } | ({"model": "gpt-5"} if api == "openai-responses" else {})


def test_a_text_file_that_is_not_utf8_is_kept_as_it_came() -> None:
    latin1 = base64.b64encode("café".encode("latin-1")).decode()
    body = genai_file_body("text/plain", latin1)
    request = decode_request(body, "google-generative-ai", path=GEMINI_PATH)
    same = dict(encode_request(request, "google-generative-ai", sanitize=False).body)
    assert same["contents"] == body["contents"]


def test_a_part_only_its_own_api_knows_is_refused_elsewhere_by_name() -> None:
    """An image from the Responses file store: no other api can fetch it, and
    a message holding only it must not vanish."""
    image = {"type": "input_image", "file_id": "file-abc123", "detail": "auto"}
    body = {"model": "gpt-5", "input": [{"role": "user", "content": [image]}]}
    request = decode_request(body, "openai-responses")
    assert dict(encode_request(request, "openai-responses").body)["input"] == body["input"]
    for api in ("anthropic-messages", "openai-completions", "google-generative-ai"):
        with pytest.raises(
            ValueError,
            match=r"^messages\[0\]\.content\[0\]: the openai-responses part 'input_image' cannot",
        ):
            encode_request(replace(request, model="gemini-2.5-flash"), api)


def test_sanitizing_keeps_a_system_message_and_cleans_its_text() -> None:
    call = ToolCallBlock("call_1", "shell", {}, "{}")
    turn = AssistantMessage(
        (call,), "openai-responses", "gpt-5", StopReason.TOOL_USE, None, Usage(), None, "openai"
    )
    history: list[Message] = [
        UserMessage("run it"),
        turn,
        SystemMessage("approval \ud800policy changed", "developer"),
        UserMessage("go on"),
    ]
    out = sanitize_messages_for_target(history, "anthropic", "claude-sonnet-4-5", api="anthropic")
    # The call is answered (synthetically) before the system message, as before a user message.
    assert [type(m).__name__ for m in out] == [
        "UserMessage",
        "AssistantMessage",
        "ToolResultMessage",
        "SystemMessage",
        "UserMessage",
    ]
    assert out[3] == SystemMessage("approval policy changed", "developer")
    blocks = SystemMessage((TextBlock("a\udfff"),), "system")
    assert sanitize_messages_for_target([blocks], None, "m", api="openai-completions") == [
        SystemMessage((TextBlock("a"),), "system")
    ]


@pytest.mark.parametrize("target", ["anthropic-messages", "google-generative-ai"])
def test_a_detail_the_target_cannot_take_is_dropped_with_a_warning(target: str) -> None:
    request = decode_request(chat_vision("high"), "openai-completions")
    wire = encode_request(request, target)
    assert [(w.message, w.block, w.kind) for w in wire.warnings] == [(0, 1, "detail_dropped")]
    assert "'high'" in str(wire.warnings[0]) and "the image is sent" in str(wire.warnings[0])
    assert not encode_request(
        decode_request(chat_vision("auto"), "openai-completions"), target
    ).warnings
    assert not encode_request(request, "openai-responses").warnings
