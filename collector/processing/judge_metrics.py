"""The LLM judges' self-telemetry as Prometheus metrics (``evaluators.judges.JudgeMetrics``).

Registered on the process's registry next to ``collector.telemetry.registry``'s metrics;
listed in the metric table of docs/metrics.md. ``judge`` label values are the configured
judge names, so their cardinality is the config's, never the traffic's.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

JUDGE_LATENCY_BUCKETS = (0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120)


class PrometheusJudgeMetrics:
    """``evald_judge_*`` metrics. Thread-safe (prometheus-client is)."""

    def __init__(self, registry: CollectorRegistry) -> None:
        r = registry
        self.calls = Counter(
            "evald_judge_calls",
            "HTTP requests to judge endpoints, by outcome (ok, rate_limited, server_error, "
            "client_error, timeout, transport, malformed)",
            ["judge", "outcome"],
            registry=r,
        )
        self.latency = Histogram(
            "evald_judge_latency_seconds", "Duration of one judge HTTP request", ["judge"],
            buckets=JUDGE_LATENCY_BUCKETS, registry=r,
        )  # fmt: skip
        self.token_count = Counter(
            "evald_judge_tokens", "Tokens used by judges, by direction (prompt, completion)",
            ["judge", "direction"], registry=r,
        )  # fmt: skip
        self.errors = Counter(
            "evald_judge_errors",
            "Judge evaluations that ended in an error result, by reason",
            ["judge", "reason"],
            registry=r,
        )
        self.cache_hits = Counter(
            "evald_judge_cache_hits", "Judge verdicts served from the result cache", ["judge"],
            registry=r,
        )  # fmt: skip
        self.shed_work = Counter(
            "evald_judge_shed",
            "Judge evaluations not done, by reason (queue_full, budget, shutdown)",
            ["judge", "reason"],
            registry=r,
        )
        self.budget_left = Gauge(
            "evald_judge_budget_remaining",
            "What is left of today's judge budget (UTC day), by unit (calls, tokens)",
            ["judge", "unit"],
            registry=r,
        )
        self.queue = Gauge(
            "evald_judge_queue_depth", "Judge evaluations accepted and not finished", registry=r
        )

    def attempt(self, judge: str, outcome: str, latency_s: float) -> None:
        self.calls.labels(judge, outcome).inc()
        self.latency.labels(judge).observe(latency_s)

    def tokens(self, judge: str, prompt: int, completion: int) -> None:
        self.token_count.labels(judge, "prompt").inc(prompt)
        self.token_count.labels(judge, "completion").inc(completion)

    def error(self, judge: str, reason: str) -> None:
        self.errors.labels(judge, reason).inc()

    def cache_hit(self, judge: str) -> None:
        self.cache_hits.labels(judge).inc()

    def shed(self, judge: str, reason: str) -> None:
        self.shed_work.labels(judge, reason).inc()

    def budget_remaining(self, judge: str, unit: str, left: int) -> None:
        self.budget_left.labels(judge, unit).set(left)

    def queue_depth(self, depth: int) -> None:
        self.queue.set(depth)
