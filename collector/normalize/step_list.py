"""The trajectory's steps, in order, from the drafts the span walk produced.

Executed tool spans are joined to the requests of the model calls (``join``);
requested calls that no span executed are rebuilt from a later model call's history
(``rebuilt``) or kept as unexecuted; framework-internal tools become ``control``
steps, by name (``internal_tools``) or by evidence (``answer_tool``); retries are
folded (``retries``). Order: start time, then span-tree order.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import itemgetter

from collector.normalize import conventions, kinds
from collector.normalize.control_tools import internal_tools as matcher_of
from collector.normalize.history import Answer, input_messages
from collector.normalize.join import Joined, LlmCall, join, unexecuted
from collector.normalize.messages import RequestedCall
from collector.normalize.react import transcript_calls
from collector.normalize.rebuilt import answer_of, call_id_of, history_of, rebuilt_step
from collector.normalize.retries import attempt_number, fold
from collector.normalize.step_records import CALL_ID, ERROR, KIND, RESULT, with_fields
from collector.normalize.steps import tool_step, unexecuted_step
from collector.normalize.tools import ToolDraft
from evaluators.trajectory import Step

SortKey = tuple[int, int, int]  # start time, tree-order rank, 0 (or 1+n: unexecuted call n)
Item = Step | ToolDraft | LlmCall
sort_key = itemgetter(0)


def ordered_steps(
    items: Sequence[tuple[SortKey, Item]],
    llms: list[LlmCall],
    internal_tools: tuple[str, ...],
    call_ids: bool = True,
) -> tuple[tuple[Step, ...], bool]:
    """The steps of ``items`` (sorted by their keys); appends the model calls to
    ``llms`` in trajectory order. Without ``call_ids``, the ids of tool spans that
    record none are not looked up in later histories (``evaluators.depth``); the flag
    returned says whether one was left out so."""
    internal = matcher_of(internal_tools)
    rank_of, index_of = _model_calls(items, llms)
    joined = join([item for _, item in items if not isinstance(item, Step)])
    out: list[tuple[SortKey, Step, int]] = []  # (order, step, attempt number)
    retried = False  # some tool step failed or counts an attempt: retries may need folding
    left_out = False
    for key, item in items:
        if isinstance(item, ToolDraft):
            link = joined[id(item)]
            read = tool_step(item, link)
            step, missed = _with_call_id(read, link, llms, index_of, call_ids)
            left_out = left_out or missed
            step = _with_shown_error(step, link, llms, index_of)
            if read.call_id is not None:  # (an id the history gave depends on ``call_ids``)
                step = _with_shown_result(step, link, llms, index_of)
            if internal.matches(step.name):
                step = with_fields(step, {KIND: kinds.CONTROL})
            attempt = attempt_number(item.span)
            retried = retried or attempt > 1 or step.error is not None
            out.append((key, step, attempt))
        else:
            out.append((key, item.step if isinstance(item, LlmCall) else item, 1))
    added = False
    for n, (llm, call) in enumerate(unexecuted(llms)):
        if internal.matches(call.name):
            continue  # answered by the framework itself (an output tool), never run
        answer = answer_of(llms, index_of[id(llm)], call)
        if answer is None:
            step = unexecuted_step(llm.step, call)
        else:
            step = rebuilt_step(llm.step, call, answer)
        out.append(((step.start_unix_nano, rank_of[id(llm)], 1 + n), step, 1))
        retried = retried or step.error is not None
        added = True
    if added:  # else ``out`` is in ``items`` order already
        out.sort(key=sort_key)
    if not retried:  # the usual case: nothing to fold
        return tuple([step for _, step, _ in out]), left_out
    return tuple(fold([(step, attempt) for _, step, attempt in out])), left_out


def _with_call_id(
    step: Step, link: Joined, llms: list[LlmCall], index_of: dict[int, int], call_ids: bool
) -> tuple[Step, bool]:
    """``step`` with the call id a later model call's history gives it, when it records
    none; and True when that look-up was left out (no ``call_ids``)."""
    if step.call_id is not None or link.llm is None:
        return step, False
    if not call_ids:
        return step, True
    found = call_id_of(llms, index_of[id(link.llm)], step.name, step.args)
    return (step if found is None else with_fields(step, {CALL_ID: found})), False


def _with_shown_error(
    step: Step, link: Joined, llms: list[LlmCall], index_of: dict[int, int]
) -> Step:
    """A failed tool step whose span names only the error's type (one word, no message,
    no result recorded) gets the message the model was shown for that call: the answer
    with the step's call id in the next model call's history, when that answer is itself
    an error report (``Error: RefundWindowExpired: ...``). Evidence, not a guess: the same
    call id, and the framework sent that text to the model as the call's outcome."""
    error = step.error
    if error is None or " " in error.strip():
        return step
    answer = _shown_answer(step, link, llms, index_of)
    if answer is None or answer.result.error is None:
        return step
    if step.result is not None:
        return step  # (a result was recorded: the span's own account stands)
    return with_fields(step, {ERROR: answer.result.error})


