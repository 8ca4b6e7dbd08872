"""From a conversation to memory cards.

Each message becomes one card, or several when it is long (a card holds one paragraph-sized
run of fragments, and code / SQL / config blocks get cards of their own). What carries no
memory is left out: folded confirmations, greetings and other small talk with no content
word, earlier copies of a statement said again later, bulky tool output that is not an error.
The analysis (:func:`precis.analysis.analyze`) gives each fragment its type; a card takes the
strongest type of its fragments, mapped to card types, and cue words mark preferences and
events. Relative dates ("yesterday", "上周") are resolved against the message's date in the
card's text and in its event time, and superseded requirements point to the card that
replaced them.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from precis.analysis import Analysis, AnalyzedFragment, analyze
from precis.compact._dates import parse_date, resolve_relative
from precis.compact._digest import tool_call_digest
from precis.compact._facts import facts
from precis.memory.card import CardType, MemoryCard, Scope, card_id
from precis.memory.store.base import SessionRecord, StoredMessage
from precis.memory.text import query_words
from precis.memory.timeref import single_day
from precis.model import Conversation, ToolCall
from precis.segment._lang import detect_language

__all__ = ["Extraction", "extract_cards", "session_id_of"]

_MAX_WORDS = 80  # a card longer than this is cut at a fragment boundary
_MAX_CODE_CHARS = 2000
_TYPE_OF: dict[str, CardType] = {
    "goal": "requirement",
    "constraint": "constraint",
    "decision": "decision",
    "fact": "fact",
    "background": "fact",
    "reasoning": "note",
    "plan": "plan",
    "todo": "todo",
    "error": "error-fix",
    "code": "code",
    "chitchat": "note",
}
# stronger first: a card with a decision sentence and small talk is a decision
_RANK: tuple[CardType, ...] = (
    "error-fix", "requirement", "constraint", "decision", "sql", "config", "code", "command",
    "todo", "plan", "preference", "event", "fact", "note",
)
# card types that have versions: a later one on the same topic replaces an earlier one
_VERSIONED = frozenset({"requirement", "constraint", "decision", "plan", "config", "preference"})
_CONFIG_LANGS = frozenset({"json", "yaml", "yml", "toml", "ini", "env", "dotenv", "conf",
                           "properties", "xml", "dockerfile", "nginx"})
_PREFERENCE = re.compile(
    r"\b(?:i|we)\s+(?:really\s+)?(?:prefer|love|like|enjoy|hate|dislike|can't stand)\b"
    r"|\bmy favou?rite\b|\bi'm (?:a big )?fan of\b|\bi'd rather\b"
    r"|喜欢|偏好|更愿意|习惯用|最爱|讨厌|不喜欢",
    re.IGNORECASE,
)
_EVENT = re.compile(
    r"\b(?:went|visited|attended|joined|started|finished|moved|met|bought|adopted|graduated"
    r"|travel(?:l)?ed|married|signed up|won|lost|got|took|ran|released|deployed|shipped"
    r"|launched|migrated|upgraded|fixed)\b"
    r"|去了|参加了|开始了|完成了|搬到|买了|上线了|发布了|迁移了|升级了|修复了"
    r"|参加|参与|收到|得到|获得|赢得|拿到|赢了|输了|见到|遇到|看到|发现了|认识了|学会了"
    r"|玩了|吃了|看了|养了|送了|去过|到过|毕业|结婚|搬家|旅行|旅游",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Extraction:
    """What :func:`extract_cards` found: the cards, the session and its original messages."""

    session: SessionRecord
    cards: list[MemoryCard]
    messages: list[StoredMessage]
    skipped: dict[str, int]  # reason -> fragment count


def session_id_of(conversation: Conversation, content_hash: str) -> str:
    """The conversation's own id where it has one, else one derived from its content."""
    return conversation.id or f"s_{content_hash[:16]}"


def conversation_hash(conversation: Conversation) -> str:
    digest = hashlib.blake2b(digest_size=16)
    for message in conversation.messages:
        digest.update(f"{message.role}\x1f{message.name or ''}\x1f{message.id or ''}\x1f"
                      f"{message.timestamp or ''}\x1f{message.text}\x1e".encode(
                          "utf-8", "surrogatepass"))
    return digest.hexdigest()


