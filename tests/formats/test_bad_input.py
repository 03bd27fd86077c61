"""Unreadable input ends in an InputError that names the file (and the place when known),
never a traceback; a readable file with one wrongly typed record still loads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repair.errors import InputError
from repair.formats import load_session


def write(tmp_path: Path, name: str, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def error_for(path: str) -> str:
    with pytest.raises(InputError) as info:
        load_session(path)
    text = str(info.value)
    assert text.startswith(path)
    return text


def test_not_json(tmp_path):
    path = write(tmp_path, "notes.json", b"hello, this is not a session\n")
    assert "not JSON" in error_for(path)
    assert ":line 1" in error_for(path)


def test_truncated_compact_json_names_the_place(tmp_path):
    path = write(tmp_path, "cut.json", b'[{"role":"user","content":"hi"},{"role":"assis')
    text = error_for(path)
    assert text.startswith(f"{path}:line 1 column 41:")
    assert "not JSON" in text


def test_truncated_pretty_json_names_the_line(tmp_path):
    doc = json.dumps(
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}], indent=2
    )
    path = write(tmp_path, "cut.json", doc[:-20].encode())
    text = error_for(path)
    assert text.startswith(f"{path}:line ")
    assert "not JSON" in text


def test_a_file_cut_short_says_so_and_names_the_place_once(tmp_path):
    """A session the agent was killed while writing: the error says the file stops mid-JSON,
    and its place once (no parser's 'line 1 column 41 (char 40)' after it)."""
    path = write(tmp_path, "cut.json", b'[{"role":"user","content":"hi"},{"role":"assis')
    text = error_for(path)
    assert text == (
        f"{path}:line 1 column 41: not JSON: unterminated string; "
        "the file ends mid-JSON: was it cut short while being written?"
    )
    pretty = json.dumps([{"role": "user", "content": "hi"}], indent=2)[:-3]
    text = error_for(write(tmp_path, "cut2.json", pretty.encode()))
    assert "cut short" in text and text.count("line ") == 1 and "(char" not in text


def test_a_whole_text_that_is_not_json_is_not_called_cut_short(tmp_path):
    text = error_for(write(tmp_path, "notes.json", b"hello, this is not a session\n"))
    assert text.endswith(":line 1 column 1: not JSON: expecting value")
    text = error_for(write(tmp_path, "comma.json", b'{"role": "user",}'))
    assert "cut short" not in text and "(char" not in text


def test_a_jsonl_line_cut_short_is_named_by_its_own_line(tmp_path):
    """The last line of a Claude Code session cut mid-write: the finding names line 3 and the
    column in it, never the parser's 'line 1' of the line alone."""
    from tests.command import run

    rows = [
        {
            "type": "user",
            "uuid": "u1",
            "parentUuid": None,
            "sessionId": "s",
            "message": {"role": "user", "content": "hi"},
        },
        {
            "type": "assistant",
            "uuid": "a1",
            "parentUuid": "u1",
            "sessionId": "s",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "hello"}]},
        },
    ]
    lines = [json.dumps(r) for r in rows]
    path = write(tmp_path, "s.jsonl", ("\n".join(lines) + "\n" + lines[1][:40]).encode())
    code, out, _ = run("check", path)
    assert code == 1
    (line,) = [ln for ln in out.splitlines() if " malformed " in ln]
    assert line.startswith(f"{path}:3: error malformed line 3 is not JSON (")
    assert "at column " in line and "line 1" not in line and "(char" not in line
    assert "cut short" in line


def test_empty_file(tmp_path):
    assert "empty" in error_for(write(tmp_path, "empty.json", b""))


def test_whitespace_only_file(tmp_path):
    assert "only whitespace" in error_for(write(tmp_path, "blank.json", b" \n\t\r\n  "))


