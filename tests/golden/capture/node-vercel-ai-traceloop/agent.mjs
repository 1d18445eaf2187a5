// Vercel AI SDK (`generateText` of `ai` 7 with `tools` + `stopWhen: stepCountIs(n)`, the multi-step
// tool loop) of the music store, the agent of node-vercel-openinference, traced by OpenLLMetry JS
// (@traceloop/node-server-sdk) as its Vercel AI SDK docs show: `traceloop.initialize(...)` and
// `experimental_telemetry: {isEnabled: true, ...}` on each call. The SDK's span processor takes
// the AI SDK's own spans (instrumentation scope "ai": `ai.generateText`,
// `ai.generateText.doGenerate`, `ai.toolCall`) and rewrites them at start/end into its own
// vocabulary (span names `chat <model>` / `execute_tool <tool>`, `gen_ai.*` keys; the run span
// would be `<agent>.agent` if `ai.telemetry.metadata.agent` were set, which `ai` 7 cannot do).
//
// AI SDK 7 no longer emits spans from `ai` itself: an integration of @ai-sdk/otel must be
// registered. `LegacyOpenTelemetry` is the one that emits the AI SDK's own `ai.*` spans (scope
// "ai") that OpenLLMetry's processor rewrites. The newer `OpenTelemetry` (GenAI semconv) writes
// under scope "gen_ai": `initialize` lets every scope through, but rewrites only scope "ai", so
// with it OpenLLMetry would add nothing (checked: the same GenAI spans as the
// vercel-ai-sdk-agent capture, no `traceloop.*` key); hence `LegacyOpenTelemetry`.
//
// Started by tests/golden/capture/vercel_ai_traceloop.py (one process per scenario); everything
// it talks to is that script's loopback HTTP server:
//   * the scripted model, as OpenAI Chat Completions (@ai-sdk/openai's `.chat()` model);
//   * the OTLP/HTTP protobuf receiver (`<baseUrl>/v1/traces`: the SDK's own OTLPTraceExporter);
//   * the store backend the tools call (so the Python side records the executed trajectory).
// Config comes as JSON in CAPTURE_CONFIG.
//
// Session id (multi_turn only): OpenLLMetry's association properties,
// `traceloop.withAssociationProperties({[AssociationProperty.SESSION_ID]: id}, () => generateText(...))`
// (recorded by its processor's onStart as `traceloop.association.properties.session_id`).
import * as traceloop from "@traceloop/node-server-sdk";
import { generateText, registerTelemetry, stepCountIs, tool } from "ai";
import { LegacyOpenTelemetry } from "@ai-sdk/otel";
import { createOpenAI } from "@ai-sdk/openai";
import { z } from "zod";

const cfg = JSON.parse(process.env.CAPTURE_CONFIG);
if (process.env.CAPTURE_DEBUG) {
  const { diag, DiagConsoleLogger, DiagLogLevel } = await import("@opentelemetry/api");
  diag.setLogger(new DiagConsoleLogger(), DiagLogLevel.DEBUG);
}

// OpenLLMetry JS's documented setup (disableBatch: a SimpleSpanProcessor, as its docs show for
// local runs; traceContent on: prompts, completions, tool inputs and outputs recorded).
traceloop.initialize({
  appName: cfg.service_name,
  baseUrl: cfg.traceloop_base_url,
  apiKey: "tl-offline",
  disableBatch: true,
  traceContent: true,
  traceloopSyncEnabled: false,
  silenceInitializationMessage: true,
});

registerTelemetry(new LegacyOpenTelemetry());

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
      experimental_telemetry: {
        isEnabled: true,
        recordInputs: true,
        recordOutputs: true,
        functionId: cfg.agent_name,
      },
    });
  return sessionId != null
    ? traceloop.withAssociationProperties(
        { [traceloop.AssociationProperty.SESSION_ID]: sessionId },
        call,
      )
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
    await traceloop.forceFlush();
    await post("/turn_end", { turn, final, error });
  }
  await traceloop.forceFlush();
}

main().catch((exc) => {
  console.error(exc);
  process.exit(1);
});