def extract_cards(
    conversation: Conversation,
    *,
    session: str | None = None,
    user: str | None = None,
    agent: str | None = None,
    source: str | None = None,
    analysis: Analysis | None = None,
    created_at: str = "",
) -> Extraction:
    """The memory cards of ``conversation`` (see the module docstring)."""
    content_hash = conversation_hash(conversation)
    sid = session or session_id_of(conversation, content_hash)
    result = analysis if analysis is not None else analyze(conversation)
    scope: Scope = "user" if user else ("agent" if agent else "session")
    stored = [
        StoredMessage(
            session_id=sid,
            index=i,
            message_id=_message_id(m.id, i),
            role=m.role,
            speaker=m.name,
            timestamp=m.timestamp,
            text=m.text,
        )
        for i, m in enumerate(conversation.messages)
    ]
    skipped: Counter[str] = Counter()
    units = _units(result, skipped)
    days = _days(conversation)
    drafts: list[tuple[list[AnalyzedFragment], str, CardType, str | None]] = []
    for unit in units:
        message_index = unit[0].fragment.provenance.message
        message = conversation.messages[message_index]
        day = days[message_index]
        text = _unit_text(unit, conversation)
        if day is not None:
            text = resolve_relative(text, day)
        kind = _card_type(unit, text)
        event_day = single_day(text, day) if day is not None else None
        event_time = event_day.isoformat() if event_day else message.timestamp
        if kind == "note" and event_day is not None and event_day != day:
            kind = "event"
        drafts.append((unit, text, kind, event_time))
    idf = _idf([query_words(text) for _, text, _, _ in drafts])
    earlier = _earlier_copies(result)
    cards: list[MemoryCard] = []
    card_of_fragment: dict[str, str] = {}
    for unit, text, kind, event_time in drafts:
        message_index = unit[0].fragment.provenance.message
        message = conversation.messages[message_index]
        also = sorted({i for item in unit for i in earlier.get(item.id, ())} - {message_index})
        message_ids = (stored[message_index].message_id,)
        cid = card_id(sid, message_ids, text)
        for item in unit:
            card_of_fragment[item.id] = cid
        cards.append(
            MemoryCard(
                id=cid,
                content=text,
                type=kind,
                tags=_tags(unit, kind),
                topics=_topics(query_words(text), idf),
                entities=entities_of(text, message.name),
                session_id=sid,
                message_ids=message_ids,
                message_indexes=(message_index,),
                fragment_ids=tuple(item.id for item in unit),
                speaker=message.name or message.role,
                user_id=user,
                agent_id=agent,
                scope=scope,
                event_time=event_time,
                created_at=created_at,
                updated_at=created_at,
                language=_language(unit),
                metadata=_metadata(unit, [stored[i].message_id for i in also]),
            )
        )
    chained = {f for chain in result.consolidation.chains for f in chain.fragments}
    superseded = {old: new for old, new in result.consolidation.superseded_by.items()
                  if old in chained and new in chained}
    type_of = {c.id: c.type for c in cards}
    linked: list[MemoryCard] = []
    for card in cards:
        if card.type not in _VERSIONED:
            linked.append(card)
            continue
        newer = {
            card_of_fragment[superseded[f]]
            for f in card.fragment_ids
            if f in superseded and superseded[f] in card_of_fragment
        } - {card.id}
        newer = {n for n in newer if type_of[n] in _VERSIONED}
        linked.append(card.with_changes(superseded_by=min(newer)) if newer else card)
    record = SessionRecord(
        id=sid,
        user_id=user,
        agent_id=agent,
        source=source,
        content_hash=content_hash,
        format=conversation.source_format,
        title=conversation.title,
        ingested_at=created_at,
        message_count=len(conversation.messages),
    )
    return Extraction(record, linked, stored, dict(skipped))


