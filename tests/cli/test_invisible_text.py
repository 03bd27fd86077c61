"""Invisible characters and lone surrogates in ids, names and text are shown visibly (an id
cannot be spoofed by a zero-width character) and never crash the CLI or the TUI."""

from __future__ import annotations

import io
import json

import pytest

from repair.cli import main
from repair.sanitize import clean, clean_line, json_safe
from tests.tui.tui_helpers import wait_ready
from tui.app import HistviewApp

INVISIBLE = {
    "\u200b": "<U+200B>",  # zero-width space
    "\u200c": "<U+200C>",
    "\u200d": "<U+200D>",  # zero-width joiner (not between emoji)
    "\ufeff": "<U+FEFF>",
    "\u2060": "<U+2060>",  # word joiner
    "\u00ad": "<U+00AD>",  # soft hyphen
    "\U000e0041": "<U+E0041>",  # tag character
    "\U000e007f": "<U+E007F>",
    "\u206a": "<U+206A>",
    "\u206f": "<U+206F>",
    "\u115f": "<U+115F>",  # Hangul fillers
    "\u1160": "<U+1160>",
    "\u3164": "<U+3164>",
    "\uffa0": "<U+FFA0>",
    "\u034f": "<U+034F>",  # combining grapheme joiner
    "\u180e": "<U+180E>",  # Mongolian vowel separator
}
INVISIBLE[chr(0xD800)] = "<U+D800>"  # lone surrogates
INVISIBLE[chr(0xDFFF)] = "<U+DFFF>"


@pytest.mark.parametrize("ch", INVISIBLE)
def test_each_invisible_character_gets_a_visible_stand_in(ch):
    assert clean(f"toolu_{ch}1") == f"toolu_{INVISIBLE[ch]}1"
    assert clean_line(f"a{ch}b\nc") == f"a{INVISIBLE[ch]}b⏎c"


@pytest.mark.parametrize(
    "emoji", ["👨\u200d👩\u200d👧", "❤\ufe0f", "❤\ufe0f\u200d🔥", "👩🏽\u200d💻", "☺\ufe0e"]
)
def test_emoji_sequences_keep_their_joiners(emoji):
    assert clean(f"ok {emoji}") == f"ok {emoji}"


def test_joiners_outside_emoji_are_shown():
    assert clean("a\u200db") == "a<U+200D>b"
    assert clean("1\ufe0f") == "1<U+FE0F>"
    assert clean("\u200d😀") == "<U+200D>😀"


def test_json_output_escapes_invisibles_but_keeps_the_value():
    value = "id\u200b\U000e0041\u00ad"
    text = json_safe(json.dumps(value, ensure_ascii=False))
    assert text.isascii()
    assert json.loads(text) == value


def _two_ids_session(tmp_path):
    """Two calls whose ids differ only by a zero-width space; the second has no result."""
    doc = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}},
                {"type": "tool_use", "id": "toolu_\u200b1", "name": "Ba\u00adsh", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok \ud800"}],
        },
        {"role": "assistant", "content": "done"},
    ]
    path = tmp_path / "spoof.json"
    path.write_bytes(json.dumps(doc).encode())
    return path


def test_check_shows_the_spoofed_id_visibly(tmp_path):
    path = _two_ids_session(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    code = main(["check", str(path)], stdout=out, stderr=err)
    assert code == 1 and err.getvalue() == ""
    text = out.getvalue()
    assert "toolu_<U+200B>1" in text
    assert "\u200b" not in text
    out = io.StringIO()
    main(["check", "--json", str(path)], stdout=out, stderr=err)
    assert "\u200b" not in out.getvalue()
    assert json.loads(out.getvalue())["findings"][0]["tool_use_id"] == "toolu_\u200b1"


async def test_tui_shows_invisibles_and_lone_surrogates_and_repairs_them(tmp_path):
    path = _two_ids_session(tmp_path)
    app = HistviewApp(str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        assert app.load_error is None
        await pilot.press("g", "j", "j", "j")  # the second call's row
        detail = str(app.main.query_one("#detail").render())
        assert "toolu_<U+200B>1" in detail and "\u200b" not in detail
        await pilot.press("J")  # raw JSON of a message with a lone surrogate
        await pilot.press("r")  # the repair pane and its preview
        await pilot.pause()
        diff = str(app.main.query_one("#diff").render())
        assert "\u200b" not in diff and "\ud800" not in diff
        await pilot.press("A")  # apply all, then export
        await pilot.pause()
        app.main._do_export(str(tmp_path / "out.json"), str(tmp_path / "out.report.json"))
        await pilot.pause()
        assert app.is_running
    written = (tmp_path / "out.json").read_bytes()
    assert b"ok \\ud800" in written
    # the spoofing id is refused by Anthropic's id pattern: renamed, the old one reported
    assert b"toolu_\\u200b1" not in written
    report = json.loads((tmp_path / "out.report.json").read_bytes())
    assert "toolu_\u200b1" in json.dumps(report, ensure_ascii=False)
