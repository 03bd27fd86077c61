"""TUI figures: time to first paint and to "analysis ready" for 1k and 100k messages, and the
time to render one page of timeline rows at each size (it should not grow with the session).

Run: .venv/bin/python bench/tui_bench.py [sizes...]   (default 1000 100000)
Synthetic Anthropic sessions are generated in-process (a few broken pairs sprinkled in).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")

import orjson  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tui.app import HistviewApp  # noqa: E402
from tui.timeline import Timeline  # noqa: E402


def synthetic(n_messages: int) -> bytes:
    msgs = [{"role": "user", "content": "Start the task."}]
    k = 0
    while len(msgs) < n_messages:
        tid = f"toolu_{k:08d}"
        msgs.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"Step {k}: reading a file."},
                    {
                        "type": "tool_use",
                        "id": tid,
                        "name": "read_file",
                        "input": {"path": f"src/f{k}.py"},
                    },
                ],
            }
        )
        if k % 997 == 13:  # an interrupted call now and then
            msgs.append({"role": "user", "content": [{"type": "text", "text": "stop, go on"}]})
        else:
            msgs.append(
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": tid,
                            "content": f"line 1\nline 2 of f{k}",
                        },
                    ],
                }
            )
        k += 1
    return orjson.dumps(msgs[:n_messages])


async def measure(path: str) -> dict[str, float]:
    app = HistviewApp(path)
    t0 = time.perf_counter()
    async with app.run_test(size=(120, 40)) as pilot:
        while "first_paint" not in app.timings:
            await pilot.pause(0.02)
        first_paint = time.perf_counter() - t0
        while "analysis_ready" not in app.timings:
            await pilot.pause(0.01)
        ready = time.perf_counter() - t0
        await pilot.pause()
        tl = app.query_one(Timeline)
        height = tl.scrollable_content_region.height
        pages = []
        for where in (0, len(tl.view) // 2, len(tl.view) - height):
            tl.scroll_to(y=max(where, 0), animate=False, immediate=True)
            await pilot.pause()
            tl._cache.clear()
            s = time.perf_counter()
            for y in range(height):
                tl.render_line(y)
            pages.append(time.perf_counter() - s)
        rows = len(tl.view)
        print("   timings:", {k: round(v, 2) for k, v in app.timings.items()})
    return {
        "first_paint": first_paint,
        "analysis_ready": ready,
        "page": min(pages),
        "page_max": max(pages),
        "rows": rows,
        "height": height,
    }


def main(sizes: list[int]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            path = os.path.join(tmp, f"synthetic_{n}.json")
            data = synthetic(n)
            with open(path, "wb") as fh:
                fh.write(data)
            r = asyncio.run(measure(path))
            print(
                f"{n:>7} messages ({len(data) / 1e6:6.1f} MB, {r['rows']} rows): "
                f"first paint {r['first_paint']:.2f} s, analysis ready {r['analysis_ready']:.2f} s, "
                f"one page ({r['height']} rows, uncached) {r['page'] * 1000:.1f} ms "
                f"(worst of top/middle/bottom {r['page_max'] * 1000:.1f} ms)",
                flush=True,
            )


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [1000, 100_000])
