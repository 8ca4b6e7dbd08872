"""bench/fault_campaign.py: its quick version runs every area and finds no bug, and its
classification counts a crash as a bug (a campaign that cannot fail proves nothing)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
import _fault_memory  # noqa: E402
import _fault_parsers  # noqa: E402


def test_the_quick_campaign_finds_no_bug(tmp_path: Path) -> None:
    out = tmp_path / "campaign.json"
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "fault_campaign.py"),
                           "--quick", "--json", str(out)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["bugs"] == 0
    areas = report["areas"]
    assert set(areas) == {"parsers", "cli", "compress", "runtime", "memory api", "search",
                          "store"}
    assert all(a["cases"] > 0 for a in areas.values())
    assert "fault campaign (quick" in done.stdout and "bugs" in done.stdout


def test_a_crash_counts_as_a_bug_and_a_precis_error_as_expected() -> None:
    from precis import QueryError
    from precis.memory import Memory

    memory = Memory(":memory:", embedder="none")

    def crash(m: Memory) -> None:
        raise TypeError("unhashable type: 'list'")

    def refuse(m: Memory) -> None:
        raise QueryError("no")

    assert _fault_memory.run_api_case(memory, crash)[0] == "bug"
    assert _fault_memory.run_api_case(memory, refuse)[0] == "expected"
    assert _fault_parsers.check_document({"not": "a conversation"}, budget=None)[0] \
        == "expected"


def test_a_system_prompt_alone_is_no_bug_of_precis() -> None:
    """The long campaign's 2 parser "bugs": a ShareGPT (glaive) record with a system prompt
    and no turns compressed to itself, whose Anthropic payload has no messages; that is the
    input's own shape (the same as the input's to_anthropic()), not something precis made."""
    sys.path.insert(0, str(ROOT / "tests" / "compact"))
    from _api_rules import anthropic_errors, openai_errors

    def api(openai: object, anthropic: object) -> list[str]:
        return [*openai_errors(openai), *anthropic_errors(anthropic)]

    alone = [{"id": 7, "system": "You can call get_weather.", "conversations": []}]
    assert _fault_parsers.check_document(alone, budget=120, api_errors=api) == ("ok", "")
    import precis
    from precis.compact import compress

    assert compress(precis.load(alone), budget=120).to_anthropic()["messages"] == []