def _with_shown_result(
    step: Step, link: Joined, llms: list[LlmCall], index_of: dict[int, int]
) -> Step:
    """A tool step whose span records neither result nor error, but whose call (its id,
    recorded, or given by the model's request) was requested by a model call, gets the
    outcome the model was shown for it (rule 64): the answer with that id in the next
    model call's history (the framework sent that text to the model as the call's
    outcome), read as any result is (an error inside it is the call's error). Evidence,
    not a guess: the same call id, the requesting model call's next call only."""
    if step.error is not None or tuple.__getitem__(step, RESULT) is not None:
        return step  # (a result was recorded, unread yet: the span's own account stands)
    answer = _shown_answer(step, link, llms, index_of)
    if answer is None:
        return step
    return with_fields(step, {RESULT: answer.result.value, ERROR: answer.result.error})


def _shown_answer(
    step: Step, link: Joined, llms: list[LlmCall], index_of: dict[int, int]
) -> Answer | None:
    """The answer carrying the step's call id in the history of the model call after the
    one that requested it: where the framework showed the model the call's outcome. One
    history read (bounded on hostile traces of many calls), matched by id alone (no
    argument parsed)."""
    if step.call_id is None or link.llm is None:
        return None
    asked = link.request.name if link.request is not None else step.name  # (as the history)
    wanted = RequestedCall(step.call_id, asked, None, None)
    at = index_of[id(link.llm)]
    answer = answer_of(llms[: at + 2], at, wanted)
    return answer if answer is not None and answer.call_id == step.call_id else None


def _model_calls(
    items: Sequence[tuple[SortKey, Item]], llms: list[LlmCall]
) -> tuple[dict[int, int], dict[int, int]]:
    """Appends the model calls to ``llms`` (reading transcript calls where no structured
    ones were recorded); returns id → tree-order rank and id → position in ``llms``."""
    rank_of: dict[int, int] = {}
    index_of: dict[int, int] = {}
    for key, item in items:
        if isinstance(item, LlmCall):
            rank_of[id(item)], index_of[id(item)] = key[1], len(llms)
            llms.append(item)
    # A model call that asked for nothing yet was not the run's last may have written its
    # calls as text (the last one gives the answer: its reply is not parsed for calls).
    for n in range(len(llms) - 1):
        llm = llms[n]
        if not llm.calls:
            _calls_from_transcript(llm)
            if not llm.calls:
                _calls_from_reply_in_next_history(llm, llms[n + 1])
        else:
            for call in llm.calls:
                if _unparsed(call):
                    _calls_from_next_history(llm, llms[n + 1])
                    break
    return rank_of, index_of


def _unparsed(call: RequestedCall) -> bool:
    """The call's argument text is no JSON value (``messages.requested`` kept the text)."""
    return call.raw_args is not None and call.args is call.raw_args


def _calls_from_next_history(llm: LlmCall, later: LlmCall) -> None:
    """A model call whose recorded requests are garbled (argument text that is no JSON:
    several calls' arguments run together into one) takes them from the next model
    call's input history: the assistant message there whose first request has the same
    id and tool name, when the same agent made both calls."""
    first_call = llm.calls[0]
    if first_call.call_id is None or later.step.agent != llm.step.agent:
        return  # (the next model call of another agent holds another conversation)
    messages = history_of(later)
    for m in range(len(messages) - 1, -1, -1):  # (mypyc: no reversed() here)
        calls = messages[m].calls
        if calls and calls[0].call_id == first_call.call_id and calls[0].name == first_call.name:
            if not any(_unparsed(call) for call in calls):
                llm.calls, llm.matched = list(calls), [False] * len(calls)
            return


