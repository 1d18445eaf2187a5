"""Multi-agent runs (ADR 0017, addendum of 2026-11-27, rules 35-39): hand-overs and
delegations are ``control`` steps, the run is named after the agent it enters, and the
sub-agent's work is its own. Minimal traces in the GenAI conventions, keyed to the
structure the five multi-agent captures showed, not to their libraries."""

from __future__ import annotations

import json

from support.span_kit import genai_chat, genai_tool, oi, oi_llm_calls, run, span

from collector.core.records import Span, StatusCode
from evaluators.trajectory import StepKind, Trajectory


def agent(n: int, name: str, parent: int = 0) -> Span:
    attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name}
    return span(n, f"invoke_agent {name}", attributes, parent=parent)


def workflow() -> Span:
    """An unnamed workflow span around the run (the OpenAI Agents SDK's, ADK's)."""
    return span(100, "run", {"gen_ai.operation.name": "invoke_workflow"}, start=0, end=10**7)


def kinds(trajectory: Trajectory) -> list[tuple[str, str]]:
    return [(step.kind.value, step.name) for step in trajectory.steps]


def handover(tool: str, args: str, result: str | None = None) -> Span:
    extra = {} if result is None else {"gen_ai.tool.call.result": result}
    return genai_tool(3, tool, args, call_id="h1", parent=1, **extra)


def triage_then_store(tool_span: Span, *, chat_between: bool = False) -> Trajectory:
    spans = [
        workflow(),
        agent(1, "triage", parent=100),
        genai_chat(2, [{"id": "h1", "name": "x", "arguments": {}}], parent=1),
        tool_span,
    ]
    if chat_between:  # the model asks for one more call after the transfer ran
        spans.append(genai_chat(4, [{"id": "c0", "name": "note", "arguments": {}}], parent=1))
        note = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "note"}
        spans.append(
            span(
                9, "execute_tool note", {**note, "gen_ai.tool.call.id": "c0"}, parent=1, start=4500
            )
        )
    spans += [
        agent(5, "store", parent=100),
        genai_chat(6, [{"id": "c1", "name": "lookup", "arguments": {"q": "x"}}], parent=5),
        genai_tool(7, "lookup", '{"q": "x"}', call_id="c1", parent=5),
        genai_chat(8, [], parent=5, text="done"),
    ]
    return run(*spans)


def test_a_call_named_after_the_agent_run_next_is_a_hand_over() -> None:
    trajectory = triage_then_store(handover("transfer_to_store", "{}"))
    assert kinds(trajectory)[1] == ("control", "transfer_to_store")
    assert [step.name for step in trajectory.tool_calls] == ["lookup"]
    assert trajectory.tool_calls[0].agent == "store"


def test_an_argument_or_a_result_naming_the_agent_is_evidence_too() -> None:
    by_argument = triage_then_store(handover("transfer_to_agent", '{"agent_name": "store"}'))
    by_result = triage_then_store(handover("switch", "{}", '{"assistant": "store"}'))
    assert kinds(by_argument)[1] == ("control", "transfer_to_agent")
    assert kinds(by_result)[1] == ("control", "switch")


def test_a_call_that_names_no_agent_or_failed_or_came_before_a_model_call_stays_a_tool() -> None:
    unnamed = triage_then_store(handover("lookup_stock", '{"sku": "A1"}'))
    between = triage_then_store(handover("transfer_to_store", "{}"), chat_between=True)
    failed = triage_then_store(
        span(
            3,
            "execute_tool transfer_to_store",
            {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "transfer_to_store"},
            parent=1,
            status=StatusCode.ERROR,
            message="no such agent",
        )
    )
    for trajectory in (unnamed, between, failed):
        assert kinds(trajectory)[1][0] == "tool"


def test_a_tool_that_runs_an_agent_is_a_delegation_and_the_agent_does_the_work() -> None:
    trajectory = run(
        agent(1, "front"),
        genai_chat(2, [{"id": "d1", "name": "ask_store", "arguments": {"q": "x?"}}], parent=1),
        genai_tool(3, "ask_store", '{"q": "x?"}', call_id="d1", parent=1),
        agent(4, "store", parent=3),
        genai_chat(5, [{"id": "c1", "name": "lookup", "arguments": {"q": "x"}}], parent=4),
        genai_tool(6, "lookup", '{"q": "x"}', call_id="c1", parent=4),
        genai_chat(7, [], parent=4, text="store says x"),
        genai_chat(8, [], parent=1, text="x"),
    )
    assert ("control", "ask_store") in kinds(trajectory)
    assert [(step.name, step.agent) for step in trajectory.tool_calls] == [("lookup", "store")]
    assert trajectory.agents == ("front", "store")


