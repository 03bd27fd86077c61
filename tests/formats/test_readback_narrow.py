"""The narrowed read-back (only the entries a fix writes anew are read again) finds what the
whole read-back finds: the same findings, at the same places of the written file, the same
counts, and a refusal where the whole read-back refuses. Compared on every Roo and
Anthropic sample and on fuzzed copies of them, after random fixes, undos and actions; and
with the writer broken on purpose, where the narrowed check must catch what the whole one
catches."""

from __future__ import annotations

import dataclasses
import json
import random

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from repair.errors import ExportRefused, InputError
from repair.formats import anthropic_list, load_bytes
from repair.formats.roo import adapter as roo
from repair.readback import read_back
from repair.workbench import Workbench
from tests.fuzz_support import mutated_session, over_mutated_seeds, seeds, seeds_that_load

NARROWED = ("roo", "anthropic")


SEEDS = seeds_that_load(lambda seed, session: seed.suffix == ".json" and session.format in NARROWED)


def _outcome(wb: Workbench, narrow: bool):
    state = wb.session
    try:
        rb = read_back(
            state,
            state.export().data,
            {},
            path="/tmp/written.json",
            original=wb.original,
            known=wb._known(),
            narrow=narrow,
        )
    except ExportRefused as exc:
        return ("refused", str(exc))
    return (
        rb.counts(),
        [(f.to_json(), f.position) for a in rb.analyses for f in a.findings],
        [(a.numbers, a.sent, a.target) for a in rb.analyses],
        [(s.path, s.format, s.target, len(s.messages)) for s in rb.sessions],
    )


def _steps(wb: Workbench, rng: random.Random, n: int) -> list[str]:
    """Random fixes (under a random one of their actions) and undos, then maybe the rest."""
    done = []
    for _ in range(n):
        if wb.done and rng.random() < 0.2:
            wb.undo()
            done.append("undo")
            continue
        choosable = [f for f in wb.plan.fixes if len(f.actions) > 1]
        if choosable and rng.random() < 0.5:
            fix = rng.choice(choosable)
            for _ in range(rng.randrange(1, len(fix.actions))):
                wb.cycle(fix)
        fixes = wb.plan.actionable
        if not fixes:
            break
        fix = rng.choice(fixes)
        if wb.apply(fix) is not None:
            done.append(f"{fix.code} -> {fix.action}")
    if rng.random() < 0.5:
        wb.apply_all()
        done.append("apply all")
    return done


@pytest.mark.skipif(not SEEDS, reason="no Roo or Anthropic samples")
@over_mutated_seeds(SEEDS, 150, mutations=(0, 3), steps=(1, 6))
def test_the_narrowed_read_back_finds_what_the_whole_one_finds(which, rng_seed, mutations, steps):
    seed = SEEDS[which]
    rng = random.Random(rng_seed)
    session = mutated_session(seed, rng, mutations, "/tmp/input.json")
    if session is None:
        return
    if session.format not in NARROWED:
        return
    wb = Workbench(session)
    note(f"steps: {_steps(wb, rng, steps)}")
    assert _outcome(wb, narrow=True) == _outcome(wb, narrow=False)


def _sample(name: str) -> Workbench:
    seed = next(s for s in SEEDS if s.name.endswith(name))
    wb = Workbench(load_bytes(seed.data, "/tmp/input.json"))
    assert wb.apply_all() is not None
    return wb


@pytest.mark.parametrize(
    "name", ["roo_interrupted_then_continue.json", "anthropic_parallel_results_split.json"]
)
def test_a_writer_that_loses_a_block_is_caught_as_the_whole_read_back_catches_it(monkeypatch, name):
    """A writer bug: every rebuilt entry is written without its first block. The whole
    read-back sees the file as written; the narrowed one must see the same."""
    wb = _sample(name)
    fine = _outcome(wb, narrow=True)
    real = anthropic_list.encode_content

    def lossy(msg):
        content = real(msg)
        return content[1:] if isinstance(content, list) and len(content) > 1 else "   "

    monkeypatch.setattr(anthropic_list, "encode_content", lossy)
    broken = _outcome(wb, narrow=False)
    assert broken != fine  # the bug shows in the written file
    assert _outcome(wb, narrow=True) == broken


