"""Sentence boundaries in running text, English and Chinese, and the places never to cut."""

from __future__ import annotations

import pytest

from precis.segment import MAX_SENTENCE_CHARS, split_text


def pieces(text: str) -> list[str]:
    return [text[s:e] for _, s, e, _ in split_text(text)]


def kinds(text: str) -> list[tuple[str, str]]:
    return [(k, text[s:e]) for k, s, e, _ in split_text(text)]


# --- English boundaries ---------------------------------------------------------------


def test_english_sentence_ends() -> None:
    assert pieces("Hello world. This is a test! Is it done? Yes.") == [
        "Hello world.",
        "This is a test!",
        "Is it done?",
        "Yes.",
    ]


def test_every_prose_piece_is_kind_sentence() -> None:
    assert kinds("One. Two.") == [("sentence", "One."), ("sentence", "Two.")]


def test_question_before_lower_case_is_not_a_boundary() -> None:
    assert pieces("Really? yes, really. Next.") == ["Really? yes, really.", "Next."]


def test_period_before_lower_case_is_not_a_boundary() -> None:
    assert pieces("It ends. and goes on. Then stops.") == ["It ends. and goes on.", "Then stops."]


def test_closing_quotes_and_brackets_stay_with_their_sentence() -> None:
    assert pieces('He said "Stop." Then he left.') == ['He said "Stop."', "Then he left."]
    assert pieces("(See the notes.) Next one.") == ["(See the notes.)", "Next one."]
    assert pieces("“Quoted!” Another.") == ["“Quoted!”", "Another."]


def test_repeated_end_marks_are_one_boundary() -> None:
    assert pieces("What?! No way!! Fine.") == ["What?!", "No way!!", "Fine."]


def test_line_break_ends_a_sentence_unless_the_next_line_is_lower_case() -> None:
    assert pieces("This line\ncontinues here. New\nLine") == [
        "This line\ncontinues here.",
        "New",
        "Line",
    ]


def test_line_break_after_chinese_or_a_full_stop_always_ends_a_piece() -> None:
    assert pieces("示例如下：\nexample text") == ["示例如下：", "example text"]
    assert pieces("First line.\nsecond line") == ["First line.", "second line"]


def test_words_that_look_like_abbreviations_but_end_sentences() -> None:
    assert pieces("Not before 11 AM EST. Any later flights?") == [
        "Not before 11 AM EST.",
        "Any later flights?",
    ]
    assert pieces("We sat in the sun. Then we left.") == ["We sat in the sun.", "Then we left."]


def test_indented_lower_case_lines_are_not_soft_wraps() -> None:
    assert pieces("Untracked files\n  src/a.rs\n  src/b.rs") == [
        "Untracked files",
        "src/a.rs",
        "src/b.rs",
    ]


# --- English: never a boundary -----------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Pi is 3.14 and e is 2.718 roughly.",
        "Upgrade from v1.2.3 to 2.0.1 first.",
        "Use fruit, e.g. Apples or pears.",
        "Pick one, i.e. The first.",
        "Bring pens, paper, etc. And more.",
        "Mr. Smith and Mrs. Jones met Dr. Who.",
        "The U.S. Army arrived.",
        "Cats vs. Dogs is old.",
        "See Fig. 3 and Fig. A for details.",
        "Open https://x.y/z.html in a browser.",
        "Fetch https://example.com/a.b?c=d.e now.",
        "Edit src/app/main.py and ./run.sh today.",
        r"Open C:\dir\file.txt with notepad.",
        "Mail john.doe@example.com for access.",
        "Call `a.b(). Then c()` first.",
        "Run `x = 1. Y = 2` in the shell.",
        "J. K. Rowling wrote it.",
        "Wait... let me think.",
    ],
)
def test_english_text_that_is_one_sentence(text: str) -> None:
    assert pieces(text) == [text]


def test_inline_enumerations_are_not_cut_after_the_number() -> None:
    assert pieces("Top picks: 1. Tea 2. Coffee. Done.") == ["Top picks: 1. Tea 2. Coffee.", "Done."]
    assert pieces("步骤：1. 安装 2. 配置。完成。") == ["步骤：1. 安装 2. 配置。", "完成。"]
    assert pieces("It was 2024. Then it ended.") == ["It was 2024.", "Then it ended."]


