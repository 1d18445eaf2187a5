// LangGraph.js ReAct agent of the music store, traced by Langfuse JS v4 (OpenTelemetry-based):
// the @langfuse/langchain CallbackHandler creates the spans through @langfuse/tracing, and the
// @langfuse/otel LangfuseSpanProcessor on a NodeSDK exports them (its own OTLP/HTTP JSON exporter).
//
// Started by tests/golden/capture/langgraphjs_langfuse.py (one process per scenario); everything
// it talks to is that script's loopback HTTP server:
//   * the scripted model, as OpenAI Chat Completions (ChatOpenAI's real `openai` client);
//   * Langfuse's OTLP endpoint (`<baseUrl>/api/public/otel/v1/traces`, dummy keys);
//   * the store backend the tools call (so the Python side records the executed trajectory).
// Config comes as JSON in CAPTURE_CONFIG. CommonJS, as node-langchainjs: one copy of
// @langchain/core for the agent and the handler.
"use strict";

const cfg = JSON.parse(process.env.CAPTURE_CONFIG);
if (process.env.CAPTURE_DEBUG) {
  const { diag, DiagConsoleLogger, DiagLogLevel } = require("@opentelemetry/api");
  diag.setLogger(new DiagConsoleLogger(), DiagLogLevel.DEBUG);
}

const { NodeSDK } = require("@opentelemetry/sdk-node");
const { resourceFromAttributes } = require("@opentelemetry/resources");
const { LangfuseSpanProcessor } = require("@langfuse/otel");
const { CallbackHandler } = require("@langfuse/langchain");

// Langfuse's documented setup: a LangfuseSpanProcessor on the NodeSDK.
const langfuseSpanProcessor = new LangfuseSpanProcessor({
  publicKey: "pk-lf-offline",
  secretKey: "sk-lf-offline",
  baseUrl: cfg.langfuse_base_url,
  flushAt: 4096, // one export per user turn (forceFlush below)
  flushInterval: 60,
});
const sdk = new NodeSDK({
  resource: resourceFromAttributes({
    "service.name": cfg.service_name,
    "deployment.environment.name": "acceptance-test",
  }),
  spanProcessors: [langfuseSpanProcessor],
});
sdk.start();

const { tool } = require("@langchain/core/tools");
const { awaitAllCallbacks } = require("@langchain/core/callbacks/promises");
const { ChatOpenAI } = require("@langchain/openai");
const { MemorySaver } = require("@langchain/langgraph");
const { createReactAgent } = require("@langchain/langgraph/prebuilt");
const { z } = require("zod");

class StoreError extends Error {
  constructor(message) {
    super(message);
    this.name = "StoreError";
  }
}

async function post(path, body) {
  const response = await fetch(cfg.control_url + path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`control ${path}: HTTP ${response.status}`);
  return response.json();
}

async function store(name, args) {
  const answer = await post(`/store/${name}`, args);
  if (answer.error != null) throw new StoreError(answer.error);
  return answer.result;
}

const d = cfg.tool_descriptions;
const tools = [
  tool(async ({ track_name }) => store("lookup_track", { track_name }), {
    name: "lookup_track",
    description: d.lookup_track,
    schema: z.object({ track_name: z.string() }),
  }),
  tool(async ({ album_title }) => store("lookup_album", { album_title }), {
    name: "lookup_album",
    description: d.lookup_album,
    schema: z.object({ album_title: z.string() }),
  }),
  tool(async ({ artist_name }) => store("lookup_artist", { artist_name }), {
    name: "lookup_artist",
    description: d.lookup_artist,
    schema: z.object({ artist_name: z.string() }),
  }),
  tool(
    async ({ customer_id, invoice_id }) => store("lookup_invoice", { customer_id, invoice_id }),
    {
      name: "lookup_invoice",
      description: d.lookup_invoice,
      schema: z.object({ customer_id: z.number().int(), invoice_id: z.number().int() }),
    },
  ),
  tool(
    async ({ invoice_id, track_id, reason }) => store("refund", { invoice_id, track_id, reason }),
    {
      name: "refund",
      description: d.refund,
      schema: z.object({
        invoice_id: z.number().int(),
        track_id: z.number().int(),
        reason: z.string(),
      }),
    },
  ),
];

async function main() {
  const llm = new ChatOpenAI({
    model: cfg.model,
    apiKey: "sk-offline",
    configuration: { baseURL: cfg.base_url },
    maxRetries: 0,
  });
  const agent = createReactAgent({
    llm,
    tools,
    prompt: cfg.system_prompt,
    name: cfg.agent_name,
    checkpointSaver: new MemorySaver(),
  });
  const threadId = cfg.session_id ?? `thread-${cfg.scenario}`;
  for (let turn = 0; turn < cfg.user_inputs.length; turn++) {
    await post("/turn_start", { turn });
    let final = null;
    let error = null;
    // Langfuse's documented way to group traces into a session: the handler's sessionId.
    const handler = new CallbackHandler(cfg.session_id ? { sessionId: cfg.session_id } : {});
    try {
      const result = await agent.invoke(
        { messages: [{ role: "user", content: cfg.user_inputs[turn] }] },
        { configurable: { thread_id: threadId }, callbacks: [handler] },
      );
      const last = result.messages[result.messages.length - 1];
      final = typeof last.content === "string" ? last.content : JSON.stringify(last.content);
    } catch (exc) {
      error = String(exc && exc.stack ? exc.stack : exc);
    }
    await awaitAllCallbacks(); // LangChain.js runs callbacks (the handler) in the background
    await langfuseSpanProcessor.forceFlush();
    await post("/turn_end", { turn, final, error });
  }
  await sdk.shutdown();
}

main().catch((exc) => {
  console.error(exc);
  process.exit(1);
});
