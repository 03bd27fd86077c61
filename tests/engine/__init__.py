"""The engine: model, pairing, findings, plans, the workbench, the code registry."""