FORWARDED = "the front desk asks: how many in stock?"


def asked(chat: Span, text: str = FORWARDED) -> Span:
    """``chat`` with ``text`` as its user message."""
    messages = json.dumps([{"role": "user", "parts": [{"type": "text", "content": text}]}])
    return chat._replace(attributes={**chat.attributes, "gen_ai.input.messages": messages})


def flat_delegation(result: str, question: str, store_request: str = FORWARDED) -> Trajectory:
    """A delegation whose sub-agent span the instrumentation parents to the workflow root,
    not to the call that ran it (OpenLLMetry's OpenAI Agents processor): only time and
    content tie them."""
    return run(
        workflow(),
        agent(1, "front", parent=100),
        genai_chat(2, [{"id": "d1", "name": "consult", "arguments": {}}], parent=1),
        span(
            3,
            "execute_tool consult",
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "consult",
                "gen_ai.tool.call.id": "d1",
                "gen_ai.tool.call.arguments": json.dumps({"input": question}),
                "gen_ai.tool.call.result": result,
            },
            parent=1,
            end=9_000,
        ),
        agent(4, "stock_desk", parent=100)._replace(end_unix_nano=8_000),
        asked(
            genai_chat(5, [{"id": "c1", "name": "lookup", "arguments": {}}], parent=4),
            store_request,
        ),
        genai_tool(6, "lookup", '{"q": "x"}', call_id="c1", parent=4),
        genai_chat(7, [], parent=4, text="stock desk says x"),
        genai_chat(10, [], parent=1, text="x"),
    )


def test_a_call_that_ran_an_agent_not_nested_below_it_is_a_delegation() -> None:
    by_answer = flat_delegation("stock desk says x", "anything?")
    by_request = flat_delegation("(custom summary)", FORWARDED)  # the sub-agent's request
    for trajectory in (by_answer, by_request):
        assert ("control", "consult") in kinds(trajectory)
        assert [(step.name, step.agent) for step in trajectory.tool_calls] == [
            ("lookup", "stock_desk")
        ]
        assert trajectory.output == "x"


def test_an_agent_that_only_ran_during_a_call_is_no_delegation() -> None:
    trajectory = flat_delegation("42 items", "how many?")  # carries none of its exchange
    assert ("tool", "consult") in kinds(trajectory)


def test_a_parallel_branch_given_the_callers_own_question_is_no_delegation() -> None:
    """The call carries the branch's first request, but so did the caller's own model
    call: the text was given to both, not passed on by the call."""
    trajectory = flat_delegation("42 items", "hello", store_request="hello")  # (the caller's)
    assert ("tool", "consult") in kinds(trajectory)


def test_a_hand_over_is_no_answer_when_the_run_records_none() -> None:
    trajectory = run(
        agent(1, "front"),
        genai_chat(2, [{"id": "h1", "name": "transfer_to_store", "arguments": {}}], parent=1),
        genai_tool(3, "transfer_to_store", '{"agent_name": "store"}', call_id="h1", parent=1),
        agent(4, "store", parent=1),
    )
    assert kinds(trajectory)[1] == ("control", "transfer_to_store")
    assert trajectory.output is None  # not "store", the hand-over's lone text argument


def test_an_unnamed_workflow_around_several_agents_is_the_run_of_the_first() -> None:
    trajectory = triage_then_store(handover("transfer_to_store", "{}"))
    assert trajectory.agent == "triage"
    assert [step.name for step in trajectory.steps if step.kind is StepKind.AGENT] == ["store"]


def test_an_exception_on_a_span_whose_status_is_explicitly_ok_is_no_error() -> None:
    event = ("exception", {"exception.type": "ParentCommand", "exception.message": "goto"})

    def tool(status: int) -> Span:
        attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup"}
        return span(2, "execute_tool lookup", attributes, parent=1, status=status, events=(event,))

    ok = run(agent(1, "shop"), tool(StatusCode.OK))
    unset = run(agent(1, "shop"), tool(StatusCode.UNSET))
    assert ok.tool_calls[0].error is None  # control flow, by the instrumentation's verdict
    assert unset.tool_calls[0].error is not None  # status unset: the event says it failed


