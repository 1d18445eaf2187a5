"""`evald --version` names the installed version and the build in use."""

from __future__ import annotations

from importlib import metadata

import pytest

from collector.cli.command import main
from collector.core.build_info import build_labels


def test_version_prints_the_installed_version_and_build(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    labels = build_labels()
    assert capsys.readouterr().out == (
        f"evald {metadata.version('evald')} "
        f"(decoder {labels['decoder']}, normalizer {labels['normalizer']}, "
        f"evaluators {labels['evaluators']})\n"
    )


def test_version_needs_no_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--log-level", "ERROR", "--version", "replay"])  # exits before parsing on
    assert exited.value.code == 0
    assert capsys.readouterr().out.startswith("evald ")
