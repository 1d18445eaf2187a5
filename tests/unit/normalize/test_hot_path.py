"""Hot-path shortcuts give exactly what the plain code gave (docs/adr/0007-hot-path.md).

msgspec parses JSON first, the standard library decides whatever msgspec refuses;
the outputs must not change, so every test compares against the standard library.
"""

from __future__ import annotations

import gc
import json
import math
import random
from typing import Any

import pytest

from collector.decode import decode_json
from collector.normalize.values import INVALID, _parse_stdlib, parse_json
from evaluators.matching import maximum_matching
from evaluators.reference import ExpectedStep
from evaluators.trajectory import Step, StepKind

EDGE_CASES = [
    '{"a": 1, "a": 2}',  # duplicate keys: the last wins
    "18446744073709551616",  # beyond 64 bits: orjson would give a float
    "-9223372036854775809",
    '{"id": 123456789012345678901234567890}',
    "1" * 4301,  # past int_max_str_digits: not JSON to Python
    "1e400",  # inf in the json module
    "[-1e400, 1e-400, -0.0, -0, 5e-324, 2.4703282292062328e-324]",
    "9007199254740993.0",
    "NaN",
    "[Infinity, -Infinity]",
    '"\\ud800"',  # a lone surrogate escape
    '"\\ud83d\\ude00"',
    '"\ud800"',  # a lone surrogate in the text itself
    '{"a": 1}\x0b',  # whitespace to Python, not to JSON
    '\x0c{"a": 1}',
    ' {"a": 1}\n',
    "",
    "   ",
    "Comfortably Numb",
    "true story",
    "3 tracks found",
    "null",
    '{"a": [1, 2,]}',
    '{"a": "trunc',
    '"a\\u0000b"',
    "[" * 2000 + "]" * 2000,  # deeper than the recursion limit
    "[" * 100 + "]" * 100,
]


def same(left: Any, right: Any) -> bool:
    """Equal values of equal types; INVALID only equals itself, NaN equals NaN."""
    if left is INVALID or right is INVALID:
        return left is right
    return repr(left) == repr(right)


@pytest.mark.parametrize("text", EDGE_CASES, ids=lambda t: repr(t[:24]))
def test_parse_json_answers_as_the_standard_library(text: str) -> None:
    assert same(parse_json(text), _parse_stdlib(text))


def random_value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(9 if depth < 4 else 6)
    if kind == 0:
        return rng.randint(-(2**70), 2**70)
    if kind == 1:
        return rng.choice([rng.uniform(-1e6, 1e6), rng.random() * 10 ** rng.randint(-320, 308)])
    if kind == 2:
        return rng.choice([True, False, None, math.inf, -math.inf, math.nan])
    if kind in (3, 4, 5):  # any code point, lone surrogates and control characters too
        points = [rng.choice([rng.randint(0, 0x7F), rng.randint(0x80, 0x10FFFF)]) for _ in "abcd"]
        return "".join(map(chr, points))
    if kind in (6, 7):
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {
        str(random_value(rng, 4)): random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))
    }


def test_parse_json_agrees_on_random_documents() -> None:
    rng = random.Random(7)
    for _ in range(3000):
        text = json.dumps(random_value(rng), ensure_ascii=rng.random() < 0.5)
        if rng.random() < 0.2:  # damage it: both must refuse it, or read it alike
            cut = rng.randrange(len(text) + 1)
            text = text[:cut] + rng.choice(['"', "\\", ",", "]", "}", "e", "-", " "]) + text[cut:]
        assert same(parse_json(text), _parse_stdlib(text)), text


@pytest.mark.parametrize(
    "body",
    [
        b'{"resourceSpans": []}',
        '{"resourceSpans": []}'.encode("utf-16"),  # the json module detects UTF-16
        b'\xef\xbb\xbf{"resourceSpans": []}',  # a UTF-8 byte-order mark
        b'{"resourceSpans": [], "x": NaN}',
        b'{"resourceSpans": [], "x": 123456789012345678901234567890}',
    ],
)
def test_otlp_json_bodies_decode_as_before(body: bytes) -> None:
    json.loads(body)  # all of them are JSON to the standard library
    assert decode_json(body).spans == []


@pytest.mark.parametrize("body", [b"", b"{", b'{"resourceSpans": [}', b"\xff\xfe\x00"])
def test_invalid_otlp_json_keeps_the_json_modules_message(body: bytes) -> None:
    try:
        json.loads(body)
    except ValueError as exc:
        expected = f"not valid JSON: {exc}"
    with pytest.raises(ValueError) as raised:
        decode_json(body)
    assert str(raised.value) == expected


def test_maximum_matching_leaves_no_garbage_cycles() -> None:
    reference = [ExpectedStep(name="a"), ExpectedStep(name="b")]
    predicted = [Step(StepKind.TOOL, name, "", None, 0, 0.0) for name in ("b", "a", "b")]
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(100):
            pairs = maximum_matching(reference, predicted, lambda item, s: item.name == s.name)
            assert len(pairs) == 2
        assert gc.collect() == 0
    finally:
        if enabled:
            gc.enable()
