"""What the screen draws while a session loads is what it would draw from scratch: the rows,
the detail pane and the panes kept from one paint to the next (not drawn again) are those a
screen opened at that point draws."""

from __future__ import annotations

import pytest

from tests.paths import DEMO
from tests.tui.tui_helpers import held_load, opened, opened_held, timeline, until, wait_ready


def drawn(tl) -> list[list]:
    """The timeline's visible lines, each as its segments (text and style)."""
    return [list(tl.render_line(y)) for y in range(tl.size.height)]


async def test_the_rows_drawn_after_a_resize_are_those_drawn_at_that_size():
    """The timeline keeps the rows it drew across a resize (its strips are cached per width):
    at each width what it draws is what a screen opened at that width draws: wider and
    narrower with the same panes, and the narrow columns (short role names, durations)."""
    sizes = ((120, 40), (140, 40), (100, 30), (90, 40))
    fresh = {}
    for size in sizes:
        async with opened(DEMO, size) as (app, _pilot):
            fresh[size] = drawn(timeline(app))
    assert len({str(lines) for lines in fresh.values()}) == len(sizes)
    async with opened(DEMO, (120, 40)) as (app, pilot):
        tl = timeline(app)
        assert drawn(tl) == fresh[(120, 40)]
        for size in (*sizes[1:], *sizes):
            await pilot.resize_terminal(*size)
            await pilot.pause()
            assert drawn(tl) == fresh[size]


def styled(screen) -> list:
    """Every widget's styles from the style sheet: its rules and its component classes'."""
    return [
        (
            node,
            node._css_styles.get_rules(),
            {name: s.get_rules() for name, s in node._component_styles.items()},
        )
        for node in screen.walk_children(with_self=True)
    ]


@pytest.mark.parametrize("theme", [None, "textual-light"])
async def test_the_screen_shown_first_is_styled_as_a_restyle_styles_it(monkeypatch, theme):
    """The session screen's first resume does not restyle it (its widgets were styled as
    they were mounted, just before): while the file is read, and once it is shown, every
    widget's styles are those the restyle Textual makes at a resume (the long way) gives;
    with the default theme and with the one the user chose last time (set as the app
    starts, just before the screen is shown)."""
    from tui.app import HistviewApp
    from tui.config import save_config

    if theme is not None:
        save_config(theme=theme)
    with held_load(monkeypatch, "load_session") as gate:
        app = HistviewApp(str(DEMO))
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: app.main is not None and app.main._resumed)
            await pilot.pause()
            screen = app.main
            assert screen.query_one("#loading").display
            assert app.theme == (theme or "textual-dark")
            shown = styled(screen)
            screen.update_node_styles(animate=False)
            assert styled(screen) == shown
            gate.set()
            await wait_ready(pilot)
            shown = styled(screen)
            screen.update_node_styles(animate=False)
            assert styled(screen) == shown


async def test_the_detail_kept_from_the_first_lines_is_what_it_would_show(cc_file, monkeypatch):
    """The detail pane is not set again when the whole session shows the same text and
    styles as the first lines did (the screen is not laid out again): after the first lines,
    the whole, the first look and the whole state, it shows what it shows set from nothing
    (the long way)."""
    from textual.content import Content

    def shown_then_set_anew(main) -> None:
        detail = main.query_one("#detail")
        kept = (detail.content.plain, detail.content.spans)
        detail.update(Content(""))
        main._show_detail()
        assert (detail.content.plain, detail.content.spans) == kept

    with held_load(monkeypatch, "first_look") as look:
        async with opened_held(
            monkeypatch, cc_file, (120, 40), "load_session", lambda main: main.head_only
        ) as (app, pilot, gate):
            main = app.main
            await pilot.pause()
            shown_then_set_anew(main)
            gate.set()
            await until(pilot, lambda: not main.head_only and main.session is not None)
            await pilot.pause()
            shown_then_set_anew(main)
            look.set()
            await until(pilot, lambda: main.derived is not None)
            await pilot.pause()
            shown_then_set_anew(main)
            await wait_ready(pilot)
            shown_then_set_anew(main)
