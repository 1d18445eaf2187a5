"""``normalize(trace) -> Trajectory``: classify spans, walk the tree, join, order.

Which spans become steps (docs/adr/0005-normalization.md):

* the spans from the trace root down to the *agent root* are the run itself, not
  steps (the agent root: the root if it is an agent, else descend while exactly one
  child is an agent/workflow and no child is an LLM/tool);
* an agent/workflow span naming the agent it is already inside, with no step in
  between, is a duplicate wrapper (Traceloop ``X.workflow`` under ``invoke_agent X``);
* LangGraph nodes are ``agent`` steps named after the node, except the prebuilt
  agent loop's ``model``/``tools``/``agent`` nodes that only wrap LLM/tool spans;
* Strands loop cycles and phantoms (ADK merged tools, create_agent) are dropped;
* other plumbing of known conventions and unknown spans are ``other`` steps.
"""

from __future__ import annotations

from operator import itemgetter

from collector.core.records import Span, Trace
from collector.normalize import conventions
from collector.normalize.detect import classify
from collector.normalize.errors import status_error
from collector.normalize.join import LlmCall, join, unexecuted
from collector.normalize.mappings import Mappings
from collector.normalize.roles import AGENTIC, CONVENTION_ORDER, Role
from collector.normalize.session_id import session_id
from collector.normalize.steps import (
    agent_name,
    llm_step,
    node_name,
    plain_step,
    recorded_agent_name,
    tool_step,
    unexecuted_step,
)
from collector.normalize.tools import ToolDraft
from collector.normalize.tree import SpanTree
from evaluators.trajectory import Step, StepKind, Trajectory

_LOOP_NODES = frozenset({"model", "tools", "agent"})
_LEAF_ROLES = frozenset({Role.LLM, Role.TOOL})
_MAX_WRAPPER_DEPTH = 16
# pydantic-ai's structured-output tools (``final_result``…) are answered, not executed.
_OUTPUT_TOOL_PREFIX = "final_result"
_PYDANTIC_AI_SCOPE = "pydantic-ai"

SortKey = tuple[int, int, int]  # start time, tree-order rank, 0 (or 1+n: unexecuted call n)
Item = Step | ToolDraft | LlmCall
_sort_key = itemgetter(0)


def normalize(trace: Trace, mappings: Mappings | None = None) -> Trajectory:
    """The trajectory of one trace. Never raises on odd span data (see ``values``)."""
    tree = SpanTree(trace.spans)
    if not len(tree):
        return Trajectory(
            trace_id=trace.trace_id.hex(),
            service="unknown_service",
            agent=None,
            session_id=None,
            input=None,
            output=None,
            failed=False,
            latency_s=0.0,
            start_unix_nano=0,
            steps=(),
            incomplete=True,
        )
    return _Builder(trace, tree, mappings).trajectory()


def session_key(trace: Trace, mappings: Mappings | None = None) -> tuple[str, str | None]:
    """``(service, session id)`` of ``trace``'s trajectory, without building it.

    Exactly what ``normalize`` puts in ``Trajectory.service`` / ``session_id`` (same
    root, same span order), for a fraction of its cost: replay workers shard by it so
    that every turn of a session reaches the same worker.
    """
    tree = SpanTree(trace.spans)
    if not len(tree):
        return "unknown_service", None
    spans = tree.spans
    service = spans[tree.root].resource.service_name
    return service, session_id([spans[i] for i in tree.preorder()], mappings)


