"""A file of several conversations in the compaction view: the page lists them (index, id,
title or first user message, messages, tokens) and compacts the one the user chooses; a file
of one conversation shows no list."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from _browser import Page

from precis.formats import load_all
from precis.tokens import get_counter

ROOT = Path(__file__).resolve().parents[2]
COMPACT = ROOT / "tests" / "fixtures" / "compact"
SESSIONS = ("chat_en", "coding_en", "coding_zh", "sql_en", "multiday_en")
TAU_BENCH = ROOT.parent / "shared" / "data" / "transcripts" / "openai" / (
    "tau-bench-gpt-4o-airline-first100.json")


def _norm(text: str) -> str:
    return " ".join(text.split())


def _texts(messages: list[dict[str, Any]]) -> str:
    """Everything the messages of an OpenAI list say (their text and tool calls), read from
    the file itself, not through precis."""
    out: list[str] = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out += [p.get("text", "") for p in content]
        for call in m.get("tool_calls") or []:
            out += [call["function"]["name"], call["function"]["arguments"]]
    return _norm("\n".join(out))


def _first_user(messages: list[dict[str, Any]]) -> str:
    return str(next(m["content"] for m in messages if m["role"] == "user"))


def _sessions_jsonl(tmp_path: Path) -> tuple[Path, list[list[dict[str, Any]]], list[str]]:
    """A JSONL of sessions (one {"id", "messages"} a line) made of the compaction fixtures:
    the file, each conversation's messages, and the words each row must show (no titles:
    the first user message)."""
    path = tmp_path / "sessions.jsonl"
    rows = [{"id": f"sess-{name}", "messages": json.loads(
        (COMPACT / f"{name}.json").read_text("utf-8"))["messages"]} for name in SESSIONS]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path, [r["messages"] for r in rows], [_first_user(r["messages"]) for r in rows]


def _tau_bench() -> tuple[Path, list[list[dict[str, Any]]], list[str]]:
    if not TAU_BENCH.is_file():
        pytest.skip(f"shared data not found at {TAU_BENCH}")
    data = json.loads(TAU_BENCH.read_text("utf-8"))
    # tau-bench's rows are titled by the simulated user's instruction
    return TAU_BENCH, [d["traj"] for d in data], [
        d["info"]["task"]["instruction"] for d in data]


def _settled(page: Any) -> None:
    """Wait for a smooth scroll to end (the same scroll position over a few frames)."""
    page.wait_for_function("""() => new Promise((done) => {
        let last = -1, same = 0;
        const tick = () => {
          same = window.scrollY === last ? same + 1 : 0;
          last = window.scrollY;
          if (same >= 5) done(true); else requestAnimationFrame(tick);
        };
        requestAnimationFrame(tick);
      })""")


@pytest.mark.parametrize("kind", ["sessions-jsonl", pytest.param("tau-bench",
                                                                 marks=pytest.mark.data)])
def test_a_collection_is_listed_and_the_chosen_conversation_compacted(
        tab: Page, tmp_path: Path, kind: str) -> None:
    path, convs, heads = _sessions_jsonl(tmp_path) if kind == "sessions-jsonl" else _tau_bench()
    texts = [_texts(messages) for messages in convs]
    collection = load_all(path.read_bytes())
    counter = get_counter("estimate")
    page = tab.goto("/#compact")
    page.set_input_files("#compact-file", str(path))
    rows = page.locator("#compact-pick-list li")
    rows.first.wait_for()
    assert page.is_visible("#compact-picker") and not page.is_visible("#compact-out")
    assert f"holds {len(texts)} conversations" in page.inner_text("#compact-picker-title")
    # one row per conversation: index, id, title or first user message, messages, tokens
    assert rows.count() == len(texts) == len(collection)
    for i in (0, 1, 3, len(texts) - 1):
        row, conv = rows.nth(i), collection.conversations[i]
        cell = {name: row.locator(f".conv-{name}").inner_text()
                for name in ("index", "id", "title", "msgs", "tokens")}
        assert cell["index"] == f"#{i}"
        assert cell["id"] == (conv.id or "—")
        assert _norm(cell["title"])[:40] == _norm(heads[i])[:40]
        assert cell["msgs"] == f"{len(conv.messages):,}"
        assert cell["tokens"] == f"{counter.count_messages(conv.messages):,}"
    tab.shot(f"collection-{kind}", full_page=False)

    # choosing row 3 compacts conversation 3
    rows.nth(3).locator("button").click()
    page.wait_for_selector("#compact-out:not([hidden])")
    _settled(page)
    tab.shot(f"collection-{kind}-chosen", full_page=False)
    assert rows.nth(3).locator("button").get_attribute("aria-current") == "true"
    assert f"#3 of {len(texts)}" in page.inner_text("#compact-stats")
    cites = page.locator("#compact-result a.cite")
    assert cites.count() > 0
    ids = list(dict.fromkeys(cites.nth(i).get_attribute("data-id") for i in range(cites.count())))
    own = 0
    for sid in ids:
        said = _norm(page.locator(f"#src-{sid} pre.text").inner_text())
        assert said and said in texts[3], (sid, said)  # every line cites conversation 3
        own += sum(said in t for t in texts) == 1
    assert own >= len(ids) / 2  # ... mostly by what only conversation 3 says
    # the original pane is conversation 3's, and a citation leads to its fragment
    original = _norm(" ".join(page.locator("#compact-original pre.text").all_inner_texts()))
    assert _norm(_first_user(convs[3]))[:60] in original
    assert _norm(_first_user(convs[0]))[:60] not in original
    cites.first.click()
    source = page.locator(f"#src-{ids[0]}")
    page.wait_for_function("id => document.getElementById(id).classList.contains('highlight')",
                           arg=f"src-{ids[0]}")
    _settled(page)
    box = source.bounding_box()
    assert box and 0 <= box["y"] < 900  # scrolled to
    tab.shot(f"collection-{kind}-compacted", full_page=False)
    # the list filters by words
    page.fill("#compact-pick-filter", _norm(heads[1])[:40])
    assert rows.nth(1).is_visible() and not rows.nth(0).is_visible()
    tab.check()


def test_a_single_conversation_shows_no_list(tab: Page) -> None:
    page = tab.goto("/#compact")
    page.set_input_files("#compact-file", str(COMPACT / "sql_en.json"))
    page.click("#compact-run")
    page.wait_for_selector("#compact-out:not([hidden])")
    assert not page.is_visible("#compact-picker")
    assert page.locator("#compact-pick-list li").count() == 0
    assert "conversation" not in [t.split("\n")[0] for t in
                                  page.locator("#compact-stats .figure").all_inner_texts()]
    assert "dw.orders" in page.inner_text("#compact-original")
    tab.check()


def test_pasted_conversations_are_listed_before_any_compaction(tab: Page) -> None:
    page = tab.goto("/#compact")
    two = [json.loads((COMPACT / f"{n}.json").read_text("utf-8")) for n in ("sql_en", "chat_en")]
    page.fill("#compact-text", json.dumps(two))
    page.click("#compact-run")
    page.wait_for_selector("#compact-picker:not([hidden])")
    assert page.locator("#compact-pick-list li").count() == 2
    assert not page.is_visible("#compact-out") and not page.is_visible("#compact-error")
    assert re.search(r"Count last month", page.inner_text("#compact-pick-list li >> nth=0"))
    page.locator("#compact-pick-list li >> nth=1").locator("button").click()
    page.wait_for_selector("#compact-out:not([hidden])")
    assert "dw.orders" not in page.inner_text("#compact-original")
    # editing the text forgets the list
    page.fill("#compact-text", json.dumps(two[0]))
    assert not page.is_visible("#compact-picker")
    tab.check()
