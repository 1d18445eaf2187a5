"""Hostile traffic against a running daemon, and the answer OTLP allows for each input.

Every class of issue 14 (truncated and bit-flipped protobuf, random bytes, wrong
types, huge varints, deep nesting, invalid UTF-8 and surrogates, bad ids, NaN and
huge numbers, gzip bombs, oversize bodies, wrong content types, paths and methods,
slow and half-open connections) plus valid exports, over OTLP/HTTP, OTLP/gRPC and
the admin port. ``probes`` generates them, seeded; ``run`` sends them from a few
threads and tallies what came back. Where the answer depends on the payload, the
decoders' references (``support.fuzz``) say which one is right: 200 / OK for what
protobuf's parsers accept, 400 / INVALID_ARGUMENT for what they refuse. 503 /
UNAVAILABLE (overload, retryable) is allowed for any export.

Used by ``tests/integration/test_hostile.py`` (a seeded sample in ``make test``) and
``benchmarks/hostile.py`` (10 000+ inputs).
"""

from __future__ import annotations

import gzip
import http.client
import json
import random
import socket
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from collector.decode import AttributeSelector
from collector.decode.protobuf import walk_parsed
from support.fuzz import json_reference, protobuf_reference, trace_seeds
from support.fuzz_json import json_document

EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
PROTOBUF, JSON = "application/x-protobuf", "application/json"
HANG_S = 30.0
_ANY = AttributeSelector()
_PB = protobuf_reference(ExportTraceServiceRequest, walk_parsed)
_JS = json_reference(ExportTraceServiceRequest, walk_parsed)


@dataclass(frozen=True)
class Ports:
    grpc: int
    http: int
    admin: int
    max_request_size: int


@dataclass(frozen=True)
class Probe:
    kind: str
    send: Callable[[Ports], str]
    allowed: frozenset[str]


@dataclass
class Tally:
    answers: Counter[tuple[str, str]] = field(default_factory=Counter)
    wrong: list[str] = field(default_factory=list)
    slowest_s: float = 0.0

    @property
    def count(self) -> int:
        return sum(self.answers.values())

    def by_kind(self) -> dict[str, Counter[str]]:
        out: dict[str, Counter[str]] = {}
        for (kind, answer), n in self.answers.items():
            out.setdefault(kind, Counter())[answer] += n
        return out


def run(probes: Iterator[Probe], ports: Ports, threads: int = 8) -> Tally:
    tally = Tally()

    def one(probe: Probe) -> tuple[Probe, str, float]:
        started = time.monotonic()
        try:
            answer = probe.send(ports)
        except Exception as exc:
            answer = f"client-error:{type(exc).__name__}"
        return probe, answer, time.monotonic() - started

    def record(result: tuple[Probe, str, float]) -> None:
        probe, answer, took = result
        tally.answers[(probe.kind, answer)] += 1
        tally.slowest_s = max(tally.slowest_s, took)
        if answer not in probe.allowed or took > HANG_S:
            allowed = ", ".join(sorted(probe.allowed))
            tally.wrong.append(f"{probe.kind}: {answer} in {took:.1f}s (allowed: {allowed})")

    with ThreadPoolExecutor(threads) as pool:
        pending: set[Future[tuple[Probe, str, float]]] = set()
        for probe in probes:  # a bounded window: probes are built as they are sent
            pending.add(pool.submit(one, probe))
            if len(pending) >= threads * 2:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    record(future.result())
        for future in pending:
            record(future.result())
    return tally


# --- transports ------------------------------------------------------------------------


def http_send(
    body: bytes, content_type: str | None = PROTOBUF, *, path: str = "/v1/traces",
    method: str = "POST", headers: dict[str, str] | None = None,
) -> Callable[[Ports], str]:  # fmt: skip
    def send(ports: Ports) -> str:
        connection = http.client.HTTPConnection("127.0.0.1", ports.http, timeout=HANG_S)
        try:
            sent = dict(headers or {})
            if content_type:
                sent["Content-Type"] = content_type
            connection.request(method, path, body=body, headers=sent)
            response = connection.getresponse()
            response.read()
            return str(response.status)
        finally:
            connection.close()

    return send


