"""Where the tests find what they read, defined once. The repository's samples, the recorded
client fixtures and data, and `../shared` (the real corpus and the clients; tests that read it
skip when it is absent, it is never copied into the repository)."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
SAMPLES = REPO / "sample_sessions"
README = REPO / "README.md"
DOCS = REPO / "docs"
DEMO = REPO / "tui" / "demo" / "demo_session.json"
FIXTURES = TESTS / "fixtures"  # what the real clients sent, recorded and trimmed
CLIENT_FIXTURES = FIXTURES / "clients"
DATA = TESTS / "data"
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus" / "real"


def sample_files() -> list[Path]:
    """Every sample session (the .json and .jsonl files of sample_sessions/), by name."""
    if not SAMPLES.is_dir():
        return []
    return sorted(p for p in SAMPLES.iterdir() if p.suffix in (".json", ".jsonl"))
