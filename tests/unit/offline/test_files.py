"""Replay inputs: every file layout users have is detected and streamed."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from support.agent_runs import json_request, json_span, pb_span, request, varint

from collector.decode import decode_json, decode_protobuf
from collector.offline.readers import PayloadFormat, TraceFileError, expand_paths, read_payloads


def requests(count: int) -> list[bytes]:
    return [request(pb_span()).SerializeToString() for _ in range(count)]


def span_count(path: Path) -> int:
    total = 0
    for payload in read_payloads(path):
        decode = decode_protobuf if payload.format is PayloadFormat.PROTOBUF else decode_json
        total += len(decode(payload.data).spans)
    return total


@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("layout", ["jsonl", "json_document", "binary", "be32", "varint"])
def test_layouts_are_detected_by_content(tmp_path: Path, layout: str, compressed: bool) -> None:
    bodies = requests(3)
    data = {
        "jsonl": b"".join(json_request(json_span()) + b"\n" for _ in range(3)),
        "json_document": json.dumps(json.loads(json_request(json_span())), indent=2).encode(),
        "binary": bodies[0],
        "be32": b"".join(len(b).to_bytes(4, "big") + b for b in bodies),
        "varint": b"".join(varint(len(b)) + b for b in bodies),
    }[layout]
    path = tmp_path / "traces.bin"
    path.write_bytes(gzip.compress(data) if compressed else data)
    expected = 1 if layout in ("binary", "json_document") else 3
    assert span_count(path) == expected


def test_json_lines_name_their_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(json_request(json_span()) + b"\n\n" + json_request(json_span()) + b"\n")
    assert [p.where for p in read_payloads(path)] == [f"{path}:1", f"{path}:3"]


def test_truncated_framing_names_file_and_offset(tmp_path: Path) -> None:
    body = requests(1)[0]
    path = tmp_path / "t.bin"
    path.write_bytes(len(body).to_bytes(4, "big") + body + (500).to_bytes(4, "big") + b"xx")
    with pytest.raises(TraceFileError, match=rf"t.bin@{4 + len(body)}: truncated record"):
        list(read_payloads(path))


def test_truncated_gzip_is_a_trace_file_error(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl.gz"
    path.write_bytes(gzip.compress(json_request(json_span()) * 50)[:-20])
    with pytest.raises(TraceFileError, match=r"t\.jsonl\.gz"):
        list(read_payloads(path))


def test_directories_globs_and_missing_paths(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    for name in ("a.jsonl", "sub/b.pb", "sub/c.jsonl.gz", "notes.txt"):
        (tmp_path / name).write_bytes(b"")
    found = expand_paths([str(tmp_path)])
    assert [p.relative_to(tmp_path).as_posix() for p in found] == [
        "a.jsonl", "sub/b.pb", "sub/c.jsonl.gz",
    ]  # fmt: skip
    assert expand_paths([str(tmp_path / "*.jsonl")]) == [tmp_path / "a.jsonl"]
    with pytest.raises(TraceFileError, match="no such file"):
        expand_paths([str(tmp_path / "missing.jsonl")])


def test_empty_file_yields_nothing(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    assert list(read_payloads(path)) == []
