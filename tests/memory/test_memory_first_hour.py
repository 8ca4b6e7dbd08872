"""A new user's first hour with ``precis memory`` (issue 18, item 7), each step as README
tells it, against real SQLite files and a real HTTP embeddings server on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _openai_stub import OpenAIStub, closed_port_url
from precis.cli import main
from precis.cli._progress import PipeProgress
from precis.memory import Memory

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "coding_session.json"


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def store(new_store) -> list[str]:  # type: ignore[no-untyped-def]
    return ["memory", "--store", new_store()]


def test_chrono_without_timestamps_follows_the_conversation(
        store: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    run([*store, "-e", "none", "ingest", str(EXAMPLE)], capsys)
    code, out, _ = run([*store, "search", "status 过滤 导出", "--chrono", "--json"], capsys)
    hits = json.loads(out)["hits"]
    assert code == 0 and len(hits) >= 4
    places = [min(h["card"]["message_indexes"]) for h in hits]
    assert places == sorted(places)


def test_no_hit_scores_zero(store: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """Words nearly every card holds score about 0 (their IDF is ~0): such cards are no
    results. The example's query matched 8 cards, 6 of them at 0.0000."""
    run([*store, "-e", "none", "ingest", str(EXAMPLE)], capsys)
    code, out, _ = run([*store, "search", "导出接口超时", "--json"], capsys)
    hits = json.loads(out)["hits"]
    assert code == 0 and hits
    assert all(h["score"] >= 1e-3 for h in hits)
    assert any("/api/v2/orders/export" in h["card"]["content"] for h in hits[:2])
    code, out, _ = run([*store, "search", "导出接口超时"], capsys)
    assert "score 0.0000" not in out


