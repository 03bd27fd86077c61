"""`histview fix` writes all or nothing (docs/writing.md): paths never collide, the report is
placed before the output, a failure replaces nothing and leaves no temporary file, the input
changes only with --in-place and never while something else writes it, symlinks and modes
are kept, and file-system errors are one line with the cause."""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path

import pytest

import repair.files as files
from repair.formats import load_session
from repair.workbench import Workbench
from tests.command import run
from tests.paths import CORPUS, SAMPLES

BROKEN = [
    {"role": "user", "content": "list the files"},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Listing."},
            {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}},
        ],
    },
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
STALE = {"type": "tool_result", "tool_use_id": "toolu_9", "content": "stale"}


@pytest.fixture
def work(tmp_path) -> Path:
    folder = tmp_path / "w"
    folder.mkdir()
    return folder


@pytest.fixture
def broken(work) -> Path:
    path = work / "s.json"
    path.write_text(json.dumps(BROKEN, indent=2) + "\n")
    return path


def snapshot(folder: Path) -> dict[str, tuple[bool, bytes]]:
    """Every name in the folder (temporary files included) with what it is."""
    out = {}
    for p in sorted(folder.iterdir(), key=lambda p: p.name):
        out[p.name] = (True, os.readlink(p).encode()) if p.is_symlink() else (False, p.read_bytes())
    return out


def refused(folder: Path, *argv) -> str:
    """Run fix; it must exit 2 with one line and leave the folder exactly as it was."""
    before = snapshot(folder)
    code, out, err = run("fix", *argv)
    assert code == 2, err
    assert out == "" and err.count("\n") == 1 and "internal error" not in err
    assert snapshot(folder) == before
    return err


# ---------------------------------------------------------------- 1. paths never collide


@pytest.mark.parametrize(
    "extra, says",
    [
        (["--in-place", "--report", "{F}.bak"], "would be the backup"),
        (["--in-place", "--report", "{F}"], "would be the input file"),
        (["--in-place", "--report", "{D}/sub/../s.json"], "would be the input file"),
        (["-o", "{D}/o.json", "--report", "{D}/o.json"], "would be the output"),
        (["-o", "{D}/o.json", "--report", "{D}/./o.json"], "would be the output"),
        (["--in-place", "--report", "{D}/keep.json"], "keep.json exists; refusing to overwrite"),
        (["--in-place", "--report", "{F}.bak.4"], "named like a backup of the input"),
        (["-o", "{D}/o.json", "--report", "{F}.bak"], "named like a backup of the input"),
        (["-o", "{F}.bak.1"], "named like a backup of the input"),
        (["-o", "{F}"], "the output is the input file; use --in-place for that"),
        (["-o", "{D}/hard.json"], "the output is the input file"),
        (["-o", "{D}/link.json"], "the output is the input file"),
        (["--in-place", "--report", "{D}/hard.json"], "would be the input file"),
        (["--in-place", "--report", "{D}/link.json"], "would be the input file"),
        (["-o", "{D}/keep.json"], "keep.json exists; refusing to overwrite"),
    ],
)
def test_colliding_paths_are_refused_before_anything_is_written(work, broken, extra, says):
    (work / "keep.json").write_text("an unrelated file\n")
    os.link(broken, work / "hard.json")
    (work / "link.json").symlink_to("s.json")
    argv = [a.format(F=broken, D=work) for a in extra]
    err = refused(work, broken, *argv)
    assert err.startswith(f"histview: {broken}: refused: ") and says in err
    assert err.endswith("; nothing written\n")


def test_the_backup_is_never_overwritten_by_the_report(work, broken):
    original = broken.read_bytes()
    assert run("fix", broken, "--in-place")[0] == 0
    broken.write_bytes(original)  # broken again: there is something to write
    refused(work, broken, "--in-place", "--report", f"{broken}.bak")
    assert Path(f"{broken}.bak").read_bytes() == original


