"""OpenAI Chat messages whose blocks are made when asked for (`ChatMessage`, the loader's
usual path) are the messages the long way makes (`_load_entry` of each entry, a run of
tool messages one user message): the same blocks, places, tool ids, block counts and
findings, whether their blocks were made before the analysis or not; an untouched or an
edited session is written as the long way's is."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from repair import analysis
from repair.formats import openai_chat as chat
from repair.model import Block, Message, Session

_IDS = st.sampled_from(["c1", "c2", "c3", "", None, 7])
_TEXT = st.sampled_from(
    [None, "", " ", "\n", "ok", "call it", 3, [], [{"type": "text", "text": "a"}]]
)
_call = st.one_of(
    st.builds(
        lambda i, a: {"id": i, "type": "function", "function": {"name": "ls", "arguments": a}},
        _IDS,
        st.sampled_from(['{"p": 1}', "not json", "", None]),
    ),
    st.sampled_from([None, "call", {"function": {}}]),
)


@st.composite
def _entry(draw) -> Any:
    kind = draw(
        st.sampled_from(
            ["user", "assistant", "assistant", "tool", "tool", "tool", "system", "developer"]
            + ["function", "no role", "odd role", "odd"]
        )
    )
    if kind == "odd":
        return draw(st.sampled_from([None, 3, "text", [], {"role": ["user"]}]))
    entry: dict[str, Any] = {}
    if kind != "no role":
        entry["role"] = 5 if kind == "odd role" else kind
    if draw(st.booleans()) or kind != "tool":
        entry["content"] = draw(_TEXT)
    if kind == "tool":
        entry["tool_call_id"] = draw(_IDS)
        if draw(st.booleans()):
            entry["name"] = draw(st.sampled_from(["ls", 4]))
    if kind == "function":
        entry["name"] = "ls"
    if kind == "assistant":
        calls = draw(st.one_of(st.none(), st.lists(_call, max_size=3), st.just("x")))
        if calls is not None:
            entry["tool_calls"] = calls
        if draw(st.integers(0, 9)) == 0:
            entry["function_call"] = draw(st.sampled_from([{"name": "f"}, "f"]))
    return entry


def _long_way(conv: chat.Conversation) -> list[Message]:
    """Each entry read by `_load_entry`, a run of tool (and function) messages one user
    message, as the loader read every entry before it made blocks on demand."""
    out: list[Message] = []
    run: list[Block] = []
    start = -1
    entries = conv.entries

    def close(end: int) -> None:
        origin = chat.ToolRun(tuple(range(start, end)))
        out.append(
            Message(
                "user", tuple(run), entries[start:end], src=chat._src(conv, start), origin=origin
            )
        )
        run.clear()

    for i, entry in enumerate(entries):
        built = chat._load_entry(conv, i, entry)
        if isinstance(built, Block):
            if not run:
                start = i
            run.append(built)
            continue
        if run:
            close(i)
        conv.message_at[i] = built
        out.append(built)
    if run:
        close(len(entries))
    return out


def _origin(o: Any) -> Any:
    if isinstance(o, chat.At):
        return ("at", o.msg, o.call)
    if isinstance(o, chat.ToolRun):
        return ("run", o.msgs)
    return o


def _block_facts(m: Message) -> list[tuple]:
    return [
        (b.type, b.data, b.tool_id, b.name, b.is_error, b.src, b.at, b.place(), _origin(b.origin))
        for b in m.blocks
    ]


def _facts(m: Message) -> tuple:
    return (m.role, m.raw, m.hidden, m.malformed, m.src, m.meta, m.timestamp, _origin(m.origin))


def _session(msgs: list[Message], conv: chat.Conversation, target: str) -> Session:
    file = chat.ChatFile(kind="json", data=b"")
    return Session(
        "t.json", "openai-chat", target, msgs, adapter=None, state=chat.ChatState(file, conv)
    )  # type: ignore[arg-type]


def _found(msgs: list[Message], conv: chat.Conversation, target: str) -> list[tuple]:
    got = analysis.analyze(_session(msgs, conv, target), target)
    return [(f.to_json(), f.position, f.severity) for f in got.findings]


def _both(
    entries: list[Any],
) -> tuple[chat.Conversation, list[Message], chat.Conversation, list[Message]]:
    lazy_conv = chat.Conversation(entries, "", None)
    whole_conv = chat.Conversation(entries, "", None)
    return lazy_conv, chat._load_conversation(lazy_conv), whole_conv, _long_way(whole_conv)


@settings(max_examples=600, deadline=None, derandomize=True, database=None)
@given(
    entries=st.lists(_entry(), max_size=9),
    made_first=st.booleans(),
    target=st.sampled_from(["openai-chat", "anthropic", "bedrock"]),
)
def test_chat_messages_are_the_long_ways(entries, made_first, target):
    """Random entries (odd roles, contents, call lists, ids; tool and legacy function
    messages in runs; unreadable entries): the same findings, block counts, messages,
    blocks and tool ids as the long way, and the same conversation written back."""
    lazy_conv, lazy, whole_conv, whole = _both(entries)
    if made_first:
        for m in lazy:
            m.blocks  # noqa: B018 (made before the analysis)
    assert [m.block_counts() for m in lazy] == [m.block_counts() for m in whole]
    assert _found(lazy, lazy_conv, target) == _found(whole, whole_conv, target)
    assert [_facts(m) for m in lazy] == [_facts(m) for m in whole]
    assert [m.tool_ids() for m in lazy] == [m.tool_ids() for m in whole]
    assert [m.plain_shape() for m in lazy] == [m.plain_shape() for m in whole]
    assert [_block_facts(m) for m in lazy] == [_block_facts(m) for m in whole]
    assert chat._write_conversation(lazy, lazy_conv, []) == chat._write_conversation(
        whole, whole_conv, []
    )


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(entries=st.lists(_entry(), min_size=1, max_size=9), data=st.data())
def test_an_edited_chat_session_is_written_as_the_long_ways(entries, data):
    """A message dropped and another's blocks reversed, in both sessions alike: the same
    conversation written, the same records left out."""
    lazy_conv, lazy, whole_conv, whole = _both(entries)
    drop = data.draw(st.integers(0, len(lazy) - 1))
    turn = data.draw(st.integers(0, len(lazy) - 1))

    def edit(msgs: list[Message]) -> list[Message]:
        out = [m.with_blocks(m.blocks[::-1]) if k == turn else m for k, m in enumerate(msgs)]
        return [m for k, m in enumerate(out) if k != drop]

    def written(msgs: list[Message], conv: chat.Conversation) -> tuple[Any, Any]:
        dropped: list[dict[str, Any]] = []
        try:
            return chat._write_conversation(edit(msgs), conv, dropped), dropped
        except Exception as e:  # the same refusal either way  # noqa: BLE001
            return type(e).__name__, str(e)

    assert written(lazy, lazy_conv) == written(whole, whole_conv)


def test_a_clean_chat_check_makes_no_block():
    entries = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "a", "function": {"name": "ls", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "a", "content": "x"},
        {"role": "assistant", "content": "done"},
    ]
    conv = chat.Conversation(entries, "/messages", None)
    msgs = chat._load_conversation(conv)
    assert [type(m) for m in msgs] == [chat.ChatMessage] * 5
    assert _found(msgs, conv, "openai-chat") == []
    assert not any(m.made() for m in msgs)  # type: ignore[attr-defined]
    assert chat._write_conversation(msgs, conv, []) == entries
    call = msgs[2].blocks[0]
    assert msgs[2].blocks[0] is call and call.place().pointer == "/messages/2/tool_calls/0"
    assert msgs[3].src == {"path": "/messages/3"} and msgs[3].blocks[0].tool_id == "a"