def test_binary_file_with_nul_bytes(tmp_path):
    path = write(tmp_path, "image.json", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    text = error_for(path)
    assert "binary" in text
    assert f"{path}:byte 8:" in text


def test_binary_file_that_is_not_utf8(tmp_path):
    path = write(tmp_path, "latin.json", b'["caf\xe9", "\xff\xfe"]')
    text = error_for(path)
    assert "not UTF-8" in text
    assert ":byte " in text


def test_unknown_json_shape_says_what_was_seen(tmp_path):
    path = write(tmp_path, "config.json", b'{"editor": "vim", "tabs": 4}')
    text = error_for(path)
    assert "unknown format" in text
    assert "editor, tabs" in text
    assert "anthropic" in text and "roo" in text


def test_a_list_of_numbers_is_not_a_session(tmp_path):
    assert "unknown format" in error_for(write(tmp_path, "nums.json", b"[1, 2, 3]"))


def test_deeply_nested_lists(tmp_path):
    path = write(tmp_path, "deep.json", b"[" * 100_000 + b"]" * 100_000)
    assert "nesting" in error_for(path)


def test_deep_nesting_inside_a_message(tmp_path):
    deep = b"[" * 100_000 + b"]" * 100_000
    path = write(tmp_path, "deep.json", b'[{"role":"user","content":' + deep + b"}]")
    assert "nesting" in error_for(path)


def test_missing_file(tmp_path):
    path = str(tmp_path / "gone.json")
    assert "no such file" in error_for(path)


def test_folder_without_a_session(tmp_path):
    (tmp_path / "readme.txt").write_text("nothing here")
    text = error_for(str(tmp_path))
    assert "folder" in text


def test_megabyte_string_in_a_message_loads(tmp_path):
    big = "é" * 1_000_000
    doc = [
        {"role": "user", "content": big},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
    ]
    path = write(tmp_path, "big.json", json.dumps(doc, ensure_ascii=False).encode())
    s = load_session(path)
    assert s.messages[0].blocks[0].data == big
    assert s.export_bytes() == Path(path).read_bytes()


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ({"role": "assistant", "content": 3.5}, "content is a number"),
        ({"role": "assistant", "content": [{"text": "typeless"}]}, "content[0] has no type"),
        ({"content": "roleless"}, "no role"),
        (["a", "list"], "entry is a list, not a message object"),
    ],
)
def test_wrong_typed_record_is_malformed_and_the_rest_loads(tmp_path, bad, reason):
    doc = [
        {"role": "user", "content": "start"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "r"}]},
        bad,
        {"role": "user", "content": "next"},
    ]
    path = write(tmp_path, "one_bad.json", json.dumps(doc).encode())
    s = load_session(path)
    assert [m.malformed for m in s.messages] == [None, None, None, reason, None]
    assert s.messages[3].src == {"path": "/3"}
    assert s.messages[2].blocks[0].tool_id == "t1"
    assert s.export_bytes() == Path(path).read_bytes()


@pytest.mark.parametrize(
    ("files", "opened", "session"),
    [
        (  # a Roo / Cline task folder
            {
                "task_metadata.json": b'{"files_in_context": [], "model_usage": []}',
                "ui_messages.json": b'[{"ts": 1, "type": "say", "say": "text", "text": "hi"}]',
                "api_conversation_history.json": b'[{"role": "user", "content": "hi"}]',
            },
            "ui_messages.json",
            "api_conversation_history.json",
        ),
        (  # an opencode share
            {
                "session.json": b'{"id": "ses_1", "slug": "s", "cost": 0}',
                "messages.json": b'[{"info": {"id": "msg_1", "role": "user"}, "parts": []}]',
            },
            "session.json",
            "messages.json",
        ),
        (  # a Claude Code subagent's description
            {
                "agent-a1.meta.json": b'{"agentType": "general-purpose", "description": "x"}',
                "agent-a1.jsonl": b'{"type": "user", "uuid": "u1"}\n',
            },
            "agent-a1.meta.json",
            "agent-a1.jsonl",
        ),
    ],
)
def test_a_file_beside_a_session_names_the_session(tmp_path, files, opened, session):
    for name, data in files.items():
        write(tmp_path, name, data)
    text = error_for(str(tmp_path / opened))
    assert "unknown format" in text
    assert text.endswith(f"; the session beside it is {session}")


def test_an_unknown_file_alone_names_no_session(tmp_path):
    path = write(tmp_path, "task_metadata.json", b'{"files_in_context": []}')
    assert "beside" not in error_for(path)
