"""``precis memory …``: real invocations against real stores (a SQLite file, and a real
PostgreSQL through ``--store postgresql://…``), outputs, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from precis.cli import main

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "compact"


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def store(new_store) -> list[str]:  # type: ignore[no-untyped-def]
    return ["memory", "--store", new_store("cli"), "-e", "none"]


def test_ingest_search_show_round(store: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run([*store, "ingest", str(FIX / "multiday_en.json"), "--user", "ana",
                        "--session", "atlas"], capsys)
    assert code == 0 and "atlas:" in out and " new" in out
    code, out, _ = run([*store, "ingest", str(FIX / "multiday_en.json"), "--user", "ana",
                        "--session", "atlas"], capsys)
    assert code == 0 and "0 new (already stored)" in out
    code, out, _ = run([*store, "search", "replication slot error", "--json", "-k", "3"], capsys)
    assert code == 0
    result = json.loads(out)
    top = result["hits"][0]
    assert "E4107" in top["card"]["content"]
    assert top["sources"][0]["session_id"] == "atlas"
    assert top["sources"][0]["text"] in {
        "E4107 means the replication slot was full. I resized it to 64 GB and the sync passed.",
        "Good morning. Yesterday the staging sync failed with error code E4107.",
    }
    code, out, _ = run([*store, "show", top["id"], "-C", "1", "--history"], capsys)
    assert code == 0 and "Sources (atlas):" in out and "v1 created" in out
    assert out.count("\n *") == 1  # the source message is marked among its neighbours


def test_search_text_output_and_filters(store: list[str], capsys: pytest.CaptureFixture[str]
                                        ) -> None:
    run([*store, "ingest", str(FIX / "multiday_en.json"), "-u", "ana"], capsys)
    run([*store, "ingest", str(FIX / "multiday_zh.json"), "-u", "bo"], capsys)
    code, out, _ = run([*store, "search", "切换时间", "-u", "bo", "--recap"], capsys)
    assert code == 0 and "周六晚上" in out and "Recap:" in out
    code, out, _ = run([*store, "search", "切换时间", "-u", "ana"], capsys)
    assert code == 0 and "周六" not in out
    code, out, _ = run([*store, "list", "-u", "ana", "--type", "decision"], capsys)
    assert code == 0 and out.strip() and "[decision]" in out and "周六" not in out


def test_batch_search_lines(store: list[str], tmp_path: Path,
                            capsys: pytest.CaptureFixture[str]) -> None:
    run([*store, "ingest", str(FIX / "multiday_en.json"), "-s", "en"], capsys)
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        json.dumps({"id": "q1", "query": "cutover Saturday", "k": 2}) + "\n"
        + json.dumps({"id": "q2", "query": "runbook url", "session": "en"}) + "\n"
        + json.dumps({"id": "q3", "query": "   "}) + "\n",
        encoding="utf-8",
    )
    code, out, err = run([*store, "search", "--batch", str(queries)], capsys)
    assert code == 2  # a line could not be answered: said, and the others are answered
    lines = [json.loads(x) for x in out.splitlines()]
    assert [x["id"] for x in lines] == ["q1", "q2", "q3"]
    assert len(lines[0]["hits"]) <= 2 and "Saturday" in lines[0]["hits"][0]["content"]
    assert lines[1]["hits"][0]["message_ids"] and lines[1]["hits"][0]["session_id"] == "en"
    assert "empty" in lines[2]["error"] and lines[2]["line"] == 3
    assert err.count("\n") == 1 and "q.jsonl:3:" in err


@pytest.mark.parametrize(
    ("content", "message"),
    [("{not json\n", "q.jsonl:1: not JSON"),
     ('{"id": 1}\n', "q.jsonl:1: 'query' must be a string"),
     ('{"query": "x"}\n{"query": "y", "limit": 3}\n', "q.jsonl:2: unknown field(s): limit"),
     ('{"query": "x", "k": 0}\n', "'k' must be a whole number")],
)
def test_batch_errors_name_the_line(store: list[str], tmp_path: Path, content: str,
                                    message: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A bad line is reported with its number, and the good lines are still answered
    (issue 18: the batch was all-or-nothing)."""
    run([*store, "ingest", str(FIX / "multiday_en.json")], capsys)
    queries = tmp_path / "q.jsonl"
    good = json.dumps({"id": "good", "query": "cutover Saturday"})
    queries.write_text(good + "\n" + content + good + "\n", encoding="utf-8")
    code, out, err = run([*store, "search", "--batch", str(queries)], capsys)
    assert code == 2 and message.replace("q.jsonl:1", "q.jsonl:2").replace(
        "q.jsonl:2: unknown", "q.jsonl:3: unknown") in err and "Traceback" not in err
    lines = [json.loads(x) for x in out.splitlines()]
    answered = [x for x in lines if x.get("id") == "good"]
    assert len(answered) == 2 and all("Saturday" in x["hits"][0]["content"] for x in answered)
    errors = [x for x in lines if "error" in x]
    assert errors and all(isinstance(x["line"], int) and x["line"] > 1 for x in errors)


