"""`histview check` and `histview fix` as a user runs them (README, Command line): the lines printed, the
files written (or not), the exit status."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

import repair.cli as cli
import repair.preview as preview
from repair.codes import CODES
from tests.command import run
from tests.paths import CLIENT_FIXTURES, README, REPO, SAMPLES, sample_files
from tui.cli import main

TOOL_USE = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
# An interrupted call (the user typed "continue") and a result for a call that never was.
BROKEN = [
    {"role": "user", "content": "list the files"},
    {"role": "assistant", "content": [{"type": "text", "text": "Listing."}, TOOL_USE]},
    {"role": "user", "content": [{"type": "text", "text": "continue"}]},
    {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_9", "content": "stale"},
            {"type": "text", "text": "and now?"},
        ],
    },
    {"role": "assistant", "content": [{"type": "text", "text": "Anything else?"}]},
]
CLEAN = [
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": [TOOL_USE]},
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a"}],
    },
    {"role": "assistant", "content": "one file"},
]


def write(path: Path, doc) -> str:
    path.write_text(json.dumps(doc, indent=2) + "\n")
    return str(path)


@pytest.fixture
def broken(tmp_path) -> str:
    return write(tmp_path / "broken.json", BROKEN)


@pytest.fixture
def clean(tmp_path) -> str:
    return write(tmp_path / "clean.json", CLEAN)


def files_in(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


# ---------------------------------------------------------------- check


def test_check_prints_file_where_severity_code_detail_and_a_summary(broken):
    code, out, err = run("check", broken)
    assert code == 1 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith(f"{broken}:messages[1].content[1]: error orphan-tool-use ")
    assert "toolu_1" in lines[0]
    assert lines[1].startswith(f"{broken}:messages[4].content[0]: error orphan-tool-result ")
    assert "toolu_9" in lines[1]
    assert lines[-1] == (
        f"{broken}: 2 errors, 0 warnings, 0 info (6 messages, format anthropic, target anthropic)"
    )
    assert "\x1b" not in out  # not a terminal: no colour


def test_check_clean_file_exits_0(clean):
    code, out, _ = run("check", clean)
    assert code == 0
    assert out.strip() == f"{clean}: no problems (4 messages, format anthropic, target anthropic)"


def test_check_several_files_keeps_going_after_an_unreadable_one(tmp_path, broken, clean):
    bad = tmp_path / "bad.json"
    bad.write_text('[{"role": "user", "content": "hi"},\n  {"role": ')
    code, out, err = run("check", clean, str(bad), broken)
    assert code == 2  # unreadable wins over findings
    assert f"{clean}: no problems" in out
    assert f"{broken}: 2 errors" in out
    (line,) = err.splitlines()
    assert line.startswith(f"histview: {bad}:line 2") and "not JSON" in line
    assert "Traceback" not in out + err


def test_check_several_clean_and_broken_files_exit_1(broken, clean):
    assert run("check", clean, broken)[0] == 1


def test_check_json_one_object_per_file_per_line_in_the_spec_shape(tmp_path, broken, clean):
    missing = str(tmp_path / "gone.json")
    code, out, _ = run("check", broken, missing, clean, "--json")
    assert code == 2
    objs = [json.loads(line) for line in out.splitlines()]
    assert [o["file"] for o in objs] == [broken, missing, clean]
    first = objs[0]
    assert set(first) == {"file", "format", "target", "messages", "findings", "summary"}
    assert first["messages"] == 6 and first["format"] == "anthropic"
    assert first["summary"] == {"orphan-tool-use": 1, "orphan-tool-result": 1}
    f = first["findings"][0]
    assert set(f) == {
        "code", "severity", "message_index", "block_index", "tool_use_id", "detail", "rule",
        "source", "client_repair",
    }  # fmt: skip
    assert f["client_repair"] is None  # anthropic is a provider: nobody repairs on the way
    assert (f["code"], f["message_index"], f["block_index"], f["tool_use_id"]) == (
        "orphan-tool-use", 1, 1, "toolu_1",
    )  # fmt: skip
    assert f["client_repair"] is None  # a provider target: nobody repairs it on the way
    assert f["source"] == {"path": "/1/content/1"}
    assert objs[1] == {"file": missing, "error": f"{missing}: no such file or folder"}
    assert objs[2]["findings"] == [] and objs[2]["summary"] == {}


def test_check_target_bedrock_makes_split_turns_errors(tmp_path):
    doc = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [TOOL_USE, {**TOOL_USE, "id": "toolu_2"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_2", "content": "b"}]},
        {"role": "assistant", "content": "ok"},
    ]  # fmt: skip
    path = write(tmp_path / "split.json", doc)
    code, out, _ = run("check", path)
    assert code == 0 and "warning misplaced-tool-result" in out
    code, out, _ = run("check", path, "--target", "bedrock")
    assert code == 1 and "error misplaced-tool-result" in out and "target bedrock" in out


def test_check_jsonl_findings_name_the_line(tmp_path):
    lines = [
        {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s",
         "timestamp": "2026-01-01T00:00:00.000Z", "message": {"role": "user", "content": "ls"}},
        {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": "s",
         "timestamp": "2026-01-01T00:00:01.000Z",
         "message": {"id": "msg_1", "role": "assistant", "content": [TOOL_USE]}},
        {"type": "user", "uuid": "u2", "parentUuid": "a1", "sessionId": "s",
         "timestamp": "2026-01-01T00:00:02.000Z",
         "message": {"role": "user", "content": "continue"}},
    ]  # fmt: skip
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    # judged as Claude Code sends it: it leaves the unanswered call out (a warning), so the
    # call's message is not in the request at all (no messages.N; the line says where)
    code, out, _ = run("check", str(path))
    assert code == 0
    assert out.splitlines()[0].startswith(f"{path}:2: warning orphan-tool-use ")
    code, out, _ = run("check", str(path), "--json")
    (f,) = json.loads(out)["findings"]
    assert f["message_index"] is None and f["source"] == {"line": 2}
    assert f["client_repair"].startswith("Claude Code 2.1.197 leaves this unanswered call out")
    # the raw history, for another reader: the Anthropic API refuses it
    code, out, _ = run("check", str(path), "--target", "anthropic")
    assert code == 1
    assert out.splitlines()[0].startswith(f"{path}:2: error orphan-tool-use ")
    assert out.splitlines()[0].endswith("(message 1)")


def test_colour_only_on_a_terminal_and_never_from_session_text(tmp_path):
    evil = "toolu_\x1b[2J\x1b]0;pwned\x07"
    doc = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{**TOOL_USE, "id": evil}]},
        {"role": "user", "content": "continue"},
    ]
    path = write(tmp_path / "evil.json", doc)

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Tty()
    assert cli.main(["check", path], stdout=out, stderr=io.StringIO()) == 1
    text = out.getvalue()
    assert "\x1b[1;31merror\x1b[0m" in text  # histview's own colour on the severity
    assert "\x1b[2J" not in text and "\x07" not in text  # the session's escapes are neutered
    assert "toolu_␛[2J␛]0;pwned␇" in text


def test_no_color_env_turns_colour_off(tmp_path, monkeypatch, broken):
    monkeypatch.setenv("NO_COLOR", "1")

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Tty()
    cli.main(["check", broken], stdout=out, stderr=io.StringIO())
    assert "\x1b" not in out.getvalue()


def test_unexpected_failure_is_one_line_naming_the_file(monkeypatch, broken, clean):
    import repair.analysis

    real = repair.analysis.analyze

    def explode(session, target=None):
        if session.path == broken:
            raise ZeroDivisionError("boom")
        return real(session, target)

    monkeypatch.setattr(repair.analysis, "analyze", explode)
    code, out, err = run("check", broken, clean)
    assert code == 2
    assert err == f"histview: {broken}: internal error: ZeroDivisionError: boom\n"
    assert f"{clean}: no problems" in out  # the next file is still checked


@pytest.mark.parametrize(
    "data, says",
    [
        (b"", "the file is empty"),
        (b"\x00\x01\x02binary", "binary"),
        (b'{"hello": "world"}', "unknown format"),
        (b"[" * 100_000 + b"]" * 100_000, "nesting"),
    ],
)
def test_bad_input_is_one_line_exit_2_no_traceback(tmp_path, data, says):
    path = tmp_path / "in.json"
    path.write_bytes(data)
    for argv in (["check", str(path)], ["fix", str(path), "--in-place"]):
        code, out, err = run(*argv)
        assert code == 2
        assert len(err.splitlines()) == 1 and err.startswith(f"histview: {path}")
        assert says in err and "Traceback" not in err
    assert files_in(tmp_path) == {"in.json": data}  # nothing written


# ---------------------------------------------------------------- fix


def test_fix_is_a_dry_run_printing_plan_and_diff(tmp_path, broken):
    before = files_in(tmp_path)
    code, out, err = run("fix", broken)
    assert code == 0 and err == ""
    assert files_in(tmp_path) == before
    lines = out.splitlines()
    assert lines[0] == (
        f"{broken}:messages[1].content[1]: orphan-tool-use -> insert-result: Insert a synthetic "
        "error result for toolu_1 into message 2."
    )
    assert lines[1].startswith(f"{broken}:messages[4].content[0]: orphan-tool-result -> drop: ")
    # what happens to the blocks, then the entries of the document written differently
    assert "# Add result toolu_1 to message 2, at its start." in lines
    assert "@@ messages[2] @@" in lines
    assert '+      "tool_use_id": "toolu_1",' in lines
    assert '-      "tool_use_id": "toolu_9",' in lines
    assert lines[-1].startswith(f"{broken}: dry run, nothing written: 2 fixes; after them 0 errors")


def test_fix_output_writes_repaired_copy_and_report(tmp_path, broken):
    out_path = tmp_path / "repaired.json"
    code, out, _ = run("fix", broken, "-o", str(out_path))
    assert code == 0
    report = tmp_path / "repaired.report.json"
    assert out.splitlines()[-1] == (
        f"{broken}: wrote {out_path} (2 fixes, report {report}); now 0 errors, 0 warnings, 0 info"
    )
    assert json.loads(Path(broken).read_text()) == BROKEN  # the input is untouched
    assert run("check", str(out_path))[0] == 0
    doc = json.loads(report.read_text())
    removed = [e["removed"] for e in doc["edits"] if "removed" in e]
    assert {"type": "tool_result", "tool_use_id": "toolu_9", "content": "stale"} in removed


def _fixed(path: Path, tmp_path: Path) -> tuple[list[dict], bytes]:
    """The merge entries of the report `fix path -o OUT` writes, and OUT's bytes."""
    out, report = tmp_path / f"o{path.suffix}", tmp_path / f"r{path.suffix}.json"
    assert run("fix", path, "-o", out, "--report", report)[0] == 0
    edits = json.loads(report.read_text())["edits"]
    return [e for e in edits if e["action"] == "merge_messages"], out.read_bytes()


