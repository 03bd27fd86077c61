"""The timeline's rows are found without making the blocks of a message known to hold no
tool block (`Message.holds_tool_blocks`: its tool ids read by the loader), and are the
rows found from every block made: on every sample, fixture and corpus file and mutated
copies of them."""

from __future__ import annotations

import random

from repair.model import LazyMessage
from tests.engine.test_incremental import SEEDS
from tests.fuzz_support import mutated_session, over_mutated_seeds
from tui.rows import build_rows


def _rows(session) -> list[tuple]:
    table = build_rows(session)
    return [(r.kind, r.mi, r.bi) for r in table.rows] + [tuple(table.message_row)]


@over_mutated_seeds(SEEDS, 300, mutations=(0, 2))
def test_rows_found_without_blocks_are_the_rows_of_every_block(which, rng_seed, mutations):
    seed = SEEDS[which]
    lazy = mutated_session(seed, random.Random(rng_seed), mutations)
    made = mutated_session(seed, random.Random(rng_seed), mutations)
    if lazy is None:
        return
    assert made is not None
    for m in made.messages:
        m.blocks  # noqa: B018 (made now, before the rows ask)
    assert _rows(lazy) == _rows(made)
    # a message the rows left unmade holds no tool block
    for a, b in zip(lazy.messages, made.messages, strict=True):
        if isinstance(a, LazyMessage) and not a.made():
            assert not any(
                blk.tool_id or blk.type in ("tool_use", "tool_result") for blk in b.blocks
            )
