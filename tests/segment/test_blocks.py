"""Block structure: headings, paragraphs, lists, code, SQL, JSON, tables, and their mixes."""

from __future__ import annotations

import pytest

from precis.segment import split_text


def kinds(text: str) -> list[tuple[str, str]]:
    return [(k, text[s:e]) for k, s, e, _ in split_text(text)]


def hints(text: str) -> list[tuple[str, str | None]]:
    return [(k, h) for k, _, _, h in split_text(text)]


def test_empty_and_blank_text_give_nothing() -> None:
    assert split_text("") == []
    assert split_text(" \n\t\n　\r\n") == []


def test_spans_are_four_tuples_of_kind_start_end_hint() -> None:
    assert split_text("  Hi.  ") == [("sentence", 2, 5, None)]


# --- headings and paragraphs -------------------------------------------------------------


def test_markdown_headings() -> None:
    assert kinds("# Title\nBody text.\n\n## 安装步骤\n先安装依赖。") == [
        ("heading", "# Title"),
        ("sentence", "Body text."),
        ("heading", "## 安装步骤"),
        ("sentence", "先安装依赖。"),
    ]


def test_hash_without_space_is_not_a_heading() -> None:
    assert kinds("#hashtag is fun.") == [("sentence", "#hashtag is fun.")]


def test_setext_heading() -> None:
    assert kinds("Title\n=====\nText.") == [("heading", "Title\n====="), ("sentence", "Text.")]


def test_blank_lines_separate_paragraphs() -> None:
    assert kinds("First para\n\nSecond para\n\n\n第三段") == [
        ("sentence", "First para"),
        ("sentence", "Second para"),
        ("sentence", "第三段"),
    ]


def test_thematic_break_is_a_paragraph() -> None:
    assert kinds("Above.\n\n---\n\nBelow.") == [
        ("sentence", "Above."),
        ("paragraph", "---"),
        ("sentence", "Below."),
    ]


# --- lists -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "item",
    [
        "- dash item",
        "* star item",
        "+ plus item",
        "1. numbered item",
        "12) paren item",
        "(a) lettered item",
        "b) lettered item",
        "(iv) roman item",
        "一、中文编号",
        "十二、中文编号",
        "（一）括号编号",
        "(三) 半角括号",
        "① 圈号",
        "⑵ 括号数字",
        "1、顿号编号",
        "1.安装依赖",
        "• bullet",
        "- [ ] task",
    ],
)
def test_list_markers(item: str) -> None:
    assert kinds(f"{item}\n{item}") == [("list_item", item), ("list_item", item)]


@pytest.mark.parametrize(
    "text",
    ["1.5 million users came.", "-1 is negative.", "*emphasis* here.", "2024.1.1 was a Monday."],
)
def test_not_list_markers(text: str) -> None:
    assert kinds(text) == [("sentence", text)]


def test_list_items_keep_their_continuation_lines_and_sentences() -> None:
    text = (
        "Plan:\n- first step. It has two sentences.\n  and a wrapped line\n- second step\n\nDone."
    )
    assert kinds(text) == [
        ("sentence", "Plan:"),
        ("list_item", "- first step. It has two sentences.\n  and a wrapped line"),
        ("list_item", "- second step"),
        ("sentence", "Done."),
    ]


def test_chinese_list_after_prose() -> None:
    text = "我的需求是：\n一、支持中文。\n二、支持英文\n（一）细节\n① 第一"
    assert kinds(text) == [
        ("sentence", "我的需求是："),
        ("list_item", "一、支持中文。"),
        ("list_item", "二、支持英文"),
        ("list_item", "（一）细节"),
        ("list_item", "① 第一"),
    ]


def test_nested_list_items_are_separate() -> None:
    assert kinds("- outer\n  - inner\n1. next") == [
        ("list_item", "- outer"),
        ("list_item", "- inner"),
        ("list_item", "1. next"),
    ]


# --- fenced code --------------------------------------------------------------------------


def test_fenced_code_with_language_hint_and_blank_lines() -> None:
    text = "Here:\n\n```python\ndef f():\n\n    return 1\n```\nAfter."
    assert kinds(text) == [
        ("sentence", "Here:"),
        ("code", "```python\ndef f():\n\n    return 1\n```"),
        ("sentence", "After."),
    ]
    assert hints(text)[1] == ("code", "python")


def test_tilde_fence_and_info_string() -> None:
    text = "~~~js title=app.js\nlet x = 1;\n~~~"
    assert kinds(text) == [("code", text)]
    assert hints(text) == [("code", "js")]