def _calls_from_reply_in_next_history(llm: LlmCall, later: LlmCall) -> None:
    """A model call that recorded its input history but not the calls it requested (an
    instrumentation that drops tool calls from the reply it records) takes them from its
    reply as the next model call of the same agent sends it back: when the next call's
    history continues this call's history (same length prefix, same roles and requested
    call ids), the message right after that prefix is this call's reply, and when it is
    an assistant message with tool calls answered after it, those are the calls made.
    Only for a call whose recorded reply holds neither calls nor text (LiteLLM's
    callback drops the calls from the reply it records)."""
    if later.step.agent != llm.step.agent:
        return  # (the next model call of another agent holds another conversation)
    if any(conventions.first_text(conventions.LLM_OUTPUT, span) for span in llm.spans):
        return  # (a reply recorded as text, with no calls: it asked for none)
    mine = next((found for found in map(input_messages, llm.spans) if found), [])
    if not mine:
        return
    theirs = history_of(later)
    if len(theirs) < len(mine) + 2:
        return
    for own, seen in zip(mine, theirs[: len(mine)], strict=True):
        if own.role != seen.role or [c.call_id for c in own.calls] != [
            c.call_id for c in seen.calls
        ]:
            return  # not a continuation (trimmed, rewritten or another conversation)
    reply = theirs[len(mine)]
    if reply.calls and not reply.answers and theirs[len(mine) + 1].answers:
        llm.calls, llm.matched = list(reply.calls), [False] * len(reply.calls)


def _calls_from_transcript(llm: LlmCall) -> None:
    """A reply without structured calls may write them as a ReAct transcript."""
    for span in llm.spans:
        reply = conventions.first_text(conventions.LLM_OUTPUT, span)
        if reply:
            calls = transcript_calls(reply)
            if calls:
                llm.calls, llm.matched = calls, [False] * len(calls)
            return


def control_output(steps: tuple[Step, ...]) -> str | None:
    """A final-answer tool's lone text argument, when nothing else gave an output."""
    later_hop = False  # a control step an agent came after handed over to it, or ran it
    for n in range(len(steps) - 1, -1, -1):  # (mypyc: no reversed() over steps)
        step = steps[n]
        if step.kind is kinds.AGENT:
            later_hop = True
            continue
        if later_hop:
            continue
        if step.kind is kinds.CONTROL and isinstance(step.args, dict) and len(step.args) == 1:
            value = next(iter(step.args.values()))
            if isinstance(value, str) and value:
                return value
    return None


def answer_tool(steps: tuple[Step, ...], outputs: Sequence[str]) -> tuple[Step, ...]:
    """``steps`` with the run's last step marked ``control`` when, by evidence, it is a
    final-answer tool of a framework not in ``internal_tools``: a model call chose it, the
    run ended on it (no step after it), and its lone text argument is one of ``outputs``
    (what the run recorded as its output) verbatim: the framework handed the tool's
    argument back as the answer. Without a recorded output there is no evidence, and
    the step stays a tool call."""
    if not outputs or len(steps) < 2:
        return steps
    last = steps[-1]
    if last.kind is not kinds.TOOL:
        return steps
    text = _lone_text(last.args)
    if text is None or all(text != output.strip() for output in outputs):
        return steps
    if not any(step.kind is kinds.LLM for step in steps):
        return steps
    return (*steps[:-1], with_fields(last, {KIND: kinds.CONTROL}))


def _lone_text(args: object) -> str | None:
    """The stripped text of arguments that are one string, or an object of one string."""
    if isinstance(args, dict) and len(args) == 1:
        args = next(iter(args.values()))
    return args.strip() if isinstance(args, str) else None


def content_recorded(
    llms: Sequence[LlmCall], input_text: str | None, output_text: str | None
) -> bool:
    """True if the run's messages were recorded (content capture was on): a model call
    recorded tool calls, or an input or output was found."""
    return input_text is not None or output_text is not None or any(llm.calls for llm in llms)
