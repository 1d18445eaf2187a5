// BeeAI Framework (TypeScript) ToolCallingAgent of the music store, traced by Arize's
// @arizeai/openinference-instrumentation-beeai on the OpenTelemetry Node SDK (its README:
// a BeeAIInstrumentation, manuallyInstrument(beeaiFramework), an OTLP proto exporter).
//
// Started by tests/golden/capture/beeai_js_openinference.py (one process per scenario);
// everything it talks to is that script's loopback HTTP server:
//   * the scripted model, as OpenAI Chat Completions (BeeAI's OpenAIChatModel, i.e. the
//     Vercel AI SDK's @ai-sdk/openai provider with a baseURL);
//   * the OTLP/HTTP protobuf receiver (POST /v1/traces);
//   * the store backend the tools call (so the Python side records the executed trajectory).
// Config comes as JSON in CAPTURE_CONFIG.
"use strict";

const cfg = JSON.parse(process.env.CAPTURE_CONFIG);
const api = require("@opentelemetry/api");
if (process.env.CAPTURE_DEBUG) {
  api.diag.setLogger(new api.DiagConsoleLogger(), api.DiagLogLevel.DEBUG);
}

const { NodeTracerProvider, BatchSpanProcessor } = require("@opentelemetry/sdk-trace-node");
const { OTLPTraceExporter } = require("@opentelemetry/exporter-trace-otlp-proto");
const { defaultResource, resourceFromAttributes } = require("@opentelemetry/resources");
const { BeeAIInstrumentation } = require("@arizeai/openinference-instrumentation-beeai");
const { setSession } = require("@arizeai/openinference-core");

const provider = new NodeTracerProvider({
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

const beeAIInstrumentation = new BeeAIInstrumentation({ tracerProvider: provider });
const beeaiFramework = require("beeai-framework");
beeAIInstrumentation.manuallyInstrument(beeaiFramework);

const { ToolCallingAgent } = require("beeai-framework/agents/toolCalling/agent");
const { UnconstrainedMemory } = require("beeai-framework/memory/unconstrainedMemory");
const { DynamicTool, JSONToolOutput } = require("beeai-framework/tools/base");
const { OpenAIChatModel } = require("beeai-framework/adapters/openai/backend/chat");
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
  return new JSONToolOutput(answer.result);
}

const d = cfg.tool_descriptions;
const tools = [
  new DynamicTool({
    name: "lookup_track",
    description: d.lookup_track,
    inputSchema: z.object({ track_name: z.string() }),
    handler: async ({ track_name }) => store("lookup_track", { track_name }),
  }),
  new DynamicTool({
    name: "lookup_album",
    description: d.lookup_album,
    inputSchema: z.object({ album_title: z.string() }),
    handler: async ({ album_title }) => store("lookup_album", { album_title }),
  }),
  new DynamicTool({
    name: "lookup_artist",
    description: d.lookup_artist,
    inputSchema: z.object({ artist_name: z.string() }),
    handler: async ({ artist_name }) => store("lookup_artist", { artist_name }),
  }),
  new DynamicTool({
    name: "lookup_invoice",
    description: d.lookup_invoice,
    inputSchema: z.object({ customer_id: z.number().int(), invoice_id: z.number().int() }),
    handler: async ({ customer_id, invoice_id }) =>
      store("lookup_invoice", { customer_id, invoice_id }),
  }),
  new DynamicTool({
    name: "refund",
    description: d.refund,
    inputSchema: z.object({
      invoice_id: z.number().int(),
      track_id: z.number().int(),
      reason: z.string(),
    }),
    handler: async ({ invoice_id, track_id, reason }) =>
      store("refund", { invoice_id, track_id, reason }),
  }),
];

const llm = new OpenAIChatModel(cfg.model, {}, { baseURL: cfg.base_url, apiKey: "sk-offline" });

const agent = new ToolCallingAgent({
  llm,
  memory: new UnconstrainedMemory(),
  tools,
  meta: { name: cfg.agent_name, description: "Customer support of the Tunes & Co music store." },
  templates: {
    system: (template) =>
      template.fork((config) => {
        config.defaults.instructions = cfg.system_prompt;
      }),
  },
});

async function main() {
  for (let turn = 0; turn < cfg.user_inputs.length; turn++) {
    await post("/turn_start", { turn });
    let final = null;
    let error = null;
    try {
      // agent.run returns a lazy Run: it starts when awaited, so await it inside the context
      const runTurn = async () => await agent.run({ prompt: cfg.user_inputs[turn] });
      let output;
      if (cfg.session_id != null) {
        // OpenInference's context attribute for a session (openinference-core setSession)
        output = await api.context.with(
          setSession(api.context.active(), { sessionId: cfg.session_id }),
          runTurn,
        );
      } else {
        output = await runTurn();
      }
      final = output.result.text;
    } catch (exc) {
      error = String(exc && exc.stack ? exc.stack : exc);
    }
    await provider.forceFlush();
    await post("/turn_end", { turn, final, error });
  }
  await provider.shutdown();
}

main().then(
  () => process.exit(0),
  (exc) => {
    console.error(exc);
    process.exit(1);
  },
);