def test_responses_api_items_in_a_history_answer_a_requested_call() -> None:
    history = [
        {"role": "user", "content": "refund please"},
        {"type": "function_call", "call_id": "h1", "name": "transfer_to_store", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "h1", "output": '{"assistant": "store"}'},
    ]
    second = span(
        6,
        "chat m",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": json.dumps(history),
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": "done"}]}]
            ),
        },
        parent=5,
    )
    trajectory = run(
        workflow(),
        agent(1, "triage", parent=100),
        genai_chat(2, [{"id": "h1", "name": "transfer_to_store", "arguments": {}}], parent=1),
        agent(5, "store", parent=100),
        second,
    )
    handed = [step for step in trajectory.steps if step.name == "transfer_to_store"]
    assert [(step.kind, step.executed, step.source) for step in handed] == [
        (StepKind.CONTROL, True, "messages")
    ]


# --- a review's findings (each failed on 9421834) -----------------------------------


def batch_before_billing(first: Span) -> Trajectory:
    """``first`` and a ``transfer_to_billing`` called in one batch, then agent billing."""
    return run(
        workflow(),
        agent(1, "triage", parent=100),
        genai_chat(2, [], parent=1),
        first,
        genai_tool(4, "transfer_to_billing", "{}", call_id="h1", parent=1),
        agent(5, "billing", parent=100),
        genai_chat(6, [], parent=5, text="done"),
    )


def test_a_real_call_in_the_batch_of_a_hand_over_stays_a_tool_call() -> None:
    by_value = batch_before_billing(
        genai_tool(3, "create_ticket", '{"department": "billing"}', call_id="t1", parent=1)
    )
    by_suffix = batch_before_billing(genai_tool(3, "get_billing", "{}", call_id="t1", parent=1))
    for trajectory, name in ((by_value, "create_ticket"), (by_suffix, "get_billing")):
        assert (
            ("tool", name) in kinds(trajectory),
            ("control", "transfer_to_billing") in kinds(trajectory),
        ) == (True, True)


def test_agent_names_are_compared_as_slugs() -> None:
    """The OpenAI Agents SDK names the tool after "Billing Agent" as ``…_billing_agent``."""
    trajectory = run(
        workflow(),
        agent(1, "Triage Agent", parent=100),
        genai_chat(
            2, [{"id": "h1", "name": "transfer_to_billing_agent", "arguments": {}}], parent=1
        ),
        genai_tool(3, "transfer_to_billing_agent", None, call_id="h1", parent=1),
        agent(5, "Billing Agent", parent=100),
        genai_chat(6, [], parent=5, text="done"),
    )
    assert ("control", "transfer_to_billing_agent") in kinds(trajectory)


def test_the_calling_agents_closing_model_call_may_come_between() -> None:
    """Strands' swarm: the hand-over, the agent's last words, then the next agent."""
    trajectory = run(
        span(100, "invoke_swarm", {"gen_ai.operation.name": "invoke_swarm"}, start=0, end=10**7),
        agent(1, "front_desk", parent=100),
        genai_chat(2, [{"id": "h1", "name": "handoff_to_agent", "arguments": {}}], parent=1),
        genai_tool(
            3, "handoff_to_agent", '{"agent_name": "store", "message": "m"}', call_id="h1", parent=1
        ),
        genai_chat(4, [], parent=1, text="Handing you over."),
        agent(5, "store", parent=100),
        genai_chat(6, [], parent=5, text="done"),
    )
    assert ("control", "handoff_to_agent") in kinds(trajectory)
    assert trajectory.agent == "front_desk"  # (an unrecognised root: the entry agent)


def test_graph_nodes_that_only_call_the_model_and_tools_are_steps_not_sub_agents() -> None:
    def node(n: int, name: str) -> Span:
        return oi(n, name, "CHAIN", parent=1, metadata=json.dumps({"langgraph_node": name}))

    def llm(n: int, parent: int, call: tuple[str, str, str]) -> Span:
        return oi(n, "ChatOpenAI", "LLM", parent=parent, **oi_llm_calls([call]))

    def tool(n: int, name: str, parent: int) -> Span:
        return oi(n, name, "TOOL", parent=parent, **{"tool.name": name, "input.value": "{}"})

    trajectory = run(
        oi(1, "trip_planner", "CHAIN"),
        node(2, "plan"), llm(3, 2, ("c1", "make_plan", "{}")), tool(4, "make_plan", 2),
        node(5, "execute"), llm(6, 5, ("c2", "book", "{}")), tool(7, "book", 5),
        node(8, "plan"), llm(9, 8, ("c3", "check", "{}")), tool(10, "check", 8),
    )  # fmt: skip
    assert trajectory.agent == "trip_planner"
    nodes = [step.name for step in trajectory.steps if step.kind is StepKind.AGENT]
    assert nodes == ["plan", "execute", "plan"]
    assert {step.agent for step in trajectory.tool_calls} == {"trip_planner"}