def test_fix_report_lists_a_merged_message_the_file_does_not_keep_as_removed(tmp_path):
    """Where the written file does not hold the second of two merged messages, the report
    keeps it under the merge's "removed": a JSON list writes the merged message as the
    first's entry (a Codex rollout writes the second's lines as read:
    tests/engine/test_merge_clients.py; Claude Code: the test below)."""
    sample = SAMPLES / "bedrock_parallel_results_split.json"
    merges, written = _fixed(sample, tmp_path)
    second = json.loads(sample.read_text())[3]
    assert [e["removed"] for e in merges] == [second]
    assert second not in json.loads(written)


def _records(data: bytes) -> dict[str, dict]:
    """A Claude Code file's records by uuid."""
    return {r["uuid"]: r for r in map(json.loads, data.splitlines()) if "uuid" in r}


@pytest.mark.parametrize("same_id", [True, False])
def test_a_claude_code_merge_reports_what_the_writer_did_with_the_second_record(tmp_path, same_id):
    """Two assistant records split by a user record of whitespace (line 8): the fix drops
    it and merges the two. The second record (line 9) stays in the written file: as read
    when both records have one message id (only re-linked to line 7), else rewritten with
    the first's id. The report says so from the writer's account: the merge entry removes
    nothing; dropped_records lists line 8 deleted, and line 9 "rewritten", whole as read
    (its own id msg_01T), only where it was rewritten. Before, the merge entry listed line 9
    as removed either way."""
    cc = CLIENT_FIXTURES / "claude" / "broken" / "whitespace-user-text.jsonl"
    data = cc.read_bytes()
    if same_id:
        data = data.replace(b'"msg_01T"', b'"msg_01R"')
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    second = json.loads(data.splitlines()[8])  # line 9
    merges, written = _fixed(path, tmp_path)
    assert merges and all("removed" not in e for e in merges)
    now = _records(written)[second["uuid"]]
    assert now["message"]["content"] == second["message"]["content"]
    assert now["message"]["id"] == "msg_01R"
    report = json.loads((tmp_path / "r.jsonl.json").read_text())
    rewritten = [] if same_id else [(9, "rewritten", second)]
    assert [(r["line"], r["outcome"], r["record"]) for r in report["dropped_records"]] == [
        (8, "deleted", json.loads(data.splitlines()[7])),
        *rewritten,
    ]
    if same_id:  # as read but for its parent, which was line 8
        assert {**now, "parentUuid": second["parentUuid"]} == second


