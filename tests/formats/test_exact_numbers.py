"""Numbers and text come back exactly as read: integers beyond 64 bits, floats a double
cannot hold (or would print differently) and lone surrogates survive load, check, fix, the
output and the report, in every writer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from repair import jsonio
from repair.formats import load_session
from repair.jsonio import (
    JsonNumber,
    JsonStyle,
    compact,
    dumps,
    has_inexact_numbers,
    loads,
    to_json,
)
from repair.workbench import Workbench
from tests.command import run
from tests.paths import SAMPLES

BIG = "123456789012345678901234567890"
ODD = (BIG, "-123456789012345678901234567890", "1e400", "-1e400", "1e-400", "1E2", "1.50")
ODD += ("-0", "0.0000015", "100000000000000000000", "NaN", "Infinity")


# ------------------------------------------------------------------ the reader and writers


@pytest.mark.parametrize("literal", ODD)
def test_a_literal_orjson_would_change_is_kept_and_written_verbatim(literal):
    text = f'{{"a":[1,{literal}],"b":{literal},"s":"x"}}'.encode()
    obj = loads(text)
    assert obj["b"] == JsonNumber(literal)
    assert compact(obj) == text
    assert to_json(obj) == text
    assert dumps(obj, JsonStyle()) == text
    spaced = dumps(obj, JsonStyle(item_sep=", ", key_sep=": ", ensure_ascii=True))
    assert spaced == f'{{"a": [1, {literal}], "b": {literal}, "s": "x"}}'.encode()
    assert f'"b": {literal}'.encode() in dumps(obj, JsonStyle(indent=2))
    assert f'"b": {literal}'.encode() in dumps(obj, JsonStyle(indent="\t"))


@pytest.mark.parametrize("literal", ("1", "-1", "1.5", "0.1", "1e+16", "18446744073709551615"))
def test_numbers_orjson_keeps_stay_numbers(literal):
    text = f'{{"n":{literal}}}'.encode()
    assert not has_inexact_numbers(text)
    assert isinstance(loads(text)["n"], int | float)
    assert compact(loads(text)) == text


def test_digits_inside_strings_do_not_count_as_numbers():
    assert not has_inexact_numbers(b'{"timestamp":"2025-11-20T09:14:28.120Z"}')
    # prose that looks like a number only costs the exact parse; the string is a string
    text = b'{"text":"a: 1.50 b","n":1}'
    assert loads(text) == {"text": "a: 1.50 b", "n": 1}
    assert compact(loads(text)) == text


def test_lone_surrogates_are_written_as_the_escapes_they_were_read_from():
    obj = loads(b'{"t":"a\\ud800b","u":"\\udfff"}')
    assert obj["t"] == "a\ud800b"
    for out in (compact(obj), to_json(obj), dumps(obj, JsonStyle(indent=2))):
        assert b"\\ud800" in out and b"\\udfff" in out
        assert loads(out) == obj
        out.decode("utf-8")  # valid UTF-8: a surrogate never reaches the file as raw bytes


def test_nesting_deeper_than_orjson_writes_is_written_by_the_stdlib():
    deep = "[" * 600 + "1e400" + "]" * 600
    obj = loads(deep.encode())
    assert compact(obj) == deep.encode()


# ------------------------------------------------------------------ through load, fix, report

TOOL_INPUT = f'{{"command":"ls","n":{BIG},"f":1e400,"g":1.50}}'


def roo_file(tmp_path: Path) -> Path:
    """A Roo history whose first message is untouched by the fix and whose second is edited
    (its orphan tool_use gets a result in the next message, or is dropped)."""
    text = (
        "["
        f'{{"role":"user","content":[{{"type":"text","text":"<task>go</task>"}}],"ts":{BIG}}},'
        '{"role":"assistant","content":[{"type":"text","text":"Running."},'
        f'{{"type":"tool_use","id":"toolu_1","name":"Bash","input":{TOOL_INPUT}}}],"ts":1e400}},'
        '{"role":"user","content":[{"type":"text","text":"continue \\ud800"}],"ts":1.50}'
        "]"
    )
    path = tmp_path / "api_conversation_history.json"
    path.write_bytes(text.encode())
    return path


def test_an_unchanged_file_is_written_back_byte_identical(tmp_path):
    path = roo_file(tmp_path)
    session = load_session(str(path))
    assert session.format == "roo"
    assert session.export_bytes() == path.read_bytes()


def test_a_fixed_file_keeps_every_literal_in_touched_and_untouched_records(tmp_path):
    path = roo_file(tmp_path)
    out = tmp_path / "fixed.json"
    code, stdout, err = run("fix", str(path), "-o", str(out))
    assert err == ""
    assert code == 0, stdout
    written = out.read_bytes()
    assert written != path.read_bytes()
    assert f'"ts":{BIG}'.encode() in written  # untouched message
    assert TOOL_INPUT.encode() in written  # the edited message keeps its tool input
    assert b'"ts":1e400' in written and b'"ts":1.50' in written
    assert b"continue \\ud800" in written
    assert b"1.2345678901234568e" not in written and b"Infinity" not in written
    again = load_session(str(out))
    assert again.export_bytes() == written


def test_the_report_keeps_a_dropped_blocks_numbers_exactly(tmp_path):
    path = roo_file(tmp_path)
    out = tmp_path / "fixed.json"
    code, _, err = run(
        "fix", str(path), "-o", str(out), "--strategy", "orphan-tool-use=drop-tool-use"
    )
    assert (code, err) == (0, "")
    report = (tmp_path / "fixed.report.json").read_bytes()
    assert b"toolu_1" not in out.read_bytes()
    assert f'"n": {BIG}'.encode() in report
    assert b'"f": 1e400' in report and b'"g": 1.50' in report
    json.loads(report)  # the stdlib reads it (1e400 as inf): valid JSON text


def test_check_json_keeps_lone_surrogates_and_prints_valid_json(tmp_path):
    doc = (
        '[{"role":"user","content":"hi"},'
        '{"role":"assistant","content":[{"type":"tool_use","id":"toolu_\\ud800","name":"x",'
        '"input":{}}]},{"role":"user","content":"and?"}]'
    )
    path = tmp_path / "s.json"
    path.write_bytes(doc.encode())
    code, out, err = run("check", "--json", str(path))
    assert err == "" and code == 1
    found = json.loads(out)
    assert found["findings"][0]["tool_use_id"] == "toolu_\ud800"
    code, out, err = run("check", str(path))
    assert err == "" and "toolu_<U+D800>" in out


def test_jsonl_keeps_untouched_lines_and_rewrites_touched_ones_exactly(tmp_path):
    lines = (SAMPLES / "codex_missing_output.jsonl").read_bytes().split(b"\n")
    # a number beyond 64 bits in an untouched line, and in the call that gets an output
    first = json.loads(lines[0])
    first["payload"]["big"] = "BIG"
    lines[0] = json.dumps(first, separators=(",", ":")).replace('"BIG"', BIG).encode()
    call = next(i for i, ln in enumerate(lines) if b'"function_call"' in ln and b"call_id" in ln)
    lines[call] = lines[call].replace(
        b'"type":"function_call"', b'"n":1e400,"type":"function_call"'
    )
    path = tmp_path / "rollout-x.jsonl"
    path.write_bytes(b"\n".join(lines))
    session = load_session(str(path))
    assert session.export_bytes() == path.read_bytes()
    out = tmp_path / "fixed.jsonl"
    code, _, err = run("fix", str(path), "-o", str(out))
    assert err == "" and code in (0, 1)
    written = out.read_bytes()
    assert lines[0] in written.split(b"\n")
    assert b'"n":1e400' in written
    wb = Workbench(load_session(str(out)))
    assert wb.apply_all() is None


def test_claude_code_record_whose_uuid_holds_a_lone_surrogate_is_fixed(tmp_path):
    """The new result record's uuid is derived from its parent's: hashing a surrogate crashed."""
    lines = (SAMPLES / "claude_code_parallel_interrupted.jsonl").read_text().splitlines()
    # the last record of the assistant turn: the new result record hangs under it
    target = next(i for i, ln in enumerate(lines) if '"id":"toolu_01mEHgaKwVJ7faC9qEwjky40"' in ln)
    old = json.loads(lines[target])["uuid"]
    text = "\n".join(lines).replace(f'"{old}"', '"a\\ud800b"') + "\n"
    path = tmp_path / "s.jsonl"
    path.write_text(text)
    out = tmp_path / "fixed.jsonl"
    code, stdout, err = run("fix", str(path), "-o", str(out))
    assert err == "" and code == 0, stdout
    written = out.read_bytes()
    written.decode("utf-8")  # no raw surrogate in the file
    assert b'"a\\ud800b"' in written
    assert run("check", str(out))[0] == 0


# ------------------------------------------------------------------ what the provider receives

WIRE_FILE = {
    "model": "claude",
    "messages": [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "x", "input": {"n": "@N", "s": "@S"}}
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": {"n": "@B"}}],
        },
    ],
}


# where each wire shape carries the call's input (as JSON, or as JSON text in `arguments`)
CALL_INPUT = {
    "anthropic": lambda b: b["messages"][1]["content"][0]["input"],
    "bedrock": lambda b: b["messages"][1]["content"][0]["toolUse"]["input"],
    "gemini": lambda b: b["contents"][1]["parts"][0]["functionCall"]["args"],
    "openai-chat": lambda b: loads(b["messages"][1]["tool_calls"][0]["function"]["arguments"]),
    "openai-responses": lambda b: loads(b["input"][1]["arguments"]),
}


@pytest.mark.parametrize("target", list(CALL_INPUT))
def test_messages_writes_every_wire_shape_with_numbers_and_surrogates_as_read(tmp_path, target):
    """`histview messages` under each wire shape, a call's input and a result's content
    holding 1e400, an int beyond 64 bits and a lone surrogate (the Chat, Responses, Gemini
    and Bedrock renderers crashed: orjson cannot write them)."""
    text = json.dumps(WIRE_FILE).replace('"@N"', "1e400").replace('"@B"', BIG)
    path = tmp_path / "a.json"
    path.write_text(text.replace('"@S"', '"a\\ud800"'))
    code, out, err = run("messages", "--target", target, str(path))
    assert (code, err) == (0, "")
    assert '{"n":1e400,"s":"a\\ud800"}' in out
    code, out, err = run("messages", "--json", "--target", target, str(path))
    assert (code, err) == (0, "")
    body = loads(out.splitlines()[0])
    assert CALL_INPUT[target](body) == {"n": JsonNumber("1e400"), "s": "a\ud800"}
    assert BIG in out  # the result's content, as JSON or as its text


@given(
    st.lists(
        st.one_of(
            st.integers(min_value=-(2**70), max_value=2**70).map(str),
            st.floats(allow_nan=False, allow_infinity=False).map(repr),
            st.sampled_from(["-0", "1E2", "1.50", "0.000001", "1e-5", '"a:1.5"', '"x,2"']),
        ),
        max_size=8,
    ),
    st.sampled_from([",", ", ", ",\n  "]),
)
def test_a_short_text_is_scanned_for_the_same_number_tokens_as_a_long_one(items, sep):
    """A record or a call's arguments is scanned in one pass, a whole file in three: both
    find the same number literals (so the same ones are kept exactly)."""
    data = ("[" + sep.join(items) + "]").encode()
    one = sorted(jsonio._TOKEN_AFTER_ANY.findall(data))
    three = sorted(t for rx in jsonio._TOKEN_AFTER.values() for t in rx.findall(data))
    assert one == three


# ------------------------------------------------------------------ check: no scan


def test_check_reads_without_the_number_scan_and_finds_what_an_exact_load_finds(
    tmp_path, monkeypatch
):
    """`check` writes no number of the session, so it does not pay the whole-file scan for
    odd literals (issue 12): the numbers are what orjson reads (as the clients'
    `JSON.parse` does) and what orjson refuses is still read. The findings are those of
    the exact load; `fix` still writes every literal back (the tests above)."""
    from repair.analysis import analyze

    roo = roo_file(tmp_path)
    codex = tmp_path / "rollout-x.jsonl"
    lines = (SAMPLES / "codex_missing_output.jsonl").read_bytes().split(b"\n")
    lines[0] = lines[0].replace(b'"payload":{', b'"payload":{"n":1.50,"big":' + BIG.encode() + b",")
    codex.write_bytes(b"\n".join(lines))
    # a call with numbers in its arguments, its blocks made during the analysis (a finding)
    chat = tmp_path / "chat.json"
    chat.write_bytes(
        (SAMPLES / "openai_chat_user_between_calls.json")
        .read_bytes()
        .replace(b'\\"day\\": \\"tomorrow\\"}', b'\\"days\\": 1.50}', 1)
    )
    assert b"1.50" in chat.read_bytes()
    files = (roo, codex, chat)
    exact = {p: analyze(load_session(str(p))) for p in files}

    def scan(data: bytes) -> bool:
        raise AssertionError("check scanned the text for number literals")

    monkeypatch.setattr(jsonio, "has_inexact_numbers", scan)
    monkeypatch.setattr("repair.formats.probe.has_inexact_numbers", scan)
    for path in files:
        fast = analyze(load_session(str(path), exact_numbers=False))
        assert [f.to_json() for f in fast.findings] == [f.to_json() for f in exact[path].findings]
        code, out, err = run("check", "--json", str(path))
        assert (code, err) == (1 if exact[path].errors else 0, "")
        assert json.loads(out)["findings"] == [f.to_json() for f in exact[path].findings]
    # what orjson refuses (1e400, NaN) is read by the exact parser, not refused
    assert load_session(str(roo), exact_numbers=False).messages[1].raw["ts"] == JsonNumber("1e400")


_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([JsonNumber(t) for t in ODD if t not in ("NaN", "Infinity")])
    | st.text()
    | st.sampled_from(["\ud800", "a\udfffb"]),  # lone surrogates: the stdlib writes them
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=12,
)


@given(value=_VALUES, indent=st.booleans())
def test_json_written_with_its_newline_is_the_json_then_a_newline(value, indent):
    """A report is encoded with its final newline (not copied to add it): the same bytes."""
    assert to_json(value, indent, newline=True) == to_json(value, indent) + b"\n"


def test_blocks_made_after_the_load_parse_numbers_as_the_load_did(tmp_path):
    """A call's arguments parsed when its blocks are first asked for (OpenAI Chat, Codex)
    keep literals exactly when the session was read keeping them, wherever they are asked
    for, and are what orjson reads when it was read without the scan."""
    chat = tmp_path / "chat.json"
    chat.write_bytes(
        (SAMPLES / "openai_chat_user_between_calls.json")
        .read_bytes()
        .replace(b'\\"day\\": \\"tomorrow\\"}', b'\\"days\\": 1.50}', 1)
    )

    def days(session) -> Any:
        call = next(b for m in session.messages for b in m.blocks if b.tool_id)
        return call.data["input"]["days"]

    exact = load_session(str(chat))
    with jsonio.numbers_as_parsed():  # asked for first inside a reader that does not scan
        assert days(exact) == JsonNumber("1.50")
    fast = load_session(str(chat), exact_numbers=False)
    assert days(fast) == 1.5 and type(days(fast)) is float
