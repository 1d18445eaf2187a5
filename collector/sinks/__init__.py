"""Where evaluated trajectories and their results go (the contract: ``sinks.base``)."""

from collector.sinks.base import ResultSink

__all__ = ["ResultSink"]