def test_unterminated_fence_runs_to_the_end() -> None:
    text = "Start.\n```bash\nls -la\n\nNot prose any more. Really."
    assert kinds(text) == [
        ("sentence", "Start."),
        ("code", "```bash\nls -la\n\nNot prose any more. Really."),
    ]


def test_longer_fence_contains_shorter_fences() -> None:
    text = "````md\n```py\nx = 1\n```\n````\nEnd."
    assert kinds(text) == [("code", "````md\n```py\nx = 1\n```\n````"), ("sentence", "End.")]


def test_fence_inside_a_paragraph_and_a_list() -> None:
    text = "1. Install:\n   ```bash\n   pip install -e .\n   ```\n2. Test"
    assert kinds(text) == [
        ("list_item", "1. Install:"),
        ("code", "```bash\n   pip install -e .\n   ```"),
        ("list_item", "2. Test"),
    ]


def test_triple_backticks_on_one_line_are_not_a_fence() -> None:
    assert kinds("```inline``` is odd. Next.") == [
        ("sentence", "```inline``` is odd."),
        ("sentence", "Next."),
    ]


# --- unfenced code -----------------------------------------------------------------------


def test_prose_then_indented_code() -> None:
    text = "Fix it like this:\n    def f(x):\n        return x + 1"
    assert kinds(text) == [
        ("sentence", "Fix it like this:"),
        ("code", "def f(x):\n        return x + 1"),
    ]


def test_prose_then_code_lines_without_indent() -> None:
    text = "修改如下：\nimport os\nx = os.getcwd()\nprint(x)\n就这样。"
    assert kinds(text) == [
        ("sentence", "修改如下："),
        ("code", "import os\nx = os.getcwd()\nprint(x)"),
        ("sentence", "就这样。"),
    ]


def test_indented_block_after_blank_line_is_code() -> None:
    assert kinds("Example\n\n    some_call(1)\n    more text here") == [
        ("sentence", "Example"),
        ("code", "some_call(1)\n    more text here"),
    ]


def test_indented_chinese_paragraph_is_prose() -> None:
    assert kinds("    这是缩进的中文段落。第二句。") == [
        ("sentence", "这是缩进的中文段落。"),
        ("sentence", "第二句。"),
    ]


def test_shell_prompts_and_commands() -> None:
    text = "Run:\n$ pip install precis\n$ precis --help\n\ngit commit -m 'x'\nThat is all."
    assert kinds(text) == [
        ("sentence", "Run:"),
        ("code", "$ pip install precis\n$ precis --help\n\ngit commit -m 'x'"),
        ("sentence", "That is all."),
    ]


def test_brace_language_code() -> None:
    text = "function add(a, b) {\n  const s = a + b;\n  return s;\n}"
    assert kinds(text) == [("code", text)]


def test_traceback_is_one_code_block() -> None:
    text = (
        "The error:\n\nTraceback (most recent call last):\n"
        '  File "app.py", line 3, in <module>\n    main()\nValueError: bad value\n\nWhy?'
    )
    assert kinds(text) == [
        ("sentence", "The error:"),
        (
            "code",
            'Traceback (most recent call last):\n  File "app.py", line 3, in <module>\n'
            "    main()\nValueError: bad value",
        ),
        ("sentence", "Why?"),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "For example: this works.",
        "Let me know if you need anything.",
        "If you want, I can do it.",
        "Import the file first.",
        "Select the rows you need from the list.",
        "Create a table of contents.",
        "Great (really) news.",
        "make sure it builds",
        "我用分号结尾;",
    ],
)
def test_prose_that_is_not_code(text: str) -> None:
    assert kinds(text) == [("sentence", text)]


def test_inline_code_keeps_prose_as_prose() -> None:
    assert kinds("Run this: `pip install x`") == [("sentence", "Run this: `pip install x`")]


# --- SQL -------------------------------------------------------------------------------------


def test_fenced_sql() -> None:
    text = "```sql\nSELECT 1;\n```"
    assert kinds(text) == [("sql", text)]
    assert hints(text) == [("sql", "sql")]


def test_unfenced_sql_runs_to_its_semicolon() -> None:
    text = "Query:\nSELECT id, name\nFROM users\nWHERE age > 3;\nThat returns adults."
    assert kinds(text) == [
        ("sentence", "Query:"),
        ("sql", "SELECT id, name\nFROM users\nWHERE age > 3;"),
        ("sentence", "That returns adults."),
    ]


def test_unterminated_sql_runs_to_the_blank_line() -> None:
    text = "UPDATE users SET a = 1\nwhere id = 2\n\nDone."
    assert kinds(text) == [("sql", "UPDATE users SET a = 1\nwhere id = 2"), ("sentence", "Done.")]