def test_fix_report_flag_names_the_report(tmp_path, broken):
    rep = tmp_path / "r" / "what-changed.json"
    rep.parent.mkdir()
    assert run("fix", broken, "-o", str(tmp_path / "o.json"), "--report", str(rep))[0] == 0
    assert json.loads(rep.read_text())["file"] == broken
    assert not (tmp_path / "o.report.json").exists()


def test_fix_dry_run_flag_wins_over_output(tmp_path, broken):
    before = files_in(tmp_path)
    code, out, _ = run("fix", broken, "-o", str(tmp_path / "o.json"), "--dry-run")
    assert code == 0 and "dry run, nothing written" in out
    assert files_in(tmp_path) == before


def test_fix_refuses_to_overwrite_an_existing_output(tmp_path, broken):
    target = tmp_path / "o.json"
    target.write_text("mine")
    code, out, err = run("fix", broken, "-o", str(target))
    assert code == 2 and out == ""
    assert (
        err
        == f"histview: {broken}: refused: {target} exists; refusing to overwrite it; nothing written\n"
    )
    assert target.read_text() == "mine"
    assert not (tmp_path / "o.report.json").exists()


def test_fix_in_place_keeps_numbered_backups(tmp_path, broken):
    original = Path(broken).read_bytes()
    code, out, _ = run("fix", broken, "--in-place")
    assert code == 0
    assert f"backup {broken}.bak" in out
    assert Path(broken + ".bak").read_bytes() == original
    assert run("check", broken)[0] == 0
    # A second breakage, a second repair: the first backup is kept, the new one is .bak.1
    second = json.loads(Path(broken).read_text()) + [
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x9", "content": "?"}]}
    ]
    write(Path(broken), second)
    assert run("fix", broken, "--in-place")[0] == 0
    assert Path(broken + ".bak").read_bytes() == original
    assert json.loads(Path(broken + ".bak.1").read_text()) == second


