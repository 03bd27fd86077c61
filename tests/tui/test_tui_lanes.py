"""The row table and the link gutter's lane layout (pure data, no Textual)."""

from __future__ import annotations

import orjson

from repair.analysis import analyze
from repair.formats import load_bytes
from tui.lanes import (
    ABOVE,
    DUPLICATE,
    MISMATCH,
    MISPLACED,
    ORPHAN_RESULT,
    ORPHAN_USE,
    OVERFLOW,
    PAIRED,
    layout,
)
from tui.rows import MSG, RESULT, USE, build_rows, summary


def _session(msgs):
    return load_bytes(orjson.dumps(msgs), format="anthropic")


def tu(i):
    return {"type": "tool_use", "id": i, "name": "run", "input": {}}


def tr(i):
    return {"type": "tool_result", "tool_use_id": i, "content": "ok"}


def _states(session):
    a = analyze(session)
    table = build_rows(session, a)
    lay = layout(a.pairing, table)
    return table, lay, {iv.state for lane in lay.lanes for iv in lane}


def test_rows_one_per_message_and_tool_block():
    s = _session(
        [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "text", "text": "x"}, tu("a"), tu("b")]},
            {"role": "user", "content": [tr("a"), tr("b")]},
        ]
    )
    table = build_rows(s)
    assert [(r.kind, r.mi, r.bi) for r in table.rows] == [
        (MSG, 0, None),
        (MSG, 1, None),
        (USE, 1, 1),
        (USE, 1, 2),
        (MSG, 2, None),
        (RESULT, 2, 0),
        (RESULT, 2, 1),
    ]


def test_every_state_is_drawn():
    s = _session(
        [
            {"role": "user", "content": [tr("above")]},  # result above its use
            {
                "role": "assistant",
                "content": [tu("above"), tu("p"), tu("dup"), tu("mis")],
            },
            # one unanswered call, one unknown id: a safe positional match
            {"role": "user", "content": [tr("p"), tr("dup"), tr("dup"), tr("wrong-id")]},
            {"role": "user", "content": [tr("nobody")]},
            {"role": "assistant", "content": [tu("later"), tu("orph")]},
            {"role": "user", "content": [{"type": "text", "text": "between"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
            {"role": "user", "content": [tr("later")]},
        ]
    )
    _table, _lay, states = _states(s)
    assert {PAIRED, ABOVE, ORPHAN_USE, DUPLICATE, MISMATCH, ORPHAN_RESULT, MISPLACED} <= states


def test_open_pairings_never_share_a_lane():
    uses = [tu(f"t{i}") for i in range(5)]
    s = _session(
        [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": uses},
            {"role": "user", "content": [tr(f"t{i}") for i in reversed(range(5))]},
        ]
    )
    _table, lay, _ = _states(s)
    ivs = [iv for lane in lay.lanes for iv in lane]
    assert lay.used_lanes == 5
    for a in ivs:
        for b in ivs:
            if a is not b and a.lane == b.lane:
                assert a.end < b.start or b.end < a.start


def test_lanes_are_reused_after_a_pairing_closes():
    msgs = [{"role": "user", "content": "go"}]
    for i in range(50):
        msgs.append({"role": "assistant", "content": [tu(f"t{i}")]})
        msgs.append({"role": "user", "content": [tr(f"t{i}")]})
    _table, lay, _ = _states(_session(msgs))
    assert lay.used_lanes == 1


def test_overflow_mark_instead_of_a_crash():
    n = 10
    s = _session(
        [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [tu(f"t{i}") for i in range(n)]},
            {"role": "user", "content": [tr(f"t{i}") for i in range(n)]},
        ]
    )
    table, lay, _ = _states(s)
    assert lay.used_lanes == n
    last_use = table.block_row[(1, n - 1)]
    cells = lay.cells(last_use, 6)
    assert len(cells) == 6 and cells[-1] == ("»", OVERFLOW)
    first_use = table.block_row[(1, 0)]
    assert lay.cells(first_use, 6)[0] == ("╭", PAIRED)


def test_connector_crosses_passing_lanes():
    s = _session(
        [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [tu("a"), tu("b")]},
            {"role": "user", "content": [tr("a"), tr("b")]},
        ]
    )
    table, lay, _ = _states(s)
    res_a = table.block_row[(2, 0)]
    chars = "".join(ch for ch, _ in lay.cells(res_a, 4))
    assert chars == "╰┼──"


def test_summary_is_one_sanitised_line():
    s = _session([{"role": "user", "content": "a\x1b[2J\nb\u202e[bold]c" + "x" * 500}])
    line = summary(s, build_rows(s).rows[0], 40)
    assert len(line) == 40 and "\n" not in line and "\x1b" not in line and "\u202e" not in line
    assert "[bold]" in line
