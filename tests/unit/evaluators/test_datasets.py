"""Datasets (eval sets): items matched to traces by input or id attribute, per-item
reference and criteria, load errors naming the dataset file, item and field."""

from __future__ import annotations

import json
import logging
import textwrap
from pathlib import Path

import pytest
from support.paths import ROOT
from support.stages import make_stage

from collector.telemetry.registry import Telemetry
from evaluators.dataset_model import DatasetItem, normalize_input
from evaluators.runner import EvaluationRunner
from evaluators.spec import SpecError, SpecSet, load_spec, load_specs
from evaluators.testing import TrajectoryBuilder

EXAMPLE_SPEC = ROOT / "config" / "specs" / "dataset-music-store.yaml"
REFUND = (
    "Hi, I'm customer 17. I was charged twice for 'Comfortably Numb' on invoice 1042 - "
    "please refund one of them."
)

SPEC = """
id: cases
match: {{service: shop}}
dataset: {dataset}
reference:
  response: the default answer
evaluators:
  - trajectory_exact_match
  - {{name: trajectory_single_tool_use, id: key_tool}}
"""


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def dataset_spec(
    tmp_path: Path, items: str, dataset: str = "items.yaml", filename: str = "items.yaml"
) -> Path:
    """The test spec over a dataset file ``filename`` holding ``items``."""
    write(tmp_path, filename, items)
    return write(tmp_path, "spec.yaml", SPEC.format(dataset=dataset))


def problems(path: Path) -> list[str]:
    with pytest.raises(SpecError) as info:
        load_spec(path)
    return [str(problem) for problem in info.value.problems]


GOOD_ITEMS = """
items:
  - id: refund
    input: "Please   REFUND invoice 1042"
    reference:
      trajectory: [lookup_invoice, refund]
    criteria:
      key_tool: {tool: refund}
  - id: question
    input: What album is Money on?
    reference:
      trajectory: [lookup_track]
      response: The Dark Side of the Moon
    criteria:
      key_tool: {tool: lookup_track}
"""


def shop(text: str | None, *tools: str) -> TrajectoryBuilder:
    builder = TrajectoryBuilder(text, service="shop")
    for tool in tools:
        builder.tool(tool)
    return builder


def test_normalize_input_ignores_case_and_blank_runs() -> None:
    assert normalize_input("  Please\tREFUND  invoice\n1042 ") == "please refund invoice 1042"
    assert normalize_input("ﬁle") == "file"  # NFKC folds the ligature
    assert normalize_input("refund!") != normalize_input("refund")  # punctuation kept


def test_each_trace_gets_its_items_reference_and_criteria(tmp_path: Path) -> None:
    spec = load_spec(dataset_spec(tmp_path, GOOD_ITEMS))
    assert spec.cases == 2
    refund = spec.evaluators_for(shop("please refund invoice 1042").build())
    question = spec.evaluators_for(shop("what album is money on?").build())
    assert refund is not None and question is not None
    assert [b.criteria.tool for b in (refund[1], question[1])] == ["refund", "lookup_track"]  # type: ignore[attr-defined]
    assert [s.name for s in refund[0].criteria.trajectory] == ["lookup_invoice", "refund"]  # type: ignore[attr-defined]
    # Same evaluators and ids for every item, bound once.
    assert [b.id for b in refund] == [b.id for b in question] == [b.id for b in spec.bound]
    assert refund[0].evaluator is question[0].evaluator


def test_item_reference_overrides_the_spec_key_by_key(tmp_path: Path) -> None:
    write(tmp_path, "items.yaml", GOOD_ITEMS)
    spec_path = write(
        tmp_path,
        "spec.yaml",
        """
        id: answers
        dataset: items.yaml
        reference: {response: the default answer}
        evaluators:
          - {name: "file://answer_eval.py:AnswerIs", id: answer}
          - {name: trajectory_single_tool_use, id: key_tool}
        """,
    )
    write(
        tmp_path,
        "answer_eval.py",
        """
        from evaluators import BooleanResult, Criteria, Evaluator, EvaluatorConfig

        class AnswerCriteria(Criteria):
            response: str

        class AnswerIs(Evaluator[AnswerCriteria, EvaluatorConfig]):
            id = "answer_is_dataset_test"

            def evaluate(self, trajectory, criteria: AnswerCriteria) -> BooleanResult:
                return BooleanResult(value=trajectory.output == criteria.response)
        """,
    )
    spec = load_spec(spec_path)
    refund = spec.evaluators_for(shop("please refund invoice 1042").build())
    question = spec.evaluators_for(shop("What album is Money on?").build())
    assert refund is not None and question is not None
    assert refund[0].criteria.response == "the default answer"  # type: ignore[attr-defined]
    assert question[0].criteria.response == "The Dark Side of the Moon"  # type: ignore[attr-defined]