def test_a_writer_that_writes_an_unreadable_entry_is_caught(monkeypatch):
    """An edited entry written as something that reads as no message: the written file has
    a malformed record, the promise must say so (both read-backs agree)."""
    wb = _sample("roo_interrupted_then_continue.json")
    real = anthropic_list.encode_entry

    def broken(msg, new_extra=None):
        entry = real(msg, new_extra)
        return entry if entry is msg.raw else {"role": "tool", "content": 3}

    monkeypatch.setattr(roo, "encode_entry", broken)
    got = _outcome(wb, narrow=True)
    assert got == _outcome(wb, narrow=False)
    assert any(j["code"] == "malformed" for j, _ in got[1])


def test_findings_of_untouched_messages_point_at_where_the_written_file_holds_them():
    """A fix that inserts a message moves every entry after it: the findings left there name
    their new JSON pointer, as `check` on the written file does."""
    doc = [
        {"role": "user", "content": "go", "ts": 1000},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "ls", "input": {}}],
            "ts": 2000,
        },
        {"role": "assistant", "content": [{"type": "text", "text": "next"}], "ts": 3000},
        {"role": "user", "content": [{"type": "text", "text": "ok"}], "ts": 4000},
        {"role": "assistant", "content": [{"type": "text", "text": "done"}], "ts": 5000},
        {"role": "user", "content": [{"type": "text", "text": " "}], "ts": 6000},
        {"role": "assistant", "content": [{"type": "text", "text": "bye"}], "ts": 7000},
    ]
    wb = Workbench(load_bytes(json.dumps(doc).encode(), "/tmp/input.json", format="roo"))
    fix = next(f for f in wb.plan.actionable if f.code == "orphan-tool-use")
    assert wb.apply(fix) is not None
    assert len(wb.session.messages) == len(doc) + 1  # a user message answers t1
    narrow, whole = _outcome(wb, narrow=True), _outcome(wb, narrow=False)
    assert narrow == whole
    empty = [j for j, _ in narrow[1] if j["code"] == "empty-content"]
    assert [j["source"] for j in empty] == [{"path": "/6/content/0"}]


def test_every_sample_fix_is_read_back_narrowed():
    """The fixes of every Roo and Anthropic sample are read back entry by entry (the whole
    file is read again only where an entry does not load as it was repaired)."""
    from repair.readback import _narrowed

    used = 0
    for seed in SEEDS:
        wb = Workbench(load_bytes(seed.data, "/tmp/input.json"))
        if wb.apply_all() is None:
            continue
        data = wb.session.export().data
        assert _narrowed(wb.session, data, "/tmp/written.json", wb._known()) is not None, seed.name
        used += 1
    assert used


def _each_fix_alone(doc: list) -> int:
    """Apply each fix of the document's plan alone, under each of its actions, and compare
    the two read-backs; returns how many were applied."""
    original = load_bytes(json.dumps(doc).encode(), "/tmp/input.json", format="roo")
    applied = 0
    for fix in Workbench(original).plan.actionable:
        for action in fix.actions:
            wb = Workbench(original)
            wb.choices.by_key.update({f.key: action for f in fix.findings})
            got = next(f for f in wb.plan.actionable if f.findings[0].key == fix.findings[0].key)
            if wb.apply(got) is None:
                continue
            applied += 1
            assert _outcome(wb, narrow=True) == _outcome(wb, narrow=False), (fix.code, action)
    return applied


def test_a_fix_that_drops_a_condense_summary_shows_what_it_uncovers():
    """Dropping a summary message (its content empty) makes the messages it condensed live
    again in the written file (Roo ignores a tag whose summary is gone): they are not
    rewritten, yet check reads them differently; the narrowed read-back must see it."""
    doc = [
        {"role": "user", "content": "task", "ts": 1000},
        {"role": "assistant", "content": "", "ts": 2000, "condenseParent": "c1"},
        {"role": "user", "content": [], "ts": 3000, "condenseParent": "c1"},
        {"role": "user", "content": [], "ts": 4000, "isSummary": True, "condenseId": "c1"},
        {"role": "assistant", "content": "go on", "ts": 5000},
    ]
    assert _each_fix_alone(doc)


def test_a_dropped_message_gives_its_neighbours_a_new_pairing():
    """Dropping an empty user message puts a Cline text result right after the call it
    answers: untouched entries that read differently once their neighbour is gone."""
    call = {"type": "tool_use", "id": "x1", "name": "read_file", "input": {"path": "a"}}
    doc = [
        {"role": "user", "content": "task", "ts": 1000},
        {"role": "assistant", "content": [call], "ts": 2000},
        {"role": "user", "content": [], "ts": 3000},
        {
            "role": "user",
            "content": [{"type": "text", "text": "[read_file for 'a'] Result: ok"}],
            "ts": 4000,
        },
        {"role": "assistant", "content": "done", "ts": 5000},
    ]
    assert _each_fix_alone(doc)


