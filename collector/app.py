"""Builds the evaluation side of evald from its config; shared by serve, replay and check."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path

from collector.config import Config
from collector.decode import AttributeSelector
from collector.normalize import ATTRIBUTE_SELECTOR
from collector.processor import TraceProcessor
from collector.sinks import ResultSink
from collector.sinks.jsonl import ResultsFileSink, TrajectoriesFileSink
from collector.sinks.metrics import MetricsSink
from collector.telemetry import Telemetry
from evaluators.runner import BoundEvaluator, bind_always
from evaluators.spec import SpecError, SpecSet, load_specs

log = logging.getLogger(__name__)


class ActiveSpecs:
    """The spec set in force. ``reload`` swaps it whole, or keeps the old one on error.

    Readers call the instance (``specs()``) once per trace and so see the old set
    or the new one, never a mix; in-flight traces are unaffected by a reload.
    """

    def __init__(self, config: Config, telemetry: Telemetry) -> None:
        self._config = config
        self._telemetry = telemetry
        self._lock = threading.Lock()
        self._current = load_specs(config.spec_paths())  # start-up: errors propagate
        telemetry.specs_loaded.set(len(self._current))

    def __call__(self) -> SpecSet:
        return self._current

    def reload(self) -> bool:
        """Load the spec files again; on any error keep the active set and return False."""
        with self._lock:
            try:
                fresh = load_specs(self._config.spec_paths())
            except SpecError as exc:
                self._telemetry.config_reloads.labels("failure").inc()
                log.error(
                    "spec reload failed, keeping the %d active specs: %s", len(self._current), exc
                )
                return False
            self._current = fresh
        self._telemetry.config_reloads.labels("success").inc()
        self._telemetry.specs_loaded.set(len(fresh))
        log.info("specs reloaded: %d active", len(fresh))
        return True


def decoder_selector(config: Config) -> AttributeSelector:
    """The span attributes the decoder keeps: those the normalizer reads.

    Root spans and resources keep all their attributes (the decoder's rule), so spec
    ``match.attributes`` work for any key, including after a reload.
    """
    return AttributeSelector(
        ATTRIBUTE_SELECTOR.keys,
        ATTRIBUTE_SELECTOR.prefixes,
        config.receivers.otlp.max_attribute_value_size,
    )


def build_sinks(
    config: Config,
    telemetry: Telemetry,
    results_out: Path | None = None,
    trajectories_out: Path | None = None,
) -> list[ResultSink]:
    """Prometheus always; result/trajectory files from the arguments or the config."""
    sinks: list[ResultSink] = [MetricsSink(telemetry)]
    results = results_out or config.outputs.results_file
    trajectories = trajectories_out or config.outputs.trajectories_file
    if results is not None:
        sinks.append(ResultsFileSink(results))
    if trajectories is not None:
        sinks.append(TrajectoriesFileSink(trajectories))
    return sinks


def build_processor(
    config: Config, specs: ActiveSpecs, sinks: Sequence[ResultSink], telemetry: Telemetry
) -> TraceProcessor:
    always: list[BoundEvaluator] = bind_always(config.evaluation.always)
    return TraceProcessor(specs, always, sinks, telemetry)
