"""Roo Code / Cline / Kilo task histories: the v2 envelope (v2), the ui_messages metadata
(meta), the adapter (adapter)."""
