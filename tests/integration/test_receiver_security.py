"""TLS, mutual TLS and bearer tokens on both OTLP receivers, with the real exporters.

Certificates are made by ``openssl`` for each test session (a CA, a server
certificate for 127.0.0.1, a client certificate); the exporters are the unmodified
OpenTelemetry SDK ones, configured as a user would (CA bundle, headers).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
    OTLPSpanExporter as GrpcSpanExporter,
)
from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
    OTLPSpanExporter as HttpSpanExporter,
)
from opentelemetry.sdk.trace.export import SpanExportResult
from pydantic import SecretStr, ValidationError
from support.sdk_spans import make_spans

from collector.config.settings import (
    Config,
    ConfigError,
    Listener,
    OtlpReceivers,
    ReceiverAuth,
    ReceiverTls,
)
from collector.daemon.serve import Daemon
from collector.decode import AttributeSelector
from collector.receivers.grpc import GrpcReceiver
from collector.receivers.http import HttpReceiver
from collector.receivers.security import ReceiverSecurity, ReceiverSecurityError, load_security
from collector.telemetry.registry import Telemetry

if TYPE_CHECKING:
    from support.loop import LoopThread, RecordingConsumer

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

TOKEN = "s3cret-token"
FAILED = "evald_receiver_requests_failed_total"


class Pki:
    """PEM files: ``ca``, ``server_cert``/``server_key``, ``client_cert``/``client_key``."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.ca, self.ca_key = directory / "ca.pem", directory / "ca.key"
        self._openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
                      "/CN=evald test CA", "-keyout", self.ca_key, "-out", self.ca)  # fmt: skip
        self.server_cert, self.server_key = self._issue("server", "IP:127.0.0.1,DNS:localhost")
        self.client_cert, self.client_key = self._issue("client", None)

    def bytes_of(self, path: Path) -> bytes:
        return path.read_bytes()

    def _issue(self, name: str, san: str | None) -> tuple[Path, Path]:
        key, csr, cert = (self.dir / f"{name}{ext}" for ext in (".key", ".csr", ".pem"))
        self._openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={name}",
                      "-keyout", key, "-out", csr)  # fmt: skip
        extensions = self.dir / f"{name}.ext"
        extensions.write_text(f"subjectAltName={san}\n" if san else "basicConstraints=CA:FALSE\n")
        self._openssl("x509", "-req", "-in", csr, "-CA", self.ca, "-CAkey", self.ca_key,
                      "-CAcreateserial", "-days", "2", "-out", cert,
                      "-extfile", extensions)  # fmt: skip
        return cert, key

    @staticmethod
    def _openssl(*args: str | Path) -> None:
        subprocess.run(["openssl", *map(str, args)], check=True, capture_output=True)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    if shutil.which("openssl") is None:
        pytest.fail("openssl is needed to make the test certificates")
    return Pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture
def secured(
    start: Callable[[Any], Any],
    consumer: RecordingConsumer,
    telemetry: Telemetry,
    pki: Pki,
    monkeypatch: pytest.MonkeyPatch,
) -> Callable[..., tuple[GrpcReceiver, HttpReceiver]]:
    """``secured(mtls=False, token=True)``: both receivers with TLS (and a token)."""

    def _secured(mtls: bool = False, token: bool = True) -> tuple[GrpcReceiver, HttpReceiver]:
        monkeypatch.setenv("EVALD_TEST_TOKEN", TOKEN)
        # requests prefers these to the exporter's certificate_file (psf/requests#3829).
        monkeypatch.delenv("REQUESTS_CA_BUNDLE", raising=False)
        monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)
        config = OtlpReceivers(
            grpc=Listener(endpoint="127.0.0.1:0"),
            http=Listener(endpoint="127.0.0.1:0"),
            tls=ReceiverTls(
                cert_file=pki.server_cert,
                key_file=pki.server_key,
                client_ca_file=pki.ca if mtls else None,
            ),
            auth=ReceiverAuth(bearer_token_env="EVALD_TEST_TOKEN" if token else None),
        )
        security = load_security(config, pki.dir)
        selector = AttributeSelector()
        grpc_receiver = GrpcReceiver(config, consumer, selector, telemetry, security)
        http_receiver = HttpReceiver(config, consumer, selector, telemetry, security)
        return start(grpc_receiver), start(http_receiver)

    return _secured


