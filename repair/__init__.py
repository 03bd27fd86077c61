"""histview's engine: formats, the conversation model, pairing, findings, plans, edits,
export. Never imports Textual or Rich."""

__version__ = "0.1.0"  # the package's version (pyproject.toml reads it from here)
