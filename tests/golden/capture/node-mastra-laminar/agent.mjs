// Mastra agent of the music store, traced by Mastra's own observability (@mastra/observability)
// and exported by Mastra's Laminar exporter (@mastra/laminar's LaminarExporter).
//
// Started by tests/golden/capture/mastra_laminar.py (one process per scenario); everything it
// talks to is that script's loopback HTTP server:
//   * the scripted model, as OpenAI Chat Completions (@ai-sdk/openai's `.chat()` model);
//   * the "Laminar" OTLP endpoint <root>/v1/traces: LaminarExporter turns each ended Mastra
//     span into a ReadableSpan with Laminar's own keys (lmnr.span.*, lmnr.association.*) and
//     posts it through a BatchSpanProcessor and @opentelemetry/exporter-trace-otlp-proto
//     (OTLP/HTTP protobuf);
//   * the store backend the tools call (so the Python side records the executed trajectory).
// Config comes as JSON in CAPTURE_CONFIG. ESM, as the Mastra capture (node-mastra/agent.mjs).
import { Agent } from "@mastra/core/agent";
import { Mastra } from "@mastra/core/mastra";
import { InMemoryStore } from "@mastra/core/storage";
import { createTool } from "@mastra/core/tools";
import { Memory } from "@mastra/memory";
import { Observability } from "@mastra/observability";
import { LaminarExporter } from "@mastra/laminar";
import { createOpenAI } from "@ai-sdk/openai";
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
const tools = {
  lookup_track: createTool({
    id: "lookup_track",
    description: d.lookup_track,
    inputSchema: z.object({ track_name: z.string() }),
    execute: async ({ track_name }) => store("lookup_track", { track_name }),
  }),
  lookup_album: createTool({
    id: "lookup_album",
    description: d.lookup_album,
    inputSchema: z.object({ album_title: z.string() }),
    execute: async ({ album_title }) => store("lookup_album", { album_title }),
  }),
  lookup_artist: createTool({
    id: "lookup_artist",
    description: d.lookup_artist,
    inputSchema: z.object({ artist_name: z.string() }),
    execute: async ({ artist_name }) => store("lookup_artist", { artist_name }),
  }),
  lookup_invoice: createTool({
    id: "lookup_invoice",
    description: d.lookup_invoice,
    inputSchema: z.object({ customer_id: z.number().int(), invoice_id: z.number().int() }),
    execute: async ({ customer_id, invoice_id }) =>
      store("lookup_invoice", { customer_id, invoice_id }),
  }),
  refund: createTool({
    id: "refund",
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

const provider = createOpenAI({ baseURL: cfg.base_url, apiKey: "sk-offline" });

// The documented "Explicit Configuration": an API key (dummy: the loopback receiver checks
// nothing; sent as `Authorization: Bearer`), the base URL and the OTLP/HTTP traces endpoint.
const exporter = new LaminarExporter({
  apiKey: "lmnr-offline-key",
  baseUrl: cfg.control_url,
  endpoint: cfg.otlp_traces_url,
  ...(process.env.CAPTURE_DEBUG ? { logLevel: "debug" } : {}),
});

const agent = new Agent({
  id: cfg.agent_name,
  name: cfg.agent_name,
  instructions: cfg.system_prompt,
  model: provider.chat(cfg.model),
  tools,
  memory: new Memory(),
});

const observability = new Observability({
  configs: { laminar: { serviceName: cfg.service_name, exporters: [exporter] } },
});

const mastra = new Mastra({
  agents: { [cfg.agent_name]: agent },
  storage: new InMemoryStore(),
  observability,
});

async function main() {
  const runner = mastra.getAgent(cfg.agent_name);
  // The session id only where the scenario has one (multi_turn): Mastra's memory thread (as in
  // the Arize capture). The other scenarios run without a memory thread.
  const memory = cfg.session_id ? { memory: { thread: cfg.session_id, resource: "customer-17" } } : {};
  for (let turn = 0; turn < cfg.user_inputs.length; turn++) {
    await post("/turn_start", { turn });
    let final = null;
    let error = null;
    try {
      const result = await runner.generate(cfg.user_inputs[turn], { ...memory, maxSteps: 10 });
      final = result.text;
      if (result.error) error = String(result.error);
    } catch (exc) {
      error = String(exc && exc.stack ? exc.stack : exc);
    }
    // @mastra/observability 1.15.2 (the version @mastra/laminar pins) has no flush() on the
    // registry: flush its instance, which awaits the in-flight span handlers, then each
    // exporter's flush() (LaminarExporter: its BatchSpanProcessor's forceFlush()).
    await observability.getDefaultInstance().flush();
    await post("/turn_end", { turn, final, error });
  }
  await observability.shutdown();
}

main().catch((exc) => {
  console.error(exc);
  process.exit(1);
});
