"""Replay reports: run summaries, the CI gate, and the table / JSON / Markdown / JUnit formats.

``summary.RunSummary`` (constant memory in the number of traces) is filled by a
result sink (``sink.SummarySink``) during the replay; ``gate.judge`` turns it into
the gate's verdict; ``render.write_report`` renders a ``model.Report`` in one of
``FORMATS``. This package's modules are imported one by one (not re-exported
here) so that ``evald --help`` does not load the pipeline.
"""

FORMATS = ("table", "json", "markdown", "junit")
