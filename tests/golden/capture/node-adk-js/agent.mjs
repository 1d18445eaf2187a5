// Google ADK for TypeScript (@google/adk) agent of the music store, traced by ADK's own
// OpenTelemetry instrumentation (tracer "gcp.vertex.agent"), its providers set up by ADK's
// maybeSetOtelProviders (telemetry/setup) with one extra span processor: a BatchSpanProcessor
// over @opentelemetry/exporter-trace-otlp-proto's OTLPTraceExporter (ADK's own default,
// enabled by OTEL_EXPORTER_OTLP_*_ENDPOINT, is OTLP/HTTP JSON; the receiver reads protobuf).
// Content capture: ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS=true (its default, set explicitly).
//
// Started by tests/golden/capture/adk_js_otel.py (one process per scenario); everything it
// talks to is that script's loopback HTTP server:
//   * the scripted model, as the Gemini Developer API (ADK's Gemini model, whose @google/genai
//     client is pointed there by GOOGLE_GEMINI_BASE_URL);
//   * the OTLP/HTTP protobuf receiver (POST /v1/traces);
//   * the store backend the tools call (so the Python side records the executed trajectory).
// Config comes as JSON in CAPTURE_CONFIG.
import {
  FunctionTool,
  Gemini,
  InMemoryRunner,
  LlmAgent,
  isFinalResponse,
  maybeSetOtelProviders,
} from "@google/adk";
import { trace } from "@opentelemetry/api";
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { z } from "zod";

const cfg = JSON.parse(process.env.CAPTURE_CONFIG);

maybeSetOtelProviders(
  [
    {
      spanProcessors: [
        new BatchSpanProcessor(new OTLPTraceExporter({ url: `${cfg.otlp_endpoint}/v1/traces` })),
      ],
    },
  ],
  resourceFromAttributes({
    "service.name": cfg.service_name,
    "deployment.environment.name": "acceptance-test",
  }),
);

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
  // ADK's idiom (as in the Python capture adk.py): report the failure in the result
  if (answer.error != null) return { status: "error", error_message: answer.error };
  return answer.result;
}

const d = cfg.tool_descriptions;
const tools = [
  new FunctionTool({
    name: "lookup_track",
    description: d.lookup_track,
    parameters: z.object({ track_name: z.string() }),
    execute: async ({ track_name }) => store("lookup_track", { track_name }),
  }),
  new FunctionTool({
    name: "lookup_album",
    description: d.lookup_album,
    parameters: z.object({ album_title: z.string() }),
    execute: async ({ album_title }) => store("lookup_album", { album_title }),
  }),
  new FunctionTool({
    name: "lookup_artist",
    description: d.lookup_artist,
    parameters: z.object({ artist_name: z.string() }),
    execute: async ({ artist_name }) => store("lookup_artist", { artist_name }),
  }),
  new FunctionTool({
    name: "lookup_invoice",
    description: d.lookup_invoice,
    parameters: z.object({ customer_id: z.number().int(), invoice_id: z.number().int() }),
    execute: async ({ customer_id, invoice_id }) =>
      store("lookup_invoice", { customer_id, invoice_id }),
  }),
  new FunctionTool({
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

const agent = new LlmAgent({
  name: cfg.agent_name,
  description: "Customer support of the Tunes & Co music store.",
  model: new Gemini({ model: cfg.model, apiKey: "offline-key" }),
  instruction: cfg.system_prompt,
  tools,
});

const APP = "music_store";
const USER = "customer-17";
const runner = new InMemoryRunner({ agent, appName: APP });

async function main() {
  const session = await runner.sessionService.createSession({
    appName: APP,
    userId: USER,
    sessionId: cfg.session_id ?? undefined,
  });
  const provider = trace.getTracerProvider();
  const sdk = typeof provider.getDelegate === "function" ? provider.getDelegate() : provider;
  for (let turn = 0; turn < cfg.user_inputs.length; turn++) {
    await post("/turn_start", { turn });
    let final = null;
    let error = null;
    try {
      for await (const event of runner.runAsync({
        userId: USER,
        sessionId: session.id,
        newMessage: { role: "user", parts: [{ text: cfg.user_inputs[turn] }] },
      })) {
        if (event.errorCode || event.errorMessage) {
          error = `${event.errorCode}: ${event.errorMessage}`;
        }
        if (isFinalResponse(event) && event.content && event.content.parts) {
          const text = event.content.parts.map((p) => p.text || "").join("");
          if (text) final = text;
        }
      }
    } catch (exc) {
      error = String(exc && exc.stack ? exc.stack : exc);
    }
    await sdk.forceFlush();
    await post("/turn_end", { turn, final, error, session_id: session.id });
  }
  await sdk.shutdown();
}

main().then(
  () => process.exit(0),
  (exc) => {
    console.error(exc);
    process.exit(1);
  },
);
