// Runs the Vercel AI SDK against the gateway, one cell after another.
//
// argv[2] is a JSON object: {control, cells: [{cell, provider, stream, gateway}]}.
// Before each cell it names the cell to the scripted upstream (POST
// {control}/_e2e/cell/{cell}); then it asks the model to use the e2e_probe
// tool and to answer, in at most three steps, through generateText or
// streamText. One line per cell on stdout: "E2E-CELL " and the JSON
// {cell, exit, output, error, seconds}.
import { generateText, jsonSchema, stepCountIs, streamText, tool } from "ai";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { createGoogleGenerativeAI } from "@ai-sdk/google";

const KEY = process.env.STREAMNORM_GATEWAY_KEY;
const PROMPT = "Call the e2e_probe tool with text 'tool-ran', then tell me what it returned.";

// Each provider: its model and the options that ask for reasoning.
const PROVIDERS = {
  anthropic: (url) => ({
    model: createAnthropic({ baseURL: `${url}/v1`, apiKey: KEY })("claude-sonnet-4-6"),
    providerOptions: { anthropic: { thinking: { type: "enabled", budgetTokens: 2048 } } },
    maxOutputTokens: 4096,
  }),
  "openai-responses": (url) => ({
    model: createOpenAI({ baseURL: `${url}/v1`, apiKey: KEY }).responses("gpt-5"),
    // store: false sends reasoning items back whole (with their encrypted content)
    // instead of item references, which the gateway cannot resolve.
    providerOptions: { openai: { reasoningEffort: "low", reasoningSummary: "auto", store: false } },
  }),
  "openai-chat": (url) => ({
    model: createOpenAI({ baseURL: `${url}/v1`, apiKey: KEY }).chat("gpt-5"),
    providerOptions: { openai: { reasoningEffort: "low" } },
  }),
  google: (url) => ({
    model: createGoogleGenerativeAI({ baseURL: `${url}/v1beta`, apiKey: KEY })("gemini-2.5-flash"),
    providerOptions: { google: { thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 } } },
  }),
};

const probe = tool({
  description: "Returns 'e2e-' followed by the given text.",
  inputSchema: jsonSchema({
    type: "object",
    properties: { text: { type: "string" } },
    required: ["text"],
  }),
  execute: async ({ text }) => `e2e-${text}`,
});

async function runCell(spec) {
  const settings = PROVIDERS[spec.provider](spec.gateway);
  const options = { ...settings, prompt: PROMPT, tools: { e2e_probe: probe }, stopWhen: stepCountIs(3) };
  if (!spec.stream) {
    const result = await generateText(options);
    return result.text;
  }
  let failure = null;
  const result = streamText({ ...options, onError: ({ error }) => { failure = error; } });
  const text = await result.text;
  if (failure) throw failure;
  return text;
}

const { control, cells } = JSON.parse(process.argv[2]);
for (const spec of cells) {
  await fetch(`${control}/_e2e/cell/${spec.cell}`, { method: "POST" });
  const started = performance.now();
  let line;
  try {
    const output = await runCell(spec);
    line = { cell: spec.cell, exit: 0, output, error: "" };
  } catch (error) {
    line = { cell: spec.cell, exit: 1, output: "", error: String(error?.stack ?? error).slice(0, 2000) };
  }
  line.seconds = (performance.now() - started) / 1000;
  process.stdout.write("E2E-CELL " + JSON.stringify(line) + "\n");
}
