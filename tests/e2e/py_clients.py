"""Runs the Python agent frameworks against the gateway, one cell after another.

``python py_clients.py '<json>'`` with ``{"control": url, "cells": [{"cell",
"framework", "mode", "stream", "gateway"}]}``: before each cell it names the
cell to the scripted upstream (``POST {control}/_e2e/cell/{cell}``), then lets
the framework call the ``e2e_probe`` tool and answer, asking for reasoning
where the framework can. One line per cell on stdout: ``E2E-CELL `` and the JSON
``{cell, exit, output, error, seconds}``.

The frameworks: the OpenAI Agents SDK (Responses and Chat models), LangChain
(``ChatOpenAI`` on Chat and on Responses, ``ChatAnthropic``,
``ChatGoogleGenerativeAI``), pydantic-ai (OpenAI Chat and Responses,
Anthropic, Google models) and litellm as a library (``completion`` with
``anthropic/``, ``openai/`` and ``gemini/`` models). A run in one process
keeps their imports (seconds each) out of every cell's time.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
import traceback
import urllib.request
from collections.abc import Awaitable, Callable
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

KEY = os.environ.get("STREAMNORM_GATEWAY_KEY", "")
PROMPT = "Call the e2e_probe tool with text 'tool-ran', then tell me what it returned."
#: Each result line starts with this (libraries print to stdout too).
RESULT_PREFIX = "E2E-CELL "
INSTRUCTIONS = "You are a test agent. Use the tools you are given."
#: The probe as a Chat Completions tool (LangChain and litellm take this form).
PROBE_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "e2e_probe",
        "description": "Returns 'e2e-' followed by the given text.",
        "parameters": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    },
}


def e2e_probe(text: str) -> str:
    """Returns 'e2e-' followed by the given text."""
    return "e2e-" + text


Runner = Callable[[str, str, bool], Awaitable[str]]


# --- OpenAI Agents SDK --------------------------------------------------------------------


async def run_agents(gateway: str, mode: str, stream: bool) -> str:
    from agents import (
        Agent,
        ModelSettings,
        OpenAIChatCompletionsModel,
        OpenAIResponsesModel,
        Runner,
        function_tool,
        set_tracing_disabled,
    )
    from openai import AsyncOpenAI
    from openai.types.shared import Reasoning

    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=gateway + "/v1", api_key=KEY)
    model_class = OpenAIResponsesModel if mode == "responses" else OpenAIChatCompletionsModel
    settings = ModelSettings(reasoning=Reasoning(effort="low", summary="auto"))
    agent = Agent(
        name="e2e",
        instructions=INSTRUCTIONS,
        tools=[function_tool(e2e_probe)],
        model=model_class(model="gpt-5", openai_client=client),
        model_settings=settings,
    )
    if not stream:
        return str((await Runner.run(agent, PROMPT)).final_output)
    streamed = Runner.run_streamed(agent, PROMPT)
    async for _ in streamed.stream_events():
        pass
    return str(streamed.final_output)


# --- LangChain ----------------------------------------------------------------------------


def _langchain_model(gateway: str, mode: str) -> Any:
    if mode == "anthropic":
        from langchain_anthropic import ChatAnthropic

        anthropic: dict[str, Any] = {"model_name": "claude-sonnet-4-6", "base_url": gateway}
        anthropic.update(api_key=KEY, max_tokens_to_sample=4096)
        return ChatAnthropic(**anthropic, thinking={"type": "enabled", "budget_tokens": 2048})
    if mode == "google":
        from langchain_google_genai import ChatGoogleGenerativeAI

        return ChatGoogleGenerativeAI(
            model="gemini-2.5-flash",
            google_api_key=KEY,
            base_url=gateway,
            include_thoughts=True,
            thinking_budget=1024,
        )
    from langchain_openai import ChatOpenAI

    openai: dict[str, Any] = {"model": "gpt-5", "base_url": gateway + "/v1", "api_key": KEY}
    if mode == "responses":
        reasoning = {"effort": "low", "summary": "auto"}
        return ChatOpenAI(**openai, use_responses_api=True, reasoning=reasoning)
    return ChatOpenAI(**openai, reasoning_effort="low")


async def _langchain_turn(model: Any, messages: list[Any], stream: bool) -> Any:
    if not stream:
        return await model.ainvoke(messages)
    whole = None
    async for chunk in model.astream(messages):
        whole = chunk if whole is None else whole + chunk
    return whole


async def run_langchain(gateway: str, mode: str, stream: bool) -> str:
    from langchain_core.messages import HumanMessage, ToolMessage

    model = _langchain_model(gateway, mode).bind_tools([PROBE_SCHEMA])
    messages: list[Any] = [HumanMessage(PROMPT)]
    for _ in range(3):
        answer = await _langchain_turn(model, messages, stream)
        messages.append(answer)
        if not answer.tool_calls:
            return str(answer.text)
        for call in answer.tool_calls:
            output = e2e_probe(**call["args"])
            messages.append(ToolMessage(output, tool_call_id=call["id"]))
    return ""


# --- pydantic-ai --------------------------------------------------------------------------


def _pydantic_ai_model(gateway: str, mode: str) -> Any:
    if mode == "anthropic":
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        return AnthropicModel(
            "claude-sonnet-4-6", provider=AnthropicProvider(base_url=gateway, api_key=KEY)
        )
    if mode == "google":
        from pydantic_ai.models.google import GoogleModel
        from pydantic_ai.providers.google import GoogleProvider

        return GoogleModel(
            "gemini-2.5-flash", provider=GoogleProvider(base_url=gateway, api_key=KEY)
        )
    from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = OpenAIProvider(base_url=gateway + "/v1", api_key=KEY)
    if mode == "responses":
        return OpenAIResponsesModel("gpt-5", provider=provider)
    return OpenAIChatModel("gpt-5", provider=provider)


async def run_pydantic_ai(gateway: str, mode: str, stream: bool) -> str:
    from pydantic_ai import Agent
    from pydantic_ai.settings import ModelSettings

    agent = Agent(
        _pydantic_ai_model(gateway, mode),
        instructions=INSTRUCTIONS,
        tools=[e2e_probe],
        model_settings=ModelSettings(thinking="low", max_tokens=4096),
    )
    if not stream:
        return str((await agent.run(PROMPT)).output)
    async with agent.run_stream(PROMPT) as result:
        return str(await result.get_output())


# --- litellm ------------------------------------------------------------------------------

#: litellm's model name, base URL suffix and reasoning arguments per mode.
LITELLM_MODES: dict[str, tuple[str, str, dict[str, Any]]] = {
    "anthropic": (
        "anthropic/claude-sonnet-4-6",
        "",
        {"thinking": {"type": "enabled", "budget_tokens": 2048}, "max_tokens": 4096},
    ),
    "chat": ("openai/gpt-5", "/v1", {"reasoning_effort": "low"}),
    "google": ("gemini/gemini-2.5-flash", "/v1beta", {"reasoning_effort": "low"}),
}


async def _litellm_turn(messages: list[Any], mode: str, gateway: str, stream: bool) -> Any:
    import litellm

    model, suffix, extra = LITELLM_MODES[mode]
    arguments = dict(extra, model=model, api_base=gateway + suffix, api_key=KEY)
    arguments.update(messages=messages, tools=[PROBE_SCHEMA], stream=stream)
    response: Any = await litellm.acompletion(**arguments)
    if stream:
        chunks = [chunk async for chunk in response]
        response = litellm.stream_chunk_builder(chunks, messages=messages)
    return response.choices[0].message


async def run_litellm(gateway: str, mode: str, stream: bool) -> str:
    messages: list[Any] = [{"role": "user", "content": PROMPT}]
    for _ in range(3):
        message = await _litellm_turn(messages, mode, gateway, stream)
        messages.append(message)
        if not message.tool_calls:
            return str(message.content)
        for call in message.tool_calls:
            output = e2e_probe(**json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": output})
    return ""


FRAMEWORKS: dict[str, Runner] = {
    "agents": run_agents,
    "langchain": run_langchain,
    "pydantic-ai": run_pydantic_ai,
    "litellm": run_litellm,
}


async def run_cell(control: str, spec: dict[str, Any]) -> dict[str, Any]:
    """One cell: name it to the upstream, run the framework, time it."""
    request = urllib.request.Request(f"{control}/_e2e/cell/{spec['cell']}", b"", method="POST")
    with urllib.request.urlopen(request, timeout=10):
        pass
    started = time.monotonic()
    line: dict[str, Any] = {"cell": spec["cell"], "exit": 0, "output": "", "error": ""}
    try:
        runner = FRAMEWORKS[spec["framework"]]
        line["output"] = await runner(spec["gateway"], spec["mode"], spec["stream"])
    except Exception:
        line.update(exit=1, error=traceback.format_exc()[-3000:])
    line["seconds"] = time.monotonic() - started
    return line


async def main(argument: str) -> None:
    plan = json.loads(argument)
    for spec in plan["cells"]:
        line = await run_cell(plan["control"], spec)
        sys.stdout.write(RESULT_PREFIX + json.dumps(line) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
