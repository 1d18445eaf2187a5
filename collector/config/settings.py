"""The daemon's configuration: typed models validated at start-up.

Every key has a default (mirrored in ``config/evald.yaml``) and is documented in
docs/configuration.md. Unknown keys and bad values fail start-up with a message naming the file
and the key. Durations accept ``500ms``, ``5s``, ``2m``, ``1h`` or a number of
seconds; sizes accept ``64MiB``, ``512KiB``, ``1GB`` or a number of bytes.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import Field, ValidationError, model_validator

from collector.config.endpoints import HostPort, Url, split_host_port
from collector.config.environment import EnvironmentReferenceError, substitute
from collector.config.limits import Connections
from collector.config.units import Duration, Section, Size
from collector.normalize.mappings import Mappings
from evaluators.documents import TOO_DEEP, too_deep
from evaluators.judges.settings import JudgeSettings


class Listener(Section):
    enabled: bool = True
    endpoint: HostPort

    @property
    def host_port(self) -> tuple[str, int]:
        return split_host_port(self.endpoint)


class ReceiverTls(Section):
    """TLS on both OTLP receivers; files are PEM, relative paths from the config file."""

    cert_file: Path = Field(description="server certificate chain")
    key_file: Path = Field(description="its private key")
    client_ca_file: Path | None = Field(
        default=None, description="set: clients must present a certificate signed by it (mTLS)"
    )


class ReceiverAuth(Section):
    """Bearer-token authentication on both OTLP receivers; the token never lives here."""

    bearer_token_env: str | None = Field(default=None, description="variable holding the token")
    bearer_token_file: Path | None = Field(default=None, description="file holding the token")

    @model_validator(mode="after")
    def _one_source(self) -> ReceiverAuth:
        if self.bearer_token_env is not None and self.bearer_token_file is not None:
            raise ValueError("give bearer_token_env or bearer_token_file, not both")
        return self


class OtlpReceivers(Section):
    grpc: Listener = Listener(endpoint="0.0.0.0:4317")
    http: Listener = Listener(endpoint="0.0.0.0:4318")
    tls: ReceiverTls | None = Field(default=None, description="null: plaintext")
    auth: ReceiverAuth = ReceiverAuth()
    connections: Connections = Connections()
    max_request_size: Size = Field(
        default=16 * 1024**2, description="largest request body after decompression"
    )
    max_in_flight_bytes: Size = Field(
        default=128 * 1024**2,
        description="request bytes being received or decoded at once, both receivers; "
        "beyond: the retryable refusal (503 / UNAVAILABLE)",
    )
    max_attribute_value_size: Size = Field(
        default=256 * 1024, description="longer string attribute values are truncated"
    )
    retry_after: Duration = Field(default=1.0, description="Retry-After sent when overloaded")

    @model_validator(mode="after")
    def _one_request_fits(self) -> OtlpReceivers:
        if self.max_request_size > self.max_in_flight_bytes:
            raise ValueError("max_request_size must not exceed max_in_flight_bytes")
        return self


class Receivers(Section):
    otlp: OtlpReceivers = OtlpReceivers()


class Admin(Section):
    endpoint: HostPort = "0.0.0.0:9464"
    max_connections: int = Field(default=64, gt=0, description="beyond, new ones get 503")
    idle_timeout: Duration = Field(
        default=60.0, gt=0, description="closes connections without a complete request"
    )

    @property
    def host_port(self) -> tuple[str, int]:
        return split_host_port(self.endpoint)


class Assembly(Section):
    idle_timeout: Duration = 5.0
    max_trace_age: Duration = 60.0
    max_traces: int = Field(default=50_000, gt=0)
    max_spans_per_trace: int = Field(default=10_000, gt=0)
    max_spans: int = Field(default=1_000_000, gt=0)
    decided_traces_memory: int = Field(
        default=100_000, ge=0, description="completed trace ids remembered to spot late spans"
    )


MAX_AUTO_WORKERS = 8  # one front feeds ~5-9 workers, by their evaluation load (ADR 0018)


class Pipeline(Section):
    queue_size: int = Field(
        default=10_000, gt=0, description="completed traces awaiting evaluation (per worker)"
    )
    workers: int | None = Field(
        default=None,
        gt=0,
        le=256,
        description="worker processes of `evald serve`, each assembling and evaluating a share "
        f"of the trace ids; null: the CPUs this process may use, at most {MAX_AUTO_WORKERS}",
    )

    switch_interval: Duration = Field(
        default=0.01,
        gt=0,
        le=1.0,
        description="how long a thread of a serving process runs Python before another "
        "thread may take the interpreter (sys.setswitchinterval; CPython: 5ms). Longer: "
        "more spans per CPU-second under load, slower answers to exports while evaluation "
        "is busy (ADR 0026)",
    )

    def worker_count(self) -> int:
        """``workers``, or the usable CPU count capped at ``MAX_AUTO_WORKERS``."""
        if self.workers is not None:
            return self.workers
        try:
            cpus = len(os.sched_getaffinity(0))
        except AttributeError:  # not on Linux
            cpus = os.cpu_count() or 1
        return max(1, min(cpus, MAX_AUTO_WORKERS))


class Sessions(Section):
    """Multi-turn sessions for ``scope: session`` specs (``collector.assembly.sessions``).

    A session (the turns sharing a service and a session id) is evaluated once it
    had no new turn for ``idle_timeout``, reached ``max_age`` or ``max_turns``, or
    must make room (``max_sessions``, ``max_held_turns``: the oldest go first).
    """

    idle_timeout: Duration = Field(
        default=900.0, gt=0, description="quiet time after the last turn before evaluation"
    )
    max_age: Duration = Field(default=3600.0, gt=0, description="evaluated at this age anyway")
    max_turns: int = Field(default=100, gt=0, description="evaluated when it has this many turns")
    max_sessions: int = Field(default=10_000, gt=0, description="open sessions; beyond: evicted")
    max_held_turns: int = Field(
        default=100_000, gt=0, description="turns held across open sessions; beyond: evicted"
    )

    @model_validator(mode="after")
    def _one_session_fits(self) -> Sessions:
        if self.max_turns > self.max_held_turns:
            raise ValueError("max_turns must not exceed max_held_turns")
        return self


class Evaluation(Section):
    always: list[str] = Field(
        default_factory=lambda: ["latency", "failure"],
        description="evaluators run on every trace, without a spec",
    )
    timeout: Duration = Field(
        default=10.0,
        gt=0,
        description="longest a plug-in evaluator may take on one trace (it runs on its "
        "own thread); past it the result is an error and evaluation moves on",
    )


class Rotation(Section):
    """Size-based rotation of the live result files (like the Collector's file exporter)."""

    max_size: Size | None = Field(
        default=100 * 1024**2, description="rotate a file before it would exceed this; null: never"
    )
    max_backups: int = Field(default=5, ge=0, description="rotated files kept: FILE.1 … FILE.N")


class OtlpOutput(Section):
    """Evaluation results (and optionally the evaluated spans) sent over OTLP."""

    endpoint: Url | None = Field(
        default=None, description="http(s)://host:port of the backend; null: off"
    )
    protocol: Literal["grpc", "http/protobuf"] = "grpc"
    headers: dict[str, str] = Field(default_factory=dict)
    compression: Literal["none", "gzip"] = "none"
    timeout: Duration = Field(default=10.0, gt=0, description="per export, retries included")
    max_queue_size: int = Field(default=2048, gt=0, description="per signal; beyond: dropped")
    max_export_batch_size: int = Field(default=512, gt=0)
    schedule_delay: Duration = Field(default=1.0, gt=0, description="how long a batch may wait")
    evaluation_spans: bool = True
    log_records: bool = False
    forward_spans: bool = False

    @model_validator(mode="after")
    def _batch_fits_queue(self) -> OtlpOutput:
        if self.max_export_batch_size > self.max_queue_size:
            raise ValueError("max_export_batch_size must not exceed max_queue_size")
        return self


class Outputs(Section):
    results_file: Path | None = Field(default=None, description="relative to the config file")
    trajectories_file: Path | None = Field(default=None, description="relative to the config file")
    rotation: Rotation = Rotation()
    otlp: OtlpOutput = OtlpOutput()

    def results_path(self, base_dir: Path) -> Path | None:
        """``results_file``, a relative path taken from ``base_dir`` (the config's folder)."""
        return _from(base_dir, self.results_file)

    def trajectories_path(self, base_dir: Path) -> Path | None:
        """``trajectories_file``, a relative path taken from ``base_dir``."""
        return _from(base_dir, self.trajectories_file)


def _from(base_dir: Path, path: Path | None) -> Path | None:
    return path if path is None or path.is_absolute() else base_dir / path


class TelemetrySettings(Section):
    label_value_limit: int = Field(
        default=200, gt=0, description="distinct values per traffic-derived metric label"
    )
    label_value_length: int = Field(
        default=64, gt=0, description="longer traffic-derived label values are truncated"
    )
    max_series_per_metric: int = Field(
        default=100,
        gt=0,
        description="(service, agent) or (service, tool) combinations per metric family; "
        "beyond, observations go to the 'other' series",
    )


class JudgeEndpoint(JudgeSettings):
    """``judges.endpoints.<name>``: an OpenAI-compatible endpoint + model and its limits
    (``evaluators.judges.settings.JudgeSettings``), durations written ``5s`` / ``500ms``."""

    timeout: Duration = Field(default=60.0, gt=0, description="per HTTP attempt")
    backoff_initial: Duration = Field(default=0.5, gt=0)
    backoff_max: Duration = Field(default=30.0, gt=0)


JudgeName = Annotated[str, Field(pattern=r"^\S+$")]


class Judges(Section):
    """LLM judges referenced by name from spec entries (``judge: default``)."""

    endpoints: dict[JudgeName, JudgeEndpoint] = Field(default_factory=dict)
    queue_size: int = Field(
        default=100, gt=0, description="judge evaluations waiting; beyond: shed and counted"
    )
    cache_size: int = Field(default=100_000, ge=0, description="replies kept in memory")
    cache_file: Path | None = Field(
        default=None, description="JSON lines; replies persist across runs (relative to config)"
    )
    drain_timeout: Duration = Field(
        default=5.0, description="on shutdown, time for pending judge calls to finish"
    )

    def cache_path(self, base_dir: Path) -> Path | None:
        if self.cache_file is None or self.cache_file.is_absolute():
            return self.cache_file
        return base_dir / self.cache_file


class Shutdown(Section):
    grace: Duration = 10.0


class Normalization(Section):
    """How spans become trajectories beyond the built-in conventions."""

    mappings: Mappings | None = Field(
        default=None, description="attribute names of an in-house convention"
    )


class Config(Section):
    """The whole daemon configuration (``config/evald.yaml``)."""

    receivers: Receivers = Receivers()
    admin: Admin = Admin()
    assembly: Assembly = Assembly()
    pipeline: Pipeline = Pipeline()
    sessions: Sessions = Sessions()
    specs: list[str] = Field(default_factory=list, description="spec files or globs")
    specs_watch_interval: Duration = Field(
        default=2.0, description="poll spec and dataset files for changes; 0: SIGHUP only"
    )
    normalization: Normalization = Normalization()
    evaluation: Evaluation = Evaluation()
    outputs: Outputs = Outputs()
    telemetry: TelemetrySettings = TelemetrySettings()
    judges: Judges = Judges()
    shutdown: Shutdown = Shutdown()
    base_dir: Path = Field(default=Path("."), exclude=True, description="set from the file")

    def spec_paths(self, *, require_matches: bool = True) -> list[Path]:
        """Spec files named by ``specs``, globs expanded, relative to the config file.

        A glob that matches no file raises ``ConfigError`` naming it (a gate that
        loaded no spec must not pass); ``require_matches=False`` skips it instead,
        for watching files that may come back.
        """
        paths: list[Path] = []
        for pattern in self.specs:
            candidate = Path(pattern)
            if not candidate.is_absolute():
                candidate = self.base_dir / candidate
            if not is_glob(pattern):
                paths.append(candidate)
                continue
            matches = sorted(glob.glob(str(candidate)))
            if not matches and require_matches:
                raise ConfigError(f"specs: {pattern!r} matches no file (in {self.base_dir})")
            paths.extend(Path(match) for match in matches)
        return paths


def is_glob(pattern: str) -> bool:
    """Whether a ``specs`` entry (or ``--spec``) is a glob rather than a path."""
    return any(ch in pattern for ch in "*?[")


class ConfigError(Exception):
    """The config file is unreadable or invalid; the message names file and key."""


def format_validation_error(source: str, error: ValidationError) -> str:
    """One line per problem: ``source: dotted.key: message``."""
    lines = []
    for item in error.errors():
        location = ".".join(str(part) for part in item["loc"]) or "(top level)"
        lines.append(f"{source}: {location}: {item['msg']}")
    return "\n".join(lines)


def load_config(path: Path | None) -> Config:
    """Load and validate a config file; ``None`` gives the built-in defaults.

    ``${env:VAR}`` and ``${env:VAR:-default}`` in values are substituted first
    (``collector.config.environment``). Raises ``ConfigError`` naming the file and
    the offending keys.
    """
    if path is None:
        return Config()
    try:
        raw: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
    except RecursionError:  # the parser recurses per level
        raise ConfigError(f"{path}: {TOO_DEEP}") from None
    raw = {} if raw is None else raw  # an empty file: the defaults
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of keys")
    if too_deep(raw) is not None:  # substitution and validation recurse per level too
        raise ConfigError(f"{path}: {TOO_DEEP}")
    try:
        raw = substitute(raw)
    except EnvironmentReferenceError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    try:
        return Config.model_validate({**raw, "base_dir": path.parent})
    except ValidationError as exc:
        raise ConfigError(format_validation_error(str(path), exc)) from exc