def _earlier_copies(analysis: Analysis) -> dict[str, tuple[int, ...]]:
    """For the kept fragment of each duplicate group, the messages of its earlier copies (a
    card lists them under ``metadata["also_said_in"]``)."""
    out: dict[str, tuple[int, ...]] = {}
    for group in analysis.consolidation.duplicates:
        out[group.kept] = tuple(
            analysis.item(m).fragment.provenance.message for m in group.members if m != group.kept
        )
    return out


_LEVELS = ("LOW", "MEDIUM", "HIGH")


def _metadata(unit: Sequence[AnalyzedFragment], also: list[str]) -> dict[str, object]:
    """The card's importance (the highest of its fragments) and where else it was said."""
    data: dict[str, object] = {"level": max((i.level for i in unit), key=_LEVELS.index)}
    if also:
        data["also_said_in"] = also
    return data


def _message_id(given: str | None, index: int) -> str:
    return given if given else f"#{index}"


def _days(conversation: Conversation) -> list[date | None]:
    out: list[date | None] = []
    last: date | None = None
    for message in conversation.messages:
        day = parse_date(message.timestamp)
        last = day or last
        out.append(last)
    return out


def _units(analysis: Analysis, skipped: Counter[str]) -> list[list[AnalyzedFragment]]:
    """Runs of fragments of one message that make one card each."""
    kept_of_group: dict[str, str] = {}
    for group in analysis.consolidation.duplicates:
        for member in group.members:
            kept_of_group[member] = group.kept
    units: list[list[AnalyzedFragment]] = []
    current: list[AnalyzedFragment] = []
    words = 0

    def close() -> None:
        nonlocal current, words
        if current and not _is_small_talk(current):
            units.append(current)
        elif current:
            skipped["small talk"] += len(current)
        current, words = [], 0

    last_message = -1
    for item in analysis.items():
        frag = item.fragment
        if frag.provenance.message != last_message:
            close()
            last_message = frag.provenance.message
        if frag.role == "system":
            skipped["system prompt"] += 1
            continue
        if item.folded:
            skipped["confirmation"] += 1
            continue
        if frag.kind == "thinking":
            skipped["thinking"] += 1
            continue
        if frag.kind == "tool_result" and item.type != "error":
            skipped["tool output"] += 1
            continue
        kept = kept_of_group.get(item.id, item.id)
        if kept != item.id and item.type != "chitchat" and _adds_nothing(item, analysis.item(kept)):
            skipped["said again later"] += 1
            continue
        if frag.kind == "tool_call":
            if not _COMMAND_ARGS.search(frag.text):
                skipped["tool call"] += 1
                continue
            close()
            units.append([item])
            continue
        if frag.kind in ("code", "sql", "json", "table"):
            close()
            units.append([item])
            continue
        size = len(frag.text.split()) if frag.language != "zh" else len(frag.text) // 2
        if current and words + size > _MAX_WORDS:
            close()
        current.append(item)
        words += size
    close()
    return units


def _adds_nothing(item: AnalyzedFragment, kept: AnalyzedFragment) -> bool:
    """Whether an earlier copy of a statement is left out for its later copy: when another
    speaker restates it (an echo), or when it says nothing the later one does not (every
    content word and exact fact is in it). Two near-copies by one speaker that differ in a
    detail ("收到了很多朋友的礼物" / "收到花束") are two memories."""
    if item.fragment.role != kept.fragment.role:
        return True
    mine, theirs = item.fragment.text, kept.fragment.text
    return (set(query_words(mine)) <= set(query_words(theirs))
            and {f.text for f in facts(mine)} <= {f.text for f in facts(theirs)})


# a tool call worth remembering runs something (a command, a query), not a file read
_COMMAND_ARGS = re.compile(r'"(?:command|cmd|script|sql|query|code)"\s*:')


def _is_small_talk(unit: Sequence[AnalyzedFragment]) -> bool:
    """Greetings, thanks and exclamations (no fragment worth a card and few content words),
    and anything too thin to stand alone ("Then start.": one content word, no exact fact)."""
    if any(item.fragment.kind in ("image", "code", "sql", "json", "table") for item in unit):
        return False
    content = [w for item in unit for w in query_words(item.fragment.text)]
    if len(content) < 2 and not any(facts(item.fragment.text) for item in unit):
        return True
    return all(item.type == "chitchat" for item in unit) and len(content) < 4


