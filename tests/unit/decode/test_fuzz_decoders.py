"""Each decoder against its reference on seeded generated inputs, and on every input
that ever failed (``tests/fuzz_corpus/``). See ``tests/support/fuzz.py``.

``make test`` runs ``FUZZ_INPUTS`` inputs per decoder with a fixed seed. A longer run,
for nightly CI (a new seed each night; failing inputs are written to the corpus):

    EVALD_FUZZ_INPUTS=300000 EVALD_FUZZ_SEED=$(date +%s) \\
        .venv/bin/pytest tests/unit/decode/test_fuzz_decoders.py -p no:cacheprovider --timeout 0
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from support.fuzz import TARGETS, FuzzTarget

FUZZ_INPUTS = int(os.environ.get("EVALD_FUZZ_INPUTS", "3000"))
FUZZ_SEED = int(os.environ.get("EVALD_FUZZ_SEED", "20261124"))
MAX_REPORTED = 5


def corpus_cases() -> list[tuple[FuzzTarget, Path]]:
    return [(target, path) for target in TARGETS for path in target.corpus()]


@pytest.mark.parametrize(("target", "path"), corpus_cases(), ids=lambda x: getattr(x, "name", x))
def test_inputs_that_once_failed_still_pass(target: FuzzTarget, path: Path) -> None:
    assert target.problem(path.read_bytes()) is None


@pytest.mark.timeout(0 if FUZZ_INPUTS > 3000 else 120)
@pytest.mark.parametrize("target", TARGETS, ids=lambda target: target.name)
def test_generated_inputs_decode_as_the_reference_does(target: FuzzTarget) -> None:
    rng = random.Random(f"{FUZZ_SEED}:{target.name}")
    failures: list[str] = []
    for n in range(FUZZ_INPUTS):
        data = target.generate(rng)
        problem = target.problem(data)
        if problem is not None:
            failures.append(f"input {n}: {problem} (kept as {target.keep(data)})")
            if len(failures) >= MAX_REPORTED:
                break
    assert not failures, "\n".join(failures)
