"""What the summary carries and how densely: shell commands and other exact facts, tool calls
and JSON results in brief, the exact-details list (the timeline's: those tests use the ``log``
template), the timeline of a conversation that is mostly talk, and outputs that fit the
budget as text too."""

from __future__ import annotations

import json
import re
from datetime import date, timedelta
from pathlib import Path

import pytest
from _builders import timeline_builder

import precis
from precis import Conversation, Message, Text, ToolCall, ToolResult
from precis.analysis import analyze
from precis.compact import compress, get_template
from precis.compact._digest import core_text, json_shape, script_digest, tool_call_digest
from precis.compact._facts import command_lines, exact_facts, facts, runs_program
from precis.compact._retained import fact_scan as _fact_scan
from precis.compact.timeline._details import _fact_weight, _held
from precis.compact.timeline._ranking import units as _units
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


AWK_SCRIPT = (
    "ls -la /data\n"
    "awk -F',' '\n"
    "NR==FNR { dept[$1]=$2; next }\n"
    "FNR==1 { print \"name,department,salary\"; next }\n"
    "{ print $1 \",\" dept[$3] }\n"
    "END { print \"done\" }\n"
    "' /data/departments.csv /data/employees.csv > /data/report.csv\n"
    "grep -rn 'def ' src \\\n"
    "  | sort -u \\\n"
    "  > /tmp/defs.txt\n"
    "cat /data/report.csv"
)


def test_a_command_that_goes_on_over_lines_is_its_first_line() -> None:
    # the lines of a quoted program (awk, python -c) and those after a trailing backslash
    # belong to the command they go on from: no commands of their own
    assert command_lines(AWK_SCRIPT) == [
        "ls -la /data", "awk -F',' '", "grep -rn 'def ' src \\", "cat /data/report.csv"]
    found = {(f.kind, f.text) for f in exact_facts(json.dumps({"commands": AWK_SCRIPT}))}
    assert ("command", "END { print \"done\" }") not in found
    assert ("path", "/data/report.csv") in found  # its facts are still facts
    # the digest shows each whole: a long program folded, short lines joined
    assert script_digest(AWK_SCRIPT, 400) == (
        "ls -la /data; awk -F',' '[code, 4 lines]' /data/departments.csv "
        "/data/employees.csv > /data/report.csv; grep -rn 'def ' src \\ | sort -u \\ "
        "> /tmp/defs.txt; cat /data/report.csv")
    assert script_digest("python -c '\nimport sys\nprint(sys.argv)\n' a b", 400) == (
        "python -c ' import sys print(sys.argv) ' a b")  # short: its lines joined
    # quotes inside another kind of quote, escaped ones and comments do not open one
    assert command_lines("echo \"it's\" 'a \"b\"' \\' # don't\nls /tmp") == [
        "echo \"it's\" 'a \"b\"' \\' # don't", "ls /tmp"]


@pytest.mark.parametrize(("text", "expected"), [
    # a file listing's line numbers (cat -n, an editor's view) come before the commands
    ("     1→check:\n     2→    uv run pytest --cov=src\n     3→\t@echo ok",
     ["uv run pytest --cov=src"]),
    ("    14\truff check .\n12: make -j4 all", ["ruff check .", "make -j4 all"]),
    # "." as an argument ends no sentence; "git is great." is one
    ("uv run ruff format .\ngit is great.", ["uv run ruff format ."]),
])
def test_more_command_lines(text: str, expected: list[str]) -> None:
    assert commands(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    # the values of a CSV row are its numbers; a comma joins only groups of three digits
    ("Alice,1,120000\nBob,2,95000", ["120000", "95000"]),
    ("1,024 rows, 2,500,000 bytes", ["1,024", "2,500,000"]),
])
def test_numbers_with_commas(text: str, expected: list[str]) -> None:
    assert [f.text for f in facts(text) if f.kind == "number"] == expected


def test_a_relative_path_needs_no_extension_when_it_has_three_parts() -> None:
    text = "built target/debug/deps/app-657c4d9f and src/precis/compact/ on 10/12/2024 and/or"
    assert [(f.kind, f.text) for f in facts(text) if f.kind == "path"] == [
        ("path", "target/debug/deps/app-657c4d9f"), ("path", "src/precis/compact/")]


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


