"""Gemini CLI chats: the history Gemini CLI rebuilds on resume (history), the adapter
(adapter)."""
