"""The reference docs stay true: the tables that mirror code list exactly what the code
defines (config keys, metric names, built-in evaluator ids), the README is a short front
door that links every reference page, and no section of the old README was lost."""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel
from support.paths import ROOT

from collector.config.settings import Config, JudgeEndpoint
from collector.processing.judge_metrics import PrometheusJudgeMetrics
from collector.telemetry.registry import Telemetry
from evaluators.registry import default_registry

DOCS = ROOT / "docs"
FIRST_CELL = re.compile(r"^\| *(`[^|]*) *\|", re.MULTILINE)
TICKED = re.compile(r"`([^`]+)`")
README_LIMIT = 12 * 1024


def first_column(path: Path, heading: str | None = None) -> set[str]:
    """The backticked names in the first column of the tables of ``path`` (with
    ``heading``: of the first table under it). ``a.b.c` / `.d`` names ``a.b.c`` and
    ``a.b.d``."""
    text = path.read_text()
    if heading is not None:
        after = text.split(f"\n{heading}\n", 1)[1]
        table = re.search(r"^\|.*?(?=\n[^|]|\Z)", after, re.MULTILINE | re.DOTALL)
        assert table, f"no table under {heading!r} in {path}"
        text = table.group(0)
    names: set[str] = set()
    for cell in FIRST_CELL.findall(text):
        previous = ""
        for ticked in TICKED.findall(cell):
            name = ticked
            if ticked.startswith(".") and previous:
                name = previous.rsplit(".", ticked.count("."))[0] + ticked
            names.add(name)
            previous = name
    return names


# --- configuration ----------------------------------------------------------------------


def section_model(annotation: object) -> type[BaseModel] | None:
    """The config section a field holds (``X`` or ``X | None``), if it is one."""
    options = typing.get_args(annotation) if isinstance(annotation, types.UnionType) else ()
    # Sections are the config's own models; Mappings and judge endpoints are values
    # documented as one key (their fields: in their own docs).
    for option in (annotation, *options):
        if (
            isinstance(option, type)
            and issubclass(option, BaseModel)
            and option.__module__.startswith("collector.config")
            and option is not JudgeEndpoint
        ):
            return option
    return None


def config_keys(model: type[BaseModel] = Config, prefix: str = "") -> Iterator[str]:
    for name, field in model.model_fields.items():
        if field.exclude:
            continue  # base_dir: set from the file, not a key
        if typing.get_origin(field.annotation) is dict and name == "endpoints":
            yield f"{prefix}{name}.<name>"
            continue
        section = section_model(field.annotation)
        if section is None:
            yield f"{prefix}{name}"
        else:
            yield from config_keys(section, f"{prefix}{name}.")


def test_the_config_table_lists_exactly_the_config_keys() -> None:
    documented = first_column(DOCS / "configuration.md", "## Keys")
    assert documented == set(config_keys())


def test_every_judge_endpoint_key_is_documented() -> None:
    text = (DOCS / "judges.md").read_text()
    missing = [
        key
        for key in JudgeEndpoint.model_fields
        if f"`{key}`" not in text and f"`{key}." not in text  # budget: `budget.calls`
    ]
    assert not missing


# --- metrics ----------------------------------------------------------------------------


def exposed_metrics() -> dict[str, str]:
    """Sample-name stem (``_total`` on counters) → family type, of a fresh registry."""
    telemetry = Telemetry()
    PrometheusJudgeMetrics(telemetry.registry)
    return {
        family.name + ("_total" if family.type == "counter" else ""): family.type
        for family in telemetry.registry.collect()
    }


def test_the_metric_table_lists_exactly_evalds_metrics() -> None:
    exposed = {name for name in exposed_metrics() if name.startswith("evald_")}
    documented = first_column(DOCS / "metrics.md")
    assert {name for name in documented if name.startswith("evald_")} == exposed


def test_every_process_metric_is_documented() -> None:
    exposed = {name for name in exposed_metrics() if not name.startswith("evald_")}
    assert exposed, "the process collectors are on the registry"
    assert exposed <= first_column(DOCS / "metrics.md", "### Process metrics")


# --- evaluators -------------------------------------------------------------------------


def test_the_evaluator_table_lists_exactly_the_built_ins() -> None:
    documented = first_column(DOCS / "evaluators.md", "## Built-in evaluators")
    assert documented == set(default_registry().names())


# --- the README and the docs ------------------------------------------------------------

REFERENCE_PAGES = ("configuration.md", "metrics.md", "evaluators.md", "specs-and-datasets.md",
                   "judges.md", "replay-and-compare.md", "deployment.md",
                   "instrument-your-agent.md", "outputs.md")  # fmt: skip

# Every section of the README as it was before it became a front door, and where it is
# now (the CLI section is "The `evald` command" of replay-and-compare.md).
OLD_README_SECTIONS = {
    "## How it works": "architecture.md",
    "## The `evald` command": "replay-and-compare.md",
    "### Output contracts (JSON lines; more fields may be added)": "replay-and-compare.md",
    "## Keys": "configuration.md",
    "## Reference specs": "specs-and-datasets.md",
    "### Sessions (`scope: session`)": "specs-and-datasets.md",
    "## Datasets": "specs-and-datasets.md",
    "## Built-in evaluators": "evaluators.md",
    "## Custom evaluators": "evaluators.md",
    "## LLM judges": "judges.md",
    "# Metrics": "metrics.md",
    "## Outputs": "outputs.md",
    "## Deployment and scaling out": "deployment.md",
    "# Development": "development.md",
}


def test_the_readme_is_a_short_front_door_linking_every_reference_page() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.encode()) < README_LIMIT
    for page in REFERENCE_PAGES:
        assert f"(docs/{page})" in readme, page
    for heading in ("## Quick start", "## Instrument your agent", "## Your first spec",
                    "## Where to go next"):  # fmt: skip
        assert f"\n{heading}\n" in readme, heading


def test_every_section_of_the_old_readme_is_in_docs() -> None:
    for heading, page in OLD_README_SECTIONS.items():
        lines = (DOCS / page).read_text().splitlines()
        assert heading in lines, f"{heading!r} is missing from docs/{page}"


def test_the_docs_index_links_every_page() -> None:
    index = (DOCS / "README.md").read_text()
    for page in sorted(DOCS.glob("*.md")):
        if page.name != "README.md":
            assert f"({page.name})" in index, page.name
