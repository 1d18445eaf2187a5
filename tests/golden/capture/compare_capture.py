"""Compare a re-captured folder with the committed one, ids and timings aside.

Not run in CI. Any venv with protobuf and opentelemetry-proto (evald's, or a capture's)::

    CAPTURE_OUT=/tmp/recapture <venv>/bin/python tests/golden/capture/<script>.py
    .venv/bin/python tests/golden/capture/compare_capture.py \\
        tests/golden/traces/<folder> /tmp/recapture/<folder>

Every file a capture writes (``.jsonl``, ``.pb``, ``.logs.jsonl``, ``.logs.pb``,
``.expected.json``, ``.tree.txt``) is compared after canonicalising what differs from run to
run by nature: trace and span ids become labels in order of first appearance (one
numbering per scenario, so a file's ids must still line up with its other files), times
(``*UnixNano``) and durations go, and inside text so do uuids, memory addresses, loopback
ports, epoch seconds, ISO datetimes, the directories of the files in recorded tracebacks
and the line numbers of the capture scripts' own frames. ``framework_versions`` is
compared as it is. Prints each difference; exits 1 if any, 0 if the folders say the same.
"""

from __future__ import annotations

import base64
import difflib
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

SUFFIXES = (".jsonl", ".logs.jsonl", ".pb", ".logs.pb", ".expected.json", ".tree.txt")
ID_KEYS = ("traceId", "spanId", "parentSpanId")
CAPTURE_SCRIPTS = {path.name for path in Path(__file__).resolve().parent.glob("*.py")}

HEX_ID = re.compile(r"\b(?:0x)?[0-9a-f]{32}\b|\b(?:0x)?[0-9a-f]{16}\b")
EPOCH = re.compile(r"\b1[6-9]\d{8}(\.\d+)?\b")
# .tree.txt cuts values at a fixed length: what follows a path or a uuid there varies
TREE_CUTS = (
    (re.compile(r"(?<=[\s(])/[^']*\.\.\.'"), "<path>...'"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f-]*\.\.\.'"), "<uuid>...'"),
)


def _frame(match: re.Match[str]) -> str:
    """A traceback frame: the file's base name, and no line number for a capture script's
    own frame (it moves with any edit of the script)."""
    name = match.group(1).rsplit("/", 1)[-1]
    line = "<line>" if name in CAPTURE_SCRIPTS else match.group(2)
    return f'File "{name}", line {line}'


