"""OTLP receivers: gRPC (``TraceService/Export``, ``LogsService/Export``) and HTTP
(``POST /v1/traces``, ``POST /v1/logs``).

Both decode each request once, hand its spans or log records to a ``SignalConsumer``
and answer as the OTLP specification requires (shared/CONVENTIONS.md §3), the same
way for both signals:

================================  ===========================  ==========================
outcome                           gRPC                         HTTP
================================  ===========================  ==========================
all spans / records kept          OK                           200, empty response
some rejected                     OK + ``partial_success``     200 + ``partialSuccess``
undecodable payload / bad gzip    INVALID_ARGUMENT             400
pipeline full (``Overloaded``)    UNAVAILABLE + ``RetryInfo``  503 + ``Retry-After``
over ``max_in_flight_bytes``      UNAVAILABLE + ``RetryInfo``  503 + ``Retry-After``
over ``max_request_size``         RESOURCE_EXHAUSTED (grpc)    413
body not in by ``read_timeout``   DEADLINE_EXCEEDED            408
unknown Content-Type / -Encoding  —                            415
not POST / other path             UNIMPLEMENTED (grpc)         405 / 404
unexpected exception              INTERNAL                     500
================================  ===========================  ==========================

Both share the lifecycle ``start()`` / ``shutdown(grace)`` / ``port``: ``GrpcReceiver`` in
``receivers.grpc``, ``HttpReceiver`` in ``receivers.http``.
"""
