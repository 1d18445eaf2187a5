// A hand-written Chat Completions tool loop (the loop of openai_client_laminar.py, ported to
// JavaScript) with the official `openai` client, traced by OpenLLMetry JS
// (@traceloop/node-server-sdk: its OpenAI instrumentation and its withWorkflow / withAgent /
// withTool wrappers).
//
// Started by tests/golden/capture/openai_js_traceloop.py (one process per scenario);
// everything it talks to is that script's loopback HTTP server:
//   * the scripted model, as OpenAI Chat Completions (the real `openai` client);
//   * the OTLP/HTTP protobuf receiver (`<baseUrl>/v1/traces`: the SDK's own OTLPTraceExporter);
//   * the store backend the tools call (so the Python side records the executed trajectory).
// Config comes as JSON in CAPTURE_CONFIG.
"use strict";

const cfg = JSON.parse(process.env.CAPTURE_CONFIG);
if (process.env.CAPTURE_DEBUG) {
  const { diag, DiagConsoleLogger, DiagLogLevel } = require("@opentelemetry/api");
  diag.setLogger(new DiagConsoleLogger(), DiagLogLevel.DEBUG);
}

const traceloop = require("@traceloop/node-server-sdk");
const OpenAI = require("openai");

// OpenLLMetry JS's documented setup: instrumentModules for a module loaded before initialize
// (the SDK's own require hook patches `openai` >=4 <7 only; this is 7.x), traceContent on
// (the default, written out: prompts, completions, entity inputs and outputs recorded),
// disableBatch: a SimpleSpanProcessor, as its docs show for local runs.
traceloop.initialize({
  appName: cfg.service_name,
  baseUrl: cfg.traceloop_base_url,
  apiKey: "tl-offline",
  disableBatch: true,
  traceContent: true,
  traceloopSyncEnabled: false,
  silenceInitializationMessage: true,
  instrumentModules: { openAI: OpenAI.OpenAI },
});

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

// ------------------------------------------------------------------ the tools (wrapped)

// Each tool runs inside traceloop.withTool({name}), the arguments object passed through (the
// SDK records a single object argument as the entity input's kwargs).
const TOOLS = {
  lookup_track: (args) =>
    traceloop.withTool({ name: "lookup_track" }, ({ track_name }) =>
      store("lookup_track", { track_name }), args),
  lookup_album: (args) =>
    traceloop.withTool({ name: "lookup_album" }, ({ album_title }) =>
      store("lookup_album", { album_title }), args),
  lookup_artist: (args) =>
    traceloop.withTool({ name: "lookup_artist" }, ({ artist_name }) =>
      store("lookup_artist", { artist_name }), args),
  lookup_invoice: (args) =>
    traceloop.withTool({ name: "lookup_invoice" }, ({ customer_id, invoice_id }) =>
      store("lookup_invoice", { customer_id, invoice_id }), args),
  refund: (args) =>
    traceloop.withTool({ name: "refund" }, ({ invoice_id, track_id, reason }) =>
      store("refund", { invoice_id, track_id, reason }), args),
};

const TOOL_SCHEMAS = Object.entries(cfg.tool_parameters).map(([name, properties]) => ({
  type: "function",
  function: {
    name,
    description: cfg.tool_descriptions[name],
    parameters: { type: "object", properties, required: Object.keys(properties) },
  },
}));

// The application's tool dispatch: the content of the `tool` message for one call.
async function runTool(name, argumentsText) {
  try {
    return JSON.stringify(await TOOLS[name](JSON.parse(argumentsText)));
  } catch (exc) {
    if (exc instanceof StoreError) return `Error: ${exc.message}`;
    throw exc;
  }
}

// ------------------------------------------------------------------ the agent loop

class SupportAgent {
  constructor(sessionId) {
    this.client = new OpenAI.OpenAI({ apiKey: "sk-offline", baseURL: cfg.base_url, maxRetries: 0 });
    this.messages = [{ role: "system", content: cfg.system_prompt }];
    this.sessionId = sessionId;
  }

  // One user turn: ask the model until it answers without tool calls.
  async loop(userInput) {
    this.messages.push({ role: "user", content: userInput });
    for (;;) {
      const response = await this.client.chat.completions.create({
        model: cfg.model,
        messages: this.messages,
        tools: TOOL_SCHEMAS,
      });
      const message = response.choices[0].message;
      const kept = { role: "assistant", content: message.content };
      if (message.tool_calls && message.tool_calls.length) kept.tool_calls = message.tool_calls;
      this.messages.push(kept);
      if (!message.tool_calls || !message.tool_calls.length) return message.content;
      for (const call of message.tool_calls) {
        const content = await runTool(call.function.name, call.function.arguments);
        this.messages.push({ role: "tool", tool_call_id: call.id, content });
      }
    }
  }

  // The turn as OpenLLMetry's docs show for agents: a workflow around the agent; the session
  // (multi_turn) as the conversation id of the workflow (the DecoratorConfig's
  // `conversationId`, the context key `withConversation` sets: gen_ai.conversation.id).
  run(userInput) {
    const workflow = { name: "support_turn" };
    if (this.sessionId) workflow.conversationId = this.sessionId;
    return traceloop.withWorkflow(
      workflow,
      (text) => traceloop.withAgent({ name: cfg.agent_name }, (t) => this.loop(t), text),
      userInput,
    );
  }
}

async function main() {
  const agent = new SupportAgent(cfg.session_id);
  for (let turn = 0; turn < cfg.user_inputs.length; turn++) {
    await post("/turn_start", { turn });
    let final = null;
    let error = null;
    try {
      final = await agent.run(cfg.user_inputs[turn]);
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