def test_the_day_of_a_date_ends_a_sentence_as_any_word_does() -> None:
    # "3." after a month name is a date's day, not an enumerator ("1. Tea 2. Coffee")
    assert pieces("The release was on June 3. Then we shipped.") == [
        "The release was on June 3.", "Then we shipped."]
    assert pieces("Due sept 12. After that, rest.") == ["Due sept 12.", "After that, rest."]
    assert pieces("Steps: 1. Install 2. Run. Done.") == ["Steps: 1. Install 2. Run.", "Done."]


def test_dots_of_an_ellipsis_are_never_split_apart() -> None:
    assert pieces("I waited... Then it worked.") == ["I waited...", "Then it worked."]
    assert pieces("Hmm...") == ["Hmm..."]


def test_url_path_and_version_at_sentence_end() -> None:
    assert pieces("See https://x.y/z.html. Then click.") == [
        "See https://x.y/z.html.",
        "Then click.",
    ]
    assert pieces("Edit main.py. Then run v1.2.3. Done.") == [
        "Edit main.py.",
        "Then run v1.2.3.",
        "Done.",
    ]


def test_inline_code_is_never_split_but_text_around_it_is() -> None:
    text = "Run `pip install x. Then y`. Now check! Done."
    assert pieces(text) == ["Run `pip install x. Then y`.", "Now check!", "Done."]


# --- Chinese boundaries ------------------------------------------------------------------


def test_chinese_sentence_ends() -> None:
    assert pieces("今天天气很好。我们去公园吧！好不好？") == [
        "今天天气很好。",
        "我们去公园吧！",
        "好不好？",
    ]


def test_chinese_semicolon_and_ellipsis_end_pieces() -> None:
    assert pieces("第一，准备数据；第二，训练模型。") == ["第一，准备数据；", "第二，训练模型。"]
    assert pieces("我想想……好吧。") == ["我想想……", "好吧。"]


def test_chinese_closing_quotes_and_brackets_stay() -> None:
    assert pieces("他说：“明天见。”然后走了。") == ["他说：“明天见。”", "然后走了。"]
    assert pieces("请看附录（见第3章。）然后继续。") == ["请看附录（见第3章。）", "然后继续。"]
    assert pieces("书名是《三体》。很好看！") == ["书名是《三体》。", "很好看！"]


def test_full_width_and_half_width_marks_in_chinese() -> None:
    assert pieces("太好了！！真的？？") == ["太好了！！", "真的？？"]
    assert pieces("真的吗?好的!走吧") == ["真的吗?", "好的!", "走吧"]


@pytest.mark.parametrize(
    "text",
    [
        "版本号是3.14，价格是2.5元。",
        "请升级到v1.2.3版本。",
        "修改 src/app/main.py 文件后重启。",
        "请访问 https://x.y/z.html 查看文档。",
        "联系 a.b@c.com 即可。",
        "运行`print('你好。再见')`即可。",
        "例如 e.g. 这种写法也可以。",
    ],
)
def test_chinese_text_that_is_one_sentence(text: str) -> None:
    assert pieces(text) == [text]


def test_chinese_url_right_before_the_full_stop() -> None:
    assert pieces("请访问https://x.y/z.html。然后登录。") == [
        "请访问https://x.y/z.html。",
        "然后登录。",
    ]


def test_mixed_chinese_and_english() -> None:
    assert pieces("我们用 Python 3.11. Then we test it。好的。") == [
        "我们用 Python 3.11.",
        "Then we test it。",
        "好的。",
    ]


def test_chinese_lines_are_separate_pieces() -> None:
    assert pieces("第一行没有标点\n第二行也没有") == ["第一行没有标点", "第二行也没有"]


# --- long pieces -------------------------------------------------------------------------


def test_a_long_run_without_boundaries_is_one_paragraph() -> None:
    text = " ".join(["word"] * 400)  # 1999 characters, no sentence end
    assert len(text) > MAX_SENTENCE_CHARS
    assert kinds(text) == [("paragraph", text)]


def test_a_short_run_without_boundaries_is_a_sentence() -> None:
    assert kinds("just a few words") == [("sentence", "just a few words")]
