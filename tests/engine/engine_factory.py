"""Build normal-form sessions directly (no adapter) for engine tests."""

from __future__ import annotations

from repair.model import Message, Session, block_from_anthropic


def U(i: str, name: str = "Bash") -> dict:
    return {"type": "tool_use", "id": i, "name": name, "input": {"command": "ls"}}


def R(i: str, text: str = "ok", err: bool = False) -> dict:
    d = {"type": "tool_result", "tool_use_id": i, "content": text}
    if err:
        d["is_error"] = True
    return d


def T(text: str) -> dict:
    return {"type": "text", "text": text}


def M(role: str, content, ts: float | None = None) -> Message:
    items = content if isinstance(content, list) else [content]
    meta = {"timestamp": ts} if ts is not None else {}
    return Message(role=role, blocks=tuple(block_from_anthropic(c) for c in items), meta=meta)


def S(*msgs, target: str = "anthropic") -> Session:
    messages = [m if isinstance(m, Message) else M(*m) for m in msgs]
    return Session(
        path="test.json", format="anthropic", target=target, messages=messages, adapter=None
    )


def shape(session: Session) -> list[tuple]:
    """A compact view: (role, [(type, tool_id or text)])."""
    out = []
    for m in session.messages:
        blocks = []
        for b in m.blocks:
            if b.tool_id:
                blocks.append((b.type, b.tool_id))
            else:
                text = b.data if isinstance(b.data, str) else b.data.get("text", "")
                blocks.append((b.type, text))
        out.append((m.role, blocks))
    return out


def _at(x) -> tuple | None:
    return None if x is None else (x.mi, x.bi)


def pairing_facts(p) -> dict:
    """Everything a pairing says, by value (calls and results by their place)."""
    return {
        "uses": [
            (
                u.mi,
                u.bi,
                u.block.bid,
                u.order,
                u.home,
                [_at(r) for r in u.results],
                _at(u.dup_of),
                _at(u.partner),
                u.wrong_role,
            )
            for u in p.uses
        ],
        "results": [
            (r.mi, r.bi, r.block.bid, _at(r.use), r.before_use, _at(r.partner), r.wrong_role)
            for r in p.results
        ],
        "live": p.live,
        "next_live": p.next_live,
        "prev_live": p.prev_live,
        "uses_by_message": {k: [_at(u) for u in v] for k, v in p.uses_by_message.items()},
        "results_by_message": {k: [_at(r) for r in v] for k, v in p.results_by_message.items()},
        "wrong_role": p.wrong_role,
    }
