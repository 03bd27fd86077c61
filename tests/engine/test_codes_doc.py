"""docs/codes.md is what repair.codes_doc writes from the Code and Target declarations: a
code added, a severity or an action changed, and the page says so (or this fails)."""

from __future__ import annotations

from repair import codes, codes_doc, targets
from tests.paths import DOCS

DOC = DOCS / "codes.md"


def test_docs_codes_md_is_generated_from_the_registry():
    assert DOC.read_text(encoding="utf-8") == codes_doc.render(), (
        "docs/codes.md is stale: run `python -m repair.codes_doc > docs/codes.md`"
    )


def test_every_code_and_target_is_on_the_page():
    page = codes_doc.render()
    for name in codes.CODES:
        assert f"### `{name}`" in page
    for name in targets.TARGETS:
        assert f"| `{name}` |" in page
    # a severity that differs per target is named per target
    assert "error under `bedrock`" in page.split("### `consecutive-same-role`")[1].split("###")[0]
