"""How each agent CLI is run against the gateway, non-interactively.

Each function writes the client's settings into a fresh HOME and returns the
command and environment: the gateway's URL and client key, no telemetry, no
update checks, no network but 127.0.0.1 (the gateway). These are the
settings docs/gateway.md lists as tested.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from .harness import CLIENT_KEY, NODE_BIN, PROMPT, base_env

Launch = tuple[list[str], dict[str, str]]


def claude_code(gateway_url: str, home: Path) -> Launch:
    """``claude -p`` with the Bash tool allowed; the API key from the environment."""
    env = base_env(home)
    env.update(
        ANTHROPIC_BASE_URL=gateway_url,
        ANTHROPIC_API_KEY=CLIENT_KEY,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_TELEMETRY="1",
        DISABLE_ERROR_REPORTING="1",
    )
    command = [str(NODE_BIN / "claude"), "-p", PROMPT, "--model", "claude-sonnet-4-6"]
    command += ["--allowedTools", "Bash", "--output-format", "text"]
    return command, env


CODEX_CONFIG = """\
model = "gpt-5"
model_provider = "streamnorm"
model_reasoning_effort = "low"
check_for_update_on_startup = false

[analytics]
enabled = false

[model_providers.streamnorm]
name = "streamnorm gateway"
base_url = "{url}/v1"
env_key = "STREAMNORM_GATEWAY_KEY"
wire_api = "responses"
"""


def codex(gateway_url: str, home: Path) -> Launch:
    """``codex exec`` with a ``model_providers`` entry for the gateway."""
    env = base_env(home)
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(CODEX_CONFIG.format(url=gateway_url))
    env.update(CODEX_HOME=str(codex_home), STREAMNORM_GATEWAY_KEY=CLIENT_KEY)
    command = [str(NODE_BIN / "codex"), "exec", "--skip-git-repo-check"]
    command += ["--dangerously-bypass-approvals-and-sandbox", PROMPT]
    return command, env


GEMINI_SETTINGS = {
    "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    # Without it the CLI picks its "gateway" auth type from GOOGLE_GEMINI_BASE_URL,
    # which its own check then rejects ("Invalid auth method selected.").
    "security": {"auth": {"selectedType": "gemini-api-key"}},
}


def gemini_cli(gateway_url: str, home: Path) -> Launch:
    """``gemini -p`` in yolo mode with the gateway as its Gemini API base URL."""
    env = base_env(home)
    settings = home / ".gemini"
    settings.mkdir(parents=True, exist_ok=True)
    (settings / "settings.json").write_text(json.dumps(GEMINI_SETTINGS))
    env.update(
        GEMINI_API_KEY=CLIENT_KEY,
        GOOGLE_GEMINI_BASE_URL=gateway_url,
        # An untrusted folder turns --yolo back into asking for each tool call.
        GEMINI_CLI_TRUST_WORKSPACE="true",
    )
    command = [str(NODE_BIN / "gemini"), "-p", PROMPT, "-m", "gemini-2.5-flash", "--yolo"]
    return command, env


#: The agent CLIs: name -> (launcher, the API the client speaks).
AGENT_CLIS: dict[str, tuple[Callable[[str, Path], Launch], str]] = {
    "claude-code": (claude_code, "anthropic-messages"),
    "codex": (codex, "openai-responses"),
    "gemini-cli": (gemini_cli, "google-generative-ai"),
}
