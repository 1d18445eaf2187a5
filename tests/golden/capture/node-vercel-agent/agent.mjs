// Vercel AI SDK agent (`ToolLoopAgent` of `ai` 7) of the music store, traced by the AI SDK's
// OpenTelemetry integration (`OpenTelemetry` of @ai-sdk/otel, the GenAI-semconv spans) on the
// OpenTelemetry JS SDK (NodeTracerProvider + BatchSpanProcessor + the OTLP/HTTP protobuf exporter).
//
// Started by tests/golden/capture/vercel_ai_agent.py (one process per scenario); everything it
// talks to is that script's loopback HTTP server:
//   * the scripted model, as OpenAI Chat Completions (@ai-sdk/openai's `.chat()` model);
//   * the OTLP/HTTP protobuf receiver (`/v1/traces`);
//   * the store backend the tools call (so the Python side records the executed trajectory).
// Config comes as JSON in CAPTURE_CONFIG.
//
// AI SDK 7: spans are no longer built into `ai`; the documented setup registers the
// `OpenTelemetry` integration once (`registerTelemetry`), which uses the global tracer
// provider (`trace.getTracer("ai")`). `experimental_telemetry` is kept as the deprecated alias
// of `telemetry` (isEnabled, functionId); TelemetryOptions has no `metadata` any more, so the
// session id goes the documented v7 way: `runtimeContext` + `includeRuntimeContext` + the
// integration's supplemental `runtimeContext: true` (-> `ai.settings.context.<key>`).
import { ToolLoopAgent, registerTelemetry, tool } from "ai";
import { OpenTelemetry } from "@ai-sdk/otel";
import { createOpenAI } from "@ai-sdk/openai";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { defaultResource, resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { z } from "zod";

const cfg = JSON.parse(process.env.CAPTURE_CONFIG);

// ------------------------------------------------------------------ OpenTelemetry JS SDK
const provider = new NodeTracerProvider({
  resource: defaultResource().merge(
    resourceFromAttributes({
      "service.name": cfg.service_name,
      "deployment.environment.name": "acceptance-test",
    }),
  ),
  spanProcessors: [
    new BatchSpanProcessor(new OTLPTraceExporter({ url: cfg.otlp_url }), {
      scheduledDelayMillis: 60_000,
      maxQueueSize: 8192,
      maxExportBatchSize: 4096,
    }),
  ],
});
provider.register(); // global tracer provider + AsyncLocalStorage context manager

registerTelemetry(new OpenTelemetry({ runtimeContext: true }));

// ------------------------------------------------------------------ the store tools
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
const tools = {
  lookup_track: tool({
    description: d.lookup_track,
    inputSchema: z.object({ track_name: z.string() }),
    execute: async ({ track_name }) => store("lookup_track", { track_name }),
  }),
  lookup_album: tool({
    description: d.lookup_album,
    inputSchema: z.object({ album_title: z.string() }),
    execute: async ({ album_title }) => store("lookup_album", { album_title }),
  }),
  lookup_artist: tool({
    description: d.lookup_artist,
    inputSchema: z.object({ artist_name: z.string() }),
    execute: async ({ artist_name }) => store("lookup_artist", { artist_name }),
  }),
  lookup_invoice: tool({
    description: d.lookup_invoice,
    inputSchema: z.object({ customer_id: z.number().int(), invoice_id: z.number().int() }),
    execute: async ({ customer_id, invoice_id }) =>
      store("lookup_invoice", { customer_id, invoice_id }),
  }),
  refund: tool({
    description: d.refund,
    inputSchema: z.object({
      invoice_id: z.number().int(),
      track_id: z.number().int(),
      reason: z.string(),
    }),
    execute: async ({ invoice_id, track_id, reason }) =>
      store("refund", { invoice_id, track_id, reason }),
  }),
};

// ------------------------------------------------------------------ the agent
const openai = createOpenAI({ baseURL: cfg.base_url, apiKey: "sk-offline" });
const sessionId = cfg.session_id ?? null;

const agent = new ToolLoopAgent({
  model: openai.chat(cfg.model),
  instructions: cfg.system_prompt,
  tools,
  maxRetries: 0,
  ...(sessionId != null ? { runtimeContext: { sessionId } } : {}),
  experimental_telemetry: {
    isEnabled: true,
    functionId: cfg.agent_name,
    ...(sessionId != null ? { includeRuntimeContext: { sessionId: true } } : {}),
  },
});

async function main() {
  const history = []; // the conversation, as the docs' multi-turn pattern: generate({messages})
  for (let turn = 0; turn < cfg.user_inputs.length; turn++) {
    await post("/turn_start", { turn });
    let final = null;
    let error = null;
    history.push({ role: "user", content: cfg.user_inputs[turn] });
    try {
      const result = await agent.generate({ messages: history });
      final = result.text;
      history.push(...result.responseMessages); // every step's assistant + tool messages
    } catch (exc) {
      error = String(exc && exc.stack ? exc.stack : exc);
    }
    await provider.forceFlush();
    await post("/turn_end", { turn, final, error });
  }
  await provider.shutdown();
}

main().catch((exc) => {
  console.error(exc);
  process.exit(1);
});
