"""TLS and bearer-token authentication for the OTLP receivers (``receivers.otlp.tls`` / ``.auth``).

Both receivers share one ``ReceiverSecurity``, loaded once at start: the files are
read then (a missing or unreadable one stops start-up with a message naming the
setting), so a certificate rotated on disk needs a restart. The token comes from an
environment variable or a file, never from the config, is held as a ``SecretStr``
and is compared in constant time. The admin endpoint (``/metrics``, probes) is not
covered: it is scraped and probed from inside the cluster.
"""

from __future__ import annotations

import hmac
import os
import ssl
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from pydantic import SecretStr

from collector.config.settings import OtlpReceivers, ReceiverAuth, ReceiverTls

_BEARER = "bearer"  # compared case-insensitively (RFC 7235 §2.1)


class ReceiverSecurityError(Exception):
    """A TLS file or the token cannot be read; the message names the setting."""


@dataclass(frozen=True)
class _TlsMaterial:
    cert: bytes
    key: bytes = field(repr=False)  # a private key never reaches a log line
    client_ca: bytes | None
    paths: ReceiverTls  # resolved, for ssl (which loads from files)


@dataclass(frozen=True)
class ReceiverSecurity:
    """What both receivers enforce; ``ReceiverSecurity()`` is plaintext and open."""

    token: SecretStr | None = None
    tls: _TlsMaterial | None = None

    def authorized(self, authorization: str | None) -> bool:
        """Whether an ``Authorization`` header value carries the token (always, without one).

        The scheme ``Bearer`` is matched in any case (RFC 7235 §2.1); the token exactly.
        """
        if self.token is None:
            return True
        scheme, _, credentials = (authorization or "").partition(" ")
        if scheme.lower() != _BEARER:
            return False
        # surrogateescape: aiohttp decodes header bytes that way; never raise on them.
        presented = credentials.strip().encode("utf-8", "surrogateescape")
        return hmac.compare_digest(presented, self.token.get_secret_value().encode())

    def ssl_context(self) -> ssl.SSLContext | None:
        """The server-side context for OTLP/HTTP, or None without TLS."""
        if self.tls is None:
            return None
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        paths = self.tls.paths
        context.load_cert_chain(str(paths.cert_file), str(paths.key_file))
        if paths.client_ca_file is not None:
            context.load_verify_locations(str(paths.client_ca_file))
            context.verify_mode = ssl.CERT_REQUIRED
        return context

    def grpc_credentials(self) -> Any:
        """``grpc.ServerCredentials`` for OTLP/gRPC, or None without TLS."""
        if self.tls is None:
            return None
        return grpc.ssl_server_credentials(
            [(self.tls.key, self.tls.cert)],
            root_certificates=self.tls.client_ca,
            require_client_auth=self.tls.client_ca is not None,
        )


def load_security(config: OtlpReceivers, base_dir: Path) -> ReceiverSecurity:
    """Read the TLS files and the token named by ``config``.

    Raises ``ReceiverSecurityError`` naming the setting when something cannot be
    read or is empty, and when a TLS pair is unusable.
    """
    tls = _load_tls(config.tls, base_dir) if config.tls is not None else None
    security = ReceiverSecurity(_load_token(config.auth, base_dir), tls)
    try:
        security.ssl_context()  # fail at start, not at the first handshake
    except (ssl.SSLError, OSError) as exc:
        message = f"receivers.otlp.tls: unusable certificate/key: {exc}"
        raise ReceiverSecurityError(message) from None
    return security


def _load_token(auth: ReceiverAuth, base_dir: Path) -> SecretStr | None:
    if auth.bearer_token_env is not None:
        value = os.environ.get(auth.bearer_token_env, "").strip()
        if not value:
            raise ReceiverSecurityError(
                f"receivers.otlp.auth.bearer_token_env: environment variable "
                f"{auth.bearer_token_env!r} is not set"
            )
        return SecretStr(value)
    if auth.bearer_token_file is not None:
        text = _read(base_dir, auth.bearer_token_file, "auth.bearer_token_file").decode()
        if not text.strip():
            raise ReceiverSecurityError(
                f"receivers.otlp.auth.bearer_token_file: {auth.bearer_token_file} is empty"
            )
        return SecretStr(text.strip())
    return None


def _load_tls(tls: ReceiverTls, base_dir: Path) -> _TlsMaterial:
    resolved = ReceiverTls(
        cert_file=_resolve(base_dir, tls.cert_file),
        key_file=_resolve(base_dir, tls.key_file),
        client_ca_file=(
            None if tls.client_ca_file is None else _resolve(base_dir, tls.client_ca_file)
        ),
    )
    return _TlsMaterial(
        cert=_read(base_dir, tls.cert_file, "tls.cert_file"),
        key=_read(base_dir, tls.key_file, "tls.key_file"),
        client_ca=(
            None
            if tls.client_ca_file is None
            else _read(base_dir, tls.client_ca_file, "tls.client_ca_file")
        ),
        paths=resolved,
    )


def _resolve(base_dir: Path, path: Path) -> Path:
    return path if path.is_absolute() else base_dir / path


def _read(base_dir: Path, path: Path, setting: str) -> bytes:
    try:
        return _resolve(base_dir, path).read_bytes()
    except OSError as exc:
        raise ReceiverSecurityError(
            f"receivers.otlp.{setting}: cannot read {path}: {exc.strerror or exc}"
        ) from None
