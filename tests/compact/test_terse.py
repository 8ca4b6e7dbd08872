"""Note-style timeline lines (``precis.compact._terse``) and when compaction uses them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import precis
from precis.compact import compress
from precis.compact._terse import terse
from precis.tokens import get_counter

FIXTURES = Path(__file__).parent.parent / "fixtures" / "compact"


@pytest.mark.parametrize(("text", "expected"), [
    ("I ran a charity race for mental health last Saturday - it was really rewarding.",
     "Ran charity race mental health last Saturday - rewarding."),
    # negations, modals, third persons and names stay
    ("I haven't tried pottery yet, but I might try it sometime!",
     "Haven't tried pottery yet, might try sometime!"),
    ("She said he would not move to the US.", "She said he would not move US."),
    # brackets and quotes a dropped word opened or closed stay with their neighbours
    ("Last week (the week before 3 July 2023) I went to a parade.",
     "Last week (week before 3 July 2023) went parade."),
    ("[image: a photo of a book cover with a gold coin on it] Wow!",
     "[image: photo book cover gold coin]!"),
    # exact facts and words with digits are never touched
    ("The config is at /etc/app/config.yaml and the port is 8080.",
     "Config /etc/app/config.yaml port 8080."),
    # pictographs go
    ("Oh wow 😍 that is so cool!!", "Cool!!"),
])
def test_english_loses_its_function_words_not_its_content(text: str, expected: str) -> None:
    assert terse(text) == expected


def test_a_line_of_nothing_but_function_words_is_left_as_it_was() -> None:
    assert terse("yes, it is") == "yes, it is"


def test_question_words_stay() -> None:
    assert terse("Oh, it is what it is.") == "What."


def test_chinese_loses_particles_and_fillers_only() -> None:
    assert terse("其实我昨天去看了医生啊，真的很累呢！哈哈", "zh") == "我昨天去看了医生，很累！"
    assert terse("我没有去上海吧？", "zh") == "我没有去上海？"


def _chat() -> tuple[precis.Conversation, int]:
    conv = precis.load(FIXTURES / "chat_en.json")
    return conv, get_counter("estimate").count_messages(conv.messages)


_FUNCTION = re.compile(r"\b(?:the|a|an|is|was|I|my|to|for|at)\b")


def test_a_timeline_with_little_room_is_written_tersely() -> None:
    conv, tokens = _chat()
    tight = compress(conv, budget=int(tokens * 0.2))
    assert tight.template == "log" and tight.summary is not None
    lines = [i.text for i in tight.summary.items]
    assert lines
    for line in lines:
        assert not _FUNCTION.search(line), line
    shown = tight.text()
    for fact in ("Miso", "31 March 2024", "Elm Street"):  # names and dates kept
        assert fact in shown
    assert tight.compressed_tokens <= int(tokens * 0.2)


def test_a_timeline_with_room_keeps_whole_sentences() -> None:
    conv, tokens = _chat()
    for result in (compress(conv, budget=int(tokens * 0.5)), compress(conv, level="light")):
        assert result.summary is not None
        text = " ".join(i.text for i in result.summary.items)
        assert "I adopted a grey cat named Miso" in text


def test_note_style_can_be_asked_for_or_turned_off() -> None:
    conv, tokens = _chat()
    plain = compress(conv, budget=int(tokens * 0.2), note_style=False)
    assert plain.summary is not None
    assert _FUNCTION.search(" ".join(i.text for i in plain.summary.items))
    assert plain.compressed_tokens <= int(tokens * 0.2)
    noted = compress(conv, level="light", note_style=True)
    assert noted.summary is not None
    text = " ".join(i.text for i in noted.summary.items)
    assert "Adopted grey cat named Miso" in text and "I adopted" not in text


def test_note_style_is_true_false_or_none() -> None:
    conv, _ = _chat()
    with pytest.raises(precis.ConfigError, match="note_style must be True, False or None"):
        compress(conv, note_style="yes")  # type: ignore[arg-type]


@pytest.mark.parametrize("note_style", [None, True])
def test_a_handover_is_never_terse(note_style: bool | None) -> None:
    # note style is the timeline's: the handover of an agent session quotes the user and
    # writes its own lines in whole words, even at 20% and when note style is asked for
    conv = precis.load(FIXTURES / "coding_en.json")
    tokens = get_counter("estimate").count_messages(conv.messages)
    result = compress(conv, budget=int(tokens * 0.2), note_style=note_style)
    assert result.template == "claude" and result.summary is not None
    text = " ".join(i.text for i in result.summary.items)
    assert _FUNCTION.search(text)
    assert 'User (msg 3): "Never touch `app/db.py`: the connection pool there is' in text


def test_a_timeline_leaves_less_of_a_budget_to_the_recent_messages() -> None:
    conv, tokens = _chat()
    budget = int(tokens * 0.5)
    timeline = compress(conv, budget=budget)
    sections = compress(conv, budget=budget, template=precis.compact.get_template("sections"))
    assert timeline.template == "log" and sections.template == "sections"
    assert 0 < timeline.kept_messages < sections.kept_messages
    counter = get_counter("estimate")
    recent = [m for m, o in zip(timeline.messages, timeline.origin) if o is not None]
    assert counter.count_messages(recent) <= 0.1 * budget