# What varies from run to run inside text, in the order it is replaced (ids last: a uuid
# or a port must not be taken for one).
SCRUBS: tuple[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]], ...] = (
    (re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}"), "<uuid>"),
    (re.compile(r" at 0x[0-9a-f]+"), " at <address>"),  # a repr's memory address
    (re.compile(r"(127\.0\.0\.1|localhost):\d+"), r"\1:<port>"),
    (re.compile(r"('server\.port': )\d+"), r"\1<port>"),
    (re.compile(r"(duration'?: )[0-9.e-]+"), r"\1<duration>"),
    (re.compile(r'File \\?"([^"\\]+)\\?", line (\d+)'), _frame),  # Python traceback
    (re.compile(r"(?<=[\s(])/(?:[^\s():\"\\/]+/)+([^\s():\"\\/]+:\d+:\d+)"), r"\1"),  # JS
    (re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?"), "<datetime>"),
)


class Canon:
    """One scenario's canonicaliser: ids get labels in order of first appearance."""

    def __init__(self) -> None:
        self.labels: dict[str, str] = {}

    def label(self, value: str) -> str:
        value = value.lower().removeprefix("0x")
        if value not in self.labels:
            kind = "trace" if len(value) == 32 else "span"
            self.labels[value] = f"<{kind}{len(self.labels)}>"
        return self.labels[value]

    def text(self, text: str) -> str:
        for pattern, replacement in SCRUBS:
            text = pattern.sub(replacement, text)
        text = HEX_ID.sub(lambda match: self.label(match.group(0)), text)
        return EPOCH.sub("<epoch>", text)

    def value(self, node: Any) -> Any:
        if isinstance(node, dict):
            key = node.get("key")  # an OTLP attribute
            if isinstance(key, str) and (key == "server.port" or "duration" in key):
                return {"key": key, "value": "<varies>"}
            return {name: self._field(name, value) for name, value in node.items()}
        if isinstance(node, list):
            return [self.value(item) for item in node]
        if isinstance(node, str):
            return self.text(node)
        return node

    def _field(self, name: str, value: Any) -> Any:
        if name.endswith("UnixNano"):
            return "<time>"
        if name in ID_KEYS and isinstance(value, str) and value:
            return self.label(value)
        return self.value(value)


def _hex_ids(node: Any) -> Any:
    """json_format writes ids as base64; the .jsonl files have hex."""
    if isinstance(node, dict):
        return {
            key: base64.b64decode(value).hex()
            if key in ID_KEYS and isinstance(value, str)
            else _hex_ids(value)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_hex_ids(item) for item in node]
    return node


def _protobuf(path: Path) -> Any:
    message: Message = (
        ExportLogsServiceRequest()
        if path.name.endswith(".logs.pb")
        else ExportTraceServiceRequest()
    )
    message.ParseFromString(path.read_bytes())
    return _hex_ids(json_format.MessageToDict(message, use_integers_for_enums=True))


def canonical_lines(path: Path, canon: Canon) -> list[str]:
    """A capture file as canonical text lines (JSON pretty-printed with sorted keys)."""
    if path.name.endswith(".tree.txt"):
        lines = path.read_text(encoding="utf-8").splitlines()
        for pattern, replacement in TREE_CUTS:
            lines = [pattern.sub(replacement, line) for line in lines]
        return [canon.text(line) for line in lines]
    if path.suffix == ".pb":
        data: Any = _protobuf(path)
    elif path.suffix == ".jsonl":
        lines = path.read_text(encoding="utf-8").splitlines()
        data = [json.loads(line) for line in lines if line.strip()]
    else:
        data = json.loads(path.read_text(encoding="utf-8"))
        data.pop("framework_versions", None)  # compared as it is, by compare_folders
    text = json.dumps(canon.value(data), indent=1, sort_keys=True, ensure_ascii=False)
    return text.splitlines()


def _show(diff: list[str]) -> None:
    """The changed lines of a diff, cut around where each pair starts to differ."""
    removed = [line[1:] for line in diff if line.startswith("-") and not line.startswith("---")]
    added = [line[1:] for line in diff if line.startswith("+") and not line.startswith("+++")]
    for old, new in list(zip(removed, added, strict=False))[:12]:
        same = 0
        while same < min(len(old), len(new)) and old[same] == new[same]:
            same += 1
        start = max(0, same - 100)
        print(f"    - …{old[start : same + 150]}")
        print(f"    + …{new[start : same + 150]}")
    for line in (removed[len(added) :] + added[len(removed) :])[:10]:
        print(f"    ± {line[:250]}")


def _scenarios(folder: Path) -> set[str]:
    return {p.name.removesuffix(".expected.json") for p in folder.glob("*.expected.json")}


def compare_folders(committed: Path, recaptured: Path) -> int:
    """Print how two capture folders differ, for the scenarios re-captured; the number of
    differing items."""
    problems = 0
    missing = sorted(_scenarios(committed) - _scenarios(recaptured))
    if missing:
        print(f"  not re-captured (not compared): {missing}")
    for scenario in sorted(_scenarios(recaptured)):
        names = {p.name for p in committed.glob(f"{scenario}.*")}
        new_names = {p.name for p in recaptured.glob(f"{scenario}.*")}
        if names != new_names:
            print(f"  {scenario}: files only committed {sorted(names - new_names)}")
            print(f"  {scenario}: files only re-captured {sorted(new_names - names)}")
            problems += 1
        if not names:
            continue
        versions = [
            json.loads((folder / f"{scenario}.expected.json").read_text())["framework_versions"]
            for folder in (committed, recaptured)
        ]
        if versions[0] != versions[1]:
            print(f"  {scenario}: framework_versions {versions[0]} != {versions[1]}")
            problems += 1
        old_canon, new_canon = Canon(), Canon()
        for suffix in SUFFIXES:
            name = scenario + suffix
            if name not in names or name not in new_names:
                continue
            old = canonical_lines(committed / name, old_canon)
            new = canonical_lines(recaptured / name, new_canon)
            if old == new:
                print(f"  {name}: same ({len(old)} canonical lines)")
                continue
            problems += 1
            diff = list(difflib.unified_diff(old, new, n=0, lineterm=""))
            print(f"  {name}: DIFFERS")
            _show(diff)
    return problems


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    committed, recaptured = Path(argv[0]), Path(argv[1])
    print(f"{committed} vs {recaptured}")
    problems = compare_folders(committed, recaptured)
    print(f"{committed.name}: " + (f"{problems} difference(s)" if problems else "the same"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
