"""The front's ``ShardForwarder`` when a worker's answer is not an answer."""

from __future__ import annotations

import asyncio

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from support.retention import holders_after
from support.sdk_spans import make_spans

from collector.daemon.forwarder import ShardForwarder
from collector.daemon.frames import Kind
from collector.decode import AttributeSelector
from collector.receivers.common import Signal
from collector.telemetry.registry import Telemetry


class _FailingLink:
    """A worker link whose every request fails with an error no link should raise."""

    def request(self, kind: Kind, body: bytes) -> asyncio.Future[bytes]:
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        future.set_exception(ValueError("not an answer"))
        return future


class _OneWorker:
    count = 1
    links = (_FailingLink(),)

    def accepting(self, index: int) -> bool:
        return True


def test_an_unexpected_failure_is_raised_afresh_and_keeps_no_request() -> None:
    """Raised as it came, the error would sit on a traceback through the frames holding
    the answers and the request: a cycle (ADR 0027)."""
    forwarder = ShardForwarder(_OneWorker(), AttributeSelector(), Telemetry(), 1.0)  # type: ignore[arg-type]
    payload: bytes = encode_spans(make_spans()).SerializeToString()
    errors: list[str] = []

    async def forward_once() -> None:
        try:  # a copy: the forwarder's own, which only a frame kept alive can still hold
            await forwarder(Signal.TRACES, False, "grpc", bytes(bytearray(payload)))
        except Exception as exc:  # (what was raised is the point)
            errors.append(repr(exc))

    loop = asyncio.new_event_loop()
    try:
        assert holders_after(payload, lambda: loop.run_until_complete(forward_once())) == []
    finally:
        loop.close()
    assert errors == ["RuntimeError(\"worker 0 did not answer: ValueError('not an answer')\")"] * 3