def test_unmatched_traces_run_nothing_of_the_spec_and_are_counted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    specs = SpecSet([load_spec(dataset_spec(tmp_path, GOOD_ITEMS))])
    telemetry = Telemetry()
    processor = make_stage(specs, [], telemetry)
    unknown = shop("cancel my subscription", "refund").build()
    no_input = shop(None, "refund").build()
    known = shop("please refund invoice 1042", "lookup_invoice", "refund").build()
    assert specs.bound_for(unknown) == []
    assert processor.evaluate(unknown) == [] and processor.evaluate(no_input) == []
    outcomes = processor.evaluate(known)
    assert [(o.evaluator, o.passed) for o in outcomes] == [
        ("trajectory_exact_match", True),
        ("key_tool", True),
    ]
    with caplog.at_level(logging.INFO, logger="collector.processing.processor"):
        processor.close()
        processor.close()  # safe twice, and the count is logged once
    assert caplog.messages == ["spec cases: 2 trace(s) matched no item of its dataset"]
    count = telemetry.registry.get_sample_value(
        "evald_dataset_unmatched_traces_total", {"spec": "cases"}
    )
    assert count == 2


def test_match_by_attribute_uses_the_item_id(tmp_path: Path) -> None:
    spec_path = dataset_spec(
        tmp_path, GOOD_ITEMS, "{path: items.yaml, match_by: {attribute: eval.case.id}}"
    )
    spec = load_spec(spec_path)
    by_root = shop("anything at all").attribute("eval.case.id", "question").build()
    by_resource = shop("anything").resource("eval.case.id", "refund").build()
    chosen = [spec.evaluators_for(t) for t in (by_root, by_resource)]
    assert [c[1].criteria.tool for c in chosen if c] == ["lookup_track", "refund"]  # type: ignore[attr-defined]
    assert spec.evaluators_for(shop("please refund invoice 1042").build()) is None


def test_jsonl_and_langsmith_example_items(tmp_path: Path) -> None:
    lines = [
        {"inputs": {"question": "How many James Brown songs?"},
         "outputs": {"response": "20",
                     "trajectory": ["question_answering_agent", "lookup_tracks"]}},
        {"inputs": {"messages": [{"role": "user", "content": "refund invoice 237"}]},
         "outputs": {"answer": "Refunded $2.97"}},
    ]  # fmt: skip
    (tmp_path / "examples.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n\n")
    write(
        tmp_path,
        "spec.yaml",
        """
        id: langsmith
        dataset: examples.jsonl
        reference: {trajectory: [refund]}
        step_kinds: [agent, tool]
        evaluators: [trajectory_in_order_match]
        """,
    )
    spec = load_spec(tmp_path / "spec.yaml")
    songs = TrajectoryBuilder("how many james brown songs?").agent("question_answering_agent")
    bound = spec.evaluators_for(songs.tool("lookup_tracks").build())
    assert bound is not None
    steps = bound[0].criteria.trajectory  # type: ignore[attr-defined]
    assert [(s.name, s.kind) for s in steps] == [
        ("question_answering_agent", None),
        ("lookup_tracks", None),
    ]
    with EvaluationRunner() as runner:
        assert runner.run(songs.build(), bound)[0].passed is True
    refund = spec.evaluators_for(TrajectoryBuilder("Refund invoice 237").build())
    assert refund is not None
    assert [s.name for s in refund[0].criteria.trajectory] == ["refund"]  # type: ignore[attr-defined]


def test_item_problems_name_file_line_item_and_field(tmp_path: Path) -> None:
    spec_path = dataset_spec(
        tmp_path,
        """
        - id: ok
          input: one
          reference: {trajectory: [a]}
          criteria: {key_tool: {tool: a}}
        - id: bad-criteria
          input: two
          reference: {trajectory: [a]}
          criteria:
            key_tool: {tool: ""}
            nope: {x: 1}
        - id: no-trajectory
          input: three
          criteria: {key_tool: {tool: a}}
        - id: typo
          input: four
          refrence: {trajectory: [a]}
        - id: duplicate
          input: "  ONE "
          reference: {trajectory: [a]}
          criteria: {key_tool: {tool: a}}
        - id: ok
          input: five
          reference: {trajectory: [a]}
          criteria: {key_tool: {tool: a}}
        """,
    )
    dataset = tmp_path / "items.yaml"
    assert problems(spec_path) == [
        f"{dataset}:10: items[1].criteria.nope: item 'bad-criteria': no evaluator with id "
        "'nope' in this spec (ids: trajectory_exact_match, key_tool)",
        f"{dataset}:9: items[1].criteria.key_tool.tool: item 'bad-criteria': "
        "String should have at least 1 character",
        f"{dataset}:11: items[2].reference.trajectory: item 'no-trajectory': "
        "required key missing (nor in the spec's reference)",
        f"{dataset}:16: items[3].refrence: unknown key",
        f"{dataset}:18: items[4].input: item 'duplicate': the same input as items[0]: "
        "keys must be unique",
        # Results carry the id as `item` (compare --align-by item): ids must be unique too.
        f"{dataset}:21: items[5].id: item 'ok': the same id as items[0]: ids must be unique",
    ]


