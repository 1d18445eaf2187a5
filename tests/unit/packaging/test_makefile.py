"""The Makefile's targets exist: a phony target without a rule is silently a no-op, so a
missing `compiler` or `prometheus` rule would skip installing what the tests need."""

from __future__ import annotations

import re

from support.paths import ROOT

MAKEFILE = (ROOT / "Makefile").read_text()


def phony_targets() -> set[str]:
    declared = re.search(r"^\.PHONY:((?:.*\\\n)*.*)$", MAKEFILE, re.MULTILINE)
    assert declared
    return set(declared.group(1).replace("\\\n", " ").split())


def test_every_phony_target_has_a_rule() -> None:
    rules = set(re.findall(r"^([a-z][\w-]*):", MAKEFILE, re.MULTILINE))
    assert phony_targets() - rules == set()


def test_the_installs_the_tests_need_are_prerequisites() -> None:
    assert re.search(r"^\$\(STAMP\):.*\| compiler$", MAKEFILE, re.MULTILINE)
    assert re.search(r"^unit: .*prometheus", MAKEFILE, re.MULTILINE)
    assert re.search(r"^test: lint typecheck unit pure", MAKEFILE, re.MULTILINE)