def test_a_second_in_place_run_numbers_its_report_like_the_backup(work, broken):
    assert run("fix", broken, "--in-place")[0] == 0
    first = (work / "s.report.json").read_bytes()
    broken.write_text(json.dumps(BROKEN, indent=2) + "\n")  # broken again
    code, out, _ = run("fix", broken, "--in-place")
    assert code == 0
    assert f"report {work}/s.report.1.json, backup {broken}.bak.1)" in out
    assert (work / "s.report.json").read_bytes() == first
    again = json.loads((work / "s.report.1.json").read_text())
    assert again["backup"] == f"{broken}.bak.1" and STALE in [
        e.get("removed") for e in again["edits"]
    ]


def test_the_default_report_of_a_new_output_is_numbered_when_taken(work, broken):
    (work / "o.report.json").write_text("older report\n")
    code, out, _ = run("fix", broken, "-o", work / "o.json")
    assert code == 0 and f"report {work}/o.report.1.json)" in out
    assert (work / "o.report.json").read_text() == "older report\n"


def test_the_default_output_is_numbered_when_taken(work, broken):
    """Nothing named: the output is the first free NAME.fixed[.N].json (as the report and the
    backup are numbered), the report the first free NAME.report[.N].json beside it."""
    wb = Workbench(load_session(str(broken)))
    wb.apply_all()
    (work / "s.fixed.json").write_text("an earlier export\n")
    (work / "s.fixed.1.json").write_text("another\n")
    (work / "s.report.json").write_text("an earlier report\n")
    result = wb.export()
    assert (result.output, result.report) == (
        str(work / "s.fixed.2.json"),
        str(work / "s.report.1.json"),
    )
    assert (work / "s.fixed.json").read_text() == "an earlier export\n"
    assert (work / "s.fixed.1.json").read_text() == "another\n"
    assert (work / "s.report.json").read_text() == "an earlier report\n"
    assert files.default_report(result.output) == str(work / "s.report.json")


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--in-place", "--report", ""], "--report: the path is empty"),
        (["-o", ""], "-o: the path is empty"),
        (["-o", "x.json", "--force"], "--force only applies with --in-place"),
    ],
)
def test_empty_paths_and_stray_force_are_errors(work, broken, argv, says):
    err = refused(work, broken, *argv)
    assert err.startswith(f"histview: {says}")


def test_a_dangling_symlink_counts_as_a_taken_name(work, broken):
    Path(f"{broken}.bak").symlink_to(work / "gone")
    (work / "s.report.json").symlink_to(work / "gone-too")
    code, out, _ = run("fix", broken, "--in-place")
    assert code == 0
    assert f"report {work}/s.report.1.json, backup {broken}.bak.1)" in out
    assert os.readlink(f"{broken}.bak") == str(work / "gone")
    assert not (work / "gone").exists() and not (work / "gone-too").exists()
    broken.write_text(json.dumps(BROKEN, indent=2) + "\n")
    refused(work, broken, "--in-place", "--report", work / "s.report.json")


# ---------------------------------------------------------------- 2. report first, all or nothing


def temporaries(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]


def test_the_report_is_placed_before_the_output(monkeypatch, work, broken):
    placed = []
    real_link, real_replace = os.link, os.replace
    monkeypatch.setattr(files.os, "link", lambda a, b: (placed.append(b), real_link(a, b))[1])
    monkeypatch.setattr(files.os, "replace", lambda a, b: (placed.append(b), real_replace(a, b))[1])
    assert run("fix", broken, "--in-place")[0] == 0
    assert placed == [f"{broken}.bak", f"{work}/s.report.json", str(broken)]


