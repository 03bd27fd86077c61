"""Which tool_result answers which tool_use (docs/codes.md, Pairing), in one linear pass.

Only live messages take part (hidden and malformed ones are not sent). Adjacency ("the
immediately preceding assistant message", "home") is measured over live messages.

Only ids that are non-empty strings pair: a call or result without a usable id
(`invalid-tool-id`) never matches another by id, though it still pairs by position in a
turn's home message (`partner`). A block in the wrong role's message (`wrong-role-block`:
a tool_use in a user message, a tool_result in an assistant message) pairs by id like the
others and is marked `wrong_role`; it takes no place in a turn.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from operator import attrgetter
from typing import TypeGuard, TypeVar

from .gcpause import gc_paused
from .model import TOOL_RESULT, TOOL_USE, Block, Message

_V = TypeVar("_V")


@dataclass(slots=True, eq=False)
class Use:
    mi: int  # message index (in session.messages)
    bi: int  # block index
    block: Block
    order: int  # position among the tool_uses of its message
    home: int | None  # message index of the user message right after, if any
    results: list[Result] = field(default_factory=list)
    dup_of: Use | None = None  # an earlier tool_use with the same id
    partner: Result | None = None  # positional partner of a mismatched id
    wrong_role: bool = False  # in a user message

    @property
    def tool_id(self) -> str | None:
        return self.block.tool_id

    @property
    def name(self) -> str:
        return self.block.name or "?"

    @property
    def has_id(self) -> bool:
        return pairable(self.block.tool_id)


@dataclass(slots=True, eq=False)
class Result:
    mi: int
    bi: int
    block: Block
    use: Use | None = None
    before_use: bool = False  # paired with a later tool_use (result delivered first)
    partner: Use | None = None  # mismatched: the unresolved use it most likely answers
    wrong_role: bool = False  # a tool_result in an assistant message

    @property
    def tool_id(self) -> str | None:
        return self.block.tool_id

    @property
    def has_id(self) -> bool:
        return pairable(self.block.tool_id)

    @property
    def text_answer(self) -> bool:
        """A text block an adapter recognised as the answer (Cline's `[x] Result:`)."""
        return self.block.type != TOOL_RESULT

    @property
    def is_duplicate(self) -> bool:
        return self.use is not None and self.use.results[0] is not self


@dataclass
class Pairing:
    uses: list[Use]
    results: list[Result]
    live: list[int]  # indices of live messages, in order
    # (mappings: a pairing moved by a step reads them through the step's shifts,
    # repair.incremental)
    next_live: Mapping[int, int]  # message index -> next live message index
    prev_live: Mapping[int, int]
    uses_by_message: Mapping[int, list[Use]]
    results_by_message: Mapping[int, list[Result]]
    wrong_role: bool = False  # some tool block sits in the other role's message

    @property
    def checked_uses(self) -> list[Use]:
        """The calls a rule may have something to say about (`LeanPairing`: not the usual
        ones)."""
        return self.uses

    @property
    def checked_results(self) -> list[Result]:
        return self.results

    @property
    def checked(self) -> Pairing:
        """The pairing of `checked_uses` and `checked_results`, by message too (itself; a
        `LeanPairing`'s, its usual pairs and `checked_copies` not in it): what a reader may
        ask without the whole pairing being built."""
        return self

    def whole(self) -> Pairing:
        """The pairing of every call and result (a `LeanPairing`'s built now)."""
        return self

    @property
    def checked_copies(self) -> list[tuple[int, int]]:
        """(`LeanPairing`) The turns (call message, home) whose calls and results are not
        built because the home answers each call twice: its results in the calls' order, then
        the same again (Gemini CLI 0.61 writes every result twice). The one thing a rule says
        of such a turn is duplicate-tool-result for each second copy."""
        return []

    def calls_in(self, positions: Iterable[int]) -> list[Use]:
        """The calls of the messages at `positions` (sorted), in file order (those in the
        wrong role's message too)."""
        uses = self.uses
        out: list[Use] = []
        for mi in positions:
            lo = bisect_left(uses, mi, key=_mi)
            out += uses[lo : bisect_right(uses, mi, lo=lo, key=_mi)]
        return out

    def results_in(self, positions: Iterable[int]) -> list[Result]:
        """The results of the messages at `positions` (sorted), in file order."""
        out: list[Result] = []
        at = self.results_by_message
        for mi in positions:
            out += at.get(mi, ())
        return out

    def tool_ids(self) -> set[str]:
        """Every usable id a call or result carries."""
        return {u.tool_id for u in self.uses if u.tool_id} | {
            r.tool_id for r in self.results if r.tool_id
        }


_mi = attrgetter("mi")  # a call's or result's message position


class LeanPairing(Pairing):
    """A pairing whose usual calls and results (`pair(..., usual_id=)`) are not built: only
    the others are (`checked_uses`, `checked_results`), paired as `pair` pairs them. The whole
    pairing (`uses`, `results`, and by message) is built when first asked for."""

    def __init__(
        self,
        messages: list[Message],
        remap: bool,
        live: list[int],
        next_live: Mapping[int, int],
        prev_live: Mapping[int, int],
        odd: Pairing,
        copies: list[tuple[int, int]],
    ) -> None:
        self._messages = messages
        self._remap = remap
        self._whole: Pairing | None = None
        self.live = live
        self.next_live = next_live
        self.prev_live = prev_live
        self.wrong_role = False
        self._odd = odd
        self._copies = copies

    @property
    def checked_uses(self) -> list[Use]:
        return self._odd.uses

    @property
    def checked_results(self) -> list[Result]:
        return self._odd.results

    @property
    def checked(self) -> Pairing:
        return self._odd

    def whole(self) -> Pairing:
        return self._built()

    @property
    def checked_copies(self) -> list[tuple[int, int]]:
        return self._copies

    @property
    def built(self) -> bool:
        """Whether the whole pairing was built (asked for) already."""
        return self._whole is not None

    @property
    def messages(self) -> list[Message]:
        return self._messages

    def tool_ids(self) -> set[str]:
        if self._whole is not None:
            return self._whole.tool_ids()
        msgs = self._messages  # (no call in a user message, no answer in an assistant one)
        return {t for mi in self.live for ids in msgs[mi].tool_ids() for t in ids if t}

    def followed(self, messages: list[Message], odd: Pairing) -> LeanPairing:
        """The lean pairing of `messages` (the same live messages, this one's after a step
        that paired some again: repair.incremental) whose `checked` is `odd` (a usual pair
        paired again may be in it: no rule says anything of it)."""
        return LeanPairing(
            messages, self._remap, self.live, self.next_live, self.prev_live, odd, []
        )

    def _built(self) -> Pairing:
        if self._whole is None:
            with gc_paused():  # (the live messages' maps are the lean pairing's: the same)
                self._whole = _pair(
                    self._messages,
                    self.live,
                    self.next_live,
                    self.prev_live,
                    self._remap,
                    frozenset(),
                )
        return self._whole

    # the whole pairing's lists, built when first asked for (`Pairing`'s fields)
    @property
    def uses(self) -> list[Use]:  # type: ignore[override]
        return self._built().uses

    @property
    def results(self) -> list[Result]:  # type: ignore[override]
        return self._built().results

    @property
    def uses_by_message(self) -> Mapping[int, list[Use]]:  # type: ignore[override]
        return self._built().uses_by_message

    @property
    def results_by_message(self) -> Mapping[int, list[Result]]:  # type: ignore[override]
        return self._built().results_by_message


class Lookup(Mapping[int, _V]):
    """A mapping read when asked for (`get`), its keys listed only when iterated."""

    __slots__ = ("_get", "_keys")

    def __init__(self, get: Callable[[int], _V | None], keys: Callable[[], list[int]]):
        self._get = get
        self._keys = keys

    def get(self, k: int, default: _V | None = None) -> _V | None:  # type: ignore[override]
        got = self._get(k)
        return default if got is None else got

    def __getitem__(self, k: int) -> _V:
        got = self._get(k)
        if got is None:
            raise KeyError(k)
        return got

    def __contains__(self, k: object) -> bool:
        return isinstance(k, int) and self._get(k) is not None

    def __iter__(self) -> Iterator[int]:
        return iter(self._keys())

    def __len__(self) -> int:
        return len(self._keys())


def neighbours(live: list[int], step: int) -> Lookup[int]:
    """Live message -> the next (`step` 1) or previous (-1) live message, read from the
    list of live messages (where the live messages are a run of positions, every message
    from the first live one to the last, the one next to it: no dict of 100k entries)."""
    n = len(live)
    if n and live[-1] - live[0] == n - 1:  # (sorted, each once: a run of positions)
        lo, hi = live[0], live[-1]

        def every(k: int) -> int | None:
            return k + step if lo <= k <= hi and lo <= k + step <= hi else None

        return Lookup(every, lambda: live[:-1] if step > 0 else live[1:])

    def get(k: int) -> int | None:
        i = bisect_left(live, k)
        if i < len(live) and live[i] == k:
            j = i + step
            if 0 <= j < len(live):
                return live[j]
        return None

    return Lookup(get, lambda: live[:-1] if step > 0 else live[1:])


def pairable(tool_id: str | None) -> TypeGuard[str]:
    """Only a non-empty string id pairs by id (None: missing or not a string)."""
    return isinstance(tool_id, str) and tool_id != ""


def pair(
    messages: list[Message],
    *,
    remap: bool = True,
    usual_id: Callable[[str | None], bool] | None = None,
    all_usual: Callable[[list[str | None]], bool] | None = None,
) -> Pairing:
    """Pair results with uses. `remap=False` never pairs an unknown id with an unanswered
    call (formats whose call ids are unique per call, such as Codex rollouts).

    `usual_id` (the analysis: an id the target accepts): a `LeanPairing` that builds no
    `Use` and `Result` for the usual pairs, a call whose id (`usual_id` of it true) no other
    call and only one result carries, that result in the user message right after it and
    not stamped before it. No rule says anything about such a pair; every other call and
    result is built and paired as the whole pairing pairs it (the ids of the usual pairs
    are their own, so nothing else reaches them). A block in the wrong role's message makes
    the whole pairing. `all_usual`: whether `usual_id` holds for each of a list of ids, in
    one go (a session's calls are read at once, not turn by turn).

    A turn whose home answers its calls twice (`checked_copies`: the results in the calls'
    order, then the same ids again, each call's id in no other call and no other result) is
    left out too: the whole pairing gives each call its two results, the second a
    duplicate."""
    live = [i for i, m in enumerate(messages) if not m.hidden and m.malformed is None]
    if usual_id is not None:
        got = _usual_ids(messages, live, usual_id, all_usual)
        if got is not None:
            # (the lean pairing reads the neighbours of a few messages: none of 100k dicts)
            usual, others, copies = got
            nxt, prev = neighbours(live, 1), neighbours(live, -1)
            odd = _pair(messages, others, nxt, prev, remap, usual)
            return LeanPairing(list(messages), remap, live, nxt, prev, odd, copies)
    next_live: dict[int, int] = dict(zip(live, live[1:], strict=False))
    prev_live: dict[int, int] = dict(zip(live[1:], live, strict=False))
    return _pair(messages, live, next_live, prev_live, remap, frozenset())


def _usual_ids(
    messages: list[Message],
    live: list[int],
    usual_id: Callable[[str | None], bool],
    all_usual: Callable[[list[str | None]], bool] | None = None,
) -> tuple[set[str], list[int], list[tuple[int, int]]] | None:
    """The ids of the usual pairs (see `pair`) that `_pair` meets, from each message's
    `tool_ids`, the live messages holding any other call or result (in order) and the turns
    answered twice (`Pairing.checked_copies`); None when a tool block sits in the wrong
    role's message. (`_pair` reads only the other messages, and a turn whose every pair is
    usual has none among them: its ids are in no other message, so they are not kept.)"""
    calls_seen: list[str | None] = []
    answers_seen: list[str | None] = []
    # (call message, its home, their calls and answers): the turns that may be usual
    turns: list[tuple[int, int, tuple[str | None, ...], tuple[str | None, ...]]] = []
    others: list[int] = []
    waiting: tuple[str | None, ...] = ()  # the calls of the live message before
    asked = 0  # where they are
    stamp = None
    tool_ids = Message.tool_ids
    for mi in live:
        msg = messages[mi]
        got = msg._tool_ids  # (`Message.tool_ids`: made once)
        calls, answers = tool_ids(msg) if got is None else got
        if msg.role == "assistant":
            if answers:
                return None  # a tool_result (or a block with a tool id) in an assistant message
            if waiting:
                others.append(asked)  # calls without a user message after them
            waiting = calls
            if calls:
                calls_seen += calls
                asked = mi
                stamp = msg.timestamp
            continue
        if calls:
            return None
        if answers:
            answers_seen += answers
            t = msg.timestamp if waiting else None
            if waiting and msg.role == "user" and (t is None or stamp is None or not t < stamp):
                turns.append((asked, mi, waiting, answers))
            else:
                if waiting:
                    others.append(asked)
                others.append(mi)
        elif waiting:
            others.append(asked)
        waiting = ()
    if waiting:
        others.append(asked)
    repeated_calls, _ = repeated_ids(calls_seen)
    repeated_answers, twice = repeated_ids(answers_seen)
    repeated = repeated_calls | repeated_answers
    every = all_usual is not None and all_usual(calls_seen)  # every call's id usual
    usual: set[str] = set()
    copies: list[tuple[int, int]] = []
    for asked, home, calls, answers in turns:
        if answers == calls and repeated.isdisjoint(calls) and (every or all(map(usual_id, calls))):
            continue  # the usual turn: every call answered, in order
        if (
            len(answers) == 2 * len(calls)
            and answers[: len(calls)] == calls == answers[len(calls) :]
            and twice.issuperset(calls)
            and repeated_calls.isdisjoint(calls)
            and (every or all(map(usual_id, calls)))
        ):
            copies.append((asked, home))  # every call answered, in order, then again
            continue
        answered = set(answers)
        some = False  # some call of the turn is usual
        for tid in calls:
            if tid and tid in answered and tid not in repeated and usual_id(tid):
                usual.add(tid)
                some = True
        if not some or len(usual.intersection(calls)) < len(calls):
            others.append(asked)
        if not some or not usual.issuperset(answers):
            others.append(home)
    return usual, sorted(set(others)), copies


def repeated_ids(ids: list[str | None]) -> tuple[set[str | None], set[str | None]]:
    """The ids that occur more than once, and those that occur exactly twice."""
    if len(ids) == len(set(ids)):
        return set(), set()
    # (the few repeats counted, not every id: a session's ids are mostly once each)
    seen: set[str | None] = set()
    add = seen.add
    again = Counter(tid for tid in ids if tid in seen or add(tid))  # each after its first
    return set(again), {tid for tid, n in again.items() if n == 1}


def _pair(
    messages: list[Message],
    positions: list[int],
    next_live: Mapping[int, int],
    prev_live: Mapping[int, int],
    remap: bool,
    usual: set[str] | frozenset[str],
) -> Pairing:
    """The pairing of the calls and results of the live messages at `positions` (all of
    them, or those holding any other than the `usual` ids), but those carrying a `usual`
    id."""
    # (`Message.live`, `Use.has_id` and `_Lookup.find`'s usual case are spelt out inline:
    # this runs over every block of the session, twice)
    uses: list[Use] = []
    uses_by_message: dict[int, list[Use]] = {}
    uses_by_id: dict[str, list[Use]] = {}
    lookup = _Lookup(uses_by_id)
    for mi in positions:
        msg = messages[mi]
        wrong_role = msg.role != "assistant"
        turn: list[Use] = []
        turn_ids: dict[str, list[Use]] = {}
        order = 0
        for bi, block in enumerate(msg.blocks):
            if block.type != TOOL_USE:
                continue
            tid = block.tool_id
            if tid in usual:
                order += 1
                continue
            if wrong_role:
                use = Use(mi, bi, block, 0, None, wrong_role=True)
            else:
                nxt = next_live.get(mi)
                home = nxt if nxt is not None and messages[nxt].role == "user" else None
                use = Use(mi, bi, block, order, home)
                order += 1
                turn.append(use)
            if isinstance(tid, str) and tid:
                same = uses_by_id.get(tid)
                if same is None:
                    uses_by_id[tid] = [use]
                else:
                    use.dup_of = same[0]
                    same.append(use)
                if not wrong_role:
                    ids = turn_ids.get(tid)
                    if ids is None:
                        turn_ids[tid] = [use]
                    else:
                        ids.append(use)
            uses.append(use)
        if turn:
            uses_by_message[mi] = turn
        if turn_ids:
            lookup.turn_ids[mi] = turn_ids

    results: list[Result] = []
    results_by_message: dict[int, list[Result]] = {}
    last_assistant: int | None = None
    last_ids: dict[str, list[Use]] = {}  # the tool_use ids of last_assistant
    before = -1  # the position looked at before: last_assistant is the live assistant
    # message at or before it (positions may skip messages)
    for mi in positions:
        msg = messages[mi]
        in_assistant = msg.role == "assistant"
        if in_assistant:
            last_assistant = mi
            last_ids = lookup.turn_ids.get(mi, {})
        else:
            back = prev_live.get(mi)
            if back is not None and back > before:
                found_back = _assistant_back(messages, prev_live, back, before)
                if found_back is not None:
                    last_assistant = found_back
                    last_ids = lookup.turn_ids.get(found_back, {})
        before = mi
        here: list[Result] = []
        for bi, block in enumerate(msg.blocks):
            btype = block.type
            tid = block.tool_id
            if btype != TOOL_RESULT and (in_assistant or not tid or btype == TOOL_USE):
                continue
            if tid in usual:
                continue
            res = Result(mi, bi, block, wrong_role=in_assistant)
            if isinstance(tid, str) and tid:
                same = last_ids.get(tid)
                if same is not None and len(same) == 1 and not same[0].results:
                    found: Use | None = same[0]  # the usual case: the call right before
                else:
                    found = lookup.find(tid, mi, last_assistant)
                if found is not None:
                    res.use = found
                    res.before_use = found.mi > mi
                    found.results.append(res)
            here.append(res)
            results.append(res)
        if here:
            results_by_message[mi] = here

    if remap:
        _pair_mismatched(uses_by_message, results_by_message)
    wrong_role = any(u.wrong_role for u in uses) or any(r.wrong_role for r in results)
    return Pairing(
        uses,
        results,
        positions,
        next_live,
        prev_live,
        uses_by_message,
        results_by_message,
        wrong_role,
    )


def _assistant_back(
    messages: list[Message], prev_live: Mapping[int, int], mi: int, stop: int
) -> int | None:
    """The live assistant message at or before `mi` and after `stop` (None: none there)."""
    at: int | None = mi
    while at is not None and at > stop:
        if messages[at].role == "assistant":
            return at
        at = prev_live.get(at)
    return None


class _Lookup:
    """The tool_use a result answers, in O(1) amortised (O(log n) for a later message):
    ids per message with a cursor at the first unanswered one, and message indices per id
    for the bisection."""

    def __init__(self, uses_by_id: dict[str, list[Use]]) -> None:
        self.uses_by_id = uses_by_id
        self.turn_ids: dict[int, dict[str, list[Use]]] = {}
        self.cursor: dict[tuple[int, str], int] = {}
        self._mis: dict[str, list[int]] = {}

    def find(self, tool_id: str, mi: int, last_assistant: int | None) -> Use | None:
        candidates = self.uses_by_id.get(tool_id)
        if not candidates:
            return None
        if last_assistant is not None:
            same = self.turn_ids.get(last_assistant, {}).get(tool_id)
            if same:
                # duplicate ids inside one message: the first still unanswered, else the
                # first (a use never loses its result, so the cursor only moves on)
                key = (last_assistant, tool_id)
                k = self.cursor.get(key, 0)
                while k < len(same) and same[k].results:
                    k += 1
                self.cursor[key] = k
                return same[k] if k < len(same) else same[0]
        # latest earlier tool_use with that id, else the earliest later one
        mis = self._mis.get(tool_id)
        if mis is None:
            mis = self._mis[tool_id] = [u.mi for u in candidates]
        k = bisect_left(mis, mi)
        if k > 0:
            return candidates[k - 1]
        return candidates[k] if k < len(candidates) else None


def _pair_mismatched(
    uses_by_message: dict[int, list[Use]], results_by_message: dict[int, list[Result]]
) -> None:
    """In each home message, unanswered uses and unknown-id results pair by position, but only
    when it is safe: as many results as calls, and every result that names its tool names its
    partner's. Otherwise they stay an orphan result and an orphan use (a blind remap would give
    one call's output to another), except blocks that have no usable id at all: position is
    all they have, so id-less calls and id-less results still pair in order (names agreeing)
    and their invalid-tool-id fix gives them one id."""
    for turn in uses_by_message.values():
        home = turn[0].home
        if home is None:
            continue
        unanswered = [u for u in turn if not u.results]
        if not unanswered:
            continue
        unknown = [
            r
            for r in results_by_message.get(home, ())
            if r.use is None and not r.text_answer and not r.wrong_role
        ]
        if len(unknown) == len(unanswered):
            pairs = list(zip(unanswered, unknown, strict=True))
            if all(_names_agree(u, r) for u, r in pairs):
                _link(pairs)
                continue
        idless = [u for u in unanswered if not u.has_id]
        idless_results = [r for r in unknown if not r.has_id]
        _link([(u, r) for u, r in zip(idless, idless_results, strict=False) if _names_agree(u, r)])


def _names_agree(use: Use, res: Result) -> bool:
    return res.block.name is None or res.block.name == use.block.name


def _link(pairs: list[tuple[Use, Result]]) -> None:
    for use, res in pairs:
        use.partner = res
        res.partner = use
