"""Fates read from a CompressionResult's JSON: kept, shortened, summarized, dropped."""

from __future__ import annotations

from pathlib import Path

import precis
from precis.analysis import analyze
from precis.compact import compress
from precis.compact.fates import explain_result, fragment_fate
from precis.tokens import get_counter

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "coding_session.json"

RESULT = {
    "origin": [0, None, 7, 8],
    "compressed_prompt": "system: Be brief.\n\nuser: summary\n\nuser: kept whole",
    "summary": {
        "short": [{"text": "Fix the export.", "sources": ["S2"]}],
        "sections": [
            {"key": "constraints", "title": "Constraints",
             "items": [{"text": "Keep the header.", "sources": ["S3", "S2"]}]},
            {"key": "decisions", "title": "Decisions",
             "items": [{"text": "Use a cursor.", "sources": ["S5"]},
                       {"text": "Stream rows.", "sources": ["S3"]}]}]},
    "dropped": {"chitchat": ["S4"], "duplicate": ["S5"]},
}


def test_a_fragment_of_a_kept_message_is_kept_or_shortened() -> None:
    assert fragment_fate(RESULT, "S9", 7, "user", "kept whole") == {
        "status": "kept", "output_message": 2}
    assert fragment_fate(RESULT, "S10", 7, "user", "a part cut out") == {
        "status": "shortened", "output_message": 2}
    assert fragment_fate(RESULT, "S1", 0, "system", "Be brief.") == {
        "status": "kept", "output_message": 0}


def test_summarized_names_every_line_that_cites_it() -> None:
    assert fragment_fate(RESULT, "S3", 2, "user") == {"status": "summarized", "into": [
        {"section": "constraints", "title": "Constraints", "item": 0,
         "text": "Keep the header."},
        {"section": "decisions", "title": "Decisions", "item": 1, "text": "Stream rows."}]}
    assert fragment_fate(RESULT, "S2", 1, "user")["into"][0]["section"] == "short"


def test_dropped_gives_the_reason_and_a_cited_repeat_keeps_both() -> None:
    assert fragment_fate(RESULT, "S4", 3, "assistant") == {"status": "dropped",
                                                           "reason": "chitchat"}
    fate = fragment_fate(RESULT, "S5", 4, "assistant")
    assert fate["status"] == "summarized" and fate["reason"] == "duplicate"
    assert fragment_fate(RESULT, "S6", 5, "tool") == {"status": "omitted"}


def test_explain_result_covers_every_fragment_with_its_analysis() -> None:
    conv = precis.load(EXAMPLE)
    result = compress(conv, keep_last=4)
    data = result.to_dict()
    analysis = analyze(conv)
    counter = get_counter(result.tokenizer)
    report = explain_result(data, analysis, counter)
    rows = report["fragments"]
    assert [r["id"] for r in rows] == [f.id for f in analysis.segmentation.fragments]
    kept_messages = {i for i in data["origin"] if i is not None}
    for row in rows:
        assert row["text"] == analysis.item(row["id"]).fragment.text
        assert row["tokens"] == counter.count(row["text"])
        assert row["why"].startswith(row["type"])
        if row["message"] in kept_messages:
            assert row["status"] == "kept"
            assert data["origin"][row["output_message"]] == row["message"]
        elif row["status"] == "summarized":
            for into in row["into"]:
                section = next(s for s in data["summary"]["sections"]
                               if s["key"] == into["section"])
                assert row["id"] in section["items"][into["item"]]["sources"]
        else:
            assert row["status"] == "dropped"
            assert row["id"] in data["dropped"][row["reason"]]
    statuses = {r["status"] for r in rows}
    assert {"kept", "summarized", "dropped"} <= statuses


def test_the_token_flow_counts_sections_tail_and_dropped() -> None:
    conv = precis.load(EXAMPLE)
    result = compress(conv, keep_last=4)
    data = result.to_dict()
    counter = get_counter(result.tokenizer)
    report = explain_result(data, analyze(conv), counter)
    flow, rows = report["flow"], report["fragments"]
    tokens = {r["id"]: r["tokens"] for r in rows}
    for section in data["summary"]["sections"]:
        got = next(s for s in flow["sections"] if s["key"] == section["key"])
        cited = {sid for item in section["items"] for sid in item["sources"]}
        assert got["before"] == sum(tokens[s] for s in cited)
        lines = [f"## {section['title']}"] + [
            f"- {item['text']} [{', '.join(item['sources'])}]" for item in section["items"]]
        assert got["after"] == sum(counter.count(line) for line in lines)
        assert got["items"] == len(section["items"])
    # four recent messages kept whole: as many tokens after as before
    assert flow["tail"]["messages"] == 4
    assert flow["tail"]["before"] == flow["tail"]["after"] > 0
    dropped = [r for r in rows if r["status"] == "dropped"]
    assert flow["dropped"] == {"fragments": len(dropped),
                               "before": sum(r["tokens"] for r in dropped)}


def test_a_tail_cut_to_fit_has_fewer_tokens_after() -> None:
    filler = " ".join(f"Step {chr(97 + i % 26)} of the build log has nothing special."
                      for i in range(300))
    conv = precis.Conversation(messages=[
        precis.Message(role="system", parts=[precis.Text("You are a build assistant.")]),
        precis.Message(role="user", parts=[precis.Text("The deploy failed.")]),
        precis.Message(role="assistant", parts=[precis.Text("I will look at the log.")]),
        precis.Message(role="user", parts=[precis.Text("Here is the log. " + filler)])])
    result = compress(conv, budget=200)
    report = explain_result(result.to_dict(), analyze(conv), get_counter(result.tokenizer))
    tail = report["flow"]["tail"]
    # the log cut to fit, and the assistant's message before it in the room left over
    assert tail["messages"] == 2 and tail["after"] < tail["before"]
    assert "shortened" in {r["status"] for r in report["fragments"]}
