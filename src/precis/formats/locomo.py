"""LoCoMo multi-session dialogues (snap-research/LoCoMo, ``locomo10.json`` shape).

A file holds a list of samples (a collection; each sample's id is its ``sample_id``), or a
single sample object. A sample is::

    {"sample_id": "conv-26",
     "conversation": {"speaker_a": "Caroline", "speaker_b": "Melanie",
                      "session_1_date_time": "1:56 pm on 8 May, 2023",
                      "session_1": [{"speaker": "Caroline", "dia_id": "D1:1", "text": "...",
                                     "img_url": ["https://..."], "blip_caption": "..."}],
                      ...},
     "qa": [...], "observation": {...}, "session_summary": {...}, "event_summary": {...}}

Mapping, one :class:`~precis.model.Conversation` per sample:

- messages in session order (``session_1``, ``session_2``, ..., ``session_10``), turns in
  file order; ``speaker_a`` -> role ``user``, ``speaker_b`` -> role ``assistant`` (LoCoMo is
  a dialogue between two people; this fixed choice keeps rounds alternating and makes the
  pipeline's user / assistant distinction mean "first / second speaker");
- ``Message.name`` = the speaker's name, ``Message.id`` = ``dia_id`` (``"D1:3"``),
  ``Message.timestamp`` = the session's ``date_time`` as ISO 8601 (``None`` when it cannot
  be parsed; the raw string is always in ``metadata["session_date"]``);
- ``Message.metadata``: ``session`` (number), ``session_date`` (raw), and the turn's other
  keys (``img_url``, ``query``, ``re-download``, ...);
- a turn with ``img_url`` or ``blip_caption`` gets an :class:`~precis.model.Image` part
  (URL + caption) after its text, one per URL;
- ``qa``, ``observation``, ``session_summary``, ``event_summary`` and any other sample keys
  stay out of the messages, in ``Conversation.metadata["locomo"]``, together with
  ``speaker_a``, ``speaker_b`` and ``session_dates`` (session number as a string -> raw date
  string, for every session that has a date, with or without turns).
"""

from __future__ import annotations

import re
from typing import Any

from precis.errors import FormatError
from precis.formats._reader import Document
from precis.formats._timestamps import to_iso
from precis.formats.base import ConversationFormat
from precis.formats.openai import describe, optional_id
from precis.model import Conversation, Image, Message, Part, Role, Text

__all__ = ["FORMATS", "LoCoMoFormat", "parse_locomo_sample"]

_SESSION = re.compile(r"session_(\d+)")
_TURN_KEYS = frozenset({"speaker", "dia_id", "text", "blip_caption"})
_SAMPLE_KEYS = frozenset({"sample_id", "conversation"})
_SNIFF_SAMPLES = 3


