"""Builds the evaluation side of evald from its config; shared by serve, replay and check."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from collector.config.settings import Config, ConfigError, Sessions
from collector.core.clock import Clock
from collector.decode import AttributeSelector
from collector.normalize import ATTRIBUTE_SELECTOR
from collector.processing.fanout import SinkFanout
from collector.processing.judge_metrics import PrometheusJudgeMetrics
from collector.processing.judging import JudgeHandoff
from collector.processing.processor import EvaluationPlan, TraceProcessor
from collector.processing.sessions import SessionStage
from collector.processing.spec_watch import Fingerprint, fingerprint
from collector.processing.stage import EvaluationStage
from collector.sinks import ResultSink
from collector.sinks.jsonl import ResultsFileSink, TrajectoriesFileSink
from collector.sinks.metrics import MetricsSink
from collector.sinks.otlp import OtlpSink
from collector.telemetry.registry import Telemetry
from evaluators.judges.settings import JudgeKeyError
from evaluators.judges.setup import start_worker
from evaluators.judges.worker import JudgeWorker
from evaluators.runner import EvaluationRunner, bind_always
from evaluators.spec import SpecError, SpecSet, load_specs
from evaluators.trajectory import Trajectory

log = logging.getLogger(__name__)

# SessionStage's constructor, or one with its signature (a subclass's, bound).
SessionStageFactory = Callable[
    [Sessions, Clock, Telemetry, Callable[[Trajectory], None]], SessionStage
]


class ActiveSpecs:
    """The spec set in force. ``reload`` swaps it whole, or keeps the old one on error.

    Readers call the instance (``specs()``) once per trace and so see the old set
    or the new one, never a mix; in-flight traces are unaffected by a reload (the
    assembler holds spans, not specs: a trace is judged by the set in force when
    it completes). ``reload_if_changed`` reloads only when a spec file, a file
    matching the ``specs`` globs, or a dataset of the active specs changed since
    the last load (failed loads included: a broken file is reported once).
    """

    def __init__(self, config: Config, telemetry: Telemetry) -> None:
        self._config = config
        self._telemetry = telemetry
        self._lock = threading.Lock()
        self._judges = tuple(config.judges.endpoints)  # `judge:` references are checked
        before = fingerprint(config.spec_paths())
        self._current = load_specs(config.spec_paths(), judges=self._judges)  # errors propagate
        self._seen = self._with_sources(before, self._current)
        telemetry.evaluation.specs_loaded.set(len(self._current))

    def __call__(self) -> SpecSet:
        return self._current

    def reload(self) -> bool:
        """Load the spec files again; on any error keep the active set and return False."""
        with self._lock:
            before = self._fingerprint()
            try:
                fresh = load_specs(self._config.spec_paths(), judges=self._judges)
            # OSError: e.g. a spec directory unlistable; ConfigError: a glob matching nothing
            except (SpecError, ConfigError, OSError) as exc:
                self._seen = before
                self._telemetry.evaluation.config_reloads.labels("failure").inc()
                log.error(
                    "spec reload failed, keeping the %d active specs: %s", len(self._current), exc
                )
                return False
            self._current, self._seen = fresh, self._with_sources(before, fresh)
        self._telemetry.evaluation.config_reloads.labels("success").inc()
        self._telemetry.evaluation.specs_loaded.set(len(fresh))
        log.info("specs reloaded: %d active", len(fresh))
        return True

    def reload_if_changed(self) -> bool | None:
        """``reload()`` if a watched file changed since the last load, else None."""
        if self._fingerprint() == self._seen:
            return None
        log.info("spec files changed, reloading")
        return self.reload()

    def _fingerprint(self) -> Fingerprint:
        paths = self._config.spec_paths(require_matches=False)  # an emptied glob is a change
        return fingerprint([*paths, *self._current.sources])

    @staticmethod
    def _with_sources(before: Fingerprint, specs: SpecSet) -> Fingerprint:
        """``before`` plus the files of ``specs`` it did not cover (new datasets)."""
        return {**fingerprint(p for p in specs.sources if p not in before), **before}


def build_telemetry(config: Config) -> Telemetry:
    """The process's metrics, with the configured caps on traffic-derived labels."""
    limits = config.telemetry
    return Telemetry(
        label_value_limit=limits.label_value_limit,
        label_value_length=limits.label_value_length,
        series_limit=limits.max_series_per_metric,
    )


