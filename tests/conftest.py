"""Shared test setup. Animations must be off before Textual is imported anywhere: the
variable is read when `textual.constants` is imported (ScrollView paging animates)."""

import os

os.environ["TEXTUAL_ANIMATIONS"] = "none"
