// LangChain.js agent of the music store, traced by OpenLLMetry JS (@traceloop/node-server-sdk,
// whose LangChain instrumentation is @traceloop/instrumentation-langchain).
//
// Started by tests/golden/capture/langchainjs_traceloop.py (one process per scenario);
// everything it talks to is that script's loopback HTTP server:
//   * the scripted model, as OpenAI Chat Completions (ChatOpenAI's real `openai` client);
//   * the OTLP/HTTP protobuf receiver (`<baseUrl>/v1/traces`: the SDK's own OTLPTraceExporter);
//   * the store backend the tools call (so the Python side records the executed trajectory).
// Config comes as JSON in CAPTURE_CONFIG. CommonJS, as node-langchainjs: the instrumentation
// patches the CallbackManager of @langchain/core, and everything must load that copy.
"use strict";

const cfg = JSON.parse(process.env.CAPTURE_CONFIG);
if (process.env.CAPTURE_DEBUG) {
  const { diag, DiagConsoleLogger, DiagLogLevel } = require("@opentelemetry/api");
  diag.setLogger(new DiagConsoleLogger(), DiagLogLevel.DEBUG);
}

const traceloop = require("@traceloop/node-server-sdk");
const OpenAI = require("openai");

// OpenLLMetry JS's documented setup (instrumentModules for modules loaded before initialize;
// the SDK always adds its LangChain instrumentation). disableBatch: a SimpleSpanProcessor,
// as its docs show for local runs; flushed once per user turn below.
traceloop.initialize({
  appName: cfg.service_name,
  baseUrl: cfg.traceloop_base_url,
  apiKey: "tl-offline",
  disableBatch: true,
  traceloopSyncEnabled: false,
  silenceInitializationMessage: true,
  instrumentModules: {
    openAI: OpenAI.OpenAI,
    langchain: true, // typed boolean; the SDK always adds its LangChain instrumentation
  },
});

const { tool } = require("@langchain/core/tools");
const { awaitAllCallbacks } = require("@langchain/core/callbacks/promises");
const { ChatOpenAI } = require("@langchain/openai");
const { MemorySaver } = require("@langchain/langgraph");
const { createAgent } = require("langchain");
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

async function runTurn(agent, turn, threadId) {
  const result = await agent.invoke(
    { messages: [{ role: "user", content: cfg.user_inputs[turn] }] },
    { configurable: { thread_id: threadId } },
  );
  const last = result.messages[result.messages.length - 1];
  return typeof last.content === "string" ? last.content : JSON.stringify(last.content);
}

async function main() {
  const model = new ChatOpenAI({
    model: cfg.model,
    apiKey: "sk-offline",
    configuration: { baseURL: cfg.base_url },
    maxRetries: 0,
  });
  const agent = createAgent({
    model,
    tools,
    systemPrompt: cfg.system_prompt,
    name: cfg.agent_name,
    checkpointer: new MemorySaver(),
  });
  const threadId = cfg.session_id ?? `thread-${cfg.scenario}`;
  for (let turn = 0; turn < cfg.user_inputs.length; turn++) {
    await post("/turn_start", { turn });
    let final = null;
    let error = null;
    try {
      // OpenLLMetry's documented session mechanism: the session_id association property.
      final = cfg.session_id
        ? await traceloop.withAssociationProperties(
            { [traceloop.AssociationProperty.SESSION_ID]: cfg.session_id },
            () => runTurn(agent, turn, threadId),
          )
        : await runTurn(agent, turn, threadId);
    } catch (exc) {
      error = String(exc && exc.stack ? exc.stack : exc);
    }
    await awaitAllCallbacks(); // LangChain.js runs callbacks (the tracer) in the background
    await traceloop.forceFlush();
    await post("/turn_end", { turn, final, error });
  }
  await traceloop.forceFlush();
}

main().catch((exc) => {
  console.error(exc);
  process.exit(1);
});