_IDS = ["t1", "t2", "t3"]
_block = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, st.sampled_from(["", " ", "ok", "go on"])),
    st.builds(
        lambda i, n: {"type": "tool_use", "id": i, "name": n, "input": {"path": "a"}},
        st.sampled_from(_IDS),
        st.sampled_from(["read_file", "ls"]),
    ),
    st.builds(
        lambda i: {"type": "tool_result", "tool_use_id": i, "content": "out"},
        st.sampled_from(_IDS),
    ),
    st.builds(
        lambda n: {"type": "text", "text": f"[{n} for 'a'] Result: ok"},
        st.sampled_from(["read_file", "ls"]),
    ),
)
_entry = st.builds(
    lambda role, content, ts, tag: {"role": role, "content": content, "ts": ts, **tag},
    st.sampled_from(["user", "assistant"]),
    st.one_of(st.sampled_from(["", "text"]), st.lists(_block, max_size=3)),
    st.integers(1000, 9000),
    st.sampled_from([{}, {}, {"condenseParent": "c1"}, {"isSummary": True, "condenseId": "c1"}]),
)


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(
    doc=st.lists(_entry, min_size=1, max_size=8),
    rng_seed=st.integers(0, 2**32 - 1),
    compact=st.booleans(),
)
def test_generated_sessions_read_back_narrowed_as_whole(doc, rng_seed, compact):
    """Small generated Roo sessions (calls, results, Cline text results, empty messages,
    condense tags, timestamps out of order), random fixes: both read-backs agree. Written
    compact, as Roo writes, the entries written anew are read back from the bytes written
    (`DocState.written`); spaced, encoded again."""
    text = json.dumps(doc, separators=(",", ":")) if compact else json.dumps(doc)
    wb = Workbench(load_bytes(text.encode(), "/tmp/input.json", format="roo"))
    note(f"steps: {_steps(wb, random.Random(rng_seed), 4)}")
    assert _outcome(wb, narrow=True) == _outcome(wb, narrow=False)


_CC = [s for s in seeds() if s.suffix == ".jsonl" and "claude" in s.name]


@pytest.mark.skipif(not _CC, reason="no Claude Code samples")
@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(which=st.integers(0, max(len(_CC) - 1, 0)), rng_seed=st.integers(0, 2**32 - 1))
def test_the_resume_check_refuses_what_the_signatures_refuse(which, rng_seed):
    """Claude Code's resume check compares block data as they are before it builds
    signatures: it refuses a reloaded conversation exactly when the signatures differ
    (blocks dropped, swapped, changed, a text written as a string or as a text block)."""
    from repair.errors import ExportRefused
    from repair.formats.claude_code.write import _same_conversation, _signature

    rng = random.Random(rng_seed)
    try:
        session = load_bytes(_CC[which].data, "/tmp/input.jsonl")
    except InputError:
        return
    want = session.messages
    got = list(want)
    for _ in range(rng.randrange(0, 3)):
        live = [k for k, m in enumerate(got) if m.live and m.blocks]
        if not live:
            break
        k = rng.choice(live)
        blocks = list(got[k].blocks)
        roll = rng.random()
        i = rng.randrange(len(blocks))
        if roll < 0.25:
            del blocks[i]
        elif roll < 0.5:
            rng.shuffle(blocks)
        elif roll < 0.75 and isinstance(blocks[i].data, dict):
            data = dict(blocks[i].data)
            data[rng.choice(list(data))] = rng.choice(["x", 1, None])
            blocks[i] = dataclasses.replace(blocks[i], data=data)
        elif isinstance(blocks[i].data, str):
            blocks[i] = dataclasses.replace(
                blocks[i], data={"type": "text", "text": blocks[i].data}
            )
        got[k] = got[k].with_blocks(blocks)
    try:
        _same_conversation("s.jsonl", want, got)
        refused = False
    except ExportRefused:
        refused = True
    assert refused == (_signature(want) != _signature(got))


# Claude Code: the lines written anew are parsed and the chain's stretches around them built
# again (repair/formats/claude_code/readback.py); generated sessions (parallel results
# written in completion order, thinking records, prompts, 1% of faults) and the samples


