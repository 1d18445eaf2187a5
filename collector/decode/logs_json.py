"""OTLP/JSON logs (``POST /v1/logs``, the Collector file exporter) → ``LogRecord`` records.

The encoding rules are the traces' (``decode.otlp_json``): hex ids, integers as
strings or numbers, unknown fields ignored, and what is valid is what protobuf's own
JSON parser accepts (``decode.proto3_json``, which names the offending field). The
validated message is then read exactly as a binary request
(``decode.logs_protobuf.walk_parsed_logs``): both encodings give the same records.
A record without a trace id is dropped and counted.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import msgspec
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from collector.decode.common import KEEP_ALL, AttributeSelector, DecodeError
from collector.decode.log_records import DecodedLogs
from collector.decode.logs_protobuf import walk_parsed_logs
from collector.decode.proto3_json import parse_message

_fast_loads: Callable[[bytes | str], Any] = msgspec.json.Decoder().decode


def decode_logs_json_document(
    document: Any,
    selector: AttributeSelector = KEEP_ALL,
    *,
    keep: Callable[[bytes], bool] | None = None,
) -> DecodedLogs:
    """Decode an already-parsed OTLP/JSON ``ExportLogsServiceRequest`` / ``LogsData``.

    Raises ``DecodeError`` naming the first malformed field. ``keep`` filters records
    by trace id, as in ``decode_logs_protobuf``. ``document`` may be changed.
    """
    if not isinstance(document, dict):
        raise DecodeError("the top level must be a JSON object with resourceLogs")
    request = parse_message(document, ExportLogsServiceRequest)
    return walk_parsed_logs(request, selector, keep)


def decode_logs_json(
    data: bytes | str,
    selector: AttributeSelector = KEEP_ALL,
    *,
    keep: Callable[[bytes], bool] | None = None,
) -> DecodedLogs:
    """Decode an OTLP/JSON logs request body; ``DecodeError`` for invalid JSON or a
    document protobuf's JSON mapping refuses (the message names the field)."""
    return decode_logs_json_document(parse_json(data), selector, keep=keep)


def parse_json(data: bytes | str) -> Any:
    """The parsed document; ``DecodeError`` if it is not JSON."""
    try:
        return _fast_loads(data)
    except (ValueError, RecursionError):
        pass  # what msgspec refuses (NaN, lone surrogates …) the json module may parse
    try:
        return json.loads(data)
    except RecursionError:
        raise DecodeError("not valid JSON: nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise DecodeError(f"not valid JSON: {exc}") from exc