def grpc_send(body: bytes, method: str = EXPORT) -> Callable[[Ports], str]:
    def send(ports: Ports) -> str:
        with grpc.insecure_channel(f"127.0.0.1:{ports.grpc}") as channel:
            try:
                channel.unary_unary(method)(body, timeout=HANG_S)
            except grpc.RpcError as exc:
                return str(exc.code().name)  # type: ignore[attr-defined]
            return "OK"

    return send


def raw_send(
    port_of: Callable[[Ports], int], data: bytes, *, pause: bool = False
) -> Callable[[Ports], str]:
    """``data`` on a plain TCP connection; the first line the server answers, or
    ``closed`` if it closes the connection without answering."""

    def send(ports: Ports) -> str:
        with socket.create_connection(("127.0.0.1", port_of(ports)), timeout=HANG_S) as sock:
            sock.sendall(data)
            if not pause:
                sock.shutdown(socket.SHUT_WR)
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        if not answer:
            return "closed"
        first = answer.split(b"\r\n", 1)[0].split(b" ")
        return first[1].decode() if answer.startswith(b"HTTP/") and len(first) > 1 else "closed"

    return send


# --- classes of input ------------------------------------------------------------------

_HUGE_VARINTS = (b"\xff" * 9 + b"\x01", b"\x80" * 10 + b"\x00", b"\xff\xff\xff\xff\x0f")
_EXPORT_OK = {True: frozenset({"200", "503"}), False: frozenset({"400", "503"})}
_GRPC_OK = {
    True: frozenset({"OK", "UNAVAILABLE"}),
    False: frozenset({"INVALID_ARGUMENT", "UNAVAILABLE"}),
}


def _accepted(reference: Callable[..., object], body: bytes) -> bool:
    try:
        reference(body, _ANY)
    except Exception:
        return False
    return True


def _protobuf_probe(kind: str, body: bytes, rng: random.Random, ports_limit: int) -> Probe:
    accepted = _accepted(_PB, body)
    if len(body) > ports_limit:
        return Probe(kind, http_send(body), frozenset({"413"}))
    if rng.random() < 0.5:
        return Probe(kind, grpc_send(body), _GRPC_OK[accepted])
    return Probe(kind, http_send(body), _EXPORT_OK[accepted])


def _json_probe(kind: str, body: bytes) -> Probe:
    return Probe(kind, http_send(body, JSON), _EXPORT_OK[_accepted(_JS, body)])


def _mutated(seed: bytes, rng: random.Random, kind: str) -> bytes:
    data = bytearray(seed)
    where = rng.randrange(max(1, len(data)))
    if kind == "truncated-protobuf":
        del data[where:]
    elif kind == "bit-flipped-protobuf":
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    elif kind == "huge-varints":
        data[where:where] = rng.choice(_HUGE_VARINTS)
    return bytes(data)


