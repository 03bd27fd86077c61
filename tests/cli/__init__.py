"""The command line: check, fix, explain, messages, list; what fix writes and prints."""