@pytest.mark.parametrize("in_place", [True, False])
def test_a_full_disk_while_writing_replaces_nothing(monkeypatch, work, broken, in_place):
    real_fsync = os.fsync
    calls = []

    def fsync(fd):
        calls.append(fd)
        if len(calls) == 2:  # the second file staged (the report in place, the output with -o)
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(files.os, "fsync", fsync)
    argv = ["--in-place"] if in_place else ["-o", work / "o.json"]
    err = refused(work, broken, *argv)
    assert "no space left on the device; free some space or write to another disk" in err
    assert err.startswith(f"histview: {broken}: cannot write ")


def test_an_output_rename_that_fails_takes_back_the_report_and_backup(monkeypatch, work, broken):
    def replace(a, b):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(files.os, "replace", replace)
    err = refused(work, broken, "--in-place")
    assert f"cannot write {broken}: input/output error; check the disk, then try again" in err


def test_a_folder_you_cannot_write_is_one_line_with_advice(monkeypatch, work, broken):
    # As root a read-only folder is still writable: the refusal is what the kernel says.
    real = files._create_temp

    def create(path):
        if path.endswith(".report.json"):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real(path)

    monkeypatch.setattr(files, "_create_temp", create)
    err = refused(work, broken, "-o", work / "o.json")
    assert err == (
        f"histview: {broken}: cannot write {work}/o.report.json: permission denied; choose a "
        "folder you can write to, or fix its permissions; nothing written\n"
    )


def test_a_missing_folder_is_refused_before_anything_is_written(work, broken):
    err = refused(work, broken, "-o", work / "no" / "o.json")
    assert f"the folder {work}/no does not exist; create it or choose another path" in err
    err = refused(work, broken, "-o", work / "o.json", "--report", work / "no" / "r.json")
    assert f"the folder {work}/no does not exist" in err


def test_a_report_that_cannot_be_encoded_replaces_nothing(monkeypatch, work, broken):
    real = Workbench.report

    def with_a_value_json_cannot_hold(self, *a, **k):
        doc = real(self, *a, **k)
        doc["edits"][0]["removed"] = {"odd": {1, 2}}
        return doc

    monkeypatch.setattr(Workbench, "report", with_a_value_json_cannot_hold)
    for argv in (["--in-place"], ["-o", work / "o.json"]):
        err = refused(work, broken, *argv)
        assert "the report cannot be encoded: a set is not a JSON value; nothing written" in err


def test_an_output_that_would_not_read_back_replaces_nothing(work):
    """A fix that drops the only record leaves bytes Codex's reader refuses (an empty file):
    they are read back before anything is renamed into place, so nothing is written (the
    read-back used to run on the written files: exit 2 after both were in place)."""
    path = work / "one.jsonl"
    rec = {"type": "message", "role": "user", "content": 5}
    path.write_text(
        json.dumps({"timestamp": "2025-01-01T00:00:00Z", "type": "response_item", "payload": rec})
        + "\n"
    )
    drop = ["--strategy", "malformed=drop", "--target", "openai-responses"]
    for argv in (["-o", work / "o.jsonl"], ["--in-place"]):
        err = refused(work, path, *argv, *drop)
        assert "the repaired file would not read back as codex (the file is empty)" in err


@pytest.mark.parametrize("in_place", [True, False])
def test_the_bytes_are_read_back_before_anything_is_placed(monkeypatch, work, broken, in_place):
    import repair.workbench as workbench

    events = []
    real_read_back, real_replace, real_link = workbench.read_back, os.replace, os.link
    monkeypatch.setattr(
        workbench,
        "read_back",
        lambda *a, **k: (events.append("read back"), real_read_back(*a, **k))[1],
    )
    monkeypatch.setattr(files.os, "replace", lambda a, b: (events.append(b), real_replace(a, b))[1])
    monkeypatch.setattr(files.os, "link", lambda a, b: (events.append(b), real_link(a, b))[1])
    argv = ["--in-place"] if in_place else ["-o", work / "o.json"]
    assert run("fix", broken, *argv)[0] == 0
    assert events[0] == "read back" and events.count("read back") == 1