def test_a_workflow_named_after_its_entry_agent_keeps_its_own_name_among_the_agents() -> None:
    trajectory = run(
        span(
            100,
            "Customer service",
            {"gen_ai.operation.name": "invoke_workflow"},
            start=0,
            end=10**7,
        ),
        agent(1, "triage", parent=100),
        genai_chat(2, [{"id": "h1", "name": "transfer_to_store", "arguments": {}}], parent=1),
        genai_tool(3, "transfer_to_store", "{}", call_id="h1", parent=1),
        agent(5, "store", parent=100),
        genai_chat(6, [], parent=5, text="done"),
    )
    assert trajectory.agent == "triage"
    assert trajectory.agents == ("triage", "Customer service", "store")


def test_a_failed_delegation_by_a_tool_the_agent_delegated_with_is_steering_too() -> None:
    """CrewAI: the manager names an unknown coworker first (the tool answers with an
    error), then the right one, whose run is the call's child."""
    refused = (
        "\nError executing tool. coworker mentioned not found, it must be one of the"
        " following options:\n- store\n"
    )
    trajectory = run(
        agent(1, "manager"),
        genai_chat(2, [{"id": "d0", "name": "delegate", "arguments": {"coworker": "w"}}], parent=1),
        genai_tool(
            3,
            "delegate",
            '{"coworker": "w"}',
            call_id="d0",
            parent=1,
            **{"gen_ai.tool.call.result": refused},
        ),
        genai_chat(
            4, [{"id": "d1", "name": "delegate", "arguments": {"coworker": "store"}}], parent=1
        ),
        genai_tool(5, "delegate", '{"coworker": "store"}', call_id="d1", parent=1),
        agent(6, "store", parent=5),
        genai_chat(7, [], parent=6, text="report"),
        genai_chat(8, [], parent=1, text="done"),
    )
    delegations = [step for step in trajectory.steps if step.name == "delegate"]
    assert [step.kind for step in delegations] == [StepKind.CONTROL, StepKind.CONTROL]
    assert delegations[0].error is not None  # CrewAI's refusal is read as the error it is


def managed(request: str = "store", store: Span | None = None) -> Trajectory:
    """A request no span executes, answered by the agent it names (smolagents' managed
    agents: the framework runs the agent itself, without a tool span)."""
    return run(
        agent(1, "front"),
        genai_chat(2, [{"id": "d1", "name": request, "arguments": {"task": "x?"}}], parent=1),
        store or agent(4, "store", parent=1),
        genai_chat(5, [{"id": "c1", "name": "lookup", "arguments": {"q": "x"}}], parent=4),
        genai_tool(6, "lookup", '{"q": "x"}', call_id="c1", parent=4),
        genai_chat(7, [], parent=4, text="store says x"),
        genai_chat(8, [], parent=1, text="x"),
    )


def test_a_request_no_span_ran_that_the_agent_it_names_answers_is_a_delegation() -> None:
    trajectory = managed()
    control = [step for step in trajectory.steps if step.kind is StepKind.CONTROL]
    assert [(step.name, step.executed) for step in control] == [("store", True)]
    assert [(step.name, step.agent) for step in trajectory.tool_calls] == [("lookup", "store")]


def test_a_request_that_names_no_agent_stays_unexecuted() -> None:
    first = managed(request="lookup_stock").tool_calls[0]
    assert (first.kind, first.name, first.executed) == (StepKind.TOOL, "lookup_stock", False)


def test_an_agent_span_named_after_its_object_and_method_is_named_by_the_object() -> None:
    unnamed = span(4, "store.run", {"gen_ai.operation.name": "invoke_agent"}, parent=1)
    trajectory = managed(store=unnamed)
    assert ("control", "store") in kinds(trajectory)
    assert [(step.name, step.agent) for step in trajectory.tool_calls] == [("lookup", "store.run")]


def test_only_an_error_sentence_may_run_long_before_its_colon() -> None:
    """CrewAI's refusal opens with a sentence; a report that only mentions error rates
    and has a colon 99 characters in is no error."""
    long_plain = (
        "Error rates for the checkout service stayed below the 0.1% objective for the"
        " whole week of March 12: no action needed."
    )
    refusal = (
        "\nError executing tool. coworker mentioned not found, it must be one of the"
        " following options:\n- store\n"
    )
    for text, failed in ((long_plain, False), (refusal, True)):
        trajectory = run(
            agent(1, "shop"),
            genai_tool(2, "kb_search", "{}", call_id=None, **{"gen_ai.tool.call.result": text}),
        )
        assert (trajectory.tool_calls[0].error is not None) is failed