def _is_sample(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    conversation = value.get("conversation")
    return isinstance(conversation, dict) and "speaker_a" in conversation and (
        "speaker_b" in conversation
    )


def _sessions(conversation: dict[str, Any]) -> list[tuple[int, str]]:
    """``(number, key)`` of every ``session_N`` key, in session order."""
    found = []
    for key in conversation:
        match = _SESSION.fullmatch(str(key))
        if match:
            found.append((int(match[1]), str(key)))
    return sorted(found)


def _session_dates(conversation: dict[str, Any], where: str, label: str) -> dict[int, str]:
    """Session number -> raw ``session_N_date_time`` string."""
    dates: dict[int, str] = {}
    for key, value in conversation.items():
        match = re.fullmatch(r"session_(\d+)_date_time", str(key))
        if match is None:
            continue
        if not isinstance(value, str):
            raise FormatError(
                f"{label}: '{key}' is {describe(value)} (expected a date string such as "
                "'1:56 pm on 8 May, 2023')",
                where=where,
            )
        dates[int(match[1])] = value
    return dict(sorted(dates.items()))


def _images(turn: dict[str, Any], label: str, where: str) -> list[Part]:
    caption = turn.get("blip_caption")
    if caption is not None and not isinstance(caption, str):
        raise FormatError(
            f"{label}: 'blip_caption' is {describe(caption)} (expected a string)", where=where
        )
    urls = turn.get("img_url")
    if isinstance(urls, str):
        urls = [urls]
    if urls is None:
        urls = []
    if not isinstance(urls, list) or not all(isinstance(u, str) for u in urls):
        raise FormatError(
            f"{label}: 'img_url' is {describe(urls)} (expected a URL or a list of URLs)",
            where=where,
        )
    if not urls:
        return [Image(caption=caption)] if caption else []
    return [Image(url=url, caption=caption or None) for url in urls]


def _message(
    turn: Any,
    roles: dict[str, Role],
    session: int,
    date: str | None,
    label: str,
    where: str,
) -> Message:
    if not isinstance(turn, dict):
        raise FormatError(
            f"{label} is {describe(turn)} (expected an object with speaker, dia_id, text)",
            where=where,
        )
    speaker = turn.get("speaker")
    if not isinstance(speaker, str) or speaker not in roles:
        names = " or ".join(repr(n) for n in roles)
        raise FormatError(
            f"{label} has speaker {speaker!r} (expected {names}, the sample's speaker_a "
            "or speaker_b)",
            where=where,
        )
    text = turn.get("text", "")
    if text is None:
        text = ""
    if not isinstance(text, str):
        raise FormatError(f"{label}: 'text' is {describe(text)} (expected a string)", where=where)
    dia_id = turn.get("dia_id")
    if dia_id is not None and not isinstance(dia_id, str):
        raise FormatError(
            f"{label}: 'dia_id' is {describe(dia_id)} (expected a string like 'D1:3')",
            where=where,
        )
    parts: list[Part] = [Text(text)] if text else []
    parts.extend(_images(turn, label, where))
    metadata: dict[str, Any] = {"session": session, "session_date": date}
    metadata.update((str(k), v) for k, v in turn.items() if k not in _TURN_KEYS)
    return Message(
        role=roles[speaker],
        parts=parts,
        id=dia_id,
        name=speaker,
        timestamp=to_iso(date) if date else None,
        metadata=metadata,
    )


def _speaker_name(conversation: dict[str, Any], key: str, label: str, where: str) -> str:
    value = conversation.get(key)
    if not isinstance(value, str) or not value:
        raise FormatError(
            f"{label}: '{key}' is {describe(value)} (expected the speaker's name)", where=where
        )
    return value


def parse_locomo_sample(sample: Any, where: str, label: str = "sample") -> Conversation:
    """One LoCoMo sample as a conversation (see the module docstring for the mapping)."""
    if not isinstance(sample, dict):
        raise FormatError(
            f"{label} is {describe(sample)} (expected an object with 'conversation')",
            where=where,
        )
    conversation = sample.get("conversation")
    if not isinstance(conversation, dict):
        raise FormatError(
            f"{label}: 'conversation' is {describe(conversation)} (expected an object with "
            "speaker_a, speaker_b and session_N lists)",
            where=where,
        )
    speaker_a = _speaker_name(conversation, "speaker_a", label, where)
    speaker_b = _speaker_name(conversation, "speaker_b", label, where)
    if speaker_a == speaker_b:
        raise FormatError(
            f"{label}: speaker_a and speaker_b are both {speaker_a!r}", where=where
        )
    roles: dict[str, Role] = {speaker_a: "user", speaker_b: "assistant"}
    sample_id = optional_id(sample.get("sample_id"))
    label = f"{label} {sample_id}" if sample_id else label
    dates = _session_dates(conversation, where, label)
    messages: list[Message] = []
    for number, key in _sessions(conversation):
        turns = conversation[key]
        if not isinstance(turns, list):
            raise FormatError(
                f"{label}: '{key}' is {describe(turns)} (expected a list of turns)",
                where=where,
            )
        date = dates.get(number)
        for index, turn in enumerate(turns):
            turn_label = f"{label} {key} turn {index}"
            messages.append(_message(turn, roles, number, date, turn_label, where))
    locomo: dict[str, Any] = {
        str(k): v for k, v in sample.items() if k not in _SAMPLE_KEYS
    }
    locomo.update(
        speaker_a=speaker_a,
        speaker_b=speaker_b,
        session_dates={str(number): date for number, date in dates.items()},
    )
    return Conversation(
        messages,
        id=sample_id,
        source_format=LoCoMoFormat.name,
        title=f"{speaker_a} and {speaker_b}",
        metadata={"locomo": locomo},
    )


def _samples(doc: Document) -> list[Any] | None:
    if doc.kind == "jsonl" or (doc.kind in ("json", "data") and isinstance(doc.value, list)):
        return list(doc.value)
    if doc.kind in ("json", "data") and isinstance(doc.value, dict):
        return [doc.value]
    return None


class LoCoMoFormat(ConversationFormat):
    """LoCoMo samples: two speakers over dated sessions, with QA for memory benchmarks."""

    name = "locomo"
    description = "LoCoMo multi-session dialogues (list of samples or one sample)"

    def sniff(self, doc: Document) -> float:
        samples = _samples(doc)
        if not samples:
            return 0.0
        return 0.95 if all(_is_sample(s) for s in samples[:_SNIFF_SAMPLES]) else 0.0

    def parse(self, doc: Document) -> list[Conversation]:
        samples = _samples(doc)
        if not samples:
            raise FormatError(
                "expected JSON: a LoCoMo sample object or a list of them", where=doc.source
            )
        if isinstance(doc.value, dict):
            return [parse_locomo_sample(doc.value, doc.source)]
        return [
            parse_locomo_sample(sample, doc.where(index), f"sample {index}")
            for index, sample in enumerate(samples)
        ]


FORMATS = (LoCoMoFormat(),)
