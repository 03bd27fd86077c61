"""A value of the wrong type (a list or object where a string belongs, a number where a list
belongs, a huge number) is a `malformed` finding at its record, with its place, and the rest
of the file is still checked. Each case below crashed histview with "internal error" before
(TypeError: unhashable type, OverflowError, RecursionError) in detection, loading, the
dry-run diff or `check --json`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repair.formats import load_session
from tests.command import run
from tests.paths import SAMPLES


def write_json(tmp_path: Path, sample: str, mutate) -> str:
    doc = json.loads((SAMPLES / sample).read_text())
    mutate(doc)
    path = tmp_path / sample
    path.write_text(json.dumps(doc, indent=2))
    return str(path)


def write_jsonl(tmp_path: Path, sample: str, line: int, mutate) -> str:
    lines = (SAMPLES / sample).read_text().splitlines()
    rec = json.loads(lines[line - 1])
    mutate(rec)
    lines[line - 1] = json.dumps(rec, separators=(",", ":"))
    path = tmp_path / sample
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def check_lines(path: str, target: str | None = None) -> tuple[int, list[str]]:
    """check, check --json and the fix dry run; `target` a raw provider where the client
    target (the default) would make what the test breaks a warning (Codex skips an unreadable
    line, opencode answers an open call)."""
    opts = ["--target", target] if target else []
    code, out, err = run("check", *opts, path)
    assert err == "", err  # never "internal error"
    code_json, out_json, err_json = run("check", "--json", *opts, path)
    assert err_json == "" and code_json == code
    json.loads(out_json.splitlines()[0])
    code_fix, _, err_fix = run("fix", *opts, path)  # the dry run and its diff
    assert "internal error" not in err_fix
    return code, out.splitlines()


def assert_found(lines: list[str], path: str, *wanted: str) -> None:
    """Each wanted `WHERE: severity code` prefix (after the file name) is on some line."""
    got = [line[len(path) + 1 :] for line in lines if line.startswith(path + ":")]
    for w in wanted:
        assert any(g.startswith(w) for g in got), (w, got)


def set_at(doc, keys, value):
    for k in keys[:-1]:
        doc = doc[k]
    doc[keys[-1]] = value


# -------------------------------------------------------------------------- JSON documents

ANTHROPIC = "anthropic_parallel_results_split.json"
ROO = "roo_interrupted_then_continue.json"
OPENAI = "openai_chat_user_between_calls.json"
OPENCODE = "opencode_stuck_running.json"


@pytest.mark.parametrize(
    ("sample", "keys", "value", "where", "reason"),
    [
        # anthropic_list._classify: a block type that is a list (unhashable in a set lookup)
        (
            ANTHROPIC,
            ["messages", 6, "content", 0, "type"],
            [1, 2],
            "messages[6]",
            "content[0] has no type",
        ),
        # openai_chat._score_list: a role that is a list, asked of every JSON document
        (ANTHROPIC, ["messages", 5, "role"], ["user"], "messages[5]", "role a list is not user"),
        (ROO, [3, "content", 1, "type"], {"t": 1}, "messages[3]", "content[1] has no type"),
        # roo.meta.timestamp_seconds: ts beyond a float (OverflowError) is no timestamp
        (ROO, [5, "role"], {"r": 1}, "messages[5]", "role an object is not user"),
        # openai_chat: a role or content part type of the wrong type
        (OPENAI, ["messages", 6, "role"], ["assistant"], "messages[6]", "role is a list"),
        (
            OPENAI,
            ["messages", 1, "content"],
            [{"type": ["text"], "text": "x"}],
            "messages[1]",
            "content[0] is not a content part",
        ),
        (OPENAI, ["messages", 6, "content"], 7, "messages[6]", "content is a number"),
        # opencode._load_entry: role and tool status that are lists
        (OPENCODE, ["messages", 3, "info", "role"], ["user"], "messages[3]", "role is a list"),
        (
            OPENCODE,
            ["messages", 1, "parts", 1, "state", "status"],
            ["completed"],
            "messages[1]",
            "unknown status a list",
        ),
        (OPENCODE, ["messages", 4, "parts"], 3, "messages[4]", "parts is not a list"),
    ],
)
def test_odd_type_in_a_json_document_is_malformed_at_its_place(
    tmp_path, sample, keys, value, where, reason
):
    path = write_json(tmp_path, sample, lambda d: set_at(d, keys, value))
    code, lines = check_lines(path)
    assert code == 1
    assert_found(lines, path, f"{where}: error malformed")
    assert any(reason in line for line in lines if "malformed" in line), lines
    # the rest of the file is still checked: the sample's own finding is still there
    original = [
        line[len(str(SAMPLES / sample)) + 1 :].split(" ")[0:3]
        for line in run("check", str(SAMPLES / sample))[1].splitlines()
        if " error " in line or " warning " in line
    ]
    for where_, sev, code_ in original:
        if not where_.startswith(where + ".") and where_ != where + ":":
            assert_found(lines, path, f"{where_} {sev} {code_}")


@pytest.mark.parametrize(
    ("keys", "value"),
    [
        (["messages", 1, "info", "time", "created"], 10**400),  # beyond a float: OverflowError
        (["messages", 1, "info", "time", "created"], 1e300),  # a date no clock can show
        (["messages", 1, "parts", 1, "state", "time", "end"], 10**400),
    ],
)
def test_a_huge_timestamp_is_no_timestamp_and_the_file_is_checked(tmp_path, keys, value):
    def mutate(doc):
        set_at(doc, keys, value)
        set_at(doc, ["messages", 0, "parts", 0, "text"], "hi \ud800")  # the stdlib parser

    path = write_json(tmp_path, OPENCODE, mutate)
    code, lines = check_lines(path, "anthropic")
    assert code == 1
    assert_found(lines, path, "messages[2].parts[2]: error orphan-tool-use")


def test_a_huge_roo_ts_is_kept_exactly_and_ignored(tmp_path):
    path = write_json(tmp_path, ROO, lambda d: set_at(d, [2, "ts"], 10**40))
    code, lines = check_lines(path)
    assert code == 1
    session = load_session(path)
    assert session.messages[2].timestamp is None
    assert str(10**40).encode() in session.export_bytes()


def test_deep_nesting_in_a_dropped_block_shows_in_the_dry_run_and_the_report(tmp_path):
    deep: object = "x"
    for _ in range(300):
        deep = {"k": [deep]}

    def mutate(doc):
        doc[7]["content"][1]["input"] = deep  # the orphan call the fix drops

    path = write_json(tmp_path, ROO, mutate)
    code, out, err = run("fix", path, "--strategy", "orphan-tool-use=drop-tool-use")
    assert err == "" and "nested deeper than" in out
    fixed = tmp_path / "fixed.json"
    code, out, err = run(
        "fix", path, "-o", str(fixed), "--strategy", "orphan-tool-use=drop-tool-use"
    )
    assert (code, err) == (0, "")
    report = (tmp_path / "fixed.report.json").read_text()
    assert report.count('"k"') == 300


def test_check_json_with_a_lone_surrogate_in_an_unreadable_file(tmp_path):
    """The error line names the file, whose name holds an undecodable byte (a surrogate in
    Python's view): the JSON error object is still printed."""
    path = tmp_path / "x\udcff.json"
    path.write_bytes(b'{"editor": "\\ud800"}')
    code, out, err = run("check", "--json", str(path))
    assert code == 2 and len(err.splitlines()) == 1
    error = json.loads(out)["error"]
    assert "x<U+DCFF>.json" in error and "unknown format" in error


# -------------------------------------------------------------------------- JSONL files

CC = "claude_code_parallel_interrupted.jsonl"
CODEX = "codex_missing_output.jsonl"


@pytest.mark.parametrize(
    ("sample", "line", "keys", "value", "reason"),
    [
        # claude_code.adapter.is_record / claude_code.chain.build_graph: a type that is a list
        (CC, 11, ["type"], ["assistant"], "type is a list"),
        (CC, 2, ["type"], {"t": "user"}, "type is an object"),
        # isSidechain and parentUuid of the wrong type: Claude Code would read them otherwise
        (CC, 10, ["isSidechain"], ["yes"], "isSidechain is a list"),
        (CC, 12, ["parentUuid"], {"uuid": "x"}, "parentUuid is an object"),
        # claude_code.load: message.content a number
        (CC, 13, ["message", "content"], 5, "message.content is a number"),
        # codex detection: an envelope type that is a list
        (CODEX, 16, ["type"], ["response_item"], "type is a list"),
        (CODEX, 16, ["payload", "role"], {"r": 1}, "without a role"),
        (CODEX, 3, ["payload", "content"], 9, "content is a number"),
    ],
)
def test_odd_type_in_a_jsonl_record_is_malformed_at_its_line(
    tmp_path, sample, line, keys, value, reason
):
    path = write_jsonl(tmp_path, sample, line, lambda r: set_at(r, keys, value))
    code, lines = check_lines(path, "openai-responses" if sample == CODEX else None)
    assert code == 1
    assert_found(lines, path, f"{line}: error malformed")
    assert any(reason in ln for ln in lines if "malformed" in ln), lines
    if sample == CODEX and line != 14:
        assert_found(lines, path, "14: error orphan-tool-use")


async def test_tui_exports_a_dropped_block_nested_256_deep(tmp_path):
    """The TUI's export writes the report of a dropped block nested deeper than orjson
    writes (it crashed), and the repair preview of such a block shows."""
    from tests.tui.tui_helpers import wait_ready
    from tui.app import HistviewApp

    deep: object = "bottom"
    for _ in range(256):
        deep = [deep]
    doc = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "done"},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_gone", "content": [deep]},
                {"type": "text", "text": "thanks"},
            ],
        },
    ]
    src = tmp_path / "s.json"
    src.write_text(json.dumps(doc))
    app = HistviewApp(str(src))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        await pilot.press("r")
        await pilot.pause()
        assert "nested deeper than" in str(app.main.query_one("#diff").render())
        await pilot.press("A")
        await pilot.pause()
        app.main._do_export(str(tmp_path / "out.json"), str(tmp_path / "out.report.json"))
        await pilot.pause()
        assert app.main.exported is app.main.wb.session
    report = json.loads((tmp_path / "out.report.json").read_text())
    assert json.dumps(report).count("[") >= 256 and "bottom" in json.dumps(report)
    assert b"toolu_gone" not in (tmp_path / "out.json").read_bytes()


