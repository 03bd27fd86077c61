"""A word for every key and one count: the header's message count is the one `histview check`
prints (with the file's own count beside it where the client splits, merges or leaves out
messages), and the keys that need the analysis answer while a large file is still read."""

from __future__ import annotations

import json

import pytest

from tests.command import run
from tests.paths import SAMPLES
from tests.tui.tui_helpers import opened, widget_text
from tui.main_screen import message_count

# (sample, what the header says): the file's messages, and the messages sent where it differs
COUNTED = [
    ("codex_missing_output.jsonl", "6 msgs · 11 sent"),  # calls and results sent apart
    ("openai_chat_user_between_calls.json", "6 msgs · 7 sent"),  # a tool message per result
    ("gemini_cli_doubled_after_resume.jsonl", "9 msgs · 8 sent"),  # one not sent
    ("roo_reused_tool_use_id.json", "15 msgs"),
]


@pytest.mark.parametrize(("name", "said"), COUNTED, ids=[c[0] for c in COUNTED])
async def test_the_header_counts_what_check_counts(name, said):
    path = SAMPLES / name
    _code, out, _err = run("check", "--json", path)
    sent = json.loads(out.splitlines()[0])["messages"]
    for size in ((80, 24), (120, 40)):
        async with opened(path, size) as (app, _pilot):
            header = widget_text(app, "#header")
            stored = len(app.main.derived.session.messages)
            assert said in header
            assert said == message_count(stored, sent)
            # the figure check prints is in the header, under its name when it differs
            assert (f"{sent} sent" if sent != stored else f"{sent} msgs") in header