def test_fix_in_place_with_nothing_to_fix_writes_nothing(tmp_path, clean):
    before = files_in(tmp_path)
    code, out, _ = run("fix", clean, "--in-place")
    assert code == 0 and "nothing to fix; the file is unchanged" in out
    assert files_in(tmp_path) == before


def test_fix_in_place_refuses_when_the_file_changed_meanwhile(monkeypatch, tmp_path, broken):
    from repair.workbench import Workbench

    real = Workbench.apply_all

    def edited_by_the_agent_meanwhile(self, **kw):
        with open(broken, "a") as fh:
            fh.write(" ")
        return real(self, **kw)

    monkeypatch.setattr(Workbench, "apply_all", edited_by_the_agent_meanwhile)
    code, out, err = run("fix", broken, "--in-place")
    assert code == 2 and out == ""
    assert err == (
        f"histview: {broken}: refused: {broken} changed since it was read; load it again; "
        "nothing written\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.json"]


def test_fix_refuses_while_malformed_records_remain_unless_dropped(tmp_path):
    doc = CLEAN + [{"role": "user", "content": 42}, {"role": "assistant", "content": "ok"}]
    path = write(tmp_path / "m.json", doc)
    code, out, _ = run("fix", path)
    assert code == 1  # dry run: the malformed record is an error left as is
    # the line says how to fix it, as the refusal does
    assert "error malformed" in out and "[left as is; to fix it: --strategy malformed=drop]" in out
    code, _, err = run("fix", path, "-o", str(tmp_path / "o.json"))
    assert code == 2 and "refused: 1 malformed record(s) remain" in err
    assert "drop them first: --strategy malformed=drop" in err
    assert not (tmp_path / "o.json").exists()
    out_path = tmp_path / "o.json"
    code, _, _ = run("fix", path, "-o", str(out_path), "--strategy", "malformed=drop")
    assert code == 0
    assert {"role": "user", "content": 42} not in json.loads(out_path.read_text())