def _nested_protobuf(levels: int) -> bytes:
    value = b"\x18\x01"  # AnyValue.int_value = 1
    for _ in range(levels):
        array = b"\x0a" + _varint(len(value)) + value  # ArrayValue.values
        value = b"\x2a" + _varint(len(array)) + array  # AnyValue.array_value
    key_value = b"\x0a\x01k\x12" + _varint(len(value)) + value
    span = (b"\x0a\x10" + b"\x01" * 16 + b"\x12\x08" + b"\x02" * 8 + b"\x2a\x01s"
            + b"\x4a" + _varint(len(key_value)) + key_value)  # fmt: skip
    scope_spans = b"\x12" + _varint(len(span)) + span
    resource_spans = b"\x12" + _varint(len(scope_spans)) + scope_spans
    return b"\x0a" + _varint(len(resource_spans)) + resource_spans


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _json_text(rng: random.Random, kind: str) -> bytes:
    span = {"traceId": rng.randbytes(16).hex(), "spanId": rng.randbytes(8).hex(), "name": "s",
            "startTimeUnixNano": "1", "endTimeUnixNano": "2", "attributes": []}  # fmt: skip
    document = {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}

    text = json.dumps(document)
    if kind == "surrogates":
        name = rng.choice(('"name": "x\\ud800"', '"name": "\\udfff"'))
        return text.replace('"name": "s"', name).encode()
    if kind == "invalid-utf8":
        name = rng.choice((b'"\xff\xfe"', b'"\xc3"', b'"\xed\xa0\x80"'))
        return text.encode().replace(b'"s"', name)
    if kind == "bad-ids":
        bad = rng.choice((str(span["traceId"])[:-2], "W47/95gDgQPSabYzgT/GDA==", "zz" * 16, 5, ""))
        span["traceId"] = bad
        return json.dumps(document).encode()
    if kind == "nan-huge-numbers":
        literal = rng.choice(("NaN", "Infinity", "-Infinity", "1e400", str(2**64), "-1", "1.5"))
        return text.replace('"startTimeUnixNano": "1"', f'"startTimeUnixNano": {literal}').encode()
    levels = rng.choice((100, 300, 600, 5000))  # deep-nesting
    deep = '{"arrayValue": {"values": [' * levels + "{}" + "]}}" * levels
    return text.replace(
        '"attributes": []', f'"attributes": [{{"key": "k", "value": {deep}}}]'
    ).encode()


def _gzip_bomb(limit: int) -> bytes:
    return gzip.compress(b"\x00" * (limit + 1024 * 1024), compresslevel=9)


_OVERSIZE = (
    b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
    b"Content-Length: %d\r\n\r\n"
)
_SLOW_BODY = (
    b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    b"Content-Length: 100\r\n\r\n{"
)
_BAD_HTTP = (b"GARBAGE\r\n\r\n", b"POST /v1/traces HTTP/9.9\r\n\r\n", b"\x16\x03\x01\x00\x05hello")
_ADMIN_BAD = (
    b"GET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    b"POST /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
)
_PATHS = (
    "/",
    "/v1/metrics",
    "/v1/profiles",
    "/../etc/passwd",
    "/v1/traces/x",
)  # /v1/logs is served
SLOW_KINDS = frozenset({"half-open", "slow-header", "slow-body"})


