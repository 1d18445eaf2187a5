"""Where the repository's test data lives, for every test module whatever its folder."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
GOLDEN = TESTS / "golden"
FIXTURES = TESTS / "fixtures"
