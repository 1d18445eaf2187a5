// OpenAI Agents SDK for TypeScript (`@openai/agents`) agent of the music store, traced by
// OpenInference's `@arizeai/openinference-instrumentation-openai-agents` (a TracingProcessor
// registered with the SDK, turning its trace/span events into OTel spans) on the OpenTelemetry
// JS SDK (NodeTracerProvider + BatchSpanProcessor + the OTLP/HTTP protobuf exporter).
//
// Started by tests/golden/capture/openai_agents_js_openinference.py (one process per
// scenario); everything it talks to is that script's loopback HTTP server:
//   * the scripted model, as OpenAI Chat Completions (`OpenAIChatCompletionsModel` over the
//     real `openai` client);
//   * the OTLP/HTTP protobuf receiver (`/v1/traces`);
//   * the store backend the tools call (so the Python side records the executed trajectory).
// Config comes as JSON in CAPTURE_CONFIG.
//
// The instrumentation's documented ESM setup: `new OpenAIAgentsInstrumentation({tracerProvider})`
// then `manuallyInstrument(agents)` (exclusive mode: replaces the SDK's default exporter to
// OpenAI's tracing backend, so nothing is sent there). Content: the SDK's
// `traceIncludeSensitiveData` (default true) and OpenInference's trace config (default: inputs
// and outputs recorded) are both on. Session: OpenInference's `setSession` in the active context
// around each turn (the JS twin of Python's `using_session`), the SDK's `MemorySession` for the
// conversation memory and `groupId` = the session id (multi_turn only).
import * as agents from "@openai/agents";
import {
  Agent,
  MemorySession,
  OpenAIChatCompletionsModel,
  Runner,
  getGlobalTraceProvider,
  tool,
} from "@openai/agents";
import { OpenAIAgentsInstrumentation } from "@arizeai/openinference-instrumentation-openai-agents";
import { setSession } from "@arizeai/openinference-core";
import { context } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { defaultResource, resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import OpenAI from "openai";
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

const instrumentation = new OpenAIAgentsInstrumentation({ tracerProvider: provider });
instrumentation.manuallyInstrument(agents);

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
const tools = [
  tool({
    name: "lookup_track",
    description: d.lookup_track,
    parameters: z.object({ track_name: z.string() }),
    execute: async ({ track_name }) => store("lookup_track", { track_name }),
  }),
  tool({
    name: "lookup_album",
    description: d.lookup_album,
    parameters: z.object({ album_title: z.string() }),
    execute: async ({ album_title }) => store("lookup_album", { album_title }),
  }),
  tool({
    name: "lookup_artist",
    description: d.lookup_artist,
    parameters: z.object({ artist_name: z.string() }),
    execute: async ({ artist_name }) => store("lookup_artist", { artist_name }),
  }),
  tool({
    name: "lookup_invoice",
    description: d.lookup_invoice,
    parameters: z.object({ customer_id: z.number().int(), invoice_id: z.number().int() }),
    execute: async ({ customer_id, invoice_id }) =>
      store("lookup_invoice", { customer_id, invoice_id }),
  }),
  tool({
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

// ------------------------------------------------------------------ the agent
const client = new OpenAI({ baseURL: cfg.base_url, apiKey: "sk-offline", maxRetries: 0 });
const sessionId = cfg.session_id ?? null;

const agent = new Agent({
  name: cfg.agent_name,
  instructions: cfg.system_prompt,
  model: new OpenAIChatCompletionsModel(client, cfg.model),
  tools,
});

async function main() {
  const session = sessionId != null ? new MemorySession({ sessionId }) : undefined;
  for (let turn = 0; turn < cfg.user_inputs.length; turn++) {
    await post("/turn_start", { turn });
    let final = null;
    let error = null;
    // RunConfig (workflow name, group id) is the Runner's; the session is a run option.
    const runner = new Runner({
      workflowName: cfg.workflow_name,
      ...(sessionId != null ? { groupId: sessionId } : {}),
    });
    const turnContext =
      sessionId != null ? setSession(context.active(), { sessionId }) : context.active();
    try {
      const result = await context.with(turnContext, () =>
        runner.run(agent, cfg.user_inputs[turn], session ? { session } : {}),
      );
      final = typeof result.finalOutput === "string" ? result.finalOutput : null;
    } catch (exc) {
      error = String(exc && exc.stack ? exc.stack : exc);
    }
    await getGlobalTraceProvider().forceFlush();
    await provider.forceFlush();
    await post("/turn_end", { turn, final, error });
  }
  await provider.shutdown();
}

main().catch((exc) => {
  console.error(exc);
  process.exit(1);
});
