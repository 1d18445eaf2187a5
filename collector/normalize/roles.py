"""What a span is to the trajectory, independent of the convention that said so."""

from __future__ import annotations

from enum import IntEnum
from typing import Final


class Role(IntEnum):
    """The part a span plays in an agent run (decided once per span by ``detect``)."""

    TOOL = 1  # one tool execution
    LLM = 2  # one model inference
    AGENT = 3  # an agent invocation (invoke_agent, OpenInference AGENT, ai.generateText …)
    WORKFLOW = 4  # an orchestration wrapper (invoke_workflow, Traceloop workflow, ADK invocation)
    NODE = 5  # a LangGraph graph node (model, tools, refund_agent …)
    CHAIN = 6  # plumbing of a known convention that is not a node (RunnableSequence …)
    LOOP = 7  # an agent-loop cycle wrapper (Strands execute_event_loop_cycle): dropped
    PHANTOM = 8  # not part of the run (ADK "(merged tools)", create_agent): dropped
    OTHER = 9  # no convention recognised it


AGENTIC: Final = frozenset({Role.AGENT, Role.WORKFLOW})
LEAF_ROLES: Final = frozenset({Role.LLM, Role.TOOL})  # the run's work: model and tool calls
"""Roles that name an agent (or a workflow of agents) for the spans below them."""

# Convention names reported in ``Trajectory.conventions``, in this order.
OTEL_GENAI: Final = "otel_genai"
OPENINFERENCE: Final = "openinference"
TRACELOOP: Final = "traceloop"
VERCEL_AI: Final = "vercel_ai"
LANGSMITH: Final = "langsmith"
GOOGLE_ADK: Final = "google_adk"
STRANDS: Final = "strands"
LANGFUSE: Final = "langfuse"
MLFLOW: Final = "mlflow"
GENKIT: Final = "genkit"
AGENTOPS: Final = "agentops"
LANGWATCH: Final = "langwatch"
CHAT_EVENTS: Final = "chat_events"  # a model call in its span's events (rule 67)
CUSTOM: Final = "custom"
EVIDENCE: Final = "evidence"
CONVENTION_ORDER: Final = (
    OTEL_GENAI,
    OPENINFERENCE,
    TRACELOOP,
    VERCEL_AI,
    LANGSMITH,
    GOOGLE_ADK,
    STRANDS,
    LANGFUSE,
    MLFLOW,
    GENKIT,
    AGENTOPS,
    LANGWATCH,
    CHAT_EVENTS,
    CUSTOM,
    EVIDENCE,
)