def test_fix_only_leaves_other_codes(tmp_path, broken):
    out_path = tmp_path / "o.json"
    code, out, _ = run("fix", broken, "--only", "orphan-tool-result", "-o", str(out_path))
    assert code == 1  # the orphan tool_use is still there
    assert "orphan-tool-result -> drop" in out
    assert "error orphan-tool-use" in out and "[left as is: not in --only]" in out
    codes = {f["code"] for f in json.loads(run("check", str(out_path), "--json")[1])["findings"]}
    assert codes == {"orphan-tool-use"}


def test_fix_strategy_picks_the_alternative(tmp_path, broken):
    out_path = tmp_path / "o.json"
    argv = ["fix", broken, "-o", str(out_path)]
    argv += ["--strategy", "orphan-tool-use=drop-tool-use,orphan-tool-result=to-text"]
    code, out, _ = run(*argv)
    assert code == 0
    doc = json.loads(out_path.read_text())
    text = json.dumps(doc)
    assert "toolu_1" not in text  # the unanswered call was dropped, not answered
    assert "stale" in text and '"tool_result"' not in text  # the orphan kept as text


@pytest.mark.parametrize(
    "flag, value, says",
    [
        ("--strategy", "orphan-tool-use=zap", "'zap' is not an action for orphan-tool-use; valid: insert-result, drop-tool-use"),
        ("--strategy", "nope=drop", "unknown finding code 'nope'; valid codes: " + ", ".join(CODES)),
        ("--strategy", "orphan-tool-use", "expected CODE=ACTION"),
        ("--only", "orphan-tool-use,nope", "unknown finding code 'nope'"),
    ],
)  # fmt: skip
def test_fix_bad_choices_are_one_line_errors_listing_the_valid_ones(broken, flag, value, says):
    code, out, err = run("fix", broken, flag, value)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and says in err


def test_fix_json_is_the_spec_shape(tmp_path, broken):
    code, out, _ = run("fix", broken, "--json")
    assert code == 0
    doc = json.loads(out)
    assert set(doc) == {"file", "output", "format", "target", "edits", "remaining"}
    assert doc["output"] is None  # dry run
    assert (doc["file"], doc["format"], doc["target"]) == (broken, "anthropic", "anthropic")
    for e in doc["edits"]:
        assert {"fix", "finding", "message_index", "tool_use_id", "action", "detail"} <= set(e)
        assert set(e) <= {
            "fix",
            "finding",
            "message_index",
            "tool_use_id",
            "action",
            "detail",
            "removed",
        }
    assert {e["finding"] for e in doc["edits"]} == {"orphan-tool-use", "orphan-tool-result"}
    assert doc["remaining"] == []
    out_path = tmp_path / "o.json"
    doc = json.loads(run("fix", broken, "-o", str(out_path), "--json")[1])
    assert doc["output"] == str(out_path) and out_path.exists()


