"""The format adapters: detection, load, export, what each real client sends, bad input."""
