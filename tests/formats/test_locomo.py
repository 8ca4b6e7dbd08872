"""LoCoMo reader: session order, speakers, dates, images, benchmark metadata, errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import precis
from precis.errors import FormatError
from precis.formats import read_document
from precis.formats._timestamps import to_iso
from precis.formats.locomo import LoCoMoFormat
from precis.model import Image, Text

FMT = LoCoMoFormat()


def _samples(fixtures: Path) -> list[precis.Conversation]:
    return FMT.parse(read_document(fixtures / "locomo" / "samples.json"))


def test_collection_and_session_order(fixtures: Path) -> None:
    doc = read_document(fixtures / "locomo" / "samples.json")
    assert FMT.sniff(doc) == pytest.approx(0.95)
    first, second = FMT.parse(doc)
    assert (first.id, second.id) == ("toy-1", "toy-2")
    assert first.title == "Ana and Ben"
    # session_10 comes after session_2 and session_3 (numeric, not file or string order)
    assert [m.id for m in first] == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2", "D3:1", "D10:1"]
    assert [m.metadata["session"] for m in first] == [1, 1, 1, 2, 2, 3, 10]


def test_speakers_roles_names(fixtures: Path) -> None:
    first, second = _samples(fixtures)
    assert [(m.role, m.name) for m in first][:3] == [
        ("user", "Ana"), ("assistant", "Ben"), ("user", "Ana"),
    ]
    # speaker_a is "user" even when speaker_b talks first
    assert [(m.role, m.name) for m in second] == [("assistant", "Dana"), ("user", "Chen")]
    assert first[0].text == "Ben! I adopted a cat yesterday."


def test_session_dates(fixtures: Path) -> None:
    [first, _] = _samples(fixtures)
    assert first[0].timestamp == "2024-03-03T09:05:00"
    assert first[3].timestamp == "2024-03-10T23:45:00"
    assert first[6].timestamp == "2024-06-01T12:30:00"
    assert first[0].metadata["session_date"] == "9:05 am on 3 March, 2024"
    # an unparseable date: no timestamp, the raw string kept
    assert first[5].timestamp is None
    assert first[5].metadata["session_date"] == "sometime in spring"


def test_images(fixtures: Path) -> None:
    first, second = _samples(fixtures)
    photo = first[2]
    assert photo.parts == [
        Text("Here she is, her name is Miso."),
        Image(url="https://example.org/miso.jpg", caption="a photo of a grey cat on a sofa"),
    ]
    assert photo.metadata["img_url"] == ["https://example.org/miso.jpg"]
    assert photo.metadata["query"] == "grey cat sofa"
    # a caption without a URL still gives an image part
    assert second[1].parts[1] == Image(caption="a photo of a bakery storefront")
    assert second[1].text == "Yes, last week."


def test_benchmark_data_kept_out_of_messages(fixtures: Path) -> None:
    [first, second] = _samples(fixtures)
    locomo = first.metadata["locomo"]
    assert locomo["qa"][0] == {
        "question": "What is the name of Ana's cat?",
        "answer": "Miso",
        "evidence": ["D1:3"],
        "category": 4,
    }
    assert locomo["session_summary"] == {"session_1_summary": "Ana tells Ben about her new cat."}
    assert locomo["observation"]["session_1_observation"]["Ana"][0][1] == "D1:3"
    assert locomo["event_summary"]["events_session_1"]["date"] == "3 March, 2024"
    assert (locomo["speaker_a"], locomo["speaker_b"]) == ("Ana", "Ben")
    # session 4 has a date but no turns: its date is still recorded
    assert locomo["session_dates"]["4"] == "8:00 am on 2 July, 2024"
    assert list(locomo["session_dates"]) == ["1", "2", "3", "4", "10"]
    # qa, observations and summaries stay out of the messages
    assert not any("What is the name of Ana's cat?" in m.text for m in first)
    assert not any("Ana adopted a cat named Miso." in m.text for m in first)
    assert second.metadata["locomo"]["qa"] == []


def test_single_sample_and_load(fixtures: Path) -> None:
    conv = precis.load(fixtures / "locomo" / "single.json")
    assert conv.source_format == "locomo"
    assert conv.id == "toy-single"
    assert [(m.id, m.role, m.text) for m in conv] == [
        ("D1:1", "user", "Finished the book?"),
        ("D1:2", "assistant", "Two chapters left."),
    ]
    assert conv.metadata["locomo"]["qa"][0]["answer"] == "two"
    assert precis.load(fixtures / "locomo" / "samples.json", pick="toy-2").id == "toy-2"


def test_unknown_speaker_is_an_error(fixtures: Path) -> None:
    path = fixtures / "locomo" / "bad_speaker.json"
    with pytest.raises(FormatError) as info:
        precis.load(path)
    assert info.value.where == f"{path} item 0"
    assert "sample 0 toy-bad session_1 turn 1 has speaker 'Carl'" in info.value.message
    assert "'Ana' or 'Ben'" in info.value.message


@pytest.mark.parametrize(
    ("conversation", "expected"),
    [
        ({"speaker_a": "A", "speaker_b": "B", "session_1": {"x": 1}}, "'session_1' is an object"),
        ({"speaker_a": "A", "speaker_b": 3}, "'speaker_b' is a number"),
        ({"speaker_a": "A", "speaker_b": "A"}, "both 'A'"),
        (
            {"speaker_a": "A", "speaker_b": "B", "session_1": ["hi"]},
            "session_1 turn 0 is a string",
        ),
        (
            {"speaker_a": "A", "speaker_b": "B", "session_1": [{"speaker": "A", "text": 5}]},
            "'text' is a number",
        ),
        (
            {
                "speaker_a": "A",
                "speaker_b": "B",
                "session_1": [{"speaker": "A", "text": "x", "img_url": 7}],
            },
            "'img_url' is a number",
        ),
        ({"speaker_a": "A", "speaker_b": "B", "session_1_date_time": 2023}, "date string"),
    ],
)
def test_bad_structure(conversation: dict[str, object], expected: str) -> None:
    with pytest.raises(FormatError, match=expected):
        FMT.parse(read_document([{"sample_id": "s", "conversation": conversation}]))


def test_sniff_other_shapes() -> None:
    assert FMT.sniff(read_document([{"role": "user", "content": "hi"}])) == 0.0
    assert FMT.sniff(read_document({"conversation": {"speaker_a": "A"}})) == 0.0
    assert FMT.sniff(read_document(b"Caroline: hi\nMelanie: hello\n")) == 0.0


# -- the real file ---------------------------------------------------------------------


@pytest.mark.data
def test_real_locomo(shared_data: Path) -> None:
    path = shared_data / "locomo" / "locomo_dev.json"
    collection = precis.load_all(path)
    assert collection.format == "locomo"
    assert len(collection) == 5
    assert [c.id for c in collection.conversations] == [
        "conv-26", "conv-30", "conv-41", "conv-42", "conv-43",
    ]
    conv = collection.pick("conv-26")
    first = conv[0]
    assert (first.id, first.role, first.name) == ("D1:1", "user", "Caroline")
    assert first.text == "Hey Mel! Good to see you! How have you been?"
    assert first.timestamp == "2023-05-08T13:56:00"  # "1:56 pm on 8 May, 2023"
    assert conv[1].name == "Melanie"
    assert conv[1].role == "assistant"
    # D1:5 carries a photo: its caption becomes an image part after the text
    photo = next(m for m in conv if m.id == "D1:5")
    assert photo.parts[1] == Image(
        url="https://i.redd.it/l7hozpetnhlb1.jpg",
        caption="a photo of a dog walking past a wall with a painting of a woman",
    )
    raw = json.loads(path.read_text("utf-8"))
    for sample, parsed in zip(raw, collection.conversations, strict=True):
        sessions = {
            k: v for k, v in sample["conversation"].items() if re.fullmatch(r"session_\d+", k)
        }
        dia_ids = [
            t["dia_id"]
            for _, turns in sorted(sessions.items(), key=lambda kv: int(kv[0].split("_")[1]))
            for t in turns
        ]
        assert [m.id for m in parsed] == dia_ids  # every turn, dia_id kept, session order
        assert all(m.timestamp and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:00", m.timestamp)
                   for m in parsed)
        assert parsed.metadata["locomo"]["qa"] == sample["qa"]
    # conv-26 has dates for 35 sessions but turns for 19: all dates are kept
    dates = conv.metadata["locomo"]["session_dates"]
    assert len(dates) == 35
    assert dates["35"] == "12:19 am on 4 January, 2024"


@pytest.mark.parametrize(
    ("raw", "iso"),
    [
        ("1:56 pm on 8 May, 2023", "2023-05-08T13:56:00"),
        ("12:06 am on 11 November, 2022", "2022-11-11T00:06:00"),
        ("12:48 pm on 1 Feb, 2023", "2023-02-01T12:48:00"),
        ("May 8, 2023 1:56 PM", "2023-05-08T13:56:00"),
        ("8 May, 2023", "2023-05-08"),
        ("2024-05-01 10:00", "2024-05-01T10:00:00"),
        ("2024-05-01T10:00:00Z", "2024-05-01T10:00:00+00:00"),
        ("2024/05/01", "2024-05-01"),
        ("2024年5月1日 下午3:05", "2024-05-01T15:05:00"),
        ("10:00", None),
        ("31 February, 2023", None),
        ("sometime in spring", None),
        ("", None),
    ],
)
def test_to_iso(raw: str, iso: str | None) -> None:
    assert to_iso(raw) == iso