def test_a_swarm_graph_is_the_run_of_the_node_it_enters_first() -> None:
    """langgraph-swarm: ``__start__`` (a router typed an agent by its name, no work),
    the active agent's node, then the node it handed over to, which answers."""

    def node(n: int, name: str, parent: int = 1) -> Span:
        return oi(n, name, "CHAIN", parent=parent, metadata=json.dumps({"langgraph_node": name}))

    def llm(n: int, parent: int, call: tuple[str, str, str]) -> Span:
        return oi(n, "ChatOpenAI", "LLM", parent=parent, **oi_llm_calls([call]))

    def tool(n: int, name: str, parent: int) -> Span:
        return oi(n, name, "TOOL", parent=parent, **{"tool.name": name, "input.value": "{}"})

    def graph(n: int, name: str, parent: int) -> Span:
        return oi(n, name, "AGENT", parent=parent, **{"agent.name": name})

    trajectory = run(
        oi(1, "LangGraph", "CHAIN"),
        node(2, "__start__"), oi(3, "route_to_active_agent", "AGENT", parent=2),
        node(4, "front_desk"), graph(5, "front_desk", 4),
        llm(6, 5, ("h1", "transfer_to_store", "{}")), tool(7, "transfer_to_store", 5),
        node(8, "store"), graph(9, "store", 8),
        llm(10, 9, ("c1", "lookup", "{}")), tool(11, "lookup", 9),
    )  # fmt: skip
    assert trajectory.agent == "front_desk"
    assert [(step.name, step.agent) for step in trajectory.tool_calls] == [("lookup", "store")]


def test_a_bare_name_is_an_agent_only_where_a_hand_over_names_it() -> None:
    """Logfire writes an agent run as ``Agent run: {name!r}`` with a bare ``name``."""

    def bare(n: int, name: str, parent: int = 100) -> Span:
        return span(n, "Agent run: {name!r}", {"name": name}, parent=parent)

    def turns(handed_to: str) -> Trajectory:
        return run(
            span(100, "OpenAI Agents trace", {"name": "support turn"}, start=0, end=10**7),
            bare(1, "triage"),
            genai_chat(
                2, [{"id": "h1", "name": f"transfer_to_{handed_to}", "arguments": {}}], parent=1
            ),
            genai_tool(3, f"transfer_to_{handed_to}", "{}", call_id="h1", parent=1),
            bare(5, "store"),
            genai_chat(6, [{"id": "c1", "name": "lookup", "arguments": {}}], parent=5),
            genai_tool(7, "lookup", "{}", call_id="c1", parent=5),
            genai_chat(8, [], parent=5, text="done"),
        )

    named = turns("store")
    assert ("agent", "store") in kinds(named)
    assert ("control", "transfer_to_store") in kinds(named)
    assert [(step.name, step.agent) for step in named.tool_calls] == [("lookup", "store")]
    unconfirmed = turns("billing")  # the hand-over names another agent: "store" is no one
    assert not [step for step in unconfirmed.steps if step.kind is StepKind.AGENT]


def test_a_tools_own_span_named_after_it_is_no_agent() -> None:
    """Logfire writes a tool's execution as ``Function: {name}`` with a bare ``name``; a
    tool that calls the model itself must stay the agent's tool call."""
    trajectory = run(
        span(1, "Agent run: {name!r}", {"name": "shop"}),
        genai_chat(2, [{"id": "s1", "name": "summarize", "arguments": {}}], parent=1),
        span(3, "Function: {name}", {"name": "summarize"}, parent=1),
        genai_chat(4, [], parent=3, text="summary"),
        genai_chat(5, [], parent=1, text="done"),
    )
    assert not [step for step in trajectory.steps if step.kind is StepKind.AGENT]


def test_a_question_condensed_beside_the_agent_leaves_the_agent_the_run() -> None:
    """A lone model call beside the agent (condensing, rewriting the question) is no other
    agent's run: the descent to the agent goes on."""
    trajectory = run(
        span(1, "POST /chat", {}),
        span(2, "rewrite_query", {}, parent=1),
        genai_chat(3, [], parent=2, text="q2"),
        agent(4, "shop", parent=1),
        genai_chat(5, [{"id": "c1", "name": "lookup", "arguments": {}}], parent=4),
        genai_tool(6, "lookup", "{}", call_id="c1", parent=4),
        genai_chat(7, [], parent=4, text="done"),
    )
    assert trajectory.agent == "shop"
    assert not [step for step in trajectory.steps if step.kind is StepKind.AGENT]