def test_a_dropped_claude_code_line_that_is_not_json_keeps_its_text_in_the_report(tmp_path):
    lines = (SAMPLES / CC).read_text().splitlines()
    cut = lines[10][: len(lines[10]) // 2]  # a record cut off mid-line (a crash while writing)
    lines[10] = cut
    path = tmp_path / CC
    path.write_text("\n".join(lines) + "\n")
    code, lines_out = check_lines(str(path))
    assert code == 1
    assert_found(lines_out, str(path), "11: error malformed")
    out = tmp_path / "fixed.jsonl"
    code, _, err = run("fix", str(path), "-o", str(out), "--strategy", "malformed=drop")
    assert err == "" and code in (0, 1)
    report = json.loads((tmp_path / "fixed.report.json").read_text())
    assert cut in [e.get("removed") for e in report["edits"]]


def test_an_opencode_tool_state_time_that_is_not_an_object_is_malformed(tmp_path):
    """Closing the part would have replaced the value (a fix rewrites `time`)."""
    keys = ["messages", 2, "parts", 2, "state", "time"]
    path = write_json(tmp_path, OPENCODE, lambda d: set_at(d, keys, "\u115f"))
    code, lines = check_lines(path)
    assert code == 1
    assert_found(lines, path, "messages[2]: error malformed")
    assert any("state.time that is a string" in line for line in lines)


@pytest.mark.parametrize(
    "target", ["anthropic", "openai-chat", "openai-responses", "gemini", "bedrock"]
)
def test_messages_renders_text_blocks_without_text_or_with_a_list_in_every_wire_shape(
    tmp_path, target
):
    """`histview messages` under each wire shape: a text block without `text` (Responses:
    KeyError) and one whose text is a list (Chat joins the texts: TypeError) are rendered
    as they are, never an internal error (found by the fuzzer)."""
    doc = [
        {"role": "user", "content": [{"type": "text"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": ["x"]},
                {"type": "tool_use", "id": "t1", "name": "n", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text"}]}
            ],
        },
    ]
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(doc))
    for opts in ((), ("--json",)):
        code, out, err = run("messages", *opts, "--target", target, str(path))
        assert (code, err) == (0, ""), err
    assert json.loads(out)
    assert '["x"]' in out


def _codex_part(tmp_path, ptype):
    lines = (SAMPLES / CODEX).read_text().splitlines()
    rec = json.loads(lines[2])
    rec["payload"]["content"][0]["type"] = ptype
    lines[2] = json.dumps(rec, separators=(",", ":"))
    path = tmp_path / CODEX
    path.write_text("\n".join(lines) + "\n")
    return path


def _openai_part(tmp_path, ptype):
    doc = json.loads((SAMPLES / OPENAI).read_text())
    doc["messages"][1]["content"] = [{"type": ptype, "text": "hello"}]
    path = tmp_path / OPENAI
    path.write_text(json.dumps(doc))
    return path


def _gemini_part(tmp_path, ptype):
    lines = (SAMPLES / "gemini_cli_doubled_after_resume.jsonl").read_text().splitlines()
    at = max(i for i, ln in enumerate(lines) if ln.startswith('{"id"') and '"type":"user"' in ln)
    rec = json.loads(lines[at])
    rec["content"].append({ptype: {"id": "x"}})
    lines[at] = json.dumps(rec, separators=(",", ":"))
    path = tmp_path / "gemini.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("ptype", ["tool_use", "tool_result"])
@pytest.mark.parametrize("make", [_codex_part, _openai_part, _gemini_part])
def test_a_part_typed_like_a_call_or_result_in_a_format_without_such_parts_is_neither(
    tmp_path, make, ptype
):
    """A Codex message part, an OpenAI content part or a Gemini part named `tool_use` or
    `tool_result` is no call and no result (it passed for an id-less call in a user message;
    its fix wrote an output for a call that does not exist, and a second fix dropped it:
    found by the fuzzer). It is shown under its format's name and written back."""
    path = make(tmp_path, ptype)
    # an Anthropic block in an OpenAI list makes it a hybrid the anthropic adapter reads
    fmt = ["--format", "openai-chat"] if make is _openai_part else []
    session = load_session(str(path), format=fmt[1] if fmt else None)
    kinds = {b.type for m in session.messages for b in m.blocks}
    assert any(k.endswith(" " + ptype) for k in kinds), kinds
    code, out, err = run("check", *fmt, str(path))
    assert err == "" and "invalid-tool-id" not in out and "wrong-role-block" not in out
    assert run("fix", *fmt, str(path), "-o", str(tmp_path / ("o" + path.suffix)))[0] in (0, 1)
    assert ptype.encode() in (tmp_path / ("o" + path.suffix)).read_bytes()
