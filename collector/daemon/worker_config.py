"""The config one worker of ``evald serve`` runs with (``pipeline.workers > 1``, ADR 0018).

What must not be shared between processes is made per worker:

- the result and trajectory files (``outputs.*_file``) and the judge cache
  (``judges.cache_file``) get the worker's number before the suffix
  (``results.jsonl`` → ``results-0.jsonl``): two processes appending to and rotating
  one file would interleave and race;
- each judge endpoint's rate and daily budget are divided between the workers
  (rounded up, at least 1), so together they stay within what was configured.

Memory limits (``assembly.*``, ``sessions.*``, ``pipeline.queue_size``) are per
worker, as documented in docs/configuration.md.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TypeVar

from collector.config.settings import Config
from evaluators.judges.settings import JudgeSettings

_Judge = TypeVar("_Judge", bound=JudgeSettings)


def worker_config(config: Config, index: int) -> Config:
    """``config`` as worker ``index`` of ``config.pipeline.worker_count()`` runs it."""
    count = config.pipeline.worker_count()
    if count == 1:
        return config
    outputs = config.outputs.model_copy(
        update={
            "results_file": _numbered(config.outputs.results_file, index),
            "trajectories_file": _numbered(config.outputs.trajectories_file, index),
        }
    )
    judges = config.judges.model_copy(
        update={
            "cache_file": _numbered(config.judges.cache_file, index),
            "endpoints": {
                name: _share(judge, count) for name, judge in config.judges.endpoints.items()
            },
        }
    )
    return config.model_copy(update={"outputs": outputs, "judges": judges})


def _numbered(path: Path | None, index: int) -> Path | None:
    if path is None:
        return None
    return path.with_name(f"{path.stem}-{index}{path.suffix}")


def _share(judge: _Judge, count: int) -> _Judge:
    budget = judge.budget.model_copy(
        update={
            "calls": _part(judge.budget.calls, count),
            "tokens": _part(judge.budget.tokens, count),
        }
    )
    return judge.model_copy(
        update={
            "budget": budget,
            "max_concurrency": _part(judge.max_concurrency, count),
            "requests_per_second": None
            if judge.requests_per_second is None
            else judge.requests_per_second / count,
            "tokens_per_minute": _part(judge.tokens_per_minute, count),
        }
    )


def _part(value: int | None, count: int) -> int | None:
    return None if value is None else max(1, math.ceil(value / count))
