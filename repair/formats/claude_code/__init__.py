"""Claude Code transcripts: the resume chain (chain), the messages it becomes (load),
writing repairs back as records (write), the adapter (adapter)."""
