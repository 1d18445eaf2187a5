// A hand-written Chat Completions tool loop (the loop of node-openai-js-traceloop/agent.cjs,
// itself openai_client_laminar.py ported to JavaScript) with the official `openai` client,
// traced by Arize's OpenInference instrumentation for the OpenAI Node SDK
// (@arizeai/openinference-instrumentation-openai) on the OpenTelemetry JS SDK
// (NodeTracerProvider + BatchSpanProcessor + the OTLP/HTTP protobuf exporter), with one user
// span per turn named after the agent (OpenInference span kind AGENT, input/output values).
//
// Started by tests/golden/capture/openai_js_openinference.py (one process per scenario);
// everything it talks to is that script's loopback HTTP server:
//   * the scripted model, as OpenAI Chat Completions (the real `openai` client);
//   * the OTLP/HTTP protobuf receiver (`/v1/traces`);
//   * the store backend the tools call (so the Python side records the executed trajectory).
// Config comes as JSON in CAPTURE_CONFIG.
"use strict";

const cfg = JSON.parse(process.env.CAPTURE_CONFIG);
const { context, diag, DiagConsoleLogger, DiagLogLevel, SpanStatusCode, trace } =
  require("@opentelemetry/api");
if (process.env.CAPTURE_DEBUG) diag.setLogger(new DiagConsoleLogger(), DiagLogLevel.DEBUG);

const { OTLPTraceExporter } = require("@opentelemetry/exporter-trace-otlp-proto");
const { defaultResource, resourceFromAttributes } = require("@opentelemetry/resources");
const { BatchSpanProcessor } = require("@opentelemetry/sdk-trace-base");
const { NodeTracerProvider } = require("@opentelemetry/sdk-trace-node");
const { registerInstrumentations } = require("@opentelemetry/instrumentation");
const { OpenAIInstrumentation } = require("@arizeai/openinference-instrumentation-openai");
const { setSession } = require("@arizeai/openinference-core");
const {
  OpenInferenceSpanKind,
  SemanticConventions,
} = require("@arizeai/openinference-semantic-conventions");

// ------------------------------------------------------------------ OpenTelemetry JS SDK
// The README's setup: a NodeTracerProvider registered globally, then registerInstrumentations
// with `new OpenAIInstrumentation()` before `openai` is required (CommonJS: the require hook
// patches it). Content: OpenInference's trace config defaults (inputs, outputs and messages
// recorded; nothing hidden).
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
registerInstrumentations({ instrumentations: [new OpenAIInstrumentation()] });

const OpenAI = require("openai");
const tracer = trace.getTracer("music-store-support");

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

// ------------------------------------------------------------------ the tools

// Plain functions: the OpenAI instrumentation traces the client only, so no tool spans.
const TOOLS = {
  lookup_track: ({ track_name }) => store("lookup_track", { track_name }),
  lookup_album: ({ album_title }) => store("lookup_album", { album_title }),
  lookup_artist: ({ artist_name }) => store("lookup_artist", { artist_name }),
  lookup_invoice: ({ customer_id, invoice_id }) =>
    store("lookup_invoice", { customer_id, invoice_id }),
  refund: ({ invoice_id, track_id, reason }) => store("refund", { invoice_id, track_id, reason }),
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

  // The turn: a user span named after the agent, as OpenInference's manual-instrumentation
  // docs show (openinference.span.kind AGENT, agent.name, input.value / output.value), active around the
  // loop so the LLM spans are its children; the session (multi_turn) through OpenInference's
  // setSession() context (its OITracer copies session.id onto the spans it starts).
  run(userInput) {
    const base = this.sessionId
      ? setSession(context.active(), { sessionId: this.sessionId })
      : context.active();
    return context.with(base, () =>
      tracer.startActiveSpan(
        cfg.agent_name,
        {
          attributes: {
            [SemanticConventions.OPENINFERENCE_SPAN_KIND]: OpenInferenceSpanKind.AGENT,
            [SemanticConventions.AGENT_NAME]: cfg.agent_name,
            [SemanticConventions.INPUT_VALUE]: userInput,
            [SemanticConventions.INPUT_MIME_TYPE]: "text/plain",
            ...(this.sessionId ? { [SemanticConventions.SESSION_ID]: this.sessionId } : {}),
          },
        },
        async (span) => {
          try {
            const answer = await this.loop(userInput);
            span.setAttribute(SemanticConventions.OUTPUT_VALUE, answer);
            span.setAttribute(SemanticConventions.OUTPUT_MIME_TYPE, "text/plain");
            span.setStatus({ code: SpanStatusCode.OK });
            return answer;
          } catch (exc) {
            span.recordException(exc);
            span.setStatus({ code: SpanStatusCode.ERROR, message: String(exc) });
            throw exc;
          } finally {
            span.end();
          }
        },
      ),
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
    await provider.forceFlush();
    await post("/turn_end", { turn, final, error });
  }
  await provider.forceFlush();
  await provider.shutdown();
}

main().catch((exc) => {
  console.error(exc);
  process.exit(1);
});
