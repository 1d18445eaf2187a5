"""One run's trajectory from its trace (``RunBuilder``): classify spans, walk the tree, join, order.

Which spans become steps (docs/adr/0005-normalization.md):

* the spans from the trace root down to the *agent root* are the run itself, not
  steps (the agent root: the root if it is an agent, else descend while exactly one
  child is an agent/workflow and no child is an LLM/tool);
* an agent/workflow span naming the agent it is already inside, with no step in
  between, is a duplicate wrapper (Traceloop ``X.workflow`` under ``invoke_agent X``);
* graph nodes are ``agent`` steps named after the node, except a node whose work
  is of one kind only (model calls only, or tool calls only: the agent loop's own
  wrapper, whatever its name) and graph bookkeeping nodes (``__start__``);
* one call recorded by several instrumentation layers (a framework's tool span
  around a client library's, an MCP client span around the server's, a model span
  around the SDK's) is one step: the outer layer, completed from the inner ones;
* plumbing is not a step: chains, loop cycles, phantoms (ADK merged tools,
  create_agent) and spans no convention recognises are looked through; a
  recognised operation that is none of the roles (a retriever) is an ``other`` step;
* a trace with no agent, model or tool span is no agent run (``skip_reason``);
* requested calls no span executed are rebuilt from a later model call's history
  when it holds their results (``rebuilt``); framework-internal tools become
  ``control`` steps; framework retries are one step with ``attempts``.
"""

from __future__ import annotations

from typing import Final

from collector.core.records import Span, Trace
from collector.normalize import conventions, kinds
from collector.normalize.agent_root import find_agent_root
from collector.normalize.detect import classify, settle_evident_calls
from collector.normalize.errors import recovered_error, status_error
from collector.normalize.event_spans import EVENT_ROLES, is_event_span
from collector.normalize.gaps import gaps_of
from collector.normalize.handoffs import steered
from collector.normalize.join import LlmCall
from collector.normalize.mappings import DEFAULT_INTERNAL_TOOLS, Mappings
from collector.normalize.named_agents import confirmed_agents
from collector.normalize.preparation import merge_preparations
from collector.normalize.rebuilt import answered_unrecorded
from collector.normalize.rebuilt_spans import timed_by_spans
from collector.normalize.requested_tools import confirmed_tools
from collector.normalize.roles import AGENTIC, CONVENTION_ORDER, LEAF_ROLES, Role
from collector.normalize.run_agent import holds_agent, run_agents
from collector.normalize.run_text import recorded_outputs, run_input, run_output
from collector.normalize.session_id import session_id
from collector.normalize.step_list import (
    Item,
    SortKey,
    answer_tool,
    content_recorded,
    control_output,
    ordered_steps,
    sort_key,
)
from collector.normalize.step_records import duration_s, new_trajectory
from collector.normalize.steps import (
    agent_name,
    llm_step,
    node_name,
    plain_step,
    unreadable_step,
)
from collector.normalize.tools import ARGUMENT_KEYS, ToolDraft
from collector.normalize.transcript_run import recorded_transcript, transcript_calls
from collector.normalize.tree import SpanTree
from collector.normalize.wrappers import anonymous_agent, empty_hook, not_a_hop, rewraps, wraps_work
from evaluators.trajectory import Step, Trajectory

_LOOP_NODE_NAMES: Final = frozenset({"model", "tools", "agent"})  # LangGraph's prebuilt agent loop
# Roles a layer search stops at: another layer of a call is found below plumbing only.
_STOPS: Final = frozenset({Role.LLM, Role.TOOL, Role.AGENT, Role.WORKFLOW, Role.NODE})
_RUN_ROLES: Final = _STOPS  # a trace with none of these is no agent run
_MAX_WRAPPER_DEPTH: Final = 16
NOT_A_RUN: Final = "no_agent_spans"  # the skip reason of a trace with no run in it
_HOP: Final = 3  # ``_work``: a hop below (an agent, a workflow, a node), or work of both kinds