def test_fix_exit_1_when_errors_remain_without_a_fix(tmp_path):
    doc = CLEAN + [{"role": "user", "content": 42}]
    path = write(tmp_path / "m.json", doc)
    assert run("fix", path, "--json")[0] == 1


def test_fix_output_and_in_place_are_exclusive(capsys, broken):
    with pytest.raises(SystemExit) as info:
        main(["fix", broken, "-o", "x.json", "--in-place"])
    assert info.value.code == 2
    assert "not allowed with" in capsys.readouterr().err


# ---------------------------------------------------------------- help


@pytest.mark.parametrize("command", cli.COMMANDS)
def test_every_subcommand_help_teaches_with_an_example(capsys, command):
    """What it does, an example, its exit status, and a line for each argument."""
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "examples:" in out
    assert (
        f"  histview {command} " in out
        or out.count(f"histview {command}") >= 2
        or (command == "open" and "  histview tasks/" in out)
    )
    assert "exit status" in out
    (parser,) = [
        p
        for a in cli.build_parser()._subparsers._group_actions  # type: ignore[union-attr]
        for name, p in a.choices.items()
        if name == command
    ]
    for action in parser._actions:
        assert action.help, f"{command}: {action.dest} has no help line"


def test_list_help_names_every_tool_it_looks_for(capsys):
    with pytest.raises(SystemExit):
        main(["list", "--help"])
    out = capsys.readouterr().out
    description = out.split("examples:")[0]
    for tool in ("Claude Code", "Codex", "Gemini CLI", "Roo Code", "Kilo Code", "Cline"):
        assert tool in description and tool in out.split("looks in:")[1]


def test_fix_help_says_how_to_resume_the_repaired_session(capsys):
    """The client resumes the file under its own name: the help says to repair it in place,
    and the command each client resumes with."""
    with pytest.raises(SystemExit):
        main(["fix", "--help"])
    out = capsys.readouterr().out
    resume = out.split("to resume", 1)[1]
    for command in ("--in-place", "claude --resume", "codex resume", "gemini --resume"):
        assert command in resume
    assert "opencode import" in resume


def test_fix_help_lists_the_actions_per_code(capsys):
    with pytest.raises(SystemExit):
        main(["fix", "--help"])
    out = capsys.readouterr().out
    assert "orphan-tool-use             insert-result, drop-tool-use" in out


