// Firebase Genkit agent of the music store (`ai.defineAgent` of genkit/beta: a prompt with the
// five `ai.defineTool` tools wired into Genkit's multi-turn agent/session runtime), traced by
// Genkit's own OpenTelemetry spans (tracer `genkit-tracer`), exported over OTLP/HTTP protobuf.
//
// Started by tests/golden/capture/genkit_agent.py (one process per scenario); everything it talks
// to is that script's loopback HTTP server:
//   * the scripted model, as OpenAI Chat Completions (the `openAICompatible` plugin of
//     @genkit-ai/compat-oai, i.e. the `openai` JS SDK with a baseURL); the agent streams its
//     model calls, so the driver answers them as server-sent events;
//   * the OTLP/HTTP protobuf receiver (`/v1/traces`);
//   * the store backend the tools call (so the Python side records the executed trajectory).
// Config comes as JSON in CAPTURE_CONFIG.
//
// Telemetry: Genkit runs its own OpenTelemetry NodeSDK; `enableTelemetry(config)` of
// `genkit/tracing` is the hook for an app's exporters (its config is NodeSDK's configuration;
// Genkit prepends its dev-UI telemetry-server processor, which sends nothing unless
// GENKIT_TELEMETRY_SERVER is set or the dev UI (GENKIT_ENV=dev) sets it). It has to run before
// the first Genkit span (the first span otherwise enables the default, exporter-less setup).
// `flushTracing()` of `genkit/tracing` flushes every span processor once per user turn.
import { genkit, z, InMemorySessionStore } from "genkit/beta";
import { enableTelemetry, flushTracing } from "genkit/tracing";
import openAICompatible from "@genkit-ai/compat-oai";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { Resource } from "@opentelemetry/resources";
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";

const cfg = JSON.parse(process.env.CAPTURE_CONFIG);

// ------------------------------------------------------------------ telemetry (before any span)
await enableTelemetry({
  resource: new Resource({
    "service.name": cfg.service_name,
    "deployment.environment.name": "acceptance-test",
  }),
  autoDetectResources: false, // no host / process / env detectors (pid, command line, host name)
  spanProcessors: [
    new BatchSpanProcessor(new OTLPTraceExporter({ url: cfg.otlp_url }), {
      scheduledDelayMillis: 60_000,
      maxQueueSize: 8192,
      maxExportBatchSize: 4096,
    }),
  ],
});

// ------------------------------------------------------------------ Genkit + the model plugin
const ai = genkit({
  plugins: [
    openAICompatible({
      name: "scripted",
      apiKey: "sk-offline",
      baseURL: cfg.base_url,
      maxRetries: 0,
    }),
  ],
});

// ------------------------------------------------------------------ the store tools
async function post(path, body) {
  const response = await fetch(cfg.control_url + path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`control ${path}: HTTP ${response.status}`);
  return response.json();
}

// A Genkit tool that throws fails the whole generate call (only interrupts are caught), so a
// refused store call is *returned* to the model as {error: message}, the tool's result.
async function store(name, args) {
  const answer = await post(`/store/${name}`, args);
  if (answer.error != null) return { error: answer.error };
  return answer.result;
}

const d = cfg.tool_descriptions;
const p = cfg.tool_parameters;
const str = (tool, key) => z.string().describe(p[tool][key].description);
const int = (tool, key) => z.number().int().describe(p[tool][key].description);

const tools = [
  ai.defineTool(
    {
      name: "lookup_track",
      description: d.lookup_track,
      inputSchema: z.object({ track_name: str("lookup_track", "track_name") }),
      outputSchema: z.any(),
    },
    async ({ track_name }) => store("lookup_track", { track_name }),
  ),
  ai.defineTool(
    {
      name: "lookup_album",
      description: d.lookup_album,
      inputSchema: z.object({ album_title: str("lookup_album", "album_title") }),
      outputSchema: z.any(),
    },
    async ({ album_title }) => store("lookup_album", { album_title }),
  ),
  ai.defineTool(
    {
      name: "lookup_artist",
      description: d.lookup_artist,
      inputSchema: z.object({ artist_name: str("lookup_artist", "artist_name") }),
      outputSchema: z.any(),
    },
    async ({ artist_name }) => store("lookup_artist", { artist_name }),
  ),
  ai.defineTool(
    {
      name: "lookup_invoice",
      description: d.lookup_invoice,
      inputSchema: z.object({
        customer_id: int("lookup_invoice", "customer_id"),
        invoice_id: int("lookup_invoice", "invoice_id"),
      }),
      outputSchema: z.any(),
    },
    async ({ customer_id, invoice_id }) => store("lookup_invoice", { customer_id, invoice_id }),
  ),
  ai.defineTool(
    {
      name: "refund",
      description: d.refund,
      inputSchema: z.object({
        invoice_id: int("refund", "invoice_id"),
        track_id: int("refund", "track_id"),
        reason: str("refund", "reason"),
      }),
      outputSchema: z.any(),
    },
    async ({ invoice_id, track_id, reason }) => store("refund", { invoice_id, track_id, reason }),
  ),
];

// ------------------------------------------------------------------ the agent
const agent = ai.defineAgent({
  name: cfg.agent_name,
  description: "Customer support of the Tunes & Co music store.",
  model: `scripted/${cfg.model}`,
  system: cfg.system_prompt,
  tools,
  store: new InMemorySessionStore(), // server-managed session state (snapshots per turn)
});

async function main() {
  // One chat per scenario: Genkit's session. multi_turn resumes/starts the labelled session id;
  // the one-shot scenarios get the random session id Genkit generates.
  const chat = agent.chat(cfg.session_id != null ? { sessionId: cfg.session_id } : undefined);
  for (let turn = 0; turn < cfg.user_inputs.length; turn++) {
    await post("/turn_start", { turn });
    let final = null;
    let error = null;
    try {
      const response = await chat.send(cfg.user_inputs[turn]);
      final = response.text;
      if (response.finishReason !== "stop") error = `finishReason ${response.finishReason}`;
    } catch (exc) {
      error = String(exc && exc.stack ? exc.stack : exc);
    }
    await flushTracing();
    await post("/turn_end", { turn, final, error, session_id: chat.sessionId ?? null });
  }
}

main()
  .then(() => process.exit(0))
  .catch((exc) => {
    console.error(exc);
    process.exit(1);
  });
