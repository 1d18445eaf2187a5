// Vercel AI SDK (`generateText` of `ai` 7 with `tools` + `stopWhen: stepCountIs(n)`, the multi-step
// tool loop) of the music store, traced by the AI SDK's OpenTelemetry integration (`OpenTelemetry`
// of @ai-sdk/otel) and converted to OpenInference by Arize's @arizeai/openinference-vercel span
// processor (`OpenInferenceBatchSpanProcessor`, wrapping the OTLP/HTTP protobuf exporter) on the
// OpenTelemetry JS SDK (NodeTracerProvider), as that package's README sets it up. The OTel JS SDK
// is the 1.x line (sdk-trace-* 1.30.1, `new Resource`), the one the README's example and the
// package's own devDependencies use (`@opentelemetry/sdk-trace-base >=1.19.0 <2.0.0`): its
// TraceAggregateManager tells a root span by `span.parentSpanId == null`, a 1.x field that SDK
// 2.x no longer has (there every span counts as a root, and every span ending after a failed
// tool gets the root's aggregated ERROR status).
//
// Started by tests/golden/capture/vercel_ai_openinference.py (one process per scenario); everything
// it talks to is that script's loopback HTTP server:
//   * the scripted model, as OpenAI Chat Completions (@ai-sdk/openai's `.chat()` model);
//   * the OTLP/HTTP protobuf receiver (`/v1/traces`);
//   * the store backend the tools call (so the Python side records the executed trajectory).
// Config comes as JSON in CAPTURE_CONFIG.
//
// Session id: the documented OpenInference way for AI SDK spans (openinference-vercel README,
// "Propagating session and context attributes"): `context.with(setSession(context.active(),
// {sessionId}), () => generateText(...))` with @arizeai/openinference-core; the processor's
// `propagateContextAttributes` (default true) copies `session.id` onto every span at onStart.
import { generateText, registerTelemetry, stepCountIs, tool } from "ai";
import { OpenTelemetry } from "@ai-sdk/otel";
import { createOpenAI } from "@ai-sdk/openai";
import { setSession } from "@arizeai/openinference-core";
import { OpenInferenceBatchSpanProcessor } from "@arizeai/openinference-vercel";
import { context } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { Resource } from "@opentelemetry/resources";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { z } from "zod";

const cfg = JSON.parse(process.env.CAPTURE_CONFIG);

// ------------------------------------------------------------------ OpenTelemetry JS SDK
const provider = new NodeTracerProvider({
  resource: Resource.default().merge(
    new Resource({
      "service.name": cfg.service_name,
      "deployment.environment.name": "acceptance-test",
    }),
  ),
  spanProcessors: [
    new OpenInferenceBatchSpanProcessor({
      exporter: new OTLPTraceExporter({ url: cfg.otlp_url }),
      config: { scheduledDelayMillis: 60_000, maxQueueSize: 8192, maxExportBatchSize: 4096 },
    }),
  ],
});
provider.register(); // global tracer provider + AsyncLocalStorage context manager

// The README's "optional, but recommended for fuller OpenInference coverage" options.
registerTelemetry(
  new OpenTelemetry({
    usage: true,
    providerMetadata: true,
    embedding: true,
    reranking: true,
    runtimeContext: true,
    headers: true,
    toolChoice: true,
    schema: true,
  }),
);

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

// ------------------------------------------------------------------ the agent loop
const openai = createOpenAI({ baseURL: cfg.base_url, apiKey: "sk-offline" });
const sessionId = cfg.session_id ?? null;

function runTurn(messages) {
  const call = () =>
    generateText({
      model: openai.chat(cfg.model),
      system: cfg.system_prompt,
      messages,
      tools,
      stopWhen: stepCountIs(10),
      maxRetries: 0,
      experimental_telemetry: { isEnabled: true, functionId: cfg.agent_name },
    });
  return sessionId != null
    ? context.with(setSession(context.active(), { sessionId }), call)
    : call();
}

async function main() {
  const history = []; // the conversation: generate with the growing messages list
  for (let turn = 0; turn < cfg.user_inputs.length; turn++) {
    await post("/turn_start", { turn });
    let final = null;
    let error = null;
    history.push({ role: "user", content: cfg.user_inputs[turn] });
    try {
      const result = await runTurn(history);
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