def decoder_selector(config: Config) -> AttributeSelector:
    """The span attributes the decoder keeps: those the normalizer reads.

    Root spans and resources keep all their attributes (the decoder's rule), so spec
    ``match.attributes`` work for any key, including after a reload. Forwarding
    spans over OTLP needs every attribute of every span.
    """
    if config.outputs.otlp.endpoint and config.outputs.otlp.forward_spans:
        return AttributeSelector(None, None, config.receivers.otlp.max_attribute_value_size)
    selector = AttributeSelector(
        ATTRIBUTE_SELECTOR.keys,
        ATTRIBUTE_SELECTOR.prefixes,
        config.receivers.otlp.max_attribute_value_size,
        ATTRIBUTE_SELECTOR.suffixes,
    )
    mappings = config.normalization.mappings
    return selector if mappings is None else mappings.selector(selector)


def build_sinks(
    config: Config,
    telemetry: Telemetry,
    results_out: Path | None = None,
    trajectories_out: Path | None = None,
) -> list[ResultSink]:
    """Prometheus always; OTLP when ``outputs.otlp.endpoint`` is set; result and
    trajectory files from the arguments or the config.

    Files named in the config rotate by ``outputs.rotation`` and are relative to the
    config file; files named by the arguments (``--results-out``, one replay's
    output) do not rotate and are relative to the working directory.
    """
    outputs = config.outputs
    sinks: list[ResultSink] = [MetricsSink(telemetry)]
    if outputs.otlp.endpoint is not None:
        sinks.append(OtlpSink(outputs.otlp, telemetry))
    rotation = (outputs.rotation.max_size, outputs.rotation.max_backups)
    if results_out is not None:
        sinks.append(ResultsFileSink(results_out))
    elif (results_file := outputs.results_path(config.base_dir)) is not None:
        sinks.append(ResultsFileSink(results_file, *rotation))
    if trajectories_out is not None:
        sinks.append(TrajectoriesFileSink(trajectories_out))
    elif (trajectories_file := outputs.trajectories_path(config.base_dir)) is not None:
        sinks.append(TrajectoriesFileSink(trajectories_file, *rotation))
    return sinks


def start_judge_worker(config: Config, telemetry: Telemetry) -> JudgeWorker | None:
    """The judge worker for ``judges.endpoints`` (None when none is configured).

    Its metrics go to ``telemetry``'s registry; close it (or the processor that
    owns it) when done. Raises ``ConfigError`` when an API key cannot be read.
    """
    judges = config.judges
    if not judges.endpoints:
        return None
    try:
        return start_worker(
            judges.endpoints,
            queue_size=judges.queue_size,
            cache_size=judges.cache_size,
            cache_file=judges.cache_path(config.base_dir),
            base_dir=config.base_dir,
            metrics=PrometheusJudgeMetrics(telemetry.registry),
        )
    except JudgeKeyError as exc:
        raise ConfigError(f"judges.endpoints.{exc}") from None


def build_stage(
    config: Config,
    specs: Callable[[], SpecSet],
    sinks: Sequence[ResultSink],
    telemetry: Telemetry,
    *,
    clock: Clock,
    daemon: bool,
    sessions: bool = True,
    session_stage: SessionStageFactory = SessionStage,
) -> EvaluationStage:
    """The evaluation side of ``evald serve`` (``daemon``) and ``evald replay``.

    The daemon hands judge work over and never waits (a full judge queue sheds it,
    counted); replay awaits every judge, for complete and reproducible results. Both
    drain judges within ``judges.drain_timeout`` when they close. ``sessions``: hold
    turns for ``scope: session`` specs, completed on ``clock``, by a stage made by
    ``session_stage`` (serve's workers route each turn to the worker of its session).
    """
    plan = EvaluationPlan(
        specs,
        bind_always(config.evaluation.always),
        EvaluationRunner(timeout_s=config.evaluation.timeout),
        config.normalization.mappings,
    )
    judges = JudgeHandoff(
        start_judge_worker(config, telemetry),
        wait=not daemon,
        drain_timeout=config.judges.drain_timeout,
    )
    processor = TraceProcessor(plan, SinkFanout(sinks, telemetry), telemetry, judges)
    held = (
        session_stage(config.sessions, clock, telemetry, processor.process_session)
        if sessions
        else None
    )
    return EvaluationStage(processor, held)
