"""``pipeline.switch_interval``: parsed, bounded, and set in every process ``evald serve`` runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.fresh_process import in_fresh_process

from collector.config.settings import Config, ConfigError, load_config


def test_the_default_is_ten_milliseconds_and_units_are_read() -> None:
    assert Config().pipeline.switch_interval == pytest.approx(0.01)
    config = Config.model_validate({"pipeline": {"switch_interval": "5ms"}})
    assert config.pipeline.switch_interval == pytest.approx(0.005)


@pytest.mark.parametrize("value", ["0s", "-1ms", "2s"])
def test_an_interval_out_of_bounds_is_refused_naming_the_field(tmp_path: Path, value: str) -> None:
    path = tmp_path / "evald.yaml"
    path.write_text(f"pipeline: {{switch_interval: {value}}}\n")
    with pytest.raises(ConfigError, match=r"pipeline\.switch_interval"):
        load_config(path)


def test_the_serving_process_sets_it_before_building_anything() -> None:
    out = in_fresh_process(
        """
        import asyncio, sys
        from collector.config.settings import Config
        from collector.daemon import serve

        class Built(Exception):
            pass

        def refuse(*args, **kwargs):
            raise Built
        serve.Daemon = serve.FrontDaemon = refuse  # stop where the daemon would be built
        for workers in (1, 2):
            sys.setswitchinterval(0.005)
            config = Config.model_validate(
                {"pipeline": {"workers": workers, "switch_interval": "37ms"}}
            )
            try:
                asyncio.run(serve.run_daemon(config))
            except Built:
                print(round(sys.getswitchinterval(), 6))
        """
    )
    assert out.split() == ["0.037", "0.037"]


def test_each_worker_process_sets_it() -> None:
    out = in_fresh_process(
        """
        import sys
        from collector.config.settings import Config
        from collector.daemon import worker

        class Built(Exception):
            pass

        def refuse(*args, **kwargs):
            raise Built
        worker.Worker = refuse  # stop where the worker would be built
        config = Config.model_validate({"pipeline": {"switch_interval": "41ms"}})
        try:
            worker.run_worker(worker.WorkerSetup(config, 0, 2), None, None)
        except Built:
            print(round(sys.getswitchinterval(), 6))
        """
    )
    assert out == "0.041"
