"""Derive the broken Gemini CLI chats of this folder from `clean_seed.jsonl` (a chat Gemini CLI
0.61 wrote itself, driven by ../shared/clients/seed_gemini.py: one list_directory call, then two
parallel read_file calls, then a text answer; temporary paths replaced by /home/dev).

    python tests/data/gemini_cli/derive.py      # rewrites the files below

- orphan_call.jsonl      the b.txt read_file call has no response anywhere (cancelled)
- orphan_response.jsonl  the first responses record also answers a glob call that was never made
- trailing_call.jsonl    the chat ends with the two read_file calls, never run
- legacy_chat.json       the same chat as the older single-object .json (JSON.stringify, indent 2)
- no_ids.jsonl           the same chat with no call or response ids (paired by name, as older
                         clients and other tools write them)
- empty_model_text.jsonl the turn of the two read_file calls also holds an empty text part:
                         Gemini CLI leaves that model turn out, and its responses answer nothing
"""

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent


def records() -> list[dict]:
    return [json.loads(line) for line in (HERE / "clean_seed.jsonl").read_text().splitlines()]


def write(name: str, recs: list[dict]) -> None:
    text = "\n".join(json.dumps(r, separators=(",", ":"), ensure_ascii=False) for r in recs)
    (HERE / name).write_text(text + "\n")


def find(recs: list[dict], pred) -> int:
    return next(i for i, r in enumerate(recs) if pred(r))


def calls_of(recs: list[dict], n: int) -> int:
    """Index of the last version of the gemini record holding n tool calls."""
    return max(i for i, r in enumerate(recs) if len(r.get("toolCalls") or ()) == n)


def responses_after(recs: list[dict], i: int) -> int:
    return find(recs[i + 1 :], lambda r: r.get("type") == "user") + i + 1


def main() -> None:
    recs = records()
    two = calls_of(recs, 2)

    a = records()
    del a[two]["toolCalls"][1]["result"]
    a[two]["toolCalls"][1]["status"] = "cancelled"
    u = responses_after(a, two)
    a[u]["content"] = a[u]["content"][:1]
    write("orphan_call.jsonl", a)

    b = records()
    u = responses_after(b, calls_of(b, 1))
    extra = {"id": "glob__glob_1795434258700_0", "name": "glob", "response": {"output": "a.txt"}}
    b[u]["content"].append({"functionResponse": extra})
    write("orphan_response.jsonl", b)

    c = records()[: two + 1]
    for tc in c[two]["toolCalls"]:
        del tc["result"]
        tc["status"] = "scheduled"
    write("trailing_call.jsonl", c)

    e = records()
    e[two]["content"] = [{"text": ""}]
    write("empty_model_text.jsonl", e)

    d = records()
    for r in d:
        for tc in r.get("toolCalls") or ():
            tc.pop("id", None)
        _drop_ids(r)
    write("no_ids.jsonl", d)

    meta: dict = {}
    order: dict[str, dict] = {}
    for r in records():
        if isinstance(r.get("id"), str):
            order[r["id"]] = r
        elif isinstance(r.get("$set"), dict):
            if isinstance(r["$set"].get("messages"), list):
                order = {m["id"]: m for m in r["$set"]["messages"]}
            meta.update({k: v for k, v in r["$set"].items() if k != "messages"})
        else:
            meta.update(r)
    keys = ("sessionId", "projectHash", "startTime", "lastUpdated", "kind")
    doc = {k: meta[k] for k in keys if k in meta}
    doc["messages"] = list(order.values())
    (HERE / "legacy_chat.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False))


def _drop_ids(obj) -> None:
    if isinstance(obj, dict):
        for key in ("functionCall", "functionResponse"):
            if isinstance(obj.get(key), dict):
                obj[key].pop("id", None)
        for v in obj.values():
            _drop_ids(v)
    elif isinstance(obj, list):
        for v in obj:
            _drop_ids(v)


if __name__ == "__main__":
    main()
