"""The matrix: every client (in each of its modes) × every upstream API ×
streaming and not, where the client allows.

``returns_state`` says whether the client sends reasoning state back at all.
Chat Completions clients never do: the gateway writes a foreign issuer's
state into the message's ``reasoning_details`` (the only place Chat has for
it, encoding.md), and these clients rebuild the assistant message from its
``content``, ``tool_calls`` (and at most ``reasoning_content``) on the next
turn. Their cells pass without it; every other client's cell fails when the
state does not come back byte-identical.
"""

from __future__ import annotations

from dataclasses import dataclass

from .harness import UPSTREAMS

BOTH = (True, False)
STREAM_ONLY = (True,)


@dataclass(frozen=True)
class Client:
    """One client program in one mode."""

    name: str
    #: How it runs: "cli" (one process per cell), "aisdk" or "python" (one
    #: process for all cells of the kind, named to the upstream in turn).
    runner: str
    framework: str
    mode: str
    #: The API the client speaks to the gateway.
    api: str
    streams: tuple[bool, ...] = BOTH
    returns_state: bool = True


CLIENTS = (
    # The agent CLIs stream always.
    Client("claude-code", "cli", "claude-code", "", "anthropic-messages", STREAM_ONLY),
    Client("codex", "cli", "codex", "", "openai-responses", STREAM_ONLY),
    Client("gemini-cli", "cli", "gemini-cli", "", "google-generative-ai", STREAM_ONLY),
    Client("aisdk-anthropic", "aisdk", "aisdk", "anthropic", "anthropic-messages"),
    Client("aisdk-responses", "aisdk", "aisdk", "openai-responses", "openai-responses"),
    Client(
        "aisdk-chat", "aisdk", "aisdk", "openai-chat", "openai-completions", returns_state=False
    ),
    Client("aisdk-google", "aisdk", "aisdk", "google", "google-generative-ai"),
    Client("agents-responses", "python", "agents", "responses", "openai-responses"),
    Client("agents-chat", "python", "agents", "chat", "openai-completions", returns_state=False),
    Client(
        "langchain-chat", "python", "langchain", "chat", "openai-completions", returns_state=False
    ),
    Client("langchain-responses", "python", "langchain", "responses", "openai-responses"),
    Client("langchain-anthropic", "python", "langchain", "anthropic", "anthropic-messages"),
    Client("langchain-google", "python", "langchain", "google", "google-generative-ai"),
    Client(
        "pydantic-ai-chat",
        "python",
        "pydantic-ai",
        "chat",
        "openai-completions",
        returns_state=False,
    ),
    Client("pydantic-ai-responses", "python", "pydantic-ai", "responses", "openai-responses"),
    Client("pydantic-ai-anthropic", "python", "pydantic-ai", "anthropic", "anthropic-messages"),
    Client("pydantic-ai-google", "python", "pydantic-ai", "google", "google-generative-ai"),
    Client("litellm-anthropic", "python", "litellm", "anthropic", "anthropic-messages"),
    Client("litellm-chat", "python", "litellm", "chat", "openai-completions", returns_state=False),
    Client("litellm-google", "python", "litellm", "google", "google-generative-ai"),
)


@dataclass(frozen=True)
class Cell:
    """One client in one mode against one upstream API."""

    client: Client
    stream: bool
    upstream: str

    @property
    def name(self) -> str:
        how = "stream" if self.stream else "whole"
        return f"{self.client.name}-{how}-via-{UPSTREAMS[self.upstream][0]}"

    @property
    def cross_api(self) -> bool:
        return self.client.api != self.upstream


CELLS = tuple(
    Cell(client, stream, upstream)
    for client in CLIENTS
    for stream in client.streams
    for upstream in UPSTREAMS
)