def test_a_tool_result_line_carries_what_the_tool_said_not_its_label() -> None:
    # The line of a result is "pytest returned: <first line> (23 lines)": the tool's label
    # and the count of lines are precis's words; they tell the ranking nothing.
    output = "collected 412 items in tests/api\n" + "\n".join(
        f"tests/api/test_{k}.py ........ ok" for k in range(22))
    conv = Conversation(messages=[
        Message(role="user", parts=[Text("Run the API tests and tell me what fails.")]),
        Message(role="assistant", parts=[ToolCall(id="c1", name="pytest",
                                                  arguments='{"path": "tests/api"}')]),
        Message(role="tool", parts=[ToolResult(call_id="c1", content=output, name="pytest")]),
        Message(role="assistant", parts=[Text("All 412 tests in tests/api pass.")]),
        Message(role="user", parts=[Text("ok")]),
        Message(role="assistant", parts=[Text("Anything else?")]),
    ])
    builder = timeline_builder(conv)
    result = next(c for c in builder.candidates
                  if builder.fragments[c.order].kind == "tool_result")
    assert result.text.endswith("(23 lines)")  # the line as the summary shows it
    units = builder.ranking._said_units(result)
    assert {"collected", "412", "items", "tests/api"} <= units
    assert not {"23", "returned", "lines"} & units
    spoken = next(c for c in builder.candidates if "All 412 tests" in c.text)
    assert builder.ranking._said_units(spoken) == _units(spoken.text)


# -- exact details ---------------------------------------------------------------------------


def test_details_list_facts_plainly_and_neighbours_share_a_line() -> None:
    conv = load("coding_en")
    result = compress(conv, budget=int(tokens(conv) * 0.6), template="log")
    assert result.summary is not None
    details = next(s for s in result.summary.sections if s.key == "details")
    assert any(len(item.sources) > 1 for item in details.items)
    shown = result.text()
    for item in details.items:
        assert "," not in item.text  # facts separated by spaces, not commas
        for fact in item.text.replace("`", " ").split():
            assert fact in shown


SHOP_SCRIPT = [
    "mkdir -p /srv/shop/src /srv/shop/tests /srv/shop/docs",
    "touch /srv/shop/src/__init__.py /srv/shop/tests/__init__.py",
    "echo '# Shop' > /srv/shop/README.md",
    "ls -la /srv/shop",
]


def shop_session() -> Conversation:
    """A tiny agent session: one request, one script of four commands, its listing, the
    answer (about 270 tokens by the estimator)."""
    listing = "\n".join(
        f"drwxr-xr-x 2 root root {size} 2026-06-10 01:45 {name}"
        for size, name in ((40, "docs"), (60, "src"), (60, "tests")))
    return Conversation(messages=[
        Message.of("user", "Create a Python project at /srv/shop with src/, tests/ and docs/ "
                   "folders, an __init__.py in src/ and tests/, and a README.md that says "
                   "'# Shop'."),
        Message(role="assistant", parts=[
            Text("I'll create the project structure now."),
            ToolCall("call_1", "bash", json.dumps({"commands": "\n".join(SHOP_SCRIPT)}))]),
        Message(role="tool", parts=[ToolResult("call_1", listing, name="bash")]),
        Message.of("assistant", "Done: the project at `/srv/shop` has `src/` and `tests/` "
                   "(each with `__init__.py`), an empty `docs/` and a `README.md` holding "
                   "`# Shop`."),
    ])


def details_facts(result: precis.compact.CompressionResult) -> list[str]:
    """The facts the exact-details list shows (backticked ones whole), in order."""
    assert result.summary is not None
    out: list[str] = []
    for section in result.summary.sections:
        if section.key == "details":
            for item in section.items:
                out += [m.strip("`") for m in re.findall(r"`[^`]+`|\S+", item.text)]
    return out


