"""The compression benchmarks' scoring: answer words, fact regexes, rendering, baselines."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import precis
from precis.model import Conversation, Message, Text, ToolCall, ToolResult
from precis.tokens import TokenCounter

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from _baselines import BASELINES, Rendering, SentenceSplitter, keep_recent, uniform
from _compress_common import (
    Fact,
    content_words,
    date_label,
    extract_facts,
    fact_present,
    locomo_questions,
    render_conversation,
    retained,
)


class WordCounter(TokenCounter):
    """One token per whitespace-separated word: costs easy to check by hand."""

    name = "words"

    def count(self, text: str) -> int:
        return len(text.split())


# ------------------------------------------------------------------ answer words


def test_content_words_lowercase_split_and_drop_stopwords() -> None:
    assert content_words("The sunday before 25 May 2023") == ["sunday", "25", "may", "2023"]
    assert content_words("Psychology, counseling certification") == [
        "psychology", "counseling", "certification"]
    assert content_words("\"Charlotte's Web\"") == ["charlotte", "web"]
    assert content_words("mia_li_3668") == ["mia", "li", "3668"]
    assert content_words("No") == []


def _locomo(qa: list[dict[str, object]]) -> Conversation:
    return Conversation(messages=[Message.of("user", "hi", name="Ann")],
                        metadata={"locomo": {"qa": qa}})


def test_locomo_questions_keep_categories_1_to_4_with_content_words() -> None:
    conv = _locomo([
        {"question": "When?", "answer": "7 May 2023", "category": 2},
        {"question": "Year?", "answer": 2022, "category": 1},
        {"question": "Adversarial", "adversarial_answer": "x", "category": 5},
        {"question": "Missing", "category": 4},
        {"question": "Yes/no", "answer": "No", "category": 3},
        {"question": "What?", "answer": "Adoption agencies", "category": 4},
    ])
    questions = locomo_questions(conv)
    assert [(q.index, q.category, q.answer) for q in questions] == [
        (0, 2, "7 May 2023"), (1, 1, "2022"), (5, 4, "Adoption agencies")]
    assert questions[0].words == frozenset({"7", "may", "2023"})


def test_retained_needs_every_content_word_as_a_whole_word() -> None:
    questions = locomo_questions(_locomo([
        {"question": "a", "answer": "7 May 2023", "category": 2},
        {"question": "b", "answer": "8 May 2023", "category": 2},
        {"question": "c", "answer": "the adoption agencies", "category": 4},
        {"question": "d", "answer": "Sweden", "category": 4},
    ]))
    output = "[7 May 2023]\nAnn: I called ADOPTION agencies; Swedenborg is a name."
    assert retained(questions, output) == {0, 2}


# ------------------------------------------------------------------- rendering


def test_date_label() -> None:
    assert date_label("2023-05-08T13:56:00") == "8 May 2023"
    assert date_label("2024-12-25") == "25 December 2024"
    assert date_label(None) is None
    assert date_label("yesterday") is None
    assert date_label("2023-13-01T00:00:00") is None


def _conversation() -> Conversation:
    return Conversation(messages=[
        Message.of("system", "You are helpful."),
        Message.of("user", "Book flight ZFA04Y please.", timestamp="2023-05-08T10:00:00"),
        Message.of("assistant", "Done. It costs 150 dollars.", timestamp="2023-05-08T10:01:00"),
        Message.of("user", "Thanks! See you.", timestamp="2023-05-09T09:00:00"),
    ])


def test_render_headers_on_date_change_and_speakers() -> None:
    conv = _conversation()
    assert render_conversation(conv) == (
        "system: You are helpful.\n"
        "[8 May 2023]\n"
        "user: Book flight ZFA04Y please.\n"
        "assistant: Done. It costs 150 dollars.\n"
        "[9 May 2023]\n"
        "user: Thanks! See you."
    )
    tools = [
        Message.of("user", "list it", name="Bob"),
        Message(role="assistant", parts=[ToolCall(id="c1", name="bash",
                                                  arguments='{"cmd": "ls"}')]),
        Message(role="tool", parts=[ToolResult(call_id="c1", content="a.txt")]),
        Message(role="assistant", parts=[]),
    ]
    assert render_conversation(tools) == (
        'Bob: list it\nassistant: {"cmd": "ls"}\ntool: a.txt')


# ---------------------------------------------------------------- fact regexes


def test_paths_and_urls() -> None:
    facts = extract_facts(
        "Edit /home/eval/myproject/README.md and src/precis/model.py, see "
        "https://github.com/a/b/pull/12. Also ~/.config/app and ./run.sh."
    )
    assert facts == {
        Fact("path", "/home/eval/myproject/README.md"),
        Fact("path", "src/precis/model.py"),
        Fact("url", "https://github.com/a/b/pull/12"),
        Fact("path", "~/.config/app"),
        Fact("path", "./run.sh"),
    }


def test_not_paths() -> None:
    text = "</system-reminder> and/or 5 km/h, 1/2 cup on 05/08/2023, e.g. TCP/IP"
    assert {f for f in extract_facts(text) if f.kind == "path"} == set()


def test_commands() -> None:
    text = (
        "Run `pytest -q tests` and not `sed` or `foo()`.\n"
        "$ ./configure --prefix=/opt\n"
        "    git status\n"
        "Git is a tool."
    )
    commands = {f.value for f in extract_facts(text) if f.kind == "command"}
    assert commands == {"pytest -q tests", "./configure --prefix=/opt", "git status"}


def test_numbers() -> None:
    facts = extract_facts(
        "Costs 150 dollars, 3.5 hours, 7 items, 1,234 rows, version 0.10.2, at 15:00, gpt-4o.")
    assert {f.value for f in facts if f.kind == "number"} == {
        "150", "3.5", "1,234", "0.10.2", "15", "00"}
    assert {f.kind for f in facts} == {"number"}


def test_ids() -> None:
    facts = extract_facts(
        "Reservation ZFA04Y, commit 4e49f16, request 123e4567-e89b-12d3-a456-426614174000, "
        "ticket JIRA-1234 and #1867, user mia_li_3668; not deadbeef or CAFE1."
    )
    assert facts == {
        Fact("id", "ZFA04Y"),
        Fact("id", "4e49f16"),
        Fact("id", "123e4567-e89b-12d3-a456-426614174000"),
        Fact("id", "JIRA-1234"),
        Fact("id", "#1867"),
        Fact("id", "mia_li_3668"),
    }


def test_line_number_gutters_are_not_facts() -> None:
    text = "   110→    enqueue(project)\n   111\tlimit = 42\n112:    x = 7"
    assert extract_facts(text) == {Fact("number", "42")}


def test_json_arguments_are_decoded() -> None:
    args = ('{"command": "cd /repo && python -m pytest tests/test_x.py", "timeout": 120, '
            '"note": "say \\"hi\\""}')
    assert extract_facts(args) == {
        Fact("command", "cd /repo && python -m pytest tests/test_x.py"),
        Fact("path", "/repo"),
        Fact("path", "tests/test_x.py"),
        Fact("number", "120"),
    }
    # the first line of a command value counts whatever it starts with
    edit = '{"command": "edit 10:12\\n    return 1\\nend_of_edit"}'
    assert Fact("command", "edit 10:12") in extract_facts(edit)


def test_comments_and_braces_are_not_the_command_of_a_command_value() -> None:
    script = '{"command": "# restore the backup\\n{\\n  cp /tmp/a.bak /tmp/a\\n}"}'
    commands = {f.value for f in extract_facts(script) if f.kind == "command"}
    assert commands == {"cp /tmp/a.bak /tmp/a"}
    assert extract_facts('{"command": "# nothing to run"}') == set()


def test_sed_expressions_and_what_follows_a_variable_are_not_paths() -> None:
    text = ("sed -i 's/localhost/db.prod.internal/g' /etc/app.conf and "
            "sed 's|console.log|logger.info|g' src/app.js; cp $(outDir)/ponyc ${HOME}/bin/x")
    paths = {f.value for f in extract_facts(text) if f.kind == "path"}
    assert paths == {"/etc/app.conf", "src/app.js"}


def test_fact_present_verbatim_or_json_escaped() -> None:
    fact = Fact("command", 'echo "hi" > /tmp/a.txt')
    assert fact_present(fact, 'ran echo "hi" > /tmp/a.txt ok')
    assert fact_present(fact, '{"cmd": "echo \\"hi\\" > /tmp/a.txt"}')
    assert not fact_present(fact, "echo hi > /tmp/a.txt")
    assert not fact_present(Fact("number", "150"), "costs 15 or 0")


# ------------------------------------------------------------------- baselines


def test_keep_recent_hand_checked() -> None:
    r = Rendering.of(_conversation(), WordCounter())
    # line costs in words: system 4, [8 May] 3, user 5, assistant 6, [9 May] 3, user 4
    assert r.tokens == 25
    assert keep_recent(r, 25) == r.text
    assert keep_recent(r, 11) == "system: You are helpful.\n[9 May 2023]\nuser: Thanks! See you."
    assert keep_recent(r, 19) == keep_recent(r, 11)  # the assistant message needs 9 more
    assert keep_recent(r, 20) == (
        "system: You are helpful.\n[8 May 2023]\nassistant: Done. It costs 150 dollars.\n"
        "[9 May 2023]\nuser: Thanks! See you.")
    assert keep_recent(r, 10) == "system: You are helpful."
    assert keep_recent(r, 3) == ""  # not even the system prompt fits


def test_uniform_hand_checked() -> None:
    r = Rendering.of(_conversation(), WordCounter())
    # two of three messages, evenly spaced: the first and the last
    assert uniform(r, 20) == (
        "system: You are helpful.\n[8 May 2023]\nuser: Book flight ZFA04Y please.\n"
        "[9 May 2023]\nuser: Thanks! See you.")


def test_budget_rules() -> None:
    r = Rendering.of(_conversation(), WordCounter())
    assert r.budget(0.5) == 12  # half of 25
    assert r.budget(0.5, "rest") == 4 + 10  # system prompt + half of the other 21
    with pytest.raises(ValueError):
        r.budget(0.5, "some")


def _longer() -> Conversation:
    messages = [Message.of("system", "You are a travel agent. Keep answers short.")]
    for day in range(1, 6):
        for turn in range(4):
            role = "user" if turn % 2 == 0 else "assistant"
            messages.append(Message(
                role=role, timestamp=f"2023-06-{day:02d}T1{turn}:00:00",
                parts=[Text(f"Day {day} turn {turn}: the flight HAT{day}{turn}7 leaves at "
                            f"1{turn}:30. Gate B{day}. Bring the passport, please!")]))
    return Conversation(messages=messages)


@pytest.mark.parametrize("name", sorted(BASELINES))
@pytest.mark.parametrize("counter_name", ["words", "estimate"])
def test_every_baseline_fits_every_budget(name: str, counter_name: str) -> None:
    if name == "textrank":
        pytest.importorskip("sumy")
        pytest.importorskip("numpy")
    counter = WordCounter() if counter_name == "words" else precis.get_counter("estimate")
    r = Rendering.of(_longer(), counter)
    total = r.tokens
    for budget in [*range(0, 40), *range(40, total + 5, 7)]:
        out = BASELINES[name](r, budget)
        assert counter.count(out) <= budget, (name, budget)
    assert BASELINES[name](r, total) != ""


def test_sentence_splitter() -> None:
    s = SentenceSplitter()
    assert s.to_sentences("Hi there! How are you? Fine.\nNew line 3.5 km") == (
        "Hi there!", "How are you?", "Fine.", "New line 3.5 km")
    assert s.to_sentences("你好。今天去哪？") == ("你好。", "今天去哪？")
    assert s.to_words("It's ZFA04Y, ok") == ("It", "s", "ZFA04Y", "ok")