@pytest.mark.parametrize("depth", [0, 300, 900])
def test_lone_surrogates_and_deep_nesting_in_a_dropped_block_reach_the_report_exactly(work, depth):
    # written by hand: json.dumps itself stops at about 990 levels
    extra = "[" * depth + '"bottom \\ud800"' + "]" * depth
    stray = '{"type": "text", "text": "x", "extra": ' + extra + "}"
    text = json.dumps(BROKEN).replace('"stale"', "[" + stray + "]")
    path = work / "odd.json"
    path.write_text(text)
    code, out, err = run("fix", path, "-o", work / "o.json")
    assert code == 0, err
    report = (work / "o.report.json").read_bytes()
    report.decode("utf-8")  # valid UTF-8: the surrogate is written as its escape
    assert b'"bottom \\ud800"' in report
    removed = [e.get("removed") for e in json.loads(report)["edits"] if e.get("removed")]
    [block] = [r for r in removed if r.get("tool_use_id") == "toolu_9"]
    value = block["content"][0]["extra"]
    for _ in range(depth):
        [value] = value
    assert value == "bottom \ud800"


# ---------------------------------------------------------------- 3. no window for lost writes


def load(path: Path) -> Workbench:
    wb = Workbench(load_session(str(path)))
    wb.apply_all()
    return wb


def test_a_same_size_rewrite_with_the_old_mtime_is_caught_by_the_content_check(work, broken):
    wb = load(broken)
    st = broken.stat()
    data = broken.read_bytes()
    broken.write_bytes(data.replace(b"stale", b"STALE"))
    os.utime(broken, ns=(st.st_atime_ns, st.st_mtime_ns))
    before = snapshot(work)
    with pytest.raises(files.ExportRefused, match="changed since it was read"):
        wb.export(in_place=True)
    assert snapshot(work) == before


def test_a_file_replaced_by_another_with_the_same_bytes_is_refused(work, broken):
    wb = load(broken)
    tmp = work / "new"
    tmp.write_bytes(broken.read_bytes())
    os.replace(tmp, broken)
    before = snapshot(work)
    with pytest.raises(files.ExportRefused, match="changed since it was read"):
        wb.export(in_place=True)
    assert snapshot(work) == before


def test_a_write_while_the_files_are_staged_is_caught_right_before_the_rename(
    monkeypatch, work, broken
):
    real_add = files.Staging.add

    def add(self, path, data, **kw):
        real_add(self, path, data, **kw)
        if path == str(broken):  # the output is staged: the agent appends a line now
            with open(broken, "a") as fh:
                fh.write("\n")

    monkeypatch.setattr(files.Staging, "add", add)
    code, out, err = run("fix", broken, "--in-place")
    assert code == 2 and out == ""
    assert err == (
        f"histview: {broken}: refused: {broken} changed since it was read; load it again; "
        "nothing written\n"
    )
    assert sorted(p.name for p in work.iterdir()) == ["s.json"]  # no backup, report, temp
    assert broken.read_bytes().endswith(b"}\n]\n\n")


def test_a_write_landing_between_the_check_and_the_rename_is_kept(monkeypatch, work, broken):
    original = broken.read_bytes()
    real_check = files.Watch.check

    def check(self):
        real_check(self)
        with open(broken, "ab") as fh:  # the agent appends in the last microseconds
            fh.write(b" ")

    monkeypatch.setattr(files.Watch, "check", check)
    code, out, err = run("fix", broken, "--in-place")
    assert code == 2
    assert f"wrote {broken} (2 fixes" in out
    assert err == (
        f"histview: {broken}: the file was written to while histview replaced it; what it held "
        f"then is kept in {broken}.bak.1; the repaired file does not have those last writes. "
        "Stop the agent, then repair again\n"
    )
    assert Path(f"{broken}.bak").read_bytes() == original
    assert Path(f"{broken}.bak.1").read_bytes() == original + b" "
    assert json.loads(broken.read_text()) != BROKEN  # the repair is in place
    assert temporaries(work) == []