def test_root_help_lists_every_command_with_a_line(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    listed = {}
    for line in out.splitlines():
        words = line.split(maxsplit=1)
        if line.startswith("    ") and len(words) == 2 and words[0] in cli.COMMANDS:
            listed[words[0]] = words[1]
    assert sorted(listed) == sorted(cli.COMMANDS)
    assert "(the default)" in listed["open"] or "default" in out.split("open", 1)[1]
    assert "--version" in out


def test_version_names_the_installed_package(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"histview {version('histview')}"


@pytest.mark.parametrize(
    "argv, file, fmt, target, pick",
    [
        ([], None, None, None, False),
        (["{f}"], "{f}", None, None, False),
        (["open", "{f}"], "{f}", None, None, False),
        (["--format", "roo", "{f}", "--target", "bedrock"], "{f}", "roo", "bedrock", False),
        (["--pick"], None, None, None, True),
    ],
)
def test_the_tui_is_the_default_command(tmp_path, argv, file, fmt, target, pick):
    f = tmp_path / "s.json"
    f.write_text(json.dumps(CLEAN))
    got = []

    def fake_tui(args):
        got.append((args.file, args.format, args.target, args.pick))
        return 7

    argv = [a.replace("{f}", str(f)) for a in argv]
    code = cli.main(argv, io.StringIO(), io.StringIO(), open_tui=fake_tui)
    assert code == 7
    assert got == [(str(f) if file else None, fmt, target, pick)]


def test_open_refuses_a_missing_file_before_the_tui(tmp_path):
    err = io.StringIO()
    got = []
    code = cli.main([str(tmp_path / "nope.json")], io.StringIO(), err, open_tui=got.append)
    assert code == 2 and got == []
    assert err.getvalue() == f"histview: {tmp_path / 'nope.json'}: no such file or folder\n"


# ---------------------------------------------------------------- samples


@pytest.mark.parametrize("sample", sample_files(), ids=lambda p: p.name)
def test_every_sample_checks_and_fixes_to_no_error(tmp_path, sample):
    code, out, err = run("check", str(sample), "--json")
    assert code in (0, 1) and err == ""
    objs = [json.loads(line) for line in out.splitlines()]
    fixed = tmp_path / ("fixed" + sample.suffix)
    code, out, err = run("fix", str(sample), "-o", str(fixed), "--json")
    assert err == ""
    doc = json.loads(out)
    assert doc["output"] == str(fixed)
    assert [f for f in doc["remaining"] if f["severity"] == "error"] == []
    assert code == 0
    if any(o["findings"] for o in objs):
        assert fixed.read_bytes() != sample.read_bytes() or not doc["edits"]


def test_json_output_escapes_separators_and_bidi_but_keeps_values(tmp_path):
    hostile = "toolu_\u2028\u202e\x85\x1b[31m"
    doc = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{**TOOL_USE, "id": hostile}]},
        {"role": "user", "content": "continue"},
    ]
    path = write(tmp_path / "h.json", doc)
    _, out, _ = run("check", path, "--json")
    assert "\u2028" not in out and "\u202e" not in out and "\x1b" not in out
    (line,) = out.splitlines()  # str.splitlines splits on U+2028: still one line
    assert json.loads(line)["findings"][0]["tool_use_id"] == hostile


def test_fix_diff_shows_dropped_and_new_messages_in_file_order(tmp_path):
    doc = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [TOOL_USE]},
        {"role": "assistant", "content": "I ran it."},  # no user message to put a result in
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x", "content": "?"}]},
        {"role": "user", "content": "thanks"},
    ]
    path = write(tmp_path / "s.json", doc)
    _, out, _ = run("fix", path)
    lines = out.splitlines()
    heads = [line for line in lines if line.startswith("@@")]
    assert heads == ["@@ messages[2] (new) @@", "@@ messages[3] (removed) @@"]
    new_at = lines.index("@@ messages[2] (new) @@")
    assert '+      "tool_use_id": "toolu_1",' in lines[new_at : new_at + 8]


def test_fix_diff_of_a_huge_plan_is_cut_but_every_fix_is_listed(tmp_path):
    doc = [{"role": "user", "content": "go"}]
    for i in range(1500):
        doc.append({"role": "assistant", "content": [{**TOOL_USE, "id": f"t{i}"}]})
        doc.append({"role": "user", "content": "continue"})
    path = write(tmp_path / "s.json", doc)
    code, out, _ = run("fix", path)
    assert code == 0
    lines = out.splitlines()
    assert sum(" orphan-tool-use -> insert-result: " in line for line in lines) == 1500
    (cut,) = [line for line in lines if line.startswith("... ")]
    assert "more diff lines not shown" in cut
    assert len(lines) < 1500 + preview.MAX_DESCRIPTION + preview.MAX_DIFF_LINES + 10


def _readme_examples() -> list:
    import re

    text = README.read_text() if README.exists() else ""
    blocks = re.findall(r"```console\n\$ (histview [^\n]*)\n(.*?)```", text, re.S)
    return [pytest.param(c, o, id=c[9:70]) for c, o in blocks if "sample_sessions/" in c]