def test_export_import_delete_stats(store: list[str], tmp_path: Path, new_store,  # type: ignore[no-untyped-def]
                                    capsys: pytest.CaptureFixture[str]) -> None:
    run([*store, "ingest", str(FIX / "sql_zh.json")], capsys)
    dump = tmp_path / "cards.jsonl"
    code, _, err = run([*store, "export", "-o", str(dump)], capsys)
    lines = [x for x in dump.read_text(encoding="utf-8").splitlines()
             if not x.startswith('{"session"')]
    assert code == 0 and lines and f"exported {len(lines)} card(s) and 1 session(s)" in err
    other = ["memory", "--store", new_store("other"), "-e", "none"]
    code, out, _ = run([*other, "import", str(dump)], capsys)
    assert code == 0 and out.strip() == f"read {len(lines)} card(s), added {len(lines)}"
    first = json.loads(lines[0])["id"]
    code, out, _ = run([*other, "delete", first], capsys)
    assert code == 0 and "deleted 1" in out
    code, out, _ = run([*other, "stats", "--json"], capsys)
    assert json.loads(out)["cards"] == len(lines) - 1
    code, _, err = run([*other, "delete", first], capsys)
    assert code == 2 and f"no memory card '{first}'" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [(["search", ""], "the query is empty"),
     (["search"], "no query given"),
     (["search", "cutover", "--since", "yesterday"], "since: 'yesterday' is not an ISO date"),
     (["search", "cutover", "--type", "gossip"], "unknown card type"),
     (["show", "m_nope"], "no memory card 'm_nope'"),
     (["ingest", "/no/such/file.json"], "file.json"),
     (["search", "cutover", "--batch", "q.jsonl"], "either a QUERY or --batch")],
)
def test_user_errors_exit_2_with_one_line(store: list[str], args: list[str], message: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run([*store, *args], capsys)
    assert code == 2 and message in err and "Traceback" not in err


def test_store_that_is_not_a_database(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                      ) -> None:
    bad = tmp_path / "bad.sqlite3"
    bad.write_bytes(b"\x00garbage" * 512)
    code, _, err = run(["memory", "--store", str(bad), "stats"], capsys)
    assert code == 2 and "cannot open the memory store" in err


def test_session_summary_cards_on_the_command_line(store: list[str], tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from tests.events._sessions import coding_session

    log = coding_session()
    early = log.write(tmp_path / "early.jsonl")
    lines = early.read_text("utf-8").splitlines()
    early.write_text("\n".join(lines[:20]) + "\n", encoding="utf-8")
    code, out, _ = run([*store, "ingest", str(early), "--no-summary"], capsys)
    assert code == 0 and "s-1: " in out and ", summary" not in out
    code, out, _ = run([*store, "list", "--type", "summary"], capsys)
    assert code == 0 and out == ""
    code, out, _ = run([*store, "ingest", str(early)], capsys)
    assert code == 0 and "s-1: " in out and ", summary m_" in out
    summary_id = out.split(", summary ")[1].split()[0]
    code, out, _ = run([*store, "ingest", str(log.write(tmp_path / "later.jsonl")), "--json"],
                       capsys)
    report = json.loads(out)["sessions"][0]
    assert code == 0 and report["summary"] == summary_id and report["updated"] == [summary_id]
    code, out, _ = run([*store, "list", "--type", "summary"], capsys)
    assert code == 0 and out.count("[summary]") == 1 and summary_id in out
    code, out, _ = run([*store, "search", "what did we do in the shop-abc session?", "-k", "1"],
                       capsys)
    assert code == 0 and f"[summary] {summary_id}" in out
    assert "also make the discount show on the receipt" in out
    # its sources by their numbers in the session, as its text cites them ("msg 22")
    assert "from s-1: messages 1, " in out and "(msg 22)" in out
    code, out, _ = run([*store, "show", summary_id, "--history"], capsys)
    assert code == 0 and "v1 created" in out and "v2 updated" in out
    # a source without text (a tool call, a tool result) says so instead of a blank line
    lines = out.splitlines()
    bodies = [lines[i + 1] for i, line in enumerate(lines) if line.startswith(" * [")]
    assert "     (no text: a tool call or its result)" in bodies
    assert all(body.strip() for body in bodies)
