"""The analysis pairs lean (`pair(..., usual_id=)`: no call or result object for a usual
pair) and says exactly what it says over the whole pairing; the lean pairing's whole lists,
built when asked for, are the whole pairing's."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from repair import analysis, incremental
from repair.incremental import Shift, changes, reanalyze
from repair.model import Block, Message, Session, block_from_anthropic
from repair.pairing import LeanPairing, neighbours, pair
from repair.plan import apply_fixes, make_plan
from tests.engine.engine_factory import R, S, T, U, pairing_facts

_IDS = ["t1", "t2", "t3", "t4", "bad id", ""]
_block = st.one_of(
    st.builds(T, st.sampled_from(["", " ", "ok"])),
    st.builds(U, st.sampled_from(_IDS), st.sampled_from(["read_file", "ls"])),
    st.builds(R, st.sampled_from([*_IDS, "x9"])),
)
_message = st.builds(
    lambda role, content, ts, hidden: Message(
        role=role,
        blocks=tuple(block_from_anthropic(c) for c in content),
        meta={} if ts is None else {"timestamp": float(ts)},
        hidden=hidden,
    ),
    st.sampled_from(["user", "assistant", "user", "assistant"]),
    st.lists(_block, max_size=4),
    st.one_of(st.none(), st.integers(0, 5)),
    st.sampled_from([False, False, False, True]),
)


@st.composite
def _turn(draw) -> list[Message]:
    """A call message and the message after it, most often answering its calls in order,
    from a small pool of ids (so ids repeat across turns)."""
    calls = draw(st.lists(st.sampled_from(_IDS), min_size=1, max_size=3))
    answers = draw(
        st.one_of(
            st.just(calls),
            st.just(calls),
            st.permutations(calls),
            # answered twice (Gemini CLI 0.61 writes each result twice), or more
            st.just([*calls, *calls]),
            st.just([*calls, *calls]),
            st.just([*calls, *calls, calls[0]]),
            st.lists(st.sampled_from([*_IDS, "x9"]), max_size=3),
        )
    )
    stamps = draw(st.one_of(st.just((None, None)), st.tuples(st.integers(0, 3), st.integers(0, 3))))
    roles = draw(
        st.sampled_from(
            [("assistant", "user")] * 6 + [("user", "user"), ("assistant", "assistant")]
        )
    )
    meta = [{} if t is None else {"timestamp": float(t)} for t in stamps]
    text = draw(st.sampled_from([False, False, True]))  # Cline's text answers

    def answer(i: str) -> Block:
        if roles[1] != "user":  # an assistant after the calls: a text (a result there is
            return block_from_anthropic(T(i))  # in the wrong role)
        if text:
            return Block("text", T("[x] Result:"), tool_id=i or None)
        return block_from_anthropic(R(i))

    return [
        Message(roles[0], tuple(block_from_anthropic(U(i)) for i in calls), meta=meta[0]),
        Message(roles[1], tuple(map(answer, answers)), meta=meta[1]),
    ]


# turns and single messages: a session's parts
_PARTS = st.lists(st.one_of(_turn(), _turn(), _message.map(lambda m: [m])), max_size=8)
_TARGETS = st.sampled_from(["anthropic", "bedrock", "openai-chat", "gemini"])
# the arguments of a random session: its parts, usual turns, results written twice, target
_SESSIONS = {
    "parts": _PARTS,
    "usual": st.integers(0, 3),
    "twice": st.integers(0, 2),
    "target": _TARGETS,
}


def _usual_turns(n: int, twice: int = 0) -> list[Message]:
    """n turns of one call answered in the next message, then `twice` turns of two calls
    answered twice over (the results, then the same again)."""
    out = []
    for k in range(n):
        out.append(Message("assistant", (block_from_anthropic(U(f"c{k}")),)))
        out.append(Message("user", (block_from_anthropic(R(f"c{k}")),)))
    for k in range(twice):
        ids = (f"d{k}", f"e{k}")
        out.append(
            Message("assistant", tuple(block_from_anthropic(b) for b in (T("calls"), *map(U, ids))))
        )
        out.append(Message("user", tuple(block_from_anthropic(R(i)) for i in ids * 2)))
    return out


def _findings(session: Session, target: str, lean: bool) -> list:
    got = analysis.analyze(session, target, whole=not lean)
    # lean unless a block sits in the wrong role's message; the whole pairing when asked
    assert isinstance(got.pairing, LeanPairing) == (lean and not got.pairing.wrong_role)
    return [(f.to_json(), f.position, f.key, f.severity) for f in got.findings]


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(
    **_SESSIONS,
    remap=st.booleans(),
)
def test_lean_pairing_says_what_the_whole_pairing_says(parts, usual, twice, target, remap):
    """Random turns and messages (repeated, missing, refused and id-less ids, results
    before calls, results written twice, stamps out of order, hidden messages, blocks in
    the wrong role's message) and usual turns: the same findings, the same whole pairing."""
    msgs = [m for part in parts for m in part] + _usual_turns(usual, twice)
    session = S(*msgs, target=target)
    assert _findings(session, target, lean=True) == _findings(session, target, lean=False)
    rules = analysis._IdRules.of(target)
    p = pair(msgs, remap=remap, usual_id=rules.fine, all_usual=rules.all_fine)
    assert pairing_facts(p) == pairing_facts(pair(msgs, remap=remap))
    if isinstance(p, LeanPairing):
        # what it left out are usual pairs (each call answered once, in the message after
        # it) and calls answered twice there (`checked_copies`)
        left = {u.block.bid for u in p.uses} - {u.block.bid for u in p.checked_uses}
        copies = dict(p.checked_copies)
        for u in p.uses:
            if u.block.bid in left:
                assert u.dup_of is None and {r.mi for r in u.results} == {u.home}
                assert len(u.results) == (2 if copies.get(u.mi) == u.home else 1)


@settings(max_examples=300, deadline=None)
@given(
    ids=st.lists(
        st.one_of(
            st.none(),
            st.text(alphabet="ab_-.:9 \n\u00e9\u0661]", max_size=3),
            st.text(alphabet="ab", min_size=60, max_size=70),
        ),
        max_size=6,
    ),
    target=st.sampled_from(["anthropic", "bedrock", "openai-chat", "gemini", "claude-code"]),
)
def test_ids_read_at_once_are_fine_exactly_when_each_is(ids, target):
    """`all_usual` (a session's call ids in one go) agrees with `usual_id` of each: ids
    the target refuses (spaces, dots for Anthropic, a newline, non-ASCII, too long for
    Bedrock), empty and missing ones among usual ones."""
    rules = analysis._IdRules.of(target)
    assert rules.all_fine(ids) == all(map(rules.fine, ids))


def test_a_session_of_usual_turns_builds_no_call_or_result():
    msgs = _usual_turns(50)
    p = pair(msgs, usual_id=analysis._IdRules.of("anthropic").fine)
    assert isinstance(p, LeanPairing)
    assert p.checked_uses == [] and p.checked_results == []
    assert len(p.uses) == 50 and all(len(u.results) == 1 for u in p.uses)


def test_results_written_twice_build_no_call_or_result_and_each_copy_is_a_duplicate():
    msgs = _usual_turns(2, twice=3)
    p = pair(msgs, usual_id=analysis._IdRules.of("gemini").fine)
    assert isinstance(p, LeanPairing)
    assert p.checked_uses == [] and p.checked_results == [] and len(p.checked_copies) == 3
    got = analysis.analyze(S(*msgs, target="gemini"), "gemini")
    assert [(f.code, f.position, f.block_index, f.tool_use_id) for f in got.findings] == [
        ("duplicate-tool-result", mi, bi, tid)
        for mi, k in ((5, 0), (7, 1), (9, 2))
        for bi, tid in ((2, f"d{k}"), (3, f"e{k}"))
    ]


def test_a_result_written_a_third_time_elsewhere_is_paired_the_whole_way():
    """A turn answered twice over whose call is answered once more in another message (before
    or after it): not left out, so the third result is said of as the whole pairing says."""
    for extra in (0, 3):
        msgs = _usual_turns(1, twice=1)
        msgs.insert(extra, Message("user", (block_from_anthropic(R("d0")),)))
        session = S(*msgs, target="gemini")
        assert _findings(session, "gemini", lean=True) == _findings(session, "gemini", lean=False)
        p = pair(msgs, usual_id=analysis._IdRules.of("gemini").fine)
        assert isinstance(p, LeanPairing) and p.checked_copies == []


def test_a_block_in_the_wrong_role_pairs_the_whole_session():
    msgs = [*_usual_turns(3), Message("user", (block_from_anthropic(U("late")),))]
    p = pair(msgs, usual_id=analysis._IdRules.of("anthropic").fine)
    assert not isinstance(p, LeanPairing)
    assert p.wrong_role and len(p.checked_uses) == 4


def test_a_result_after_a_usual_turn_looks_past_it_for_its_call():
    """The result of t1 in the message after a usual turn answers the call of t1 the whole
    pairing finds (the last one before it: the usual turn's message has none), not the
    first unanswered one of the message with two."""
    a = Message("assistant", (block_from_anthropic(U("t1")), block_from_anthropic(U("t1"))))
    msgs = [
        a,
        Message("user", (block_from_anthropic(T("no results")),)),
        Message("assistant", (block_from_anthropic(U("c")),)),
        Message("user", (block_from_anthropic(R("c")), block_from_anthropic(R("t1")))),
    ]
    p = pair(msgs, usual_id=analysis._IdRules.of("anthropic").fine)
    assert isinstance(p, LeanPairing)
    (late,) = [r for r in p.checked_results if r.tool_id == "t1"]
    assert late.use is not None and late.use.bi == 1
    assert pairing_facts(p) == pairing_facts(pair(msgs))


def _plan_facts(session: Session, target: str, lean: bool) -> list:
    """A plan of the session, by value (a message or block a fix makes anew: "new")."""
    got = analysis.analyze(session, target, whole=not lean)
    plan = make_plan(session, got)
    uids = {m.uid for m in session.messages}

    def named(v: object) -> object:
        return v if not isinstance(v, int) or isinstance(v, bool) or v in uids else "new"

    out = []
    for fix in plan.fixes:
        edits = [
            (
                type(e).__name__,
                {
                    k: (named(v) if k.endswith("uid") else v)
                    for k, v in vars(e).items()
                    if k not in ("message", "block")
                },
            )
            for e in fix.edits
        ]
        touches = sorted(map(str, map(named, fix.touches)))
        out.append((fix.code, fix.action, fix.key, fix.detail, touches, edits))
    return out


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(
    **_SESSIONS,
)
def test_the_plan_from_the_lean_pairing_is_the_plan_from_the_whole_one(parts, usual, twice, target):
    """The fixes (their edits, what they touch, what they say) a plan builds from the
    calls and results the lean pairing checks are those it builds from the whole pairing,
    and the lean pairing is not made whole for it (answered twice aside)."""
    msgs = [m for part in parts for m in part] + _usual_turns(usual, twice)
    session = S(*msgs, target=target)
    assert _plan_facts(session, target, lean=True) == _plan_facts(session, target, lean=False)
    got = analysis.analyze(session, target)
    make_plan(session, got)
    p = got.pairing
    if isinstance(p, LeanPairing) and not p.checked_copies:
        assert not p.built


def _one_fix(session: Session, before: analysis.Analysis, k: int):
    """Fix k of the plan (modulo their number) applied alone: the new state, what changed,
    and the increment's analysis of it; None when there is no fix or the increment
    declines."""
    todo = make_plan(session, before).actionable
    if not todo:
        return None
    after, _ = apply_fixes(session, [todo[k % len(todo)]])
    changed = changes(session.messages, after.messages)
    got = reanalyze(before, session.messages, after, changed)
    return None if got is None else (after, changed, got)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(
    parts=_PARTS,
    usual=st.integers(0, 3),
    target=_TARGETS,
    k=st.integers(0, 7),
)
def test_a_step_after_a_lean_analysis_is_followed_lean(parts, usual, target, k):
    """One fix applied after a lean analysis: the increment (`reanalyze`) gives what the
    analysis of the new state gives, its whole pairing is the new state's, and a step
    that moves no message keeps it lean."""
    msgs = [m for part in parts for m in part] + _usual_turns(usual)
    session = S(*msgs, target=target)
    before = analysis.analyze(session, target)
    step = _one_fix(session, before, k)
    if step is None:
        return
    after, changed, got = step
    want = analysis.analyze(after, target)
    said = [(f.to_json(), f.position, f.key, f.severity) for f in got.findings]
    assert said == [(f.to_json(), f.position, f.key, f.severity) for f in want.findings]
    lean = isinstance(before.pairing, LeanPairing) and not before.pairing.checked_copies
    if lean and not isinstance(changed, Shift):
        assert isinstance(got.pairing, LeanPairing) and not got.pairing.built
    assert pairing_facts(got.pairing.whole()) == pairing_facts(pair(after.messages))


def _index_says(p, msgs: list[Message]) -> None:
    """The pairing's tool-id index (`incremental._ids_at`) gives, for every id a live
    message holds, asked with that message's place, with another place and with none,
    the positions of the calls and results of the whole pairing that carry it."""
    whole = pair(msgs)
    want: dict[str, list[int]] = {}
    for x in (*whole.uses, *whole.results):
        if x.tool_id:
            want.setdefault(x.tool_id, []).append(x.mi)
    index = incremental._ids_at(p)
    assert sorted(index.get("never-seen")) == []
    for mi in p.live:
        calls, answers = msgs[mi].tool_ids()
        for tid in (*calls, *answers):
            if tid:
                expected = sorted(want[tid])
                assert sorted(index.get(tid, mi)) == expected
                assert sorted(index.get(tid, 0)) == expected
                assert sorted(index.get(tid)) == expected


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(
    **_SESSIONS,
    steps=st.lists(st.integers(0, 7), max_size=3),
)
def test_the_lean_id_index_is_the_index_of_every_call_and_result(
    parts, usual, twice, target, steps
):
    """A lean pairing's tool-id index (`incremental._LeanIds`: no entry for a usual id, read
    from the message it is found in and its turn) reads as the index of every call and
    result of the whole pairing, and so does each one after steps followed lean."""
    msgs = [m for part in parts for m in part] + _usual_turns(usual, twice)
    session = S(*msgs, target=target)
    got = analysis.analyze(session, target)
    if isinstance(got.pairing, LeanPairing):
        assert isinstance(incremental._ids_at(got.pairing), incremental._LeanIds)
    _index_says(got.pairing, session.messages)
    for k in steps:
        step = _one_fix(session, got, k)
        if step is None:
            return
        session, _, got = step
        _index_says(got.pairing, session.messages)


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(
    start=st.integers(0, 5),
    length=st.integers(0, 8),
    gaps=st.sets(st.integers(0, 12), max_size=3),
)
def test_the_neighbours_of_the_live_messages_are_the_dicts_they_replace(start, length, gaps):
    """The lean pairing reads the next and previous live message through
    `pairing.neighbours` (arithmetic where the live messages are a run of positions, not at
    0 alone): the mapping a dict of each live message to the next (previous) one is."""
    live = [k for k in range(start, start + length) if k not in gaps]
    for step, want in (
        (1, dict(zip(live, live[1:], strict=False))),
        (-1, dict(zip(live[1:], live, strict=False))),
    ):
        got = neighbours(live, step)
        assert dict(got) == want and len(got) == len(want)
        for k in range(-2, start + length + 3):
            assert (got.get(k), k in got) == (want.get(k), k in want)
