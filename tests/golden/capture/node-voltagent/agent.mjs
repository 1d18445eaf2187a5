// VoltAgent agent of the music store, traced by VoltAgent's own OpenTelemetry observability
// (VoltAgentObservability) with the documented extra span processor: a BatchSpanProcessor over
// the OTLPTraceExporter of @opentelemetry/exporter-trace-otlp-proto (docs/observability/mlflow.md
// of @voltagent/core).
//
// Started by tests/golden/capture/voltagent_agent.py (one process per scenario); everything it
// talks to is that script's loopback HTTP server:
//   * the scripted model, as OpenAI Chat Completions (@ai-sdk/openai-compatible's chat model);
//   * the OTLP/HTTP protobuf receiver (POST /v1/traces);
//   * the store backend the tools call (so the Python side records the executed trajectory).
// No VoltOps keys are set, so VoltAgent's remote (VoltOps) export processor stays idle.
// Config comes as JSON in CAPTURE_CONFIG.
import { Agent, VoltAgent, VoltAgentObservability, createTool } from "@voltagent/core";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { z } from "zod";

const cfg = JSON.parse(process.env.CAPTURE_CONFIG);

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
  createTool({
    name: "lookup_track",
    description: d.lookup_track,
    parameters: z.object({ track_name: z.string() }),
    execute: async ({ track_name }) => store("lookup_track", { track_name }),
  }),
  createTool({
    name: "lookup_album",
    description: d.lookup_album,
    parameters: z.object({ album_title: z.string() }),
    execute: async ({ album_title }) => store("lookup_album", { album_title }),
  }),
  createTool({
    name: "lookup_artist",
    description: d.lookup_artist,
    parameters: z.object({ artist_name: z.string() }),
    execute: async ({ artist_name }) => store("lookup_artist", { artist_name }),
  }),
  createTool({
    name: "lookup_invoice",
    description: d.lookup_invoice,
    parameters: z.object({ customer_id: z.number().int(), invoice_id: z.number().int() }),
    execute: async ({ customer_id, invoice_id }) =>
      store("lookup_invoice", { customer_id, invoice_id }),
  }),
  createTool({
    name: "refund",
    description: d.refund,
    parameters: z.object({
      invoice_id: z.number().int(),
      track_id: z.number().int(),
      reason: z.string(),
    }),
    execute: async ({ invoice_id, track_id, reason }) =>
      store("refund", { invoice_id, track_id, reason }),
  }),
];

const provider = createOpenAICompatible({
  name: "scripted",
  baseURL: cfg.base_url,
  apiKey: "sk-offline",
});

const observability = new VoltAgentObservability({
  serviceName: cfg.service_name,
  resourceAttributes: { "deployment.environment.name": "acceptance-test" },
  spanProcessors: [
    new BatchSpanProcessor(new OTLPTraceExporter({ url: `${cfg.otlp_endpoint}/v1/traces` })),
  ],
});

const agent = new Agent({
  name: cfg.agent_name,
  instructions: cfg.system_prompt,
  model: provider.chatModel(cfg.model),
  tools,
});

new VoltAgent({ agents: { [cfg.agent_name]: agent }, observability });

async function main() {
  for (let turn = 0; turn < cfg.user_inputs.length; turn++) {
    await post("/turn_start", { turn });
    let final = null;
    let error = null;
    try {
      const options = { maxSteps: 10 };
      if (cfg.session_id != null) {
        // VoltAgent's conversation (memory) id: the documented way to group turns
        options.conversationId = cfg.session_id;
        options.userId = "customer-17";
      }
      const result = await agent.generateText(cfg.user_inputs[turn], options);
      final = result.text;
    } catch (exc) {
      error = String(exc && exc.stack ? exc.stack : exc);
    }
    await observability.forceFlush();
    await post("/turn_end", { turn, final, error });
  }
  await observability.shutdown();
}

main().then(
  () => process.exit(0),
  (exc) => {
    console.error(exc);
    process.exit(1);
  },
);
