"""Error answers must encode whatever the client sent: a message echoing input stays a 400."""

from __future__ import annotations

import json

import pytest
from google.rpc.status_pb2 import Status

from collector.decode import AttributeSelector, DecodeError
from collector.receivers.common import ExportError, Refusal, encodable
from collector.receivers.http import _DECODERS, BodyFormat, _error

# Found by benchmarks/hostile.py: the decoder's message quotes the wrong-typed value.
LONE_SURROGATE_DOCUMENT = b'{"resourceSpans": "x\\ud800"}'


def _refusal_of(document: bytes) -> ExportError:
    with pytest.raises(DecodeError) as raised:
        _DECODERS[BodyFormat.JSON](document, AttributeSelector())
    return ExportError(Refusal.INVALID, str(raised.value))


@pytest.mark.parametrize("body_format", [BodyFormat.JSON, BodyFormat.PROTOBUF, None])
def test_a_message_quoting_a_lone_surrogate_is_still_a_400(body_format: BodyFormat | None) -> None:
    refused = _refusal_of(LONE_SURROGATE_DOCUMENT)

    response = _error(refused, body_format)

    assert response.status == 400
    body = response.body
    assert isinstance(body, bytes)
    if body_format is BodyFormat.JSON:
        assert "\\ud800" in json.loads(body)["message"]
    elif body_format is BodyFormat.PROTOBUF:
        assert "\\ud800" in Status.FromString(body).message


def test_encodable_escapes_only_what_utf8_cannot_encode() -> None:
    assert encodable("plain") == "plain"
    assert encodable("café ✓") == "café ✓"
    assert encodable("x\ud800y") == "x\\ud800y"
    assert encodable("x\ud800y").encode("utf-8")
