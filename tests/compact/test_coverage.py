"""What the summary carries and how densely: shell commands and other exact facts, tool calls
and JSON results in brief, the exact-details list, the timeline of a conversation that is
mostly talk, and outputs that fit the budget as text too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import precis
from precis import Conversation, Message, ToolCall
from precis.compact import compress, get_template
from precis.compact._build import _units
from precis.compact._digest import json_shape, script_digest, tool_call_digest
from precis.compact._facts import command_lines, exact_facts, facts
from precis.tokens import get_counter

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "compact"


def load(name: str) -> Conversation:
    return precis.load(FIXTURES / f"{name}.json")


def tokens(conv: Conversation) -> int:
    return get_counter("estimate").count_messages(conv.messages)


def commands(text: str) -> list[str]:
    return [f.text for f in exact_facts(text) if f.kind == "command"]


# -- exact facts -----------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("Run this:\n```bash\n$ pip install -e .\ncargo test\n# a comment\n```",
     ["pip install -e .", "cargo test"]),
    ("user@host:~$ ls -la /srv\nbash-$ python reproduce.py",
     ["ls -la /srv", "python reproduce.py"]),
    # a tool named like a word is a command only with a technical argument
    ("find the file please.\nfind . -name '*.py'\nmake -j4 all\nmake sure it works",
     ["find . -name '*.py'", "make -j4 all"]),
    ("Nothing to run here.\nJust words.", []),
])
def test_shell_command_lines_are_facts(text: str, expected: list[str]) -> None:
    assert commands(text) == expected


def test_tool_call_commands_are_read_from_the_decoded_arguments() -> None:
    script = ("mkdir -p /srv/app/bin\ncat > /srv/app/bin/run.sh <<'EOF'\necho inside the file\n"
              "EOF\nchmod +x /srv/app/bin/run.sh")
    found = exact_facts(json.dumps({"commands": script}))
    assert [f.text for f in found if f.kind == "command"] == [
        "mkdir -p /srv/app/bin", "cat > /srv/app/bin/run.sh <<'EOF'",
        "chmod +x /srv/app/bin/run.sh"]
    paths = {f.text for f in found if f.kind == "path"}
    assert "/srv/app/bin/run.sh" in paths
    assert not any(p.startswith("n/") for p in paths)  # no "\n" escape read as a path
    assert command_lines(script)[-1] == "chmod +x /srv/app/bin/run.sh"


@pytest.mark.parametrize(("text", "expected"), [
    # line numbers of a file listing are no facts; other numbers are
    ("   110→    x = 5\n   111→    y = 12345\n1456:\n1457:    def f():",
     [("number", "12345")]),
    ("born 1977-02-03, departs 2024-05-15T15:00:00",
     [("number", "1977-02-03"), ("number", "2024-05-15T15:00:00")]),
    ("sha 3739671ad08541e759230997bf0e50dcb8059d05ef4c64c23bbb9a37a0829f24 ok",
     [("identifier", "3739671ad08541e759230997bf0e50dcb8059d05ef4c64c23bbb9a37a0829f24")]),
    ("It is in /data/sample.txt.", [("path", "/data/sample.txt")]),
    ("-rw-r--r-- 1 root, then --dry-run", [("identifier", "--dry-run")]),
    ("See README.rst and AUTHORS.rst", [("path", "README.rst"), ("path", "AUTHORS.rst")]),
])
def test_exact_facts(text: str, expected: list[tuple[str, str]]) -> None:
    assert [(f.kind, f.text) for f in exact_facts(text)] == expected


def test_plain_words_hold_no_facts_but_marked_words_do() -> None:
    assert facts("The quick brown fox jumps over the lazy dog, twice. JSON is fine.") == []
    assert [f.text for f in facts("retryCount raised ValueError")] == ["retryCount",
                                                                        "ValueError"]


# -- tool calls and results in brief ---------------------------------------------------------


def test_script_digest_keeps_whole_commands_and_folds_here_documents() -> None:
    script = ("mkdir -p /lib\ncat > /lib/utils.sh <<'EOF'\nto_upper() {\n  tr a-z A-Z\n}\n"
              "count_lines() {\n  wc -l\n}\nEOF\nls -l /lib/utils.sh")
    line = script_digest(script, 400)
    assert line == ("mkdir -p /lib; cat > /lib/utils.sh <<'EOF' [code, 6 lines; defines "
                    "to_upper, count_lines]; ls -l /lib/utils.sh")
    short = script_digest(script, 30)
    assert short == "mkdir -p /lib; …"  # whole commands, never half of one
    call = ToolCall("c1", "bash", json.dumps({"commands": script}))
    assert tool_call_digest(call, 300).startswith("bash(mkdir -p /lib; cat > /lib/utils.sh")


def test_json_result_in_brief() -> None:
    assert json_shape('{"status": "ok"}', 100) == '{"status": "ok"}'
    record = {k: f"value {k}" for k in ("user_id", "name", "email", "address", "dob",
                                        "payment", "tier")}
    assert json_shape(json.dumps(record), 40) == "{user_id, name, email, address, dob, payment, …}"
    assert json_shape(json.dumps([record] * 12), 40) == (
        "[12 items: {user_id, name, email, address, dob, payment, …}]")
    assert json_shape("not json at all", 40) is None


# -- coverage --------------------------------------------------------------------------------


def test_units_are_content_words_and_facts() -> None:
    assert _units("The service listens on port 8080 and app/db.py is fine.") == {
        "service", "listens", "port", "8080", "app/db.py", "fine"}
    assert {"端口", "口改", "改成"} <= _units("端口改成 8443")


# -- exact details ---------------------------------------------------------------------------


def test_details_list_facts_plainly_and_neighbours_share_a_line() -> None:
    conv = load("coding_en")
    result = compress(conv, budget=int(tokens(conv) * 0.6))
    assert result.summary is not None
    details = next(s for s in result.summary.sections if s.key == "details")
    assert any(len(item.sources) > 1 for item in details.items)
    shown = result.text()
    for item in details.items:
        assert "," not in item.text  # facts separated by spaces, not commas
        for fact in item.text.replace("`", " ").split():
            assert fact in shown


# -- budget ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["coding_en", "coding_zh", "sql_en", "chat_en"])
@pytest.mark.parametrize("share", [0.3, 0.5, 0.7])
def test_the_text_fits_the_budget_too(name: str, share: float) -> None:
    conv = load(name)
    budget = int(tokens(conv) * share)
    result = compress(conv, budget=budget)
    counter = get_counter("estimate")
    assert result.compressed_tokens <= budget
    assert counter.count_messages(result.messages) == result.compressed_tokens
    assert counter.count(result.text()) <= budget


def test_a_level_that_would_not_shorten_the_conversation_returns_it_unchanged() -> None:
    conv = load("multiday_en")  # 13 short messages: a summary of three is no shorter
    result = compress(conv, level="normal")
    assert result.summary is None
    assert result.messages == conv.messages
    assert result.compressed_tokens == result.original_tokens
    assert result.summarized_count == 0 and result.dropped_count == 0
    shorter = compress(conv, level="emergency")  # keeps 3: a summary of the rest pays off
    assert shorter.summary is not None
    assert shorter.compressed_tokens < shorter.original_tokens


# -- timeline --------------------------------------------------------------------------------


def test_a_conversation_of_small_talk_gets_a_timeline() -> None:
    conv = load("chat_en")
    result = compress(conv, budget=int(tokens(conv) * 0.5))
    assert result.template == "log"
    summary = result.summary
    assert summary is not None
    assert [s.key for s in summary.sections] == ["timeline"]
    assert [i.text for i in summary.short] == ["Lena and Tom, 6 April 2024 to 11 May 2024"]
    items = summary.sections[0].items
    dates = [i.date for i in items]
    assert len(dates) == len(set(dates))  # one line per date
    assert set(dates) <= {"6 April 2024", "20 April 2024", "11 May 2024"}
    for item in items:
        assert item.text.startswith(("Lena: ", "Tom: "))
        assert item.sources
    shown = result.text()
    for fact in ("Miso", "Elm Street", "Riverside half marathon"):
        assert fact in shown


def test_technical_conversations_and_an_explicit_template_keep_their_sections() -> None:
    assert compress(load("coding_en"), level="heavy").template == "sections"
    conv = load("chat_en")
    result = compress(conv, budget=int(tokens(conv) * 0.5), template=get_template("sections"))
    assert result.template == "sections"


def test_compressing_a_timeline_again_keeps_its_lines() -> None:
    conv = load("chat_en")
    first = compress(conv, budget=int(tokens(conv) * 0.5))
    assert first.summary is not None
    # within the same budget it comes back as it is
    same = compress(Conversation(messages=first.messages), budget=int(tokens(conv) * 0.5))
    assert same.messages == first.messages
    # with fewer recent messages kept, the earlier lines are carried over verbatim
    again = compress(Conversation(messages=first.messages), keep_last=1,
                     budget=first.compressed_tokens - 1)
    assert again.summary is not None
    lines = {i.text for i in first.summary.items}
    assert lines <= {i.text for i in again.summary.items}


def test_fix_is_not_labelled_twice() -> None:
    conv = load("coding_en")
    result = compress(conv, budget=int(tokens(conv) * 0.8))
    assert result.summary is not None
    rendered = result.summary.render()
    assert "→ fix: raise keepalive_timeout" in rendered
    assert "fix: The fix:" not in rendered


def test_summary_message_is_a_plain_user_message() -> None:
    conv = load("chat_en")
    result = compress(conv, budget=int(tokens(conv) * 0.5))
    summary = [m for m in result.messages if m.metadata.get("precis") == "summary"]
    assert len(summary) == 1 and isinstance(summary[0], Message)
    assert summary[0].role == "user"
