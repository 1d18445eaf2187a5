"""Building the judges of a configuration: settings by name → a ready ``JudgeWorker``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from evaluators.judges.cache import ResultCache
from evaluators.judges.judge import Judge
from evaluators.judges.metrics import JudgeMetrics, NoJudgeMetrics
from evaluators.judges.runner import JudgeRunner
from evaluators.judges.settings import JudgeKeyError, JudgeSettings, read_api_key
from evaluators.judges.worker import JudgeWorker


def build_judges(
    endpoints: Mapping[str, JudgeSettings],
    base_dir: Path | None = None,
    metrics: JudgeMetrics | None = None,
) -> dict[str, Judge]:
    """One ``Judge`` per named settings block, API keys read now.

    Raises ``JudgeKeyError`` naming the judge and the key setting (``default.api_key_env:
    environment variable 'OPENAI_API_KEY' is not set``).
    """
    judges: dict[str, Judge] = {}
    for name, settings in endpoints.items():
        try:
            key = read_api_key(settings, base_dir)
        except JudgeKeyError as exc:
            raise JudgeKeyError(f"{name}.{exc}") from None
        judges[name] = Judge(name, settings, key, metrics)
    return judges


def start_worker(
    endpoints: Mapping[str, JudgeSettings],
    *,
    queue_size: int,
    cache_size: int,
    cache_file: Path | None = None,
    base_dir: Path | None = None,
    metrics: JudgeMetrics | None = None,
) -> JudgeWorker:
    """Judges, cache, runner and the worker thread, from settings. Close the worker when done."""
    metrics = metrics or NoJudgeMetrics()
    judges = build_judges(endpoints, base_dir, metrics)
    cache = ResultCache(cache_size, cache_file)
    return JudgeWorker(JudgeRunner(judges, cache, metrics), queue_size, metrics)
