"""``js_stringify`` is JavaScript's ``JSON.stringify(JSON.parse(json))`` (contract §5, domain §7 D8)."""

from __future__ import annotations

import json
import random
import shutil
import struct
import subprocess

import pytest

from ctxmodel.tokens.jsjson import js_number, js_string, js_stringify


@pytest.mark.parametrize(
    ("literal", "expected"),
    [
        ("1.0", "1"),
        ("1", "1"),
        ("-0", "0"),
        ("-0.0", "0"),
        ("0.1", "0.1"),
        ("1e21", "1e+21"),
        ("1e20", "100000000000000000000"),
        ("123e18", "123000000000000000000"),
        ("1e-7", "1e-7"),
        ("1.5e-7", "1.5e-7"),
        ("0.000001", "0.000001"),
        ("1e-6", "0.000001"),
        ("5e-324", "5e-324"),
        ("1.7976931348623157e308", "1.7976931348623157e+308"),
        ("1e400", "null"),
        ("-1e400", "null"),
        ("9007199254740993", "9007199254740992"),
        ("12345678901234567890", "12345678901234567000"),
        ("123456789012345678901234567890", "1.2345678901234568e+29"),
        ("-2.5", "-2.5"),
        ("100", "100"),
        ("0.30000000000000004", "0.30000000000000004"),
    ],
)
def test_numbers(literal: str, expected: str) -> None:
    assert js_stringify(json.loads(literal)) == expected


def test_huge_integer_beyond_double_range_is_null() -> None:
    assert js_number(10**400) == "null"
    assert js_number(-(10**400)) == "null"


def test_strings() -> None:
    assert js_string('a"b\\c') == '"a\\"b\\\\c"'
    assert js_string("\b\f\n\r\t\x00\x1f\x7f") == '"\\b\\f\\n\\r\\t\\u0000\\u001f\x7f"'
    assert js_string("é中😀\u2028") == '"é中😀\u2028"'
    assert js_string("\ud800") == '"\\ud800"'
    assert js_string("x\udfffy") == '"x\\udfffy"'
    assert js_string("\ud83d\ude00") == '"😀"'  # a pair is one character to JavaScript
    assert js_string("\udbff\ud800") == '"\\udbff\\ud800"'


def test_key_order_and_layout() -> None:
    value = json.loads('{"b":1,"10":2,"2":3,"01":4,"-1":5,"4294967294":6,"4294967295":7,"a":{"1":[],"0":{}}}')
    assert js_stringify(value) == (
        '{"2":3,"10":2,"4294967294":6,"b":1,"01":4,"-1":5,"4294967295":7,"a":{"0":{},"1":[]}}'
    )
    assert js_stringify(json.loads('{"a":1,"b":2,"a":3}')) == '{"a":3,"b":2}'
    assert js_stringify([None, True, False, [], {}]) == "[null,true,false,[],{}]"
    assert js_stringify("x") == '"x"'


def test_deep_nesting_does_not_recurse() -> None:
    deep: object = 1
    for _ in range(50_000):
        deep = [deep]
    assert js_stringify(deep) == "[" * 50_000 + "1" + "]" * 50_000


def test_not_json_raises_type_error() -> None:
    with pytest.raises(TypeError):
        js_stringify({"a": object()})


# -- against Node.js -------------------------------------------------------------------------------

_KEYS = ["a", "b", "0", "1", "2", "10", "01", "-1", "1.5", "4294967294", "4294967295", "__proto__", "é", "", " "]
_STRINGS = [
    "",
    "x",
    "é",
    "中文",
    "😀",
    "\\ud800",
    "\\udc00x",
    "\\ud83d\\ude00",
    "\\u0000",
    "\\u001f",
    "\\u007f",
    "\\b\\f",
    "\\n\\r\\t",
    '\\"',
    "\\\\",
    "\\u2028",
    "<|endoftext|>",
    "\\/",
]


def _number_literal(rnd: random.Random) -> str:
    kind = rnd.randrange(7)
    if kind == 0:
        return str(rnd.randint(-(10**25), 10**25))
    if kind == 1:
        bits = rnd.getrandbits(64)
        value = struct.unpack("<d", struct.pack("<Q", bits))[0]
        return repr(value) if value == value and abs(value) != float("inf") else "0"
    if kind == 2:
        return f"{rnd.randint(1, 999)}e{rnd.randint(-30, 30)}"
    if kind == 3:
        return f"{rnd.choice(['', '-'])}{rnd.randint(0, 99)}.{rnd.randint(0, 10**6):06d}"
    if kind == 4:
        return rnd.choice(["1e400", "-1e400", "-0", "-0.0", "5e-324", "1e21", "1e-7", "9007199254740993", "0.1"])
    if kind == 5:
        return f"{rnd.random() * 10 ** rnd.randint(-10, 25)!r}"
    return str(rnd.randint(-100, 100))


def _value_literal(rnd: random.Random, depth: int) -> str:
    pick = rnd.randrange(9 if depth < 4 else 6)
    if pick in (0, 1):
        return _number_literal(rnd)
    if pick == 2:
        return '"' + "".join(rnd.choice(_STRINGS) for _ in range(rnd.randint(0, 4))) + '"'
    if pick == 3:
        return rnd.choice(["true", "false", "null"])
    if pick in (4, 5):
        return _number_literal(rnd)
    if pick in (6, 7):
        keys = [rnd.choice(_KEYS) for _ in range(rnd.randint(0, 6))]
        return "{" + ",".join(f'"{k}":{_value_literal(rnd, depth + 1)}' for k in keys) + "}"
    return "[" + ",".join(_value_literal(rnd, depth + 1) for _ in range(rnd.randint(0, 4))) + "]"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_agrees_with_node() -> None:
    rnd = random.Random(20240601)
    cases = [_value_literal(rnd, 0) for _ in range(1500)]
    script = (
        "const lines=require('fs').readFileSync(0,'utf8').split('\\n').filter(Boolean);"
        "process.stdout.write(JSON.stringify(lines.map(l=>JSON.stringify(JSON.parse(JSON.parse(l))))));"
    )
    payload = "\n".join(json.dumps(c) for c in cases) + "\n"
    done = subprocess.run(["node", "-e", script], input=payload.encode(), capture_output=True, timeout=60, check=True)
    expected = json.loads(done.stdout)
    assert len(expected) == len(cases)
    mismatches = [(c, e, js_stringify(json.loads(c))) for c, e in zip(cases, expected, strict=True)]
    mismatches = [m for m in mismatches if m[1] != m[2]]
    assert mismatches == []
