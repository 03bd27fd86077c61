"""The `anthropic` adapter: detection, load (sources, malformed records), lossless export,
and export after the edits the engine makes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repair.analysis import analyze
from repair.errors import InputError
from repair.formats import get_adapter, load_bytes, load_session, probe_bytes
from repair.model import SYNTHETIC_RESULT_TEXT, Block, Message, block_from_anthropic
from repair.place import Place
from repair.plan import apply_all
from tests.formats.build import compact, synthetic
from tests.paths import SAMPLES


def scores(doc) -> dict[str, int]:
    probe = probe_bytes(compact(doc), path="x.json")
    return {name: get_adapter(name).detect(probe) for name in ("anthropic", "roo")}


TOOL_TURN = [
    {"role": "user", "content": "list files"},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Listing."},
            {"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {"path": "."}},
        ],
    },
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"}],
    },
    {"role": "assistant", "content": "There is a.txt."},
]

# An interrupted turn: toolu_2 never got a result, then the user went on.
ORPHAN = [
    {"role": "user", "content": "read a and b"},
    {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"p": "a"}},
            {"type": "tool_use", "id": "toolu_2", "name": "read", "input": {"p": "b"}},
        ],
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "A"},
            {"type": "text", "text": "go on"},
        ],
    },
    {"role": "assistant", "content": "ok"},
]


# ---------------------------------------------------------------------------- detection


def test_plain_tool_list_is_anthropic():
    s = load_bytes(compact(TOOL_TURN))
    assert s.format == "anthropic"
    assert len(s.messages) == 4


def test_request_body_is_anthropic_and_paths_point_into_messages():
    body = {"model": "claude-x", "max_tokens": 100, "system": "be brief", "messages": TOOL_TURN}
    s = load_bytes(compact(body))
    assert s.format == "anthropic"
    assert s.messages[2].src == {"path": "/messages/2"}
    assert s.messages[2].blocks[0].place() == Place(pointer="/messages/2/content/0")


def test_plain_text_list_without_tools_is_anthropic():
    doc = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    assert load_bytes(compact(doc)).format == "anthropic"


def test_roo_markers_make_roo_win():
    doc = [dict(m, ts=1700000000000 + i) for i, m in enumerate(TOOL_TURN)]
    sc = scores(doc)
    assert sc["roo"] > sc["anthropic"] > 0
    assert load_bytes(compact(doc)).format == "roo"


def test_forcing_anthropic_on_a_roo_file_keeps_roo_keys():
    doc = [dict(m, ts=1700000000000 + i) for i, m in enumerate(TOOL_TURN)]
    data = compact(doc)
    s = load_bytes(data, format="anthropic")
    assert s.format == "anthropic"
    assert s.export_bytes() == data


@pytest.mark.parametrize(
    "doc",
    [
        # OpenAI Chat: assistant tool_calls + role tool
        [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        ],
        {"messages": [{"role": "tool", "tool_call_id": "c1", "content": "x"}]},
        # opencode export
        {
            "info": {"id": "ses_1"},
            "messages": [{"info": {"id": "msg_1", "role": "user"}, "parts": []}],
        },
        # Roo v2 envelope
        {"version": 2, "messages": [{"role": "user", "content": "hi"}]},
        # not message lists at all
        [1, 2, 3],
        [{"foo": "bar"}],
        [],
        {"messages": []},
        "just a string",
    ],
)
def test_not_anthropic(doc):
    assert get_adapter("anthropic").detect(probe_bytes(compact(doc), path="x.json")) == 0


def test_openai_system_message_list_scores_low():
    doc = [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}]
    assert 0 < scores(doc)["anthropic"] < 40


# ---------------------------------------------------------------------------- load


def test_blocks_and_sources():
    s = load_bytes(compact(TOOL_TURN))
    m0, m1, m2, _ = s.messages
    assert m0.src == {"path": "/0"}
    assert m0.blocks[0].data == "list files"
    assert m0.blocks[0].place() == Place(pointer="/0/content")
    assert [b.type for b in m1.blocks] == ["text", "tool_use"]
    assert m1.blocks[1].tool_id == "toolu_1" and m1.blocks[1].name == "ls"
    assert m1.blocks[1].place() == Place(pointer="/1/content/1")
    assert m2.blocks[0].tool_id == "toolu_1" and m2.blocks[0].type == "tool_result"
    assert all(m.live for m in s.messages)


@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        ({"role": "user", "content": 42}, "content is a number"),
        ({"role": "user", "content": {"type": "text", "text": "x"}}, "content is an object"),
        ({"role": "user", "content": [{"text": "no type"}]}, "content[0] has no type"),
        ({"role": "user", "content": ["bare string"]}, "content[0] is a string, not a block"),
        ({"content": "who said this"}, "no role"),
        ({"role": "system", "content": "sys"}, "role 'system' is not user or assistant"),
        ({"role": "user"}, "no content"),
        ("a stray string", "entry is a string, not a message object"),
        (None, "entry is null, not a message object"),
    ],
)
def test_malformed_record_is_located_and_written_back(entry, reason):
    doc = [TOOL_TURN[0], TOOL_TURN[1], entry, TOOL_TURN[2], TOOL_TURN[3]]
    data = compact(doc)
    s = load_bytes(data, format="anthropic")
    bad = s.messages[2]
    assert bad.malformed == reason
    assert bad.src == {"path": "/2"}
    assert bad.raw == entry
    # the rest still loads as messages
    assert [m.malformed for i, m in enumerate(s.messages) if i != 2] == [None] * 4
    assert s.messages[3].blocks[0].tool_id == "toolu_1"
    assert s.export_bytes() == data
    # an edit elsewhere still writes the malformed record back as it was
    edited = s.messages[0].with_blocks([block_from_anthropic({"type": "text", "text": "hi"})])
    out = json.loads(s.copy_with([edited, *s.messages[1:]]).export_bytes())
    assert out[2] == entry


def test_engine_reports_malformed_and_checks_the_rest():
    doc = [*ORPHAN[:2], {"role": "user", "content": 7}, *ORPHAN[2:]]
    s = load_bytes(compact(doc))
    codes = {(f.code, f.position, f.source.pointer) for f in analyze(s).findings}
    assert ("malformed", 2, "/2") in codes
    assert any(code == "orphan-tool-use" for code, _, _ in codes)


def test_a_megabyte_string_loads_and_round_trips():
    doc = [{"role": "user", "content": "x" * 1_000_000}, {"role": "assistant", "content": "ok"}]
    data = compact(doc)
    s = load_bytes(data)
    assert len(s.messages[0].blocks[0].data) == 1_000_000
    assert s.export_bytes() == data


# ---------------------------------------------------------------------------- round trip

STYLES = {
    "compact": lambda d: json.dumps(d, ensure_ascii=False, separators=(",", ":")).encode(),
    "python default": lambda d: json.dumps(d).encode(),
    "indent 2 + newline": lambda d: (json.dumps(d, indent=2, ensure_ascii=False) + "\n").encode(),
    "indent 4": lambda d: json.dumps(d, indent=4).encode(),
    "ascii escapes": lambda d: json.dumps(d, ensure_ascii=True, separators=(",", ":")).encode(),
}

UNICODE_TURN = [
    {"role": "user", "content": "héllo, wörld: «ok», 日本"},
    {"role": "assistant", "content": [{"type": "text", "text": "a, b: c"}]},
]


@pytest.mark.parametrize("style", list(STYLES))
@pytest.mark.parametrize("doc", [TOOL_TURN, UNICODE_TURN, {"model": "m", "messages": TOOL_TURN}])
def test_round_trip_is_byte_identical(style, doc):
    data = STYLES[style](doc)
    s = load_bytes(data, format="anthropic")
    assert s.export_bytes() == data
    # also when every message object is new (an edit that changed nothing in them)
    rebuilt = s.copy_with([m.with_blocks(m.blocks) for m in s.messages])
    assert rebuilt.export_bytes() == data


def _sample_files() -> list[Path]:
    if not SAMPLES.is_dir():
        return []
    return sorted(p for p in SAMPLES.rglob("*.json") if p.is_file())


def test_samples_round_trip_byte_identical():
    checked = 0
    for path in _sample_files():
        try:
            s = load_session(str(path))
        except InputError:  # a sample of unreadable input
            continue
        if s.format not in ("anthropic", "roo"):
            continue
        data = path.read_bytes()
        assert s.export_bytes() == data, path.name
        rebuilt = s.copy_with([m.with_blocks(m.blocks) for m in s.messages])
        assert rebuilt.export_bytes() == data, path.name
        checked += 1
    if not checked:
        pytest.skip("no anthropic/roo JSON samples in sample_sessions/ yet")


# ---------------------------------------------------------------------------- edits


def test_insert_synthetic_result_into_existing_message():
    data = STYLES["indent 2 + newline"](ORPHAN)
    s = load_bytes(data)
    home = s.messages[2]
    new_home = home.with_blocks([home.blocks[0], synthetic("toolu_2"), home.blocks[1]])
    out_bytes = s.copy_with([*s.messages[:2], new_home, s.messages[3]]).export_bytes()
    assert out_bytes.endswith(b"}\n]\n")  # same indent-2 style, trailing newline kept
    out = json.loads(out_bytes)
    assert out[:2] == ORPHAN[:2] and out[3] == ORPHAN[3]
    assert out[2]["content"] == [
        ORPHAN[2]["content"][0],
        {
            "type": "tool_result",
            "tool_use_id": "toolu_2",
            "content": SYNTHETIC_RESULT_TEXT,
            "is_error": True,
        },
        ORPHAN[2]["content"][1],
    ]


def test_drop_block_set_id_and_keep_other_keys():
    doc = [
        {"role": "user", "content": "go", "x-note": 1},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "bad id!", "name": "f", "input": {}}],
            "x-extra": {"keep": True},
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "bad id!", "content": "r"},
                {"type": "text", "text": ""},
            ],
        },
    ]
    s = load_bytes(compact(doc))
    m0, m1, m2 = s.messages
    use = m1.blocks[0]
    new_use = Block(
        type=use.type,
        data={**use.data, "id": "bad_id_"},
        tool_id="bad_id_",
        name=use.name,
        src=use.src,
        origin=use.origin,
        at=use.at,
        bid=use.bid,
    )
    res = m2.blocks[0]
    new_res = Block(
        type=res.type,
        data={**res.data, "tool_use_id": "bad_id_"},
        tool_id="bad_id_",
        src=res.src,
        origin=res.origin,
        at=res.at,
        bid=res.bid,
    )
    out = json.loads(
        s.copy_with([m0, m1.with_blocks([new_use]), m2.with_blocks([new_res])]).export_bytes()
    )
    assert out[0] == doc[0]
    assert out[1] == {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "bad_id_", "name": "f", "input": {}}],
        "x-extra": {"keep": True},
    }
    assert list(out[1]) == ["role", "content", "x-extra"]  # key order kept
    assert out[2]["content"] == [{"type": "tool_result", "tool_use_id": "bad_id_", "content": "r"}]


def test_new_message_and_dropped_message():
    doc = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}],
        },
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": "thanks"},
    ]
    s = load_bytes(compact(doc))
    new = Message(role="user", blocks=(synthetic("t1"),))
    msgs = [s.messages[0], s.messages[1], new, s.messages[2]]  # last message dropped
    out = json.loads(s.copy_with(msgs).export_bytes())
    assert out[:2] == doc[:2]
    assert out[2] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "t1",
                "content": SYNTHETIC_RESULT_TEXT,
                "is_error": True,
            }
        ],
    }
    assert out[3] == doc[2]
    assert len(out) == 4


def test_string_content_stays_a_string_until_it_must_become_a_list():
    doc = [
        {"role": "user", "content": "one"},
        {"role": "user", "content": "two"},
        {"role": "assistant", "content": "ok"},
    ]
    s = load_bytes(compact(doc))
    a, b, c = s.messages
    merged = a.with_blocks([*a.blocks, *b.blocks])
    out = json.loads(s.copy_with([merged, c]).export_bytes())
    assert out == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}],
        },
        {"role": "assistant", "content": "ok"},
    ]
    # dropping the other blocks of a message keeps an untouched string content a string
    only = a.with_blocks(a.blocks)
    assert json.loads(s.copy_with([only, c]).export_bytes())[0] == {
        "role": "user",
        "content": "one",
    }


def test_request_body_edit_keeps_other_request_keys():
    body = {"model": "m", "max_tokens": 9, "messages": ORPHAN, "tools": [{"name": "read"}]}
    s = load_bytes(STYLES["python default"](body))
    home = s.messages[2]
    new_home = home.with_blocks([home.blocks[0], synthetic("toolu_2"), home.blocks[1]])
    out_bytes = s.copy_with([*s.messages[:2], new_home, s.messages[3]]).export_bytes()
    assert b'"model": "m", "max_tokens": 9' in out_bytes  # python default separators kept
    out = json.loads(out_bytes)
    assert list(out) == ["model", "max_tokens", "messages", "tools"]
    assert out["tools"] == [{"name": "read"}]
    assert out["messages"][2]["content"][1]["tool_use_id"] == "toolu_2"


# ---------------------------------------------------------------------------- with the engine


def test_fix_then_check_finds_no_error():
    s = load_bytes(compact(ORPHAN))
    before = analyze(s)
    assert [(f.code, f.tool_use_id) for f in before.errors] == [("orphan-tool-use", "toolu_2")]
    fixed, _ = apply_all(s)
    out = fixed.export_bytes()
    again = load_bytes(out)
    assert again.format == "anthropic"
    assert analyze(again).errors == []
    doc = json.loads(out)
    assert [b.get("tool_use_id") for b in doc[2]["content"][:2]] == ["toolu_1", "toolu_2"]
    assert doc[2]["content"][1]["content"].startswith("[histview]")
    # untouched messages are written exactly as they were
    assert doc[0] == ORPHAN[0] and doc[1] == ORPHAN[1] and doc[3] == ORPHAN[3]
