"""The Textual app: Pilot flows and snapshots."""
