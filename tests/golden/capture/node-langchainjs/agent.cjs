// LangChain.js agent of the music store, traced by @arizeai/openinference-instrumentation-langchain.
//
// Started by /work/captures/scripts/langchainjs_openinference.py (one process per scenario);
// everything it talks to is that script's loopback HTTP server:
//   * the scripted model, as OpenAI Chat Completions (ChatOpenAI's real `openai` client);
//   * the OTLP/HTTP protobuf receiver (the OTel JS SDK's real OTLPTraceExporter);
//   * the store backend the tools call (so the Python side records the executed trajectory).
// Config comes as JSON in CAPTURE_CONFIG. Plain CommonJS on purpose: the instrumentation
// patches the CJS build of @langchain/core/callbacks/manager, so everything must load that copy.
"use strict";

const cfg = JSON.parse(process.env.CAPTURE_CONFIG);
if (process.env.CAPTURE_DEBUG) {
  const { diag, DiagConsoleLogger, DiagLogLevel } = require("@opentelemetry/api");
  diag.setLogger(new DiagConsoleLogger(), DiagLogLevel.DEBUG);
}

const { NodeTracerProvider, BatchSpanProcessor } = require("@opentelemetry/sdk-trace-node");
const { OTLPTraceExporter } = require("@opentelemetry/exporter-trace-otlp-proto");
const { defaultResource, resourceFromAttributes } = require("@opentelemetry/resources");
const { LangChainInstrumentation } = require("@arizeai/openinference-instrumentation-langchain");
const CallbackManagerModule = require("@langchain/core/callbacks/manager");

const provider = new NodeTracerProvider({
  // as NodeSDK does: the SDK's default resource (telemetry.sdk.*) merged with ours
  resource: defaultResource().merge(
    resourceFromAttributes({
      "service.name": cfg.service_name,
      "deployment.environment.name": "acceptance-test",
    }),
  ),
  spanProcessors: [
    new BatchSpanProcessor(new OTLPTraceExporter({ url: cfg.otlp_url }), {
      scheduledDelayMillis: 60000,
      maxQueueSize: 8192,
      maxExportBatchSize: 4096,
    }),
  ],
});
provider.register();

const lcInstrumentation = new LangChainInstrumentation({ tracerProvider: provider });
lcInstrumentation.manuallyInstrument(CallbackManagerModule);

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
      const result = await agent.invoke(
        { messages: [{ role: "user", content: cfg.user_inputs[turn] }] },
        { configurable: { thread_id: threadId } },
      );
      const last = result.messages[result.messages.length - 1];
      final = typeof last.content === "string" ? last.content : JSON.stringify(last.content);
    } catch (exc) {
      error = String(exc && exc.stack ? exc.stack : exc);
    }
    await awaitAllCallbacks(); // LangChain.js runs callbacks (the tracer) in the background
    await provider.forceFlush();
    await post("/turn_end", { turn, final, error });
  }
  await provider.shutdown();
}

main().catch((exc) => {
  console.error(exc);
  process.exit(1);
});