def test_a_small_budget_keeps_the_commands_verbatim() -> None:
    conv = shop_session()
    budget = 150  # the summary has room for the details, not for sentences besides
    result = compress(conv, budget=budget, template="log")
    assert result.compressed_tokens <= budget
    shown = result.text()
    for command in SHOP_SCRIPT:
        assert command in shown
    assert "2026-06-10" in shown
    assert result.summary is not None
    assert all(item.sources for item in result.summary.items)  # every line cites
    assert "## Exact details" in result.summary.render()


@pytest.mark.parametrize(("budget", "commands"), [(80, 0), (100, 2), (120, 2)])
def test_a_tiny_budget_lists_facts_before_sentences(budget: int, commands: int) -> None:
    conv = shop_session()
    result = compress(conv, budget=budget, template="log")
    assert result.compressed_tokens <= budget
    assert result.kept_messages == 0  # the answer cut to its core would take too much
    shown = result.text()
    # the facts only: none of the request's or the answer's sentences
    assert "Create a Python project" not in shown and "I'll create" not in shown
    listed = details_facts(result)
    assert len(listed) >= 4
    # the paths the user gave come first, then what the agent ran, whole commands
    for path in ("/srv/shop", "__init__.py", "README.md"):
        assert path in shown
    assert sum(command in listed for command in SHOP_SCRIPT) >= commands


@pytest.mark.parametrize("budget", [80, 100, 130])
def test_the_facts_the_user_gave_come_before_cheaper_ones(budget: int) -> None:
    url = "https://tracker.example.com/projects/billing/issues/4821"
    rows = "\n".join(f"worker-{n:02d} pid {4100 + n} rss {2048 + 37 * n} MB"
                     for n in range(30))  # sixty numbers of a few tokens each
    conv = Conversation(messages=[
        Message.of("user", f"The memory leak is described at {url}; find the worker that leaks."),
        Message(role="assistant", parts=[
            Text("Listing the workers."),
            ToolCall("c1", "bash", json.dumps({"command": "ps-workers --memory"}))]),
        Message(role="tool", parts=[ToolResult("c1", rows, name="bash")]),
        Message.of("assistant", "worker-29 uses the most memory: 3121 MB."),
    ])
    result = compress(conv, budget=budget, template="log")
    assert result.compressed_tokens <= budget
    assert url in details_facts(result)
    assert "4100" in result.text()  # and the agent's facts in the room left


def test_details_list_no_fact_another_listed_fact_shows() -> None:
    for conv, budget in [(shop_session(), 150), (shop_session(), 100),
                         (load("coding_en"), int(tokens(load("coding_en")) * 0.3)),
                         (load("sql_en"), int(tokens(load("sql_en")) * 0.5))]:
        listed = details_facts(compress(conv, budget=budget, template="log"))
        assert listed
        for fact in listed:
            holders = [other for other in listed if other != fact and fact in _held(other)]
            assert holders == [], (fact, holders)


def test_a_fact_holds_its_pieces_and_the_folders_of_its_paths() -> None:
    assert _held("chmod +x /srv/app/bin/run.sh") >= {
        "chmod", "+x", "/srv/app/bin/run.sh", "/srv/app/bin", "/srv/app", "/srv",
        "app/bin/run.sh", "bin/run.sh", "run.sh"}
    assert _held("src/app.py") == {"src/app.py", "src", "app.py"}
    assert _held("2024-05-15 08:05:12") == {"2024-05-15", "08", "05", "12"}
    assert "/srv/ap" not in _held("/srv/app")  # whole folders only


def test_a_core_lists_the_telling_facts_it_leaves_out_first() -> None:
    text = ("The settings file was read without trouble. It sets db_host, db_port, db_name, "
            "cache_host, log_level, pool_size, retry_max, queue_name and worker_name in "
            "/etc/orders/settings.conf, with the database on port 5432.")
    core = core_text(text, 50)
    assert core.startswith("The settings file was read without trouble. (also: ")
    listed = core[core.index("(also: ") + 7:-1].split(", ")
    assert len(listed) == 8  # at most eight
    assert listed[:2] == ["/etc/orders/settings.conf", "5432"]  # before the names
    assert listed[2:] == ["db_host", "db_port", "db_name", "cache_host", "log_level",
                          "pool_size"]  # the names in order, as many as there is room for