def test_a_keyword_store_switches_embedder_with_one_command(
        store: list[str], openai_stub: OpenAIStub, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PRECIS_EMBED_URL", openai_stub.url)
    run([*store, "-e", "none", "ingest", str(EXAMPLE)], capsys)
    code, out, _ = run([*store, "reindex"], capsys)
    assert code == 0 and "keyword search only" in out and "--embedder" in out
    code, out, _ = run([*store, "--embedder", "openai:bow-16", "reindex"], capsys)
    # the example's 15 statements and its session summary card
    assert code == 0 and "now openai:bow-16 (was none)" in out and "computed 16 vector" in out
    code, out, _ = run([*store, "stats", "--json"], capsys)
    stats = json.loads(out)
    assert stats["embedder"] == "openai:bow-16" and sum(stats["vectors"].values()) == 16
    # later opens with "auto" search with it: the query is embedded by the server
    before = len(openai_stub.requests)
    code, out, _ = run([*store, "search", "why did the export time out", "--json"], capsys)
    assert code == 0 and len(openai_stub.requests) == before + 1
    assert any("cosine" in h["why"] for h in json.loads(out)["hits"])


def test_an_embeddings_endpoint_that_is_down_leaves_keyword_search(
        store: list[str], openai_stub: OpenAIStub, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PRECIS_EMBED_URL", openai_stub.url)
    code, _, _ = run([*store, "-e", "openai:bow-16", "ingest", str(EXAMPLE)], capsys)
    assert code == 0
    monkeypatch.setenv("PRECIS_EMBED_URL", closed_port_url())
    code, out, err = run([*store, "search", "导出接口超时"], capsys)
    assert code == 0 and "/api/v2/orders/export" in out
    assert err.startswith("precis: warning: keyword results only") and err.count("\n") == 1
    code, out, _ = run([*store, "search", "导出接口超时", "--json"], capsys)
    result = json.loads(out)
    assert result["hits"] and result["notes"][0].startswith("keyword results only")
    assert all("cosine" not in h["why"] for h in result["hits"])


def test_export_import_keeps_the_sources(tmp_path: Path, store: list[str], new_store,  # type: ignore[no-untyped-def]
                                         capsys: pytest.CaptureFixture[str]) -> None:
    run([*store, "-e", "none", "ingest", str(EXAMPLE)], capsys)
    dump = tmp_path / "cards.jsonl"
    assert run([*store, "export", "-o", str(dump)], capsys)[0] == 0
    other = ["memory", "--store", new_store("other"), "-e", "none"]
    code, out, _ = run([*other, "import", str(dump)], capsys)
    # the example's 15 statements and its session summary card
    assert code == 0 and out.strip() == "read 16 card(s), added 16"
    stats = json.loads(run([*other, "stats", "--json"], capsys)[1])
    assert (stats["sessions"], stats["messages"]) == (1, 18)
    first = json.loads(dump.read_text(encoding="utf-8").splitlines()[1])["id"]
    code, out, _ = run([*other, "show", first, "--json"], capsys)
    shown = json.loads(out)
    assert code == 0 and shown["sources"] and shown["sources"][0]["text"]
    # importing again adds nothing and keeps the one session
    assert run([*other, "import", str(dump)], capsys)[1].strip() == "read 16 card(s), added 0"
    # an export of cards only (older precis) still imports, without sources
    cards_only = tmp_path / "old.jsonl"
    cards_only.write_text("".join(line + "\n" for line in dump.read_text().splitlines()
                                  if not line.startswith('{"session"')), encoding="utf-8")
    third = ["memory", "--store", new_store("third"), "-e", "none"]
    assert run([*third, "import", str(cards_only)], capsys)[0] == 0


def test_a_bad_session_line_adds_nothing(tmp_path: Path, store: list[str], new_store,  # type: ignore[no-untyped-def]
                                         capsys: pytest.CaptureFixture[str]) -> None:
    run([*store, "-e", "none", "ingest", str(EXAMPLE)], capsys)
    dump = tmp_path / "cards.jsonl"
    run([*store, "export", "-o", str(dump)], capsys)
    lines = dump.read_text(encoding="utf-8").splitlines()
    session = json.loads(lines[0])
    session["messages"][3]["index"] = "four"
    dump.write_text("\n".join([json.dumps(session), *lines[1:]]) + "\n", encoding="utf-8")
    other = ["memory", "--store", new_store("other"), "-e", "none"]
    code, _, err = run([*other, "import", str(dump)], capsys)
    assert code == 2 and "cards.jsonl:1: message 3" in err
    assert json.loads(run([*other, "stats", "--json"], capsys)[1])["cards"] == 0


def test_a_deleted_card_still_shows_its_history(store: list[str],
                                                capsys: pytest.CaptureFixture[str]) -> None:
    run([*store, "-e", "none", "ingest", str(EXAMPLE)], capsys)
    card_id = run([*store, "list", "-n", "1"], capsys)[1].split()[0]
    assert run([*store, "delete", card_id], capsys)[0] == 0
    code, out, _ = run([*store, "show", card_id, "--history"], capsys)
    assert code == 0 and "v1 created" in out and "deleted" in out and "/api/v2" in out
    code, out, _ = run([*store, "show", card_id, "--history", "--json"], capsys)
    data = json.loads(out)
    assert data["card"] is None and [v["action"] for v in data["history"]] == [
        "created", "deleted"]
    code, _, err = run([*store, "show", card_id], capsys)
    assert code == 2 and "was deleted" in err and "--history" in err
    code, _, err = run([*store, "show", "m_never", "--history"], capsys)
    assert code == 2 and "no memory card 'm_never'" in err


def test_memory_switches_embedder_in_the_library(new_store, openai_stub: OpenAIStub  # type: ignore[no-untyped-def]
                                                 ) -> None:
    location = new_store()
    with Memory(location, embedder="none") as memory:
        memory.ingest(EXAMPLE)
        assert memory.embedder_spec == "none"
        assert memory.set_embedder("openai:bow-16", base_url=openai_stub.url) == "none"
        assert memory.reindex() == 16  # 15 statements and the session's summary
    with Memory(location, base_url=openai_stub.url) as memory:
        assert memory.embedder_spec == "openai:bow-16" and memory.embedder is not None


def test_long_work_on_a_pipe_reports_progress_at_a_low_rate(
        capsys: pytest.CaptureFixture[str]) -> None:
    quick = PipeProgress("cards", interval=60)
    for done in range(1, 101):
        quick(done, 100)
    assert capsys.readouterr().err == ""  # done within the interval: nothing said
    slow = PipeProgress("cards", interval=0)
    slow(1, 3)
    slow(3, 3)
    assert capsys.readouterr().err.splitlines() == ["precis: cards 1/3", "precis: cards 3/3"]