def test_the_backup_is_the_bytes_that_were_read(monkeypatch, work, broken):
    wb = load(broken)
    original = broken.read_bytes()
    opened = []
    real_open = open

    def spy(file, *a, **k):
        opened.append(str(file))
        return real_open(file, *a, **k)

    monkeypatch.setattr("builtins.open", spy)
    res = wb.export(in_place=True)
    assert str(broken) not in opened  # no second read for the backup
    assert Path(res.backup).read_bytes() == original


def test_check_does_not_hash_the_file(monkeypatch, broken):
    import hashlib

    monkeypatch.setattr(hashlib, "sha256", lambda *a: pytest.fail("hashed on load"))
    session = load_session(str(broken))
    assert session.source.data == broken.read_bytes()


# ---------------------------------------------------------------- 4. symlinks and permissions


def test_in_place_on_a_symlink_repairs_the_target_and_keeps_the_link(tmp_path):
    real_dir, link_dir = tmp_path / "real", tmp_path / "links"
    real_dir.mkdir()
    link_dir.mkdir()
    target = real_dir / "s.json"
    target.write_text(json.dumps(BROKEN, indent=2) + "\n")
    original = target.read_bytes()
    link = link_dir / "s.json"
    link.symlink_to("../real/s.json")
    code, out, _ = run("fix", link, "--in-place")
    assert code == 0
    assert out.splitlines()[-1] == (
        f"{link}: wrote {target} (2 fixes, report {real_dir}/s.report.json, backup "
        f"{target}.bak); now 0 errors, 0 warnings, 0 info"
    )
    assert link.is_symlink() and os.readlink(link) == "../real/s.json"
    assert sorted(p.name for p in link_dir.iterdir()) == ["s.json"]
    assert Path(f"{target}.bak").read_bytes() == original
    assert run("check", link)[0] == 0


def test_a_read_only_input_is_refused_unless_forced_and_keeps_its_mode(work, broken):
    broken.chmod(0o444)
    err = refused(work, broken, "--in-place")
    assert err == (
        f"histview: {broken}: refused: {broken} is read-only; make it writable, or give --force "
        "to replace it anyway (its mode is kept); nothing written\n"
    )
    assert run("fix", broken, "--in-place", "--force")[0] == 0
    assert stat.S_IMODE(broken.stat().st_mode) == 0o444
    assert stat.S_IMODE(Path(f"{broken}.bak").stat().st_mode) == 0o444
    assert run("check", broken)[0] == 0


def test_new_files_follow_the_umask_and_are_no_more_readable_than_the_input(
    monkeypatch, work, broken
):
    monkeypatch.setattr(os, "umask", lambda *a: pytest.fail("umask changed"))
    broken.chmod(0o640)
    assert run("fix", broken, "-o", work / "o.json")[0] == 0
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in work.iterdir()}
    umask_mode = 0o666 & ~_current_umask()
    assert modes["o.json"] == modes["o.report.json"] == umask_mode & 0o740
    broken.chmod(0o600)
    assert run("fix", broken, "--in-place")[0] == 0
    assert stat.S_IMODE(broken.stat().st_mode) == 0o600
    assert stat.S_IMODE(Path(f"{broken}.bak").stat().st_mode) == 0o600
    assert stat.S_IMODE((work / "s.report.json").stat().st_mode) == umask_mode & 0o700


def _current_umask() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("Umask:"):
            return int(line.split()[1], 8)
    raise AssertionError("no Umask line")


def test_in_place_on_a_hard_link_replaces_this_name_only(work, broken):
    original = broken.read_bytes()
    other = work / "other-name.json"
    os.link(broken, other)
    assert run("fix", broken, "--in-place")[0] == 0
    assert other.read_bytes() == original  # documented: the other name keeps the old file
    assert run("check", broken)[0] == 0


