"""``/metrics`` bodies, byte for byte what prometheus-client's encoders write, faster.

prometheus-client formats every sample through general code: it validates the
metric and label names of each sample with regular expressions and, in OpenMetrics,
rewrites each sample's name one character at a time through a ``StringIO``. A
daemon's exposition of a few thousand series took most of a second to render that
way, holding the GIL (issue 14's bound is one second). The families evald exposes
only ever carry legacy names (``[a-zA-Z_:][a-zA-Z0-9_:]*``), which the
``underscores`` and ``allow-utf-8`` schemes write as they are; so each distinct name
is checked once (the verdicts are cached) and every sample is formatted with plain
string operations.

Anything outside that — a name that needs escaping (in OpenMetrics with
``underscores``, a ``:`` in a sample name), a native histogram, an exemplar where
OpenMetrics allows none, anything that is not a string where one is expected, the
``dots`` and ``values`` schemes — is rendered by the library itself, one family at
a time (or the whole body), so the body, or the error, is always the library's
(``tests/unit/daemon/test_exposition.py`` compares them).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from prometheus_client import exposition
from prometheus_client.exposition import choose_encoder
from prometheus_client.metrics_core import Metric
from prometheus_client.openmetrics import exposition as om_exposition
from prometheus_client.registry import CollectorRegistry
from prometheus_client.samples import Sample
from prometheus_client.utils import floatToGoString

from collector.daemon.render import YieldingRegistry, pacing

Pause = Callable[[], None]  # called every few samples: may release the GIL a moment
_METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
# Escapings that leave a legacy name as it is (``values`` prefixes OpenMetrics sample
# names with ``U__``, ``dots`` doubles underscores).
_PLAIN_ESCAPINGS = frozenset({om_exposition.UNDERSCORES, om_exposition.ALLOWUTF8})
_TEXT_TYPES = {"counter": "counter", "gauge": "gauge", "histogram": "histogram",
               "summary": "summary", "info": "gauge", "stateset": "gauge",
               "gaugehistogram": "histogram", "unknown": "untyped"}  # fmt: skip
_TEXT_SUFFIXES = {"counter": "_total", "info": "_info"}
_PAUSE_EVERY = 8  # samples between two calls of ``pause`` (~10 µs of formatting)
_NAMES_CACHED = 4096  # legacy-name verdicts remembered per pattern (few; bounded anyway)
_legacy_names: dict[re.Pattern[str], dict[str, bool]] = {_METRIC_NAME: {}, _LABEL_NAME: {}}


class Exposition:
    """One scrape's format, negotiated from its ``Accept`` header as prometheus-client
    does (``content_type`` says which), and how to render it."""

    def __init__(self, accept: str) -> None:
        self._library, self.content_type = choose_encoder(accept)
        function = getattr(self._library, "func", self._library)
        keywords: dict[str, Any] = getattr(self._library, "keywords", {})
        self._openmetrics = function is om_exposition.generate_latest
        fast = function in (exposition.generate_latest, om_exposition.generate_latest)
        self._fast = fast and keywords.get("escaping", "underscores") in _PLAIN_ESCAPINGS
        self._underscores = keywords.get("escaping", "underscores") == "underscores"

    def render(self, registry: CollectorRegistry) -> bytes:
        """The body for ``registry``, rendered in slices that let waiting threads take
        the GIL (``YieldingRegistry``)."""
        yielding = YieldingRegistry(registry)
        with pacing(yielding):
            if not self._fast:
                return bytes(self._library(yielding))
            return self._render(registry, yielding.pause_if_due)

    def _render(self, registry: CollectorRegistry, pause: Pause) -> bytes:
        writer = _Writer(pause, openmetrics=self._openmetrics, underscores=self._underscores)
        out: list[str] = []
        for metric in registry.collect():
            pause()
            try:
                out.append(writer.family(metric))
            except Exception:  # _NotPlain, or what the library reports its own way
                out.append(self._by_library(metric))
        if self._openmetrics:
            out.append("# EOF\n")
        return "".join(out).encode("utf-8")

    def _by_library(self, metric: Metric) -> str:
        """``metric`` as the library writes it (or its error, naming the family)."""
        body = self._library(YieldingRegistry(_One(metric))).decode("utf-8")
        return str(body.removesuffix("# EOF\n") if self._openmetrics else body)


class _NotPlain(Exception):
    """The family has something only the library writes right."""


class _Writer:
    """One render's formatting, with the ``k="v"`` texts of the label pairs seen so far
    (pairs repeat across samples: services, agents, bucket bounds)."""

    def __init__(self, pause: Pause, *, openmetrics: bool, underscores: bool) -> None:
        self._pause = pause
        self._openmetrics = openmetrics
        # In OpenMetrics with ``underscores`` the library writes a sample name's ``:``
        # as ``_`` (it checks sample names against the label-name characters).
        self._no_colons = openmetrics and underscores
        self._pairs: dict[tuple[str, str], str] = {}

    def family(self, metric: Metric) -> str:
        """``metric`` as the library would write it, or raise ``_NotPlain``."""
        if not _legacy(metric.name, _METRIC_NAME):
            raise _NotPlain
        out: list[str] = []
        if self._openmetrics:
            self._openmetrics_family(metric, out)
        else:
            self._text_family(metric, out)
        return "".join(out)

    def _text_family(self, metric: Metric, out: list[str]) -> None:
        """The Prometheus text format (0.0.4), as ``exposition.generate_latest``."""
        name = metric.name + _TEXT_SUFFIXES.get(metric.type, "")
        documentation = metric.documentation.replace("\\", r"\\").replace("\n", r"\n")
        kind = _TEXT_TYPES.get(metric.type, metric.type)
        out.append(f"# HELP {name} {documentation}\n# TYPE {name} {kind}\n")
        # OpenMetrics-only samples go after the family, as gauges of their own.
        extra = {metric.name + suffix: suffix for suffix in ("_created", "_gsum", "_gcount")}
        moved: dict[str, list[str]] = {}
        for index, sample in enumerate(metric.samples):
            if index % _PAUSE_EVERY == 0:
                self._pause()
            self._check(sample)
            stamp = "" if sample.timestamp is None else f" {int(float(sample.timestamp) * 1000):d}"
            line = f"{sample.name}{self._labels(sample.labels)} {_go(sample.value)}{stamp}\n"
            suffix = extra.get(sample.name)
            if suffix is None:
                out.append(line)
            else:
                moved.setdefault(suffix, []).append(line)
        for suffix, lines in sorted(moved.items()):
            out.append(f"# HELP {metric.name}{suffix} {documentation}\n")
            out.append(f"# TYPE {metric.name}{suffix} gauge\n")
            out.extend(lines)

    def _openmetrics_family(self, metric: Metric, out: list[str]) -> None:
        """OpenMetrics 1.0, as ``openmetrics.exposition.generate_latest``."""
        name = metric.name
        out.append(f"# HELP {name} {_escape(metric.documentation)}\n# TYPE {name} {metric.type}\n")
        if metric.unit:
            out.append(f"# UNIT {name} {metric.unit}\n")
        for index, sample in enumerate(metric.samples):
            if index % _PAUSE_EVERY == 0:
                self._pause()
            self._check(sample)
            stamp = "" if sample.timestamp is None else f" {sample.timestamp}"
            value = "" if sample.value is None else _go(sample.value)
            exemplar = sample.exemplar
            if exemplar is None:
                tail = ""
            else:
                if not _exemplar_allowed(metric, sample):
                    raise _NotPlain  # the library raises its own error
                labels = self._labels(exemplar.labels) or "{}"
                tail = f" # {labels} {_go(exemplar.value)}"
                if exemplar.timestamp is not None:
                    tail = f"{tail} {exemplar.timestamp}"
            out.append(f"{sample.name}{self._labels(sample.labels)} {value}{stamp}{tail}\n")

    def _check(self, sample: Sample) -> None:
        name = sample.name
        if sample.native_histogram is not None or type(name) is not str:
            raise _NotPlain
        if not _legacy(name, _METRIC_NAME):
            raise _NotPlain
        if self._no_colons and ":" in name:
            raise _NotPlain

    def _labels(self, labels: dict[str, str]) -> str:
        if not labels:
            return ""
        pairs = self._pairs
        texts = []
        for pair in sorted(labels.items()):
            text = pairs.get(pair)
            if text is None:
                key, value = pair
                if type(key) is not str or type(value) is not str:
                    raise _NotPlain
                if not _legacy(key, _LABEL_NAME):
                    raise _NotPlain
                text = pairs[pair] = f'{key}="{_escape(value)}"'
            texts.append(text)
        return "{" + ",".join(texts) + "}"


def _legacy(name: str, pattern: re.Pattern[str]) -> bool:
    """Whether ``name`` (a string) matches ``pattern`` (and, for a label name, is not
    reserved: the library escapes ``__x``)."""
    verdicts = _legacy_names[pattern]
    known = verdicts.get(name)
    if known is None:
        known = pattern.fullmatch(name) is not None and not (
            pattern is _LABEL_NAME and name.startswith("__")
        )
        if len(verdicts) < _NAMES_CACHED:
            verdicts[name] = known
    return known


def _exemplar_allowed(metric: Metric, sample: Sample) -> bool:
    if metric.type == "counter":
        return sample.name.endswith("_total")
    if metric.type == "gaugehistogram":
        return sample.name.endswith("_bucket")
    return metric.type == "histogram" and (
        sample.name.endswith("_bucket") or sample.name == metric.name
    )


def _escape(value: str) -> str:
    return value.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")


def _go(value: float) -> str:
    """``floatToGoString``, with the common case (finite, short) inline."""
    number = float(value)
    if number - number == 0.0:  # finite: NaN and infinities give NaN
        text = repr(number)
        if number <= 0 or text.find(".") <= 6:
            return text
    return str(floatToGoString(number))  # type: ignore[no-untyped-call]  # untyped upstream


class _One:
    """A registry of one family (for the library's encoders)."""

    def __init__(self, metric: Metric) -> None:
        self._metric = metric

    def collect(self) -> Iterable[Metric]:
        return [self._metric]