def test_runs_program() -> None:
    for line in ("cat /srv/orders/app.conf", "$ ls -la", "FOO=1 pytest -q", "./run.sh --all",
                 "echo done", "/srv/app/todo.sh add x"):
        assert runs_program(line), line
    for line in ("fi", "x=$((x+1))", "print $2", "END {", "feats=()", "for f in *.py; do"):
        assert not runs_program(line), line


def test_a_setting_from_a_command_or_a_name_given_a_flag_runs_a_program() -> None:
    for line in ('only_a=$(comm -23 /data/a.txt /data/b.txt)', 'n="$(grep -c x /var/log/a.log)"',
                 "comm -13 a.txt b.txt", "xsv select name /data/people.csv"):
        assert runs_program(line), line
    for line in ("total=$((a + b))", "while read -r line; do", "if [ -f /etc/hosts ]; then",
                 "done < /data/input.txt", "local name=$1"):
        assert not runs_program(line), line


def test_a_sed_edit_is_no_path() -> None:
    found = [(f.kind, f.text) for f in facts("sed -i 's/old_name/new_name/g' /srv/app/main.py")]
    assert ("path", "/srv/app/main.py") in found
    assert not any(kind == "path" and "new_name" in text for kind, text in found)
    assert ("path", "srv/app/main.py") in [(f.kind, f.text) for f in facts("see srv/app/main.py")]


def test_what_a_fact_is_worth_in_the_details() -> None:
    one = [_fact_weight("5432", "number"), _fact_weight("/srv/app.conf", "path"),
           _fact_weight("cat /srv/app.conf", "command"), _fact_weight("3eb6f2c", "identifier"),
           _fact_weight("credit_card_4065275", "identifier")]
    assert one == [1.0] * 5
    assert _fact_weight("deploy/prod.yaml", "command") == 1.0  # a path in backticks
    assert _fact_weight("https://example.com/issues/12", "url") > 1.0
    for text, kind in (("db_host", "identifier"), ("parseArgs", "identifier"),
                       ("--verbose", "identifier"), ("x=$((x+1))", "command")):
        assert _fact_weight(text, kind) < 1.0


def settings_session() -> Conversation:
    conf = "\n".join(["db_host=db.internal", "db_port=5432", "db_name=orders",
                      "cache_host=cache.internal", "log_level=info", "pool_size=25"])
    return Conversation(messages=[
        Message.of("user", "Read the settings of the orders service and tell me the "
                   "database port."),
        Message(role="assistant", parts=[
            Text("Reading the settings."),
            ToolCall("c1", "bash", json.dumps({"command": "cat /srv/orders/app.conf"}))]),
        Message(role="tool", parts=[ToolResult("c1", conf, name="bash")]),
        Message.of("assistant", "The database of the orders service listens on port 5432."),
    ])


def test_numbers_come_before_names_in_the_details() -> None:
    # names (db_host, ...) fill the room the numbers leave, never take theirs
    names = ["db_host", "db_port", "db_name", "cache_host", "log_level", "pool_size"]
    with_names = 0
    for budget in range(62, 82, 4):
        result = compress(settings_session(), budget=budget, template="log")
        assert result.compressed_tokens <= budget
        listed = details_facts(result)
        if any(name in listed for name in names):
            with_names += 1
            assert "5432" in listed and "25" in listed, (budget, listed)
    assert with_names  # (the rule was put to the test)


def test_shell_keywords_and_braces_are_no_details() -> None:
    script = "for f in /var/log/app/*.log; do\n  gzip -9 $f\ndone\nif [ -d /backup ]; then\n" \
             "  cp /var/log/app/*.gz /backup/\nfi\n{\n}"
    conv = Conversation(messages=[
        Message.of("user", "Compress the logs in /var/log/app and copy them to /backup."),
        Message(role="assistant", parts=[
            ToolCall("c1", "bash", json.dumps({"commands": script}))]),
        Message(role="tool", parts=[ToolResult("c1", "ok", name="bash")]),
        Message.of("assistant", "The logs are compressed and copied to /backup."),
    ])
    result = compress(conv, budget=90, template="log")
    listed = details_facts(result)
    assert "gzip -9 $f" in listed
    for word in ("done", "fi", "{", "}"):
        assert word not in listed