@pytest.mark.parametrize("command, shown", _readme_examples())
def test_readme_examples_are_what_histview_prints(capsys, monkeypatch, command, shown):
    """The README pastes real output; this keeps it real (run from the repository root)."""
    import shlex

    monkeypatch.chdir(README.parent)
    main(shlex.split(command)[1:])
    assert capsys.readouterr().out == shown


def test_readme_says_how_to_resume_each_agent_after_the_repair():
    """The README's walk for a stuck session ends with the resume: a row per agent client
    histview targets, with the command, and the versions measured (from repair.targets)."""
    import re

    from repair import targets

    text = README.read_text()
    walk = text.split("## A stuck session, step by step", 1)[1].split("\n## ", 1)[0]
    assert "histview fix FILE --in-place" in walk and "histview check FILE" in walk
    for t in targets.BY_NAME.values():
        if t.is_client:
            agent, version = re.match(r"(.+?) (\d[\d.]*) ", t.provider).groups()  # type: ignore[union-attr]
            (row,) = [ln for ln in walk.splitlines() if ln.startswith(f"| {agent} |")]
            assert "resume" in row or "import" in row
            assert f"{agent} {version}" in walk


def test_the_command_ends_at_once_and_its_piped_output_is_whole(tmp_path):
    """`histview check` ends with os._exit (no teardown of the session): everything it
    printed still reaches a pipe, and its exit code is the check's."""
    import subprocess
    import sys

    sample = SAMPLES / "roo_interrupted_then_continue.json"
    files = [str(sample), str(sample)]
    proc = subprocess.run(
        [sys.executable, "-m", "tui.cli", "check", *files],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    out = io.StringIO()
    code = cli.main(["check", *files], stdout=out, stderr=io.StringIO())
    assert proc.returncode == code == 1
    assert proc.stdout == out.getvalue() and proc.stdout.count(" 0 warnings, 0 info (") == 2


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_check_at_a_terminal_ends_with_what_to_run_next():
    """A person at a terminal is told the next step (README: A stuck session, step by
    step); a tool reading stdout gets the finding lines only."""
    broken = str(SAMPLES / "roo_reused_tool_use_id.json")
    out, err = _Terminal(), io.StringIO()
    assert cli.main(["check", broken], stdout=out, stderr=err) == 1
    assert err.getvalue() == (
        f"next: histview fix {broken} shows the repairs and writes nothing; "
        f"histview {broken} steps through them\n"
    )
    piped, err = io.StringIO(), io.StringIO()
    cli.main(["check", broken], stdout=piped, stderr=err)
    assert err.getvalue() == "" and "next:" not in piped.getvalue()
    clean, err = _Terminal(), io.StringIO()
    assert (
        cli.main(["check", str(SAMPLES / "roo_clean_long_session.json")], stdout=clean, stderr=err)
        == 0
    )
    assert err.getvalue() == ""
    both, err = _Terminal(), io.StringIO()
    cli.main(["check", broken, broken, "--json"], stdout=both, stderr=err)
    assert err.getvalue() == ""
    other = str(SAMPLES / "roo_empty_content.json")
    cli.main(["check", broken, other], stdout=both, stderr=err)
    assert err.getvalue().startswith("next: histview fix FILE ")


def test_a_fix_that_moves_results_says_where_to_once():
    """A fix line reads as a sentence: "Move the results of X, Y into message N.", and a
    keep-best that also moves the result kept says "moved into" once."""
    code, out, _ = run("fix", str(SAMPLES / "openai_chat_user_between_calls.json"), "--dry-run")
    moves = [ln for ln in out.splitlines() if "-> move-home:" in ln]
    assert moves and all(
        "Move the results of call_8f" in ln
        and ln.endswith(" into message 3.")
        and " moved " not in ln
        for ln in moves
    ), moves
    code, out, _ = run("fix", str(SAMPLES / "roo_subtask_delegation_duplicate.json"), "--dry-run")
    keeps = [ln for ln in out.splitlines() if "-> keep-best:" in ln]
    assert [ln.count(" moved into message 6") for ln in keeps] == [0, 1], keeps
