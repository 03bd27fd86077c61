"""Fuzz: every sample and corpus file, mutated at random (structure, types, numbers, strings,
bytes), keeps histview's promises through the public functions and the CLI (see
tests/fuzz_support.py for the mutations and the promises checked). A short deterministic run
for CI; `python bench/fuzz.py` runs tens of thousands of cases by hand."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

from hypothesis import note

from tests.fuzz_support import check_case, mutate, over_mutated_seeds, seeds
from tests.paths import FIXTURES, SAMPLES

SEEDS = seeds()


@over_mutated_seeds(SEEDS, 120, count=(1, 3))
def test_a_mutated_session_is_read_checked_and_fixed_without_losing_anything(
    which, rng_seed, count
):
    seed = SEEDS[which]
    data, done = mutate(seed, random.Random(rng_seed), count)
    note(f"{seed.name}: {'; '.join(done)}")
    with tempfile.TemporaryDirectory() as tmp:
        check_case(data, seed.suffix, Path(tmp))


def test_the_seeds_cover_every_sample_and_format():
    """New samples and formats are fuzzed as they land: every sample file is a seed."""
    names = {s.name.split("/")[-1] for s in SEEDS}
    samples = SAMPLES
    assert {p.name for p in samples.glob("*.json*")} <= names


def test_cases_the_long_fuzz_run_found_keep_their_promises(tmp_path):
    """Cases `bench/fuzz.py` found, kept as files. relink_after_the_first_line_is_dropped:
    a Claude Code file whose first record (an orphan result) is dropped while a gap is
    re-linked, so the record written first is an unreadable line kept as read; reading the
    re-linked lines again raised "not JSON" out of apply_all. uuid_object_in_a_relinked_file,
    uuid_list_beside_a_relink: a line that is no node, whose `uuid` is an object or a list,
    in a file whose fix re-links records: the writer's lost-parent check hashed it.
    gemini_cli_call_written_twice: a Gemini CLI record whose toolCalls[] holds one call twice
    (Gemini CLI sends both under one id): the rename of the later one was written to both,
    so each further fix renamed again.
    claude_code_subagent_relink_after_a_drop: a gap whose record an orphan drop empties;
    the gap moved to the record after it only as written, so a second fix re-linked it.
    claude_code_truncated_drop_pairs_nothing_again, claude_code_subagent_drop_pairs_nothing_again:
    apply-all drops a message holding no tool id (a record cut short; a sidechain's malformed
    record): the increment under the claude-code target read the first of no positions
    paired again (IndexError, `fix` failed).
    codex_fix_leaves_odd_lines_a_larger_share: a short Codex rollout with a line of an
    unknown type; the fix dropped four empty or malformed lines, so fewer than 9 lines in
    10 were known records and the written file no longer read as Codex (detection: a
    session_meta header now decides it).
    codex_compacted_empty_item_dropped: a compacted line whose history ends in a user item
    of no content, alone in its message (an empty-content finding); its fix dropped the
    message, the writer wrote the compacted line as it was, and a second fix found it again.
    Now left out of every plan (`CodexAdapter.frozen`), as a fix of a compaction's other
    items is: `fix` writes the others and reports it unfixed (tests/cli/test_cli_frozen.py)."""
    for case in sorted((FIXTURES / "fuzz").glob("*.json*")):
        work = tmp_path / case.stem
        work.mkdir()
        check_case(case.read_bytes(), case.suffix, work)