class _Classes:
    """One probe of each class per call of the matching method (see ``KINDS``)."""

    def __init__(self, rng: random.Random, limit: int) -> None:
        self.rng, self.limit = rng, limit
        self.seeds = trace_seeds()
        self.bomb = _gzip_bomb(limit)

    def pb(self, kind: str, body: bytes) -> Probe:
        return _protobuf_probe(kind, body, self.rng, self.limit)

    def document(self) -> bytes:
        return json_document(ExportTraceServiceRequest, random.Random(self.rng.random()))

    def make(self, kind: str) -> Probe:
        rng = self.rng
        if kind == "valid":
            return self.pb(kind, rng.choice(self.seeds))
        if kind in ("truncated-protobuf", "bit-flipped-protobuf", "huge-varints"):
            return self.pb(kind, _mutated(rng.choice(self.seeds), rng, kind))
        if kind == "random-bytes":
            return self.pb(kind, rng.randbytes(rng.randrange(1, 300)))
        if kind == "deep-nesting":
            return self.pb(kind, _nested_protobuf(rng.choice((50, 150, 400))))
        if kind in ("valid-json", "wrong-types"):
            return _json_probe(kind, self.document())
        if kind in ("surrogates", "invalid-utf8", "bad-ids", "nan-huge-numbers", "deep-json"):
            return _json_probe(kind, _json_text(rng, kind))
        return self.transport_probe(kind)

    def transport_probe(self, kind: str) -> Probe:
        rng, limit = self.rng, self.limit
        gzipped = {"Content-Encoding": "gzip"}
        if kind == "gzip-bomb":
            return Probe(kind, http_send(self.bomb, headers=gzipped), frozenset({"413"}))
        if kind == "gzip-invalid":
            send = http_send(b"\x1f\x8b\x08garbage", JSON, headers=gzipped)
            return Probe(kind, send, frozenset({"400"}))
        if kind == "oversize":
            send = raw_send(_http_port, _OVERSIZE % (limit + 1), pause=True)
            return Probe(kind, send, frozenset({"413"}))
        if kind == "grpc-oversize":
            send = grpc_send(b"\x0a" + _varint(limit + 8) + b"\x00" * (limit + 8))
            # UNAVAILABLE (retry later) is always a correct gRPC answer: a GOAWAY of an
            # idle or aged connection can race the call.
            return Probe(kind, send, frozenset({"RESOURCE_EXHAUSTED", "UNAVAILABLE"}))
        if kind == "content-type":
            content_type = rng.choice(("text/plain", "application/xml", "multipart/form-data"))
            return Probe(kind, http_send(b"{}", content_type), frozenset({"415"}))
        if kind == "content-encoding":
            headers = {"Content-Encoding": rng.choice(("br", "zstd", "deflate"))}
            return Probe(kind, http_send(b"{}", JSON, headers=headers), frozenset({"415"}))
        if kind == "paths":
            return Probe(kind, http_send(b"{}", JSON, path=rng.choice(_PATHS)), frozenset({"404"}))
        if kind == "methods":
            method = rng.choice(("GET", "PUT", "DELETE", "PATCH"))
            return Probe(kind, http_send(b"", None, method=method), frozenset({"405"}))
        return self.connection_probe(kind)

    def connection_probe(self, kind: str) -> Probe:
        rng = self.rng
        if kind == "admin-bad":
            send = raw_send(_admin_port, rng.choice(_ADMIN_BAD), pause=True)
            return Probe(kind, send, frozenset({"404", "405"}))
        if kind == "bad-http":
            send = raw_send(_http_port, rng.choice(_BAD_HTTP))
            return Probe(kind, send, frozenset({"400", "505", "closed"}))
        if kind == "grpc-method":
            send = grpc_send(b"", "/opentelemetry.proto.collector.logs.v1.Nope/Export")
            return Probe(kind, send, frozenset({"UNIMPLEMENTED", "UNAVAILABLE"}))
        if kind == "half-open":
            port = rng.choice((_http_port, _grpc_port, _admin_port))
            return Probe(kind, raw_send(port, b"", pause=True), frozenset({"closed"}))
        if kind == "slow-header":
            send = raw_send(_http_port, b"POST /v1/traces HTTP/1.1\r\nHost: x\r\n", pause=True)
            return Probe(kind, send, frozenset({"closed"}))
        return Probe(kind, raw_send(_http_port, _SLOW_BODY, pause=True), frozenset({"408"}))


KINDS = (
    "valid", "valid-json", "truncated-protobuf", "bit-flipped-protobuf", "huge-varints",
    "random-bytes", "deep-nesting", "wrong-types", "surrogates", "invalid-utf8", "bad-ids",
    "nan-huge-numbers", "deep-json", "gzip-bomb", "gzip-invalid", "oversize", "grpc-oversize",
    "content-type", "content-encoding", "paths", "methods", "admin-bad", "bad-http",
    "grpc-method", "half-open", "slow-header", "slow-body",
)  # fmt: skip


def _http_port(ports: Ports) -> int:
    return ports.http


def _grpc_port(ports: Ports) -> int:
    return ports.grpc


def _admin_port(ports: Ports) -> int:
    return ports.admin


def probes(rng: random.Random, count: int, max_request_size: int) -> Iterator[Probe]:
    """``count`` probes going round every class (slow ones less often: each holds a
    thread until the server's timeout), built as they are sent."""
    classes = _Classes(rng, max_request_size)
    for n in range(count):
        kind = KINDS[n % len(KINDS)]
        if kind in SLOW_KINDS and rng.random() < 0.7:
            kind = "valid"
        yield classes.make(kind)


def fresh_trace(path: Path) -> list[bytes]:
    """The OTLP/JSON lines of a golden trace under a new trace id (an id already
    evaluated would make its spans late, not a new trace)."""
    text = path.read_text()
    old = json.loads(text.splitlines()[0])["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    new_id = random.Random().randbytes(16).hex()
    return [line.encode() for line in text.replace(old["traceId"], new_id).splitlines() if line]