def grpc_exporter(pki: Pki, port: int, token: str | None, client_cert: bool = False) -> Any:
    credentials = grpc.ssl_channel_credentials(
        root_certificates=pki.ca.read_bytes(),
        private_key=pki.client_key.read_bytes() if client_cert else None,
        certificate_chain=pki.client_cert.read_bytes() if client_cert else None,
    )
    headers = {"authorization": f"Bearer {token}"} if token else None
    return GrpcSpanExporter(
        endpoint=f"https://127.0.0.1:{port}", credentials=credentials, headers=headers, timeout=5
    )


def http_exporter(pki: Pki, port: int, token: str | None, client_cert: bool = False) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else None
    return HttpSpanExporter(
        endpoint=f"https://127.0.0.1:{port}/v1/traces",
        certificate_file=str(pki.ca),
        client_certificate_file=str(pki.client_cert) if client_cert else None,
        client_key_file=str(pki.client_key) if client_cert else None,
        headers=headers,
        timeout=5,
    )


def test_tls_and_token_let_the_real_exporters_in(
    secured: Callable[..., tuple[GrpcReceiver, HttpReceiver]],
    pki: Pki,
    consumer: RecordingConsumer,
) -> None:
    grpc_receiver, http_receiver = secured()
    assert grpc_exporter(pki, grpc_receiver.port, TOKEN).export(make_spans()) == (
        SpanExportResult.SUCCESS
    )
    assert http_exporter(pki, http_receiver.port, TOKEN).export(make_spans()) == (
        SpanExportResult.SUCCESS
    )
    assert len(consumer.spans) == 4


@pytest.mark.parametrize("token", [None, "wrong"])
def test_a_missing_or_wrong_token_is_refused_and_counted(
    secured: Callable[..., tuple[GrpcReceiver, HttpReceiver]],
    pki: Pki,
    consumer: RecordingConsumer,
    metric: Callable[..., float],
    token: str | None,
) -> None:
    grpc_receiver, http_receiver = secured()
    assert grpc_exporter(pki, grpc_receiver.port, token).export(make_spans()) == (
        SpanExportResult.FAILURE
    )
    assert http_exporter(pki, http_receiver.port, token).export(make_spans()) == (
        SpanExportResult.FAILURE
    )
    assert consumer.spans == []
    assert metric(FAILED, transport="grpc", status="UNAUTHENTICATED") == 1
    assert metric(FAILED, transport="http", status="401") == 1


def test_http_401_names_the_scheme(
    secured: Callable[..., tuple[GrpcReceiver, HttpReceiver]], pki: Pki
) -> None:
    import ssl
    import urllib.error
    import urllib.request

    _, http_receiver = secured()
    request = urllib.request.Request(
        f"https://127.0.0.1:{http_receiver.port}/v1/traces",
        data=b"",
        headers={"Content-Type": "application/x-protobuf"},
    )
    context = ssl.create_default_context(cafile=str(pki.ca))
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, context=context, timeout=5)
    with refused.value:  # closes the response
        assert refused.value.code == 401
        assert refused.value.headers["WWW-Authenticate"] == 'Bearer realm="evald"'


def test_plaintext_clients_cannot_talk_to_a_tls_receiver(
    secured: Callable[..., tuple[GrpcReceiver, HttpReceiver]], consumer: RecordingConsumer
) -> None:
    grpc_receiver, http_receiver = secured(token=False)
    insecure = GrpcSpanExporter(
        endpoint=f"http://127.0.0.1:{grpc_receiver.port}", insecure=True, timeout=2
    )
    assert insecure.export(make_spans()) == SpanExportResult.FAILURE
    plain_http = HttpSpanExporter(
        endpoint=f"http://127.0.0.1:{http_receiver.port}/v1/traces", timeout=2
    )
    assert plain_http.export(make_spans()) == SpanExportResult.FAILURE
    assert consumer.spans == []