def test_missing_keys_and_files_are_reported(tmp_path: Path) -> None:
    spec_path = dataset_spec(
        tmp_path,
        "[{reference: {trajectory: [a]}, criteria: {key_tool: {tool: a}}}]",
        "{path: items.yaml, match_by: {attribute: case}}",
    )
    assert problems(spec_path) == [
        f"{tmp_path / 'items.yaml'}:1: items[0].id: required: every item needs an `id` "
        "(matched to attribute case)"
    ]
    (tmp_path / "items.yaml").write_text("items: []\n")
    assert problems(spec_path) == [f"{tmp_path / 'items.yaml'}: the dataset has no items"]
    (tmp_path / "items.yaml").write_text("{cases: []}\n")
    assert problems(spec_path) == [
        f"{tmp_path / 'items.yaml'}:1: expected a list of items, or a mapping of `items`, "
        "`id`, `description`"
    ]
    (tmp_path / "items.yaml").unlink()
    assert problems(spec_path) == [
        f"{spec_path}:3: dataset.path: dataset file not found: {tmp_path / 'items.yaml'}"
    ]


def test_jsonl_errors_carry_the_line(tmp_path: Path) -> None:
    (tmp_path / "items.jsonl").write_text(
        '{"input": "a", "reference": {"trajectory": ["a"]}}\n\n{"input": "b", "criteria": 3}\n{'
    )
    spec_path = write(tmp_path, "spec.yaml", SPEC.format(dataset="items.jsonl"))
    assert problems(spec_path) == [f"{tmp_path / 'items.jsonl'}:4: JSON syntax error: "
                                   "Expecting property name enclosed in double quotes"]  # fmt: skip
    (tmp_path / "items.jsonl").write_text(
        '{"input": "a", "reference": {"trajectory": ["a"]}}\n\n{"input": "b", "criteria": 3}\n'
    )
    assert problems(spec_path) == [
        f"{tmp_path / 'items.jsonl'}:1: items[0].criteria.key_tool.tool: required key missing "
        "(nor in the spec's criteria for key_tool)",
        f"{tmp_path / 'items.jsonl'}:3: items[1].criteria: Input should be a valid dictionary",
    ]


def test_the_example_dataset_spec_judges_the_music_store_requests() -> None:
    spec = load_spec(EXAMPLE_SPEC)
    assert spec.cases == 6 and spec.dataset is not None
    assert spec.sources == (EXAMPLE_SPEC, (ROOT / "config/datasets/music-store.yaml").resolve())
    correct = (
        TrajectoryBuilder(REFUND, service="music-store-support-x", agent="music_store_support")
        .tool("lookup_invoice", {"customer_id": 17, "invoice_id": 1042})
        .tool("lookup_track", {"track_name": "Comfortably Numb"})
        .tool("refund", {"invoice_id": 1042, "track_id": 3158, "reason": "duplicate purchase"})
    )
    wrong = correct.build()._replace(steps=correct.build().steps[::-1])
    bound = SpecSet([spec]).bound_for(correct.build())
    with EvaluationRunner() as runner:
        assert all(o.passed for o in runner.run(correct.build(), bound))
        verdicts = {o.evaluator: o.passed for o in runner.run(wrong, bound)}
    assert verdicts == {
        "trajectory_exact_match": False,
        "trajectory_recall": True,
        "key_tool_called": True,
    }


def test_dataset_items_validate_alone() -> None:
    item = DatasetItem.model_validate({"inputs": "hello", "outputs": {"route": "refund_agent"}})
    assert item.input == "hello"
    assert item.reference_data() == {"route": "refund_agent"}


def test_example_specs_load_together_with_the_dataset_spec() -> None:
    specs = load_specs([ROOT / "config" / "specs"])
    assert "music-store-eval-set" in specs.ids
    assert (ROOT / "config/datasets/music-store.yaml").resolve() in specs.sources