class RunBuilder:
    """State of one ``normalize`` call; per-span lists are indexed like ``tree.spans``."""

    def __init__(self, trace: Trace, tree: SpanTree, mappings: Mappings | None) -> None:
        self.trace, self.tree, self.mappings = trace, tree, mappings
        self.call_ids, self.left_out = True, False  # (``runs.normalize_for``)
        self.roles: list[Role] = []
        self.families: list[str] = []  # the convention that recognised each span, or ""
        self.unreadable: dict[int, str] = {}  # span index → why it could not be read
        for i, span in enumerate(tree.spans):
            try:
                role, convention = classify(span, mappings)
            except Exception as exc:  # one odd span must not cost the trace (see unreadable_step)
                role, convention = Role.OTHER, ""
                self.unreadable[i] = f"{type(exc).__name__}: {exc}"
            self.roles.append(role)
            self.families.append(convention)
        twins = settle_evident_calls(tree, self.roles, self.families)  # (runs, second layers)
        found = set(self.families)
        self.conventions = tuple(name for name in CONVENTION_ORDER if name in found)
        self.named = confirmed_agents(tree, self.roles, mappings)  # (their roles become AGENT)
        self.requested = confirmed_tools(tree, self.roles, ARGUMENT_KEYS)  # (untyped tool spans)
        self.internal_tools = mappings.internal_tools if mappings else DEFAULT_INTERNAL_TOOLS
        self.work: dict[int, int] = {}  # ``_work`` memo
        self.runners: list[int] = []  # named agents that only run the agent root (rule 63)
        self.agent_root = find_agent_root(tree, self.roles, self._work, mappings, self.runners)
        names = run_agents(tree, self.roles, self.agent_root, mappings, self.named)
        self.agent = names[0] if names else None
        self.agents: dict[str, None] = dict.fromkeys(names)
        self.items: list[tuple[SortKey, Item]] = []
        self.llms: list[LlmCall] = []  # in trajectory order, once ``_steps`` ran
        self.drafts: dict[int, ToolDraft] = {}  # tool span → its draft (for layers)
        self.calls: dict[int, LlmCall] = {}  # model span → its call (for layers)
        self.layers_merged = twins
        self.wrappers: dict[tuple[int, str], bool] = {}  # ``is_model_wrapper`` memo
        self.leafy: dict[int, bool] = {}  # ``_loop_turn`` memo: a span has leaf children

    def trajectory(self) -> Trajectory:
        order = self.tree.preorder()
        is_run = any(role in _RUN_ROLES for role in self.roles)
        if is_run:
            self._walk(order)
        transcript = None if self.calls or self.drafts else recorded_transcript(self.tree, order)
        if transcript is not None:  # no model or tool span; a span's output holds the run
            is_run = True
            self.items.extend(transcript_calls(transcript, self.tree, self.agent, len(order)))
        steps = self._steps()
        steps = steered(steps, self.agent, self.agents, self.llms)  # hand-overs: control
        spans = self.tree.spans
        root, agent_root = spans[self.tree.root], spans[self.agent_root]
        session = session_id([spans[i] for i in order], self.mappings)
        # Run-level input/output: on the agent root, then the trace root.
        run_spans = [spans[self.agent_root]]
        if self.agent_root != self.tree.root:
            run_spans.append(spans[self.tree.root])
        said = (None, None) if transcript is None else (transcript.request, transcript.reply)
        input_text = run_input(run_spans, self.llms, self._path_spans, said[0])
        output_text = run_output(run_spans, self.llms, said[1])
        if steps and steps[-1].kind is kinds.TOOL:  # (outputs are read only then)
            steps = answer_tool(steps, recorded_outputs(run_spans, output_text))
        output_text = output_text or control_output(steps)
        error = status_error(root) or status_error(agent_root)
        for runner in self.runners:  # (between the two: a runner's failure is the run's)
            error = error or status_error(spans[runner])
        error = recovered_error(error, steps, output_text is not None)
        return new_trajectory(
            trace_id=self.trace.trace_id.hex(),
            service=root.resource.service_name,
            agent=self.agent,
            session_id=session,
            input=input_text,
            output=output_text,
            failed=error is not None,
            latency_s=duration_s(root),
            start_unix_nano=root.start_unix_nano,
            steps=steps,
            error=error,
            agents=tuple(self.agents),
            root_span_id=root.span_id.hex(),
            attributes=root.attributes,
            resource_attributes=root.resource.attributes,
            conventions=self.conventions,
            incomplete=not self.tree.has_root,
            gaps=gaps_of(
                steps,
                input_text=input_text,
                output_text=output_text,
                session_id=session,
                content_recorded=content_recorded(self.llms, input_text, output_text),
                layers_merged=self.layers_merged,
                tools_unrecorded=answered_unrecorded(self.llms, steps),
                is_run=is_run,
            ),
            skip_reason=None if is_run else NOT_A_RUN,
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
        path = {i for i in self._path() if self.roles[i] not in LEAF_ROLES}
        for rank, i in enumerate(order):
            if i in path:
                continue
            p = parent_of[i]
            if p >= 0:
                parent, agent, anchor = parents[p], agents[p], anchors[p]
            else:
                parent, agent, anchor = None, self.agent, None
            reason = self.unreadable.get(i) if self.unreadable else None
            if reason is None:
                try:
                    step_id, agent, anchor = self._visit(i, rank, parent, agent, anchor)
                except Exception as exc:  # one odd span must not cost the trace
                    reason = f"{type(exc).__name__}: {exc}"
            if reason is not None:  # an ``other`` step carrying the error; the rest is read
                step = unreadable_step(self.tree.spans[i], parent, agent, reason)
                self.items.append(((step.start_unix_nano, rank, 0), step))
                step_id = step.span_id
            parents[i] = parent if step_id is None else step_id
            agents[i], anchors[i] = agent, anchor

    def _visit(
        self, i: int, rank: int, parent: str | None, agent: str | None, anchor: str | None
    ) -> tuple[str | None, str | None, str | None]:
        """Record span ``i``'s step, if it is one: (its step id, agent and anchor below it)."""
        span, role = self.tree.spans[i], self.roles[i]
        if (
            span.end_unix_nano == span.start_unix_nano
            and role in EVENT_ROLES
            and is_event_span(self.tree, self.roles, i, self.mappings)
        ):
            return None, agent, anchor  # an event of the call above, written as a span
        key = (span.start_unix_nano, rank, 0)
        step_id = span.span_id.hex()
        if role is Role.TOOL:
            draft = ToolDraft(span, self.mappings, step_id, parent, agent)
            # (Parents are visited first: with no tool draft yet there is no outer layer.)
            outer = self._layer_above(i, Role.TOOL) if self.drafts else None
            if outer is not None and outer in self.drafts and self.drafts[outer].same_call(draft):
                self.drafts[outer].absorb(draft)
                self.layers_merged = True
                return None, agent, anchor
            self.drafts[i] = draft
            self.items.append((key, draft))
        elif role is Role.LLM:
            step = llm_step(span, step_id, parent, agent)
            requested = (
                self.requested[i] if i in self.requested else conventions.requested_calls(span)
            )
            outer = self._layer_above(i, Role.LLM) if self.calls else None
            if outer is not None and outer in self.calls:
                # The same model call seen twice (ADK legacy ``call_llm`` → ``generate_content``,
                # a framework's model span → the client library's): the outer span first.
                self.calls[outer].absorb(span, step, requested)
                self.calls[i] = self.calls[outer]  # (a third layer below merges too)
                self.layers_merged = True
                return None, agent, anchor
            call = LlmCall(span, step, requested)
            self.calls[i] = call
            self.items.append((key, call))
        elif role in AGENTIC:
            own_work = agent is not None and self._loop_turn(i, span)
            fam, maps = self.families[i], self.mappings
            if own_work or not_a_hop(
                self.tree, self.roles, self._work, i, memo=self.wrappers, family=fam, mappings=maps
            ):
                return None, agent, anchor  # the agent's own work, the loop's model step, a chain
            name = self.named.get(i) or agent_name(span, self.mappings)
            if name == agent and parent == anchor:
                return None, agent, anchor  # the same agent re-wrapped: not a hop
            if parent == anchor and rewraps(self.tree, self.roles, i, agent, self.mappings):
                return None, agent, anchor  # an unnamed call wrapper around the same hop
            self.agents.setdefault(name, None)
            self.items.append((key, plain_step(kinds.AGENT, name, span, parent, agent)))
            return step_id, name, step_id
        elif role is Role.NODE:
            return self._node(i, key, parent, agent, anchor)
        elif (
            role is Role.OTHER
            and self.families[i]
            and not wraps_work(self.tree, self._work, self._layer_above, i)
        ):
            self.items.append((key, plain_step(kinds.OTHER, span.name, span, parent, agent)))
        else:  # CHAIN, LOOP, PHANTOM, unrecognised: plumbing, looked through
            return None, agent, anchor
        return step_id, agent, anchor

    def _node(
        self, i: int, key: SortKey, parent: str | None, agent: str | None, anchor: str | None
    ) -> tuple[str | None, str | None, str | None]:
        """A graph node's step: a hop (into the agent below it, when it holds one or
        work of both kinds), unless it is the loop's own node or the agent the walk is
        in (the node's own subgraph run, or the run's agent)."""
        span = self.tree.spans[i]
        name = node_name(span)
        if self._is_loop_node(i) or (name == agent and parent == anchor):
            return None, agent, anchor
        step_id = span.span_id.hex()
        self.items.append((key, plain_step(kinds.AGENT, name, span, parent, agent)))
        if holds_agent(self.tree, self.roles, i):  # a sub-agent's run, not a graph step
            self.agents.setdefault(name, None)
            return step_id, name, step_id
        return step_id, agent, anchor

    def _layer_above(self, i: int, role: Role) -> int | None:
        """The nearest ancestor of span ``i`` with ``role`` reached through plumbing only."""
        parent_of, roles = self.tree.parent, self.roles
        up = parent_of[i]
        for _ in range(_MAX_WRAPPER_DEPTH):
            if up < 0:
                return None
            if roles[up] in _STOPS:
                return up if roles[up] is role else None
            up = parent_of[up]
        return None

    def _path_spans(self) -> list[Span]:
        return [self.tree.spans[i] for i in self._path()]

    def _path(self) -> list[int]:
        """The agent root and its ancestors up to the trace root (cycle-safe)."""
        path, i = [], self.agent_root
        while i >= 0 and i not in path:
            path.append(i)
            i = self.tree.parent[i]
        return path

    def _is_loop_node(self, i: int) -> bool:
        """A node that is the agent loop's own wrapper or graph bookkeeping, not a hop.

        The loop's wrappers do one kind of work each, model calls or tool calls, and
        come as a pair: a node doing one kind beside a sibling node doing the other.
        LangGraph's prebuilt loop names them (``model``/``agent``, ``tools``), which
        also covers a run whose loop ended after one model call.
        """
        name = node_name(self.tree.spans[i])
        if (name.startswith("__") and name.endswith("__")) or empty_hook(self.tree, i):
            return True  # __start__, __end__: the graph's own entry and exit; a hook's
        work = self._work(i, 0)
        if work not in (int(Role.LLM), int(Role.TOOL)):
            return False
        if name in _LOOP_NODE_NAMES:
            return True
        other = int(Role.TOOL) if work == int(Role.LLM) else int(Role.LLM)
        up = self.tree.parent[i]
        siblings = self.tree.children(up) if up >= 0 else []
        return any(
            self.roles[sibling] is Role.NODE and self._work(sibling, 0) == other
            for sibling in siblings
        )

    def _loop_turn(self, i: int, span: Span) -> bool:
        """An agent span naming no agent inside an agent whose model and tool calls all sit
        in such spans (none beside them): a turn of that agent's loop (``wrappers``)."""
        if not anonymous_agent(span, self.mappings):
            return False
        parent = self.tree.parent[i]
        if parent not in self.leafy:  # (once per parent: its agent spans share the answer)
            kids = self.tree.children(parent)
            self.leafy[parent] = any(self.roles[kid] in LEAF_ROLES for kid in kids)
        return not self.leafy[parent]

    def _work(self, i: int, depth: int) -> int:
        """The one kind of leaf work below span ``i`` (``Role.LLM`` or ``Role.TOOL``), 0 for
        none, ``_HOP`` for a hop below or work of both kinds."""
        found = self.work.get(i)
        if found is not None:
            return found
        kinds = 0
        for kid in self.tree.children(i):
            role = self.roles[kid]
            if role in AGENTIC or role is Role.NODE or depth > _MAX_WRAPPER_DEPTH:
                kinds = _HOP
            elif role in LEAF_ROLES:
                kinds = int(role) if kinds in (0, int(role)) else _HOP
            else:
                below = self._work(kid, depth + 1)
                kinds = kinds if below == 0 else below if kinds in (0, below) else _HOP
            if kinds == _HOP:
                break
        self.work[i] = kinds
        return kinds

    def _steps(self) -> tuple[Step, ...]:
        """The ordered steps (``step_list``); fills ``self.llms`` in trajectory order."""
        ToolDraft.complete(self.drafts, self.tree)  # (records and layers of a call)
        self.items.sort(key=sort_key)
        self.layers_merged = merge_preparations(self.items) or self.layers_merged
        found = ordered_steps(self.items, self.llms, self.internal_tools, self.call_ids)
        self.left_out = found[1]  # optional parts (``evaluators.depth``) left out
        return timed_by_spans(found[0], self.tree, self.roles, self.families, self._work)