def test_mutual_tls_needs_a_client_certificate(
    secured: Callable[..., tuple[GrpcReceiver, HttpReceiver]],
    pki: Pki,
    consumer: RecordingConsumer,
) -> None:
    grpc_receiver, http_receiver = secured(mtls=True, token=False)
    assert grpc_exporter(pki, grpc_receiver.port, None).export(make_spans()) == (
        SpanExportResult.FAILURE
    )
    assert http_exporter(pki, http_receiver.port, None).export(make_spans()) == (
        SpanExportResult.FAILURE
    )
    assert consumer.spans == []
    assert grpc_exporter(pki, grpc_receiver.port, None, client_cert=True).export(make_spans()) == (
        SpanExportResult.SUCCESS
    )
    assert http_exporter(pki, http_receiver.port, None, client_cert=True).export(make_spans()) == (
        SpanExportResult.SUCCESS
    )
    assert len(consumer.spans) == 4


def test_grpc_health_service_answers_without_a_token(
    secured: Callable[..., tuple[GrpcReceiver, HttpReceiver]], pki: Pki
) -> None:
    grpc_receiver, _ = secured()
    credentials = grpc.ssl_channel_credentials(root_certificates=pki.ca.read_bytes())
    with grpc.secure_channel(f"127.0.0.1:{grpc_receiver.port}", credentials) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        for service in ("", "opentelemetry.proto.collector.trace.v1.TraceService"):
            reply = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING


def test_token_from_a_file_relative_to_the_config(tmp_path: Path) -> None:
    (tmp_path / "token").write_text(f"{TOKEN}\n")
    config = OtlpReceivers(auth=ReceiverAuth(bearer_token_file=Path("token")))
    security = load_security(config, tmp_path)
    assert security.authorized(f"Bearer {TOKEN}")
    assert not security.authorized(f"Bearer {TOKEN}x")
    assert not security.authorized(TOKEN)  # no scheme
    assert not security.authorized(None)
    assert TOKEN not in repr(security)


def test_unreadable_settings_stop_start_up_naming_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pki: Pki
) -> None:
    monkeypatch.delenv("EVALD_TEST_UNSET", raising=False)
    unset = OtlpReceivers(auth=ReceiverAuth(bearer_token_env="EVALD_TEST_UNSET"))
    with pytest.raises(ReceiverSecurityError, match=r"auth\.bearer_token_env.*EVALD_TEST_UNSET"):
        load_security(unset, tmp_path)
    missing = OtlpReceivers(tls=ReceiverTls(cert_file=Path("nope.pem"), key_file=pki.server_key))
    with pytest.raises(ReceiverSecurityError, match=r"tls\.cert_file: cannot read nope\.pem"):
        load_security(missing, tmp_path)
    swapped = OtlpReceivers(tls=ReceiverTls(cert_file=pki.server_key, key_file=pki.server_cert))
    with pytest.raises(ReceiverSecurityError, match="unusable certificate/key"):
        load_security(swapped, tmp_path)
    with pytest.raises(ValidationError, match="not both"):
        ReceiverAuth(bearer_token_env="A", bearer_token_file=Path("b"))
    config = Config.model_validate(
        {"receivers": {"otlp": {"auth": {"bearer_token_env": "EVALD_TEST_UNSET"}}}}
    )
    with pytest.raises(ConfigError, match="bearer_token_env"):
        Daemon(config)


def test_a_non_utf8_authorization_header_is_refused_not_a_crash() -> None:
    # aiohttp hands header bytes that are not UTF-8 over as surrogate escapes.
    security = ReceiverSecurity(token=SecretStr(TOKEN))
    assert not security.authorized(f"Bearer {TOKEN}\udcff")
    assert security.authorized(f"Bearer {TOKEN}")


def test_health_is_serving_again_after_a_restart(
    loop_thread: LoopThread, consumer: RecordingConsumer, telemetry: Telemetry
) -> None:
    config = OtlpReceivers(grpc=Listener(endpoint="127.0.0.1:0"))
    receiver = GrpcReceiver(config, consumer, AttributeSelector(), telemetry)
    statuses = []
    for _ in range(2):  # start → shutdown → start: the lifecycle contract
        loop_thread.run(receiver.start())
        with grpc.insecure_channel(f"127.0.0.1:{receiver.port}") as channel:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=""), timeout=5
            )
            statuses.append(reply.status)
        loop_thread.run(receiver.shutdown(1.0))
    assert statuses == [health_pb2.HealthCheckResponse.SERVING] * 2
