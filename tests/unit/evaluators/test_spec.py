"""Loading specs: the examples, binding, and errors that name file, line and field."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from support.paths import FIXTURES, ROOT

from evaluators.builtin.trajectory_match import TrajectoryCriteria, TrajectoryMatchConfig
from evaluators.spec import SpecError, SpecSet, build_spec, load_spec, load_specs
from evaluators.trajectory import StepKind

REPO = ROOT
EXAMPLES = sorted((REPO / "config" / "specs").glob("*.yaml"))
FIXTURE_SPECS = FIXTURES / "evaluators" / "specs"


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


def problems_of(path: Path) -> list[str]:
    with pytest.raises(SpecError) as info:
        load_spec(path)
    return str(info.value).splitlines()


MINIMAL = """
id: minimal
reference:
  trajectory: [lookup_invoice, refund]
evaluators:
  - trajectory_recall
"""


# --- the examples -------------------------------------------------------------------------


def test_there_are_examples() -> None:
    assert len(EXAMPLES) >= 3


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_example_spec_loads(path: Path) -> None:
    spec = load_spec(path)
    assert spec.bound and spec.source == path
    assert all(bound.spec_id == spec.id for bound in spec.bound)


def test_example_directory_loads_as_one_set_with_unique_ids() -> None:
    specs = load_specs([REPO / "config" / "specs"])
    assert len(specs) == len(EXAMPLES) == len(set(specs.ids))


def test_refund_example_binds_as_written() -> None:
    spec = load_spec(REPO / "config" / "specs" / "refund.yaml")
    by_id = {bound.id: bound for bound in spec.bound}
    assert list(by_id)[:5] == [
        "trajectory_exact_match",
        "trajectory_in_order_match",
        "trajectory_any_order_match",
        "trajectory_precision",
        "trajectory_recall",
    ]
    assert by_id["trajectory_precision"].threshold == 0.75
    assert by_id["trajectory_in_order_match"].threshold == 1.0  # the config default
    assert by_id["refund_issued"].criteria.model_dump() == {"tool": "refund"}
    reference = by_id["trajectory_exact_match"].criteria
    assert isinstance(reference, TrajectoryCriteria)
    assert [item.name for item in reference.trajectory] == [
        "lookup_invoice",
        "lookup_track",
        "refund",
    ]
    assert reference.trajectory[2].args == {
        "invoice_id": 1042,
        "track_id": 3158,
        "reason": "duplicate purchase",
    }


# --- binding ------------------------------------------------------------------------------


def test_spec_step_kinds_are_injected_unless_the_entry_sets_them(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "kinds.yaml",
        """
        id: kinds
        step_kinds: [agent, tool]
        reference: {trajectory: [{agent: router}, refund]}
        evaluators:
          - trajectory_recall
          - {name: trajectory_precision, config: {step_kinds: [tool]}}
        """,
    )
    recall, precision = load_spec(path).bound
    assert isinstance(recall.evaluator.config, TrajectoryMatchConfig)
    assert recall.evaluator.config.step_kinds == (StepKind.AGENT, StepKind.TOOL)
    assert precision.evaluator.config.step_kinds == (StepKind.TOOL,)


def test_entry_criteria_override_reference_fields(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "override.yaml",
        """
        id: override
        reference: {trajectory: [a, b]}
        evaluators:
          - trajectory_recall
          - {name: trajectory_recall, id: only_b, criteria: {trajectory: [b]}}
        """,
    )
    full, only_b = load_spec(path).bound
    assert [item.name for item in full.criteria.trajectory] == ["a", "b"]  # type: ignore[attr-defined]
    assert [item.name for item in only_b.criteria.trajectory] == ["b"]  # type: ignore[attr-defined]


def test_threshold_precedence(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "thresholds.yaml",
        """
        id: thresholds
        reference: {trajectory: [a]}
        evaluators:
          - trajectory_exact_match
          - {name: trajectory_recall, config: {threshold: 0.5}}
          - {name: trajectory_precision, config: {threshold: 0.5}}
        thresholds: {trajectory_exact_match: null, trajectory_precision: 0.9}
        """,
    )
    assert [b.threshold for b in load_spec(path).bound] == [None, 0.5, 0.9]


def test_custom_evaluator_from_a_file_next_to_the_spec() -> None:
    spec = load_spec(FIXTURE_SPECS / "custom.yaml")
    ids = [(b.id, b.threshold, type(b.evaluator).__name__) for b in spec.bound]
    assert ids == [("max_steps", None, "MaxSteps"), ("max_steps_strict", 1.0, "MaxSteps")]
    assert spec.bound[1].criteria.limit == 2  # type: ignore[attr-defined]


def test_json_spec_loads(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "s.json",
        '{"id": "j", "reference": {"trajectory": ["a"]}, "evaluators": ["trajectory_recall"]}',
    )
    assert load_spec(path).id == "j"


def test_build_spec_from_data() -> None:
    spec = build_spec({"id": "d", "evaluators": [{"name": "latency"}]})
    assert [b.id for b in spec.bound] == ["latency"]
    with pytest.raises(SpecError, match=r"^<spec>: evaluators\[0\]\.name: evaluator 'nope'"):
        build_spec({"id": "d", "evaluators": ["nope"]})


# --- errors -------------------------------------------------------------------------------


def test_unknown_key_names_file_line_and_field(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "typo.yaml",
        """
        id: typo
        match:
          service: svc
          agnet: refund_agent
        evaluators: [latency]
        """,
    )
    assert problems_of(path) == [f"{path}:4: match.agnet: unknown key"]


def test_unknown_top_level_key(tmp_path: Path) -> None:
    path = write(tmp_path, "top.yaml", MINIMAL + "threshold: {trajectory_recall: 1}\n")
    assert problems_of(path) == [f"{path}:6: threshold: unknown key"]


def test_bad_regex_names_the_field_and_the_regex_error(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "regex.yaml",
        """
        id: regex
        match:
          input_regex: "(?i)refund (invoice"
          attributes:
            deployment.environment: {regex: "prod["}
        evaluators: [latency]
        """,
    )
    lines = problems_of(path)
    assert lines[0].startswith(f"{path}:3: match.input_regex: invalid regex '(?i)refund (invoice'")
    assert lines[1].startswith(
        f"{path}:5: match.attributes['deployment.environment'].regex: invalid regex 'prod['"
    )


def test_unknown_evaluator(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "unknown.yaml",
        """
        id: unknown
        reference: {trajectory: [a]}
        evaluators:
          - trajectory_recall
          - trajectory_exact
        """,
    )
    [line] = problems_of(path)
    assert line.startswith(
        f"{path}:5: evaluators[1].name: evaluator 'trajectory_exact': no evaluator registered"
    )
    assert "did you mean trajectory_exact_match" in line


def test_bad_criteria(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "criteria.yaml",
        """
        id: criteria
        evaluators:
          - latency
          - name: trajectory_single_tool_use
            criteria: {tol: refund}
          - {name: trajectory_single_tool_use, id: t2, criteria: {tool: ""}}
        """,
    )
    assert problems_of(path) == [
        f"{path}:5: evaluators[1].criteria.tol: unknown key (criteria: tool)",
        f"{path}:6: evaluators[2].criteria.tool: String should have at least 1 character",
    ]


def test_missing_criteria_field_points_at_reference(tmp_path: Path) -> None:
    path = write(tmp_path, "noref.yaml", "id: noref\nevaluators:\n  - trajectory_recall\n")
    assert problems_of(path) == [
        f"{path}:3: evaluators[0].criteria.trajectory: "
        "required: set reference.trajectory or this entry's criteria"
    ]


def test_bad_reference_item(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "item.yaml",
        """
        id: item
        reference:
          trajectory:
            - lookup_invoice
            - {name: refund, kind: tooll}
        evaluators: [trajectory_recall]
        """,
    )
    [line] = problems_of(path)
    assert line.startswith(f"{path}:5: reference.trajectory[1].kind: Input should be 'agent'")


def test_bad_config(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "config.yaml",
        """
        id: config
        reference: {trajectory: [a]}
        evaluators:
          - {name: trajectory_recall, config: {args: subset}}
        """,
    )
    [line] = problems_of(path)
    assert line.startswith(f"{path}:4: evaluators[0].config.args: Input should be 'auto'")


def test_yaml_syntax_error_gives_the_line(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "syntax.yaml",
        """
        id: syntax
        evaluators:
          - latency
         bad: indentation
        """,
    )
    [line] = problems_of(path)
    assert line == (
        f"{path}:4: YAML syntax error: expected <block end>, but found '<block mapping start>' "
        "(while parsing a block mapping)"
    )


def test_json_syntax_error_gives_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.json", '{\n  "id": "x",\n  "evaluators": [latency]\n}\n')
    [line] = problems_of(path)
    assert line.startswith(f"{path}:3: JSON syntax error:")


def test_duplicate_yaml_key(tmp_path: Path) -> None:
    path = write(tmp_path, "dupkey.yaml", MINIMAL + "id: again\n")
    assert problems_of(path) == [f"{path}:6: duplicate key 'id'"]


def test_unknown_threshold_key(tmp_path: Path) -> None:
    path = write(tmp_path, "thr.yaml", MINIMAL + "thresholds: {trajectory_recal: 1.0}\n")
    assert problems_of(path) == [
        f"{path}:6: thresholds.trajectory_recal: "
        "no evaluator with id 'trajectory_recal' in this spec (ids: trajectory_recall)"
    ]


def test_duplicate_evaluator_ids_in_one_spec(tmp_path: Path) -> None:
    path = write(tmp_path, "dupeval.yaml", MINIMAL + "  - trajectory_recall\n")
    [line] = problems_of(path)
    assert line.startswith(f"{path}:6: evaluators[1]: duplicate evaluator id 'trajectory_recall'")


def test_unused_reference_key(tmp_path: Path) -> None:
    path = write(
        tmp_path, "extra.yaml", "id: e\nreference:\n  trajectroy: [a]\nevaluators: [latency]\n"
    )
    assert problems_of(path) == [
        f"{path}:3: reference.trajectroy: not a criteria field of any evaluator of this spec"
    ]


def test_not_a_mapping_and_unsupported_type(tmp_path: Path) -> None:
    listed = write(tmp_path, "list.yaml", "- id: x\n")
    assert problems_of(listed) == [
        f"{listed}:1: expected a mapping (id, match, reference, evaluators, …)"
    ]
    toml = write(tmp_path, "spec.toml", "id = 'x'\n")
    assert problems_of(toml) == [f"{toml}: unsupported file type '.toml': use .yaml, .yml or .json"]


def test_duplicate_spec_id_across_files(tmp_path: Path) -> None:
    first = write(tmp_path, "a.yaml", MINIMAL)
    second = write(tmp_path, "b.yaml", "# same id\n" + MINIMAL.lstrip())
    with pytest.raises(SpecError) as info:
        load_specs([first, second])
    assert str(info.value) == (
        f"{second}:2: id: duplicate spec id 'minimal' (first defined in {first})"
    )


def test_load_specs_reports_every_file(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", "id: a\nevaluators: [nope]\n")
    write(tmp_path, "b.yml", "id: b\nevaluators: [latency]\nbogus: 1\n")
    write(tmp_path, "notes.txt", "not a spec")
    with pytest.raises(SpecError) as info:
        load_specs([tmp_path, tmp_path / "missing.yaml"])
    lines = str(info.value).splitlines()
    assert [line.split(":")[0] for line in lines] == [
        str(tmp_path / "missing.yaml"),
        str(tmp_path / "a.yaml"),
        str(tmp_path / "b.yml"),
    ]
    assert lines[0].endswith("no such file or directory")


def test_spec_set_rejects_duplicate_ids() -> None:
    spec = build_spec({"id": "same", "evaluators": ["latency"]})
    with pytest.raises(SpecError, match="duplicate spec id 'same'"):
        SpecSet([spec, spec])