def cc_generated_fixed(case: int) -> Workbench:
    """A generated session (40-400 messages) after random fixes, undos and actions."""
    from bench.gen import gen_claude_code

    rng = random.Random(case)
    data, _ = gen_claude_code(rng.randrange(40, 400), rng.randrange(50))
    wb = Workbench(load_bytes(data, "/tmp/input.jsonl"))
    note(f"steps: {_steps(wb, rng, rng.randrange(1, 8))}")
    return wb


def _cc_outcome(wb: Workbench, narrow: bool):
    """As `_outcome`, and whether the narrowed path was taken (not the whole file)."""
    from repair.readback import _narrowed

    state = wb.session
    data = state.export().data
    try:
        took = _narrowed(state, data, "/tmp/written.jsonl", wb._known()) is not None
    except ExportRefused:
        took = True
    state.export()  # `_narrowed` read the writer's plan back once: write again
    return _outcome(wb, narrow=narrow), took


# generated Claude Code sessions, 40 of them, the same every run
CC_GENERATED = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@CC_GENERATED
@given(case=st.integers(0, 2**32 - 1))
def test_claude_code_narrowed_read_back_finds_what_the_whole_one_finds(case):
    """Random generated sessions (40-400 messages), random fixes, undos and actions: the
    narrowed read-back reaches the whole one's verdict (findings, places, counts, refusal)."""

    wb = cc_generated_fixed(case)
    (narrow, _), (whole, _) = _cc_outcome(wb, True), _cc_outcome(wb, False)
    assert narrow == whole


def test_claude_code_fixes_of_generated_sessions_are_read_back_narrowed():
    """The narrowed path is taken (not the whole file read again) on generated sessions
    fixed whole, and agrees with the whole read-back there."""
    from bench.gen import gen_claude_code

    for seed in range(4):
        data, _ = gen_claude_code(2000, seed)
        wb = Workbench(load_bytes(data, "/tmp/input.jsonl"))
        assert wb.apply_all() is not None
        (narrow, took) = _cc_outcome(wb, True)
        assert took, seed
        assert narrow == _outcome(wb, narrow=False)


def test_claude_code_read_back_builds_the_turns_the_writer_planned_only(monkeypatch):
    """Where the writer planned only the turns a fix touched, the read-back builds only
    those turns' messages again (the written chain is the chain read elsewhere), and finds
    what the whole read-back finds."""
    from bench.gen import gen_claude_code
    from repair.formats.claude_code import readback as cc_readback

    real, regions = cc_readback._regions, []

    def kept(*args):
        got = real(*args)
        regions.append(got)
        return got

    monkeypatch.setattr(cc_readback, "_regions", kept)
    for seed in range(3):
        data, _ = gen_claude_code(2000, seed)
        wb = Workbench(load_bytes(data, "/tmp/input.jsonl"))
        assert wb.apply_all() is not None
        regions.clear()
        narrow, took = _cc_outcome(wb, True)
        assert took and regions and regions[0] is not None, seed
        built = sum(r.new_end - r.new for r in regions[0])
        assert 0 < built < len(wb.session.messages) // 2, seed
        assert narrow == _outcome(wb, narrow=False)


@pytest.mark.parametrize(
    "name",
    [
        "claude_code_duplicate_id_after_resume.jsonl",
        "claude_code_parallel_interrupted.jsonl",
    ],
)
def test_claude_code_samples_read_back_narrowed_as_whole(name):
    seed = next(s for s in seeds() if s.name.endswith(name))
    wb = Workbench(load_bytes(seed.data, "/tmp/input.jsonl"))
    assert wb.apply_all() is not None
    assert _cc_outcome(wb, True)[0] == _cc_outcome(wb, False)[0]


def test_a_claude_code_writer_that_loses_a_block_is_caught_as_the_whole_read_back_catches_it(
    monkeypatch,
):
    """A writer bug: a rewritten record loses its last block. The whole read-back refuses
    the write (it does not resume as repaired); the narrowed one must refuse it too (and
    see it in the lines it parses: without the bug it takes the narrowed path)."""
    from bench.gen import gen_claude_code
    from repair.formats.claude_code import write

    data, _ = gen_claude_code(600, 1)
    wb = Workbench(load_bytes(data, "/tmp/input.jsonl"))
    assert wb.apply_all() is not None
    fine, took = _cc_outcome(wb, True)
    assert took and fine == _cc_outcome(wb, False)[0]
    real = write._with_content

    def lossy(obj, blocks, orig):
        return real(obj, blocks[:-1], orig)

    monkeypatch.setattr(write, "_with_content", lossy)
    broken = _outcome(wb, narrow=False)
    assert broken != fine  # the bug shows in the written file
    assert _outcome(wb, narrow=True) == broken