@pytest.mark.parametrize(
    "statement",
    [
        "select * from t where x = 1;",
        "SELECT count(*) FROM orders;",
        "INSERT INTO t (a) VALUES (1);",
        "insert into logs values (1, 'x');",
        "DELETE FROM sessions WHERE expired;",
        "CREATE TABLE users (id int);",
        "create index idx_a on t (a);",
        "ALTER TABLE users ADD COLUMN age int;",
        "DROP TABLE IF EXISTS tmp;",
        "WITH recent AS (SELECT 1) SELECT * FROM recent;",
    ],
)
def test_sql_statements(statement: str) -> None:
    assert kinds(statement) == [("sql", statement)]


def test_sql_after_a_colon_in_chinese_prose() -> None:
    assert kinds("执行：SELECT * FROM users WHERE id=1;\n然后看结果。") == [
        ("sentence", "执行："),
        ("sql", "SELECT * FROM users WHERE id=1;"),
        ("sentence", "然后看结果。"),
    ]


def test_unlabelled_fence_holding_sql_or_json() -> None:
    assert hints("```\nSELECT a FROM b;\n```") == [("sql", None)]
    assert hints('```\n{"a": 1}\n```') == [("json", None)]
    assert hints("```\nplain text\n```") == [("code", None)]


# --- JSON ------------------------------------------------------------------------------------


def test_whole_text_json_object_even_with_blank_lines() -> None:
    text = '\n{\n  "a": 1,\n\n  "b": [1, 2]\n}\n'
    assert kinds(text) == [("json", text.strip())]


def test_json_array_paragraph_between_prose() -> None:
    text = 'The result:\n\n[{"id": 1}, {"id": 2}]\n\nLooks right.'
    assert kinds(text) == [
        ("sentence", "The result:"),
        ("json", '[{"id": 1}, {"id": 2}]'),
        ("sentence", "Looks right."),
    ]


def test_pretty_json_after_a_prose_line() -> None:
    text = 'Config:\n{\n  "port": 8080,\n  "debug": true\n}'
    assert kinds(text) == [
        ("sentence", "Config:"),
        ("json", '{\n  "port": 8080,\n  "debug": true\n}'),
    ]


def test_fenced_json() -> None:
    text = '```json\n{"a": 1}\n```'
    assert hints(text) == [("json", "json")]


@pytest.mark.parametrize("text", ["{not json}", "[1] Smith et al. wrote it", "[see above]"])
def test_bracketed_text_that_is_not_json(text: str) -> None:
    assert [k for k, _ in kinds(text)] != ["json"]


# --- tables ----------------------------------------------------------------------------------


def test_pipe_table_is_one_fragment() -> None:
    text = "Prices:\n| item | price |\n|---|---|\n| tea | 3 |\n| 咖啡 | 5 |\n\nCheap."
    assert kinds(text) == [
        ("sentence", "Prices:"),
        ("table", "| item | price |\n|---|---|\n| tea | 3 |\n| 咖啡 | 5 |"),
        ("sentence", "Cheap."),
    ]


def test_table_without_outer_pipes() -> None:
    text = "name | age\n---|---\nbob | 3\nafter the table"
    assert kinds(text) == [
        ("table", "name | age\n---|---\nbob | 3"),
        ("sentence", "after the table"),
    ]


def test_a_single_pipe_in_prose_is_not_a_table() -> None:
    assert kinds("Use a | b in the shell.") == [("sentence", "Use a | b in the shell.")]


# --- a realistic mix ---------------------------------------------------------------------------


def test_markdown_answer_mixing_everything() -> None:
    text = (
        "## 方案\n"
        "我们决定用 PostgreSQL。原因如下：\n"
        "1. 稳定\n"
        "2. 支持 JSON\n"
        "\n"
        "```sql\n"
        "CREATE TABLE t (id int);\n"
        "```\n"
        "\n"
        "| 选项 | 结论 |\n"
        "|---|---|\n"
        "| A | 否 |\n"
        "\n"
        "Next, run the migration. Then verify."
    )
    assert kinds(text) == [
        ("heading", "## 方案"),
        ("sentence", "我们决定用 PostgreSQL。"),
        ("sentence", "原因如下："),
        ("list_item", "1. 稳定"),
        ("list_item", "2. 支持 JSON"),
        ("sql", "```sql\nCREATE TABLE t (id int);\n```"),
        ("table", "| 选项 | 结论 |\n|---|---|\n| A | 否 |"),
        ("sentence", "Next, run the migration."),
        ("sentence", "Then verify."),
    ]