def _unit_text(unit: Sequence[AnalyzedFragment], conversation: Conversation) -> str:
    pieces: list[str] = []
    for item in unit:
        frag = item.fragment
        text = frag.text.strip()
        if frag.kind == "tool_call":
            part = conversation.messages[frag.provenance.message].parts[frag.provenance.part]
            if isinstance(part, ToolCall):
                text = tool_call_digest(part, 400, frag.language)
        if item.fragment.kind in ("code", "sql", "json", "table") and len(text) > _MAX_CODE_CHARS:
            text = text[:_MAX_CODE_CHARS].rsplit("\n", 1)[0] + "\n…"
        pieces.append(text)
    joiner = "\n" if any(i.fragment.kind in ("list_item", "heading") for i in unit) else " "
    return joiner.join(pieces)


def _card_type(unit: Sequence[AnalyzedFragment], text: str) -> CardType:
    kinds: list[CardType] = []
    guessed: list[CardType] = []  # types the analysis read from structure alone, no cue
    for item in unit:
        frag = item.fragment
        if frag.kind == "sql":
            kinds.append("sql")
        elif frag.kind == "json" or (frag.lang_hint or "").lower() in _CONFIG_LANGS:
            kinds.append("config")
        elif frag.kind == "tool_call":
            kinds.append("command")
        elif not any(e.startswith("cue:") for e in item.classification.evidence):
            guessed.append(_TYPE_OF.get(item.type, "note"))
        else:
            kinds.append(_TYPE_OF.get(item.type, "note"))
    if _PREFERENCE.search(text):
        kinds.append("preference")
    elif _EVENT.search(text):
        kinds.append("event")
    # a cue word outranks chit-chat types and types guessed without a cue ("Bart在比赛中
    #赢得了一只篮球" is an event, not the constraint its sentence shape suggests); types
    # the analysis found a cue for outrank it
    return min(kinds or guessed, key=_RANK.index)


def _tags(unit: Sequence[AnalyzedFragment], kind: CardType) -> tuple[str, ...]:
    tags: dict[str, None] = {kind: None}
    for item in unit:
        for tag in item.classification.tags:
            tags.setdefault(tag, None)
    return tuple(tags)[:8]


def _idf(docs: Sequence[Sequence[str]]) -> dict[str, float]:
    df: Counter[str] = Counter()
    for words in docs:
        df.update(set(words))
    n = len(docs) or 1
    return {w: math.log((n + 1) / (c + 0.5)) for w, c in df.items() if c >= 2}


def _topics(words: Sequence[str], idf: dict[str, float]) -> tuple[str, ...]:
    """Up to three words of the card that recur in the session but are not everywhere."""
    scored = sorted(
        ((idf[w], w) for w in set(words) if w in idf and len(w) > 2 and not w.isdigit()),
        key=lambda p: (-p[0], p[1]),
    )
    return tuple(w for _, w in scored[:3])


_NAME = re.compile(r"(?<![\w.])([A-Z][a-z]+(?:\s+[A-Z][a-z]+)*)")


def entities_of(text: str, speaker: str | None, *, names: bool = True) -> tuple[str, ...]:
    """The exact values (urls, paths, identifiers, commands, errors) and (``names``) the
    names inside a sentence that ``text`` holds, ``speaker`` left out (at most 12)."""
    out: dict[str, None] = {}
    for fact in facts(text):
        if fact.kind in ("url", "path", "identifier", "command", "error"):
            out.setdefault(fact.text, None)
    for match in _NAME.finditer(text) if names else ():
        start = match.start()
        before = text[:start].rstrip()
        if before and before[-1] not in ".!?:\n":  # a capitalised word inside a sentence
            out.setdefault(match.group(1), None)
    if speaker:
        out.pop(speaker, None)
    return tuple(out)[:12]


def _language(unit: Sequence[AnalyzedFragment]) -> str:
    """zh when the card is Chinese or a mix (code and identifiers in Chinese prose)."""
    language = detect_language(" ".join(i.fragment.text for i in unit))
    return "zh" if language in ("zh", "mixed") else "en"