def test_a_long_tool_call_is_read_for_facts_beyond_its_head() -> None:
    lines = [f'echo "step {n:03d} of the nightly job" >> /srv/jobs/nightly.log'
             for n in range(60)] + ["chmod 600 /srv/jobs/final-report.txt"]
    conv = Conversation(messages=[
        Message.of("user", "Run the nightly job."),
        Message(role="assistant", parts=[
            ToolCall("c1", "bash", json.dumps({"commands": "\n".join(lines)}))]),
    ])
    fragment = next(f for f in analyze(conv).segmentation.fragments if f.kind == "tool_call")
    assert len(fragment.text) > 2000 and fragment.text.index("final-report") > 2000
    found = {f.text for f in exact_facts(_fact_scan(fragment))}
    assert "chmod 600 /srv/jobs/final-report.txt" in found
    assert "/srv/jobs/final-report.txt" in found
    assert "n/srv/jobs/nightly.log" not in found  # decoded: no "\n" escape in a path


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
    # an agent session (shell and file tools) gets the handover; a data session with a
    # query tool too; a chat of small talk asked for "sections" keeps them
    assert compress(load("coding_en"), level="heavy").template == "claude"
    assert compress(load("sql_zh"), level="heavy").template == "claude"
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


def test_summary_message_is_a_plain_user_message() -> None:
    conv = load("chat_en")
    result = compress(conv, budget=int(tokens(conv) * 0.5))
    summary = [m for m in result.messages if m.metadata.get("precis") == "summary"]
    assert len(summary) == 1 and isinstance(summary[0], Message)
    assert summary[0].role == "user"


def _chat(lines: list[str]) -> Conversation:
    """A small-talk conversation between Ana and Ben, one message a day from 1 March 2024
    (so its summary is a timeline, one line per date)."""
    return Conversation(messages=[
        Message(role="user" if n % 2 == 0 else "assistant", name="Ana" if n % 2 == 0 else "Ben",
                parts=[Text(text)], timestamp=f"{date(2024, 3, 1) + timedelta(days=n)}T18:00:00Z")
        for n, text in enumerate(lines)])



_FILLER = [
    "Haha that is so true, I love it so much.", "Aww that is really great to hear!",
    "So happy for you, really, that is lovely.", "Thanks so much, that means a lot to me.",
    "Oh wow, that is amazing, I am so glad.", "Yes, totally agree with you on that one.",
    "That sounds like so much fun, good for you!", "I know right, it was really nice.",
]


def _preferred(first: str, second: str, first_word: str, second_word: str) -> set[str]:
    """Compress a chat holding ``first`` and, later, ``second`` to budgets from 30% to 55%
    of its tokens; the words of those two found in a summary that shows only one of them."""
    conv = _chat(_FILLER * 2 + [first] + _FILLER + [second] + _FILLER)
    total = tokens(conv)
    alone: set[str] = set()
    for budget in range(int(total * 0.3), int(total * 0.55), 3):
        result = compress(conv, budget=budget, keep_last=1)
        assert result.template == "log"
        text = result.summary.render() if result.summary else ""
        shown = {w for w in (first_word, second_word) if w in text}
        if len(shown) == 1:
            alone |= shown
    return alone


def test_a_timeline_prefers_the_line_that_names_someone_or_somewhere() -> None:
    # as many rare words in each; the line with names comes later (ties go to the earlier)
    # and, when there is room for one of them, is the one taken
    plain = "We went hiking, then baked bread at home."
    named = "We went hiking with Marta near Lisbon."
    assert _preferred(plain, named, "baked", "Marta") == {"Marta"}


def test_a_timeline_prefers_a_statement_to_a_question() -> None:
    # a question asks rather than tells: the statement is taken, though it comes later
    question = "Wait, did Clara really adopt a puppy called Biscuit while visiting Porto?"
    statement = "Our cousin Clara brought home a spaniel named Biscuit from a Porto shelter."
    assert _preferred(question, statement, "visiting", "shelter") == {"shelter"}