# ---------------------------------------------------------------- 6. Claude Code records


def _jsonl(path: Path) -> list:
    return [json.loads(line) for line in path.read_bytes().split(b"\n") if line.strip()]


def test_a_dropped_claude_code_record_is_in_the_report_whole(tmp_path):
    sample = SAMPLES / "claude_code_parallel_interrupted.jsonl"
    out = tmp_path / "o.jsonl"
    code, _, err = run("fix", sample, "-o", out, "--strategy", "orphan-tool-use=drop-tool-use")
    assert code == 0, err
    report = json.loads((tmp_path / "o.report.json").read_text())
    records = sample.read_bytes().split(b"\n")
    [entry] = report["dropped_records"]
    assert entry["outcome"] == "deleted"
    assert entry["record"] == json.loads(records[entry["line"] - 1])
    assert entry["record"]["uuid"] not in {r.get("uuid") for r in _jsonl(out)}


def test_a_claude_code_parent_link_to_a_missing_record_is_in_the_report(tmp_path):
    """A record whose parentUuid names a record missing from the file is re-linked when its
    turn is laid out again; the old link is in no other record: the report keeps the record
    as read (found by the fuzzer)."""
    lines = (SAMPLES / "claude_code_parallel_interrupted.jsonl").read_text().splitlines()
    rec = json.loads(lines[5])
    rec["parentUuid"] = "0badf00d-0000-4000-8000-000000000000"
    lines[5] = json.dumps(rec, separators=(",", ":"))
    src = tmp_path / "s.jsonl"
    src.write_text("\n".join(lines) + "\n")
    code, _, err = run("fix", src, "-o", tmp_path / "o.jsonl")
    assert code == 0, err
    assert rec["parentUuid"] not in (tmp_path / "o.jsonl").read_text()
    report = json.loads((tmp_path / "o.report.json").read_text())
    [entry] = [e for e in report["dropped_records"] if e["outcome"] == "relinked"]
    assert (entry["line"], entry["record"]) == (6, rec)


REAL = CORPUS / "claude_code" / "ccl_modern_v2.1.114" / "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"


@pytest.mark.skipif(not REAL.exists(), reason="the shared corpus is not here")
def test_real_session_whose_tool_call_record_was_lost_keeps_the_result_record(tmp_path):
    """A real Claude Code 2.1.114 session with one assistant record removed (its children
    re-linked): the Bash result becomes an orphan, the fix drops it, and the report holds the
    result's record as read: uuid, timestamp, toolUseResult, sourceToolAssistantUUID."""
    lines = REAL.read_bytes().split(b"\n")
    result = json.loads(lines[15])
    call_uuid = result["sourceToolAssistantUUID"]
    call = None
    kept = []
    for raw in lines:
        obj = json.loads(raw) if raw.strip() else None
        if obj is not None and obj.get("uuid") == call_uuid:
            call = obj
            continue
        if obj is not None and obj.get("parentUuid") == call_uuid:
            obj["parentUuid"] = call["parentUuid"]
            raw = json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()
        kept.append(raw)
    broken = tmp_path / "lost-call.jsonl"
    broken.write_bytes(b"\n".join(kept))
    out = tmp_path / "o.jsonl"
    code, text, err = run("fix", broken, "-o", out)
    assert code == 0, err
    assert "orphan-tool-result -> drop" in text
    report = json.loads((tmp_path / "o.report.json").read_text())
    [entry] = report["dropped_records"]
    assert entry["outcome"] == "deleted"
    assert entry["record"] == {**result, "parentUuid": call["parentUuid"]}  # as in lost-call
    assert {"uuid", "timestamp", "toolUseResult", "sourceToolAssistantUUID"} <= set(entry["record"])
    assert entry["record"]["toolUseResult"]["stdout"].startswith("On branch master")
    assert result["uuid"] not in {r.get("uuid") for r in _jsonl(out)}