class _Builder:
    """State of one ``normalize`` call; per-span lists are indexed like ``tree.spans``."""

    def __init__(self, trace: Trace, tree: SpanTree, mappings: Mappings | None) -> None:
        self.trace, self.tree, self.mappings = trace, tree, mappings
        self.roles: list[Role] = []
        self.unreadable: dict[int, str] = {}  # span index → why it could not be read
        found: set[str] = set()
        for i, span in enumerate(tree.spans):
            try:
                role, convention = classify(span, mappings)
            except Exception as exc:  # one odd span must not cost the trace (see _unreadable)
                role, convention = Role.OTHER, ""
                self.unreadable[i] = f"{type(exc).__name__}: {exc}"
            self.roles.append(role)
            found.add(convention)
        self.conventions = tuple(name for name in CONVENTION_ORDER if name in found)
        self.agent_root = self._find_agent_root()
        self.agent = self._root_agent_name()
        self.agents: dict[str, None] = {self.agent: None} if self.agent else {}
        self.items: list[tuple[SortKey, Item]] = []
        self.llms: list[LlmCall] = []  # in trajectory order, once ``_steps`` ran

    def _find_agent_root(self) -> int:
        """Descend from the root through wrappers that hold exactly one agent (ADR 0005)."""
        tree, roles = self.tree, self.roles
        current = tree.root
        for _ in range(_MAX_WRAPPER_DEPTH):
            if roles[current] is Role.AGENT:
                break
            found = self._lone_agent(current)
            if found is None:
                kids = tree.children(current)
                if len(kids) != 1 or roles[kids[0]] is not Role.CHAIN:
                    break
                # A lone plumbing span between two wrappers is looked through: OpenAI
                # Agents (OpenInference) nests workflow AGENT → task CHAIN → AGENT.
                found = self._lone_agent(kids[0])
                if found is None:
                    break
            current = found
        return current

    def _lone_agent(self, i: int) -> int | None:
        """Span ``i``'s only agent/workflow child, if it has no LLM/tool child."""
        kids = self.tree.children(i)
        agentic = [kid for kid in kids if self.roles[kid] in AGENTIC]
        if len(agentic) != 1 or any(self.roles[kid] in _LEAF_ROLES for kid in kids):
            return None
        return agentic[0]

    def _root_agent_name(self) -> str | None:
        """The agent root's name; an unrecognised root is named only by its attributes."""
        span = self.tree.spans[self.agent_root]
        if self.roles[self.agent_root] is Role.OTHER:
            return recorded_agent_name(span, self.mappings)
        return agent_name(span, self.mappings)

    def trajectory(self) -> Trajectory:
        order = self.tree.preorder()
        self._walk(order)
        steps = self._steps()
        spans = self.tree.spans
        root, agent_root = spans[self.tree.root], spans[self.agent_root]
        error = status_error(root) or status_error(agent_root)
        return Trajectory(
            trace_id=self.trace.trace_id.hex(),
            service=root.resource.service_name,
            agent=self.agent,
            session_id=session_id([spans[i] for i in order], self.mappings),
            input=self._input(),
            output=self._output(),
            failed=error is not None,
            latency_s=root.duration_s,
            start_unix_nano=root.start_unix_nano,
            steps=steps,
            error=error,
            agents=tuple(self.agents),
            root_span_id=root.span_id.hex(),
            attributes=root.attributes,
            resource_attributes=root.resource.attributes,
            conventions=self.conventions,
            incomplete=not self.tree.has_root,
        )

    def _walk(self, order: list[int]) -> None:
        """Visit spans parents-first, passing (parent step, agent, agent anchor) down.

        The anchor is the step id at which the current agent was entered: an agent
        span repeating that agent's name directly below it is a duplicate wrapper.
        """
        parent_of, n = self.tree.parent, len(self.tree)
        parents: list[str | None] = [None] * n
        agents: list[str | None] = [self.agent] * n
        anchors: list[str | None] = [None] * n
        # The run itself is no step (its children start at the top level), unless the
        # whole trace is one tool or model call.
        path = {i for i in self._path() if self.roles[i] not in _LEAF_ROLES}
        for rank, i in enumerate(order):
            if i in path:
                continue
            p = parent_of[i]
            if p >= 0:
                parent, agent, anchor = parents[p], agents[p], anchors[p]
            else:
                parent, agent, anchor = None, self.agent, None
            reason = self.unreadable.get(i)
            if reason is None:
                try:
                    step_id, agent, anchor = self._visit(i, rank, parent, agent, anchor)
                except Exception as exc:  # one odd span must not cost the trace
                    reason = f"{type(exc).__name__}: {exc}"
            if reason is not None:
                step_id = self._unreadable(i, rank, parent, agent, reason)
            parents[i] = parent if step_id is None else step_id
            agents[i], anchors[i] = agent, anchor

    def _visit(
        self, i: int, rank: int, parent: str | None, agent: str | None, anchor: str | None
    ) -> tuple[str | None, str | None, str | None]:
        """Record span ``i``'s step, if it is one: (its step id, agent and anchor below it)."""
        span, role = self.tree.spans[i], self.roles[i]
        key = (span.start_unix_nano, rank, 0)
        step_id = span.span_id.hex()
        if role is Role.TOOL:
            self.items.append((key, ToolDraft(span, self.mappings, step_id, parent, agent)))
        elif role is Role.LLM:
            up = self.tree.parent[i]
            if up >= 0 and self.roles[up] is Role.LLM:
                # The same model call seen twice (ADK legacy ``call_llm`` → ``generate_content``):
                # the outer span holds the content.
                return None, agent, anchor
            step = llm_step(span, step_id, parent, agent)
            self.items.append((key, LlmCall(span, step, conventions.requested_calls(span))))
        elif role in AGENTIC:
            name = agent_name(span, self.mappings)
            if name == agent and parent == anchor:
                return None, agent, anchor  # the same agent re-wrapped: not a hop
            self.agents.setdefault(name, None)
            self.items.append((key, plain_step(StepKind.AGENT, name, span, parent, agent)))
            return step_id, name, step_id
        elif role is Role.NODE:
            if self._is_loop_node(i):
                return None, agent, anchor
            step = plain_step(StepKind.AGENT, node_name(span), span, parent, agent)
            self.items.append((key, step))
        elif role is Role.CHAIN or role is Role.OTHER:
            self.items.append((key, plain_step(StepKind.OTHER, span.name, span, parent, agent)))
        else:  # LOOP, PHANTOM: transparent
            return None, agent, anchor
        return step_id, agent, anchor

    def _unreadable(
        self, i: int, rank: int, parent: str | None, agent: str | None, reason: str
    ) -> str:
        """Span ``i``, which the conventions could not read, as an ``other`` step
        carrying the error; the rest of the trace is evaluated as usual."""
        span = self.tree.spans[i]
        name: object = span.name
        start: object = span.start_unix_nano
        when = start if isinstance(start, int) else 0
        step_id = span.span_id.hex()
        error = f"evald could not read this span: {reason}"
        step = Step(StepKind.OTHER, name if isinstance(name, str) else "", step_id, parent,
                    when, 0.0, error=error, agent=agent)  # fmt: skip
        self.items.append(((when, rank, 0), step))
        return step_id

    def _path(self) -> set[int]:
        """The agent root and its ancestors (cycle-safe)."""
        path, i = set(), self.agent_root
        while i >= 0 and i not in path:
            path.add(i)
            i = self.tree.parent[i]
        return path

    def _is_loop_node(self, i: int) -> bool:
        if node_name(self.tree.spans[i]) not in _LOOP_NODES:
            return False
        return all(self.roles[kid] in _LEAF_ROLES for kid in self.tree.children(i))

    def _steps(self) -> tuple[Step, ...]:
        """Join tools to requests, build their steps, add unexecuted calls, order everything."""
        items = self.items
        items.sort(key=_sort_key)
        ordered = [item for _, item in items if not isinstance(item, Step)]
        joined = join(ordered)
        out: list[tuple[SortKey, Step]] = []
        rank_of: dict[int, int] = {}
        for key, item in items:
            if isinstance(item, ToolDraft):
                out.append((key, tool_step(item, joined[id(item)])))
            elif isinstance(item, LlmCall):
                out.append((key, item.step))
                self.llms.append(item)
                rank_of[id(item)] = key[1]
            else:
                out.append((key, item))
        missing = 0
        for n, (llm, call) in enumerate(unexecuted(self.llms)):
            if llm.span.scope_name == _PYDANTIC_AI_SCOPE and call.name.startswith(
                _OUTPUT_TOOL_PREFIX
            ):
                continue
            step = unexecuted_step(llm.step, call)
            out.append(((step.start_unix_nano, rank_of[id(llm)], 1 + n), step))
            missing += 1
        if missing:  # else ``out`` is in ``items`` order already
            out.sort(key=_sort_key)
        return tuple([step for _, step in out])

    def _run_spans(self) -> list[Span]:
        """Where run-level input/output may be recorded: the agent root, then the trace root."""
        spans = self.tree.spans
        if self.agent_root == self.tree.root:
            return [spans[self.agent_root]]
        return [spans[self.agent_root], spans[self.tree.root]]

    def _input(self) -> str | None:
        for span in self._run_spans():
            found = conventions.first_text(conventions.RUN_INPUT, span)
            if found:
                return found
        if not self.llms:
            return None
        return conventions.first_text(conventions.LLM_INPUT, self.llms[0].span)

    def _output(self) -> str | None:
        for span in self._run_spans():
            found = conventions.first_text(conventions.RUN_OUTPUT, span)
            if found:
                return found
        if self.llms:  # the last reply; None if it asked for tools (the run was cut short)
            return conventions.first_text(conventions.LLM_OUTPUT, self.llms[-1].span)
        for span in self._run_spans():
            found = conventions.first_text(conventions.RUN_OUTPUT_FALLBACK, span)
            if found:
                return found
        return None
