"""Primary request and intent: every message the user wrote, near-verbatim and in order
(a short reply with the offer it answers), changes marked, and which request is in force.
Injected content (notifications, reminders, command output) is never a request."""

from __future__ import annotations

from precis.compact.handover._condense import courtesy
from precis.compact.handover._fit import Entry
from precis.compact.handover._story import Story
from precis.compact.handover._words import word
from precis.compact.handover.errors import describe_action
from precis.events import Request

__all__ = ["build_goal", "build_requests", "changed_by", "is_rule"]

_FULL, _LONG, _MEDIUM, _SHORT = 700, 320, 150, 70
_CRITICAL_SHORT = 220  # the request in force and the first are not cut shorter while
_CRITICAL_LEAST = 110  # there is room; where there is none, never shorter than this
_LEAD = 6.0  # a long request says what it is about first (an issue before instructions)


_REQUIREMENTS = frozenset({"goal", "constraint", "plan", "todo", "decision"})


def changed_by(story: Story, request: Request) -> int | None:
    """The later user message of the summarized range that supersedes a requirement of
    ``request`` (a goal, rule or plan replaced by a newer version of it: the analysis's
    requirement chains). A change in the recent messages is there for the reader to see."""
    later = story.analysis.consolidation.superseded_by
    frags = story.analysis.segmentation.fragments
    types = story.analysis.classifications
    index = story.index
    for fid in request.fragments:
        if fid not in index or types[index[fid]].type not in _REQUIREMENTS:
            continue
        newer = later.get(fid)
        while newer is not None and newer in later:
            newer = later[newer]
        if newer is not None and newer in index:
            f = frags[index[newer]]
            if f.role == "user" and request.message < f.provenance.message < story.end and \
                    types[index[newer]].type in _REQUIREMENTS:
                return f.provenance.message
    return None


def is_rule(story: Story, request: Request) -> bool:
    """Whether ``request`` sets a rule the agent must keep (a constraint the analysis found
    in the user's words, not replaced later): it is never left out."""
    types = story.analysis.classifications
    later = story.analysis.consolidation.superseded_by
    return any(fid in story.index and types[story.index[fid]].type == "constraint"
               and fid not in later for fid in request.fragments)


def build_requests(story: Story, key: str) -> list[Entry]:
    out: list[Entry] = []
    lang = story.language
    substantive = [r for r in story.requests if r.kind == "request"]
    first = substantive[0].message if substantive else None
    last = substantive[-1].message if substantive else None
    # a request said again word for word is one line with the messages that said it
    said_at: dict[str, list[Request]] = {}
    for r in substantive:
        said_at.setdefault(" ".join(story.own_words(r.text).lower().split()), []).append(r)
    for r in story.requests:
        if not r.fragments:
            continue
        where = story.where(r.message)
        again: list[Request] = []
        if r.kind == "request":
            same = said_at[" ".join(story.own_words(r.text).lower().split())]
            if same[0] is not r:
                continue  # on the line of its first time
            again = same[1:]
            if again:
                where += ("、" if story.zh else ", ") + ("、" if story.zh else ", ").join(
                    str(x.message + 1) for x in again)
        if r.kind == "interrupt":
            stopped = next((a for a in reversed(story.actions) if a.message < r.message
                            and a.status == "rejected"), None)
            text = word(lang, "interrupted", where=where)
            sources = r.fragments
            if stopped is not None:
                text += word(lang, "rejected_call", what=describe_action(stopped, 70))
                sources = (*r.fragments, *stopped.call_fragments)
            out.append(Entry(key, r.message, 5.0, (text,), sources, kind="interrupt",
                             why=f"user interruption, {where}"))
            continue
        if r.kind == "reply":
            reply = story.quote(r.text, 120)
            variants = tuple(word(lang, "replied", where=where, reply=reply,
                                  offer=story.quote(r.answers, n)) for n in (260, 110, 70))
            # the line cites the offer it quotes too; a courtesy ("thanks") matters little
            offer = story.text_fragments(r.answers_message) \
                if r.answers_message is not None else ()
            out.append(Entry(key, r.message, 4.0 if courtesy(r.text) else 7.5, variants,
                             tuple(dict.fromkeys((*r.fragments, *offer))), kind="request",
                             critical=r.message == story.requests[-1].message,
                             why=f"user reply to the assistant, {where}"))
            continue
        suffix = word(lang, "queued") if r.queued else ""
        changed = changed_by(story, again[-1] if again else r)
        if changed is not None:
            suffix += word(lang, "changed_later", where=story.where(changed))
        head = word(lang, "user_at", where=where)
        sep = "：" if story.zh else ": "
        said = story.own_words(r.text)
        rule = is_rule(story, r) or bool(again)  # (said again: the user insists)
        critical = r.message == first or any(x.message == last for x in (r, *again)) or rule
        sizes = (_FULL, _LONG, _CRITICAL_SHORT, _CRITICAL_LEAST) if critical else \
            (_FULL, _LONG, _MEDIUM, _SHORT)
        variants = tuple(dict.fromkeys(  # (a short request reads the same in all)
            f"{head}{sep}{story.quote(said, n, lead=_LEAD)}{suffix}" for n in sizes))
        # the first request and the one in force are not cut shorter while there is room
        least = len(variants) - 2 if critical and len(variants) == len(sizes) else None
        # the first request (the task) before the user's rules, then the latest one
        priority = 9.3 if r.message == first else 9.2 if rule else 9.0 if critical else 8.0
        out.append(Entry(key, r.message, priority, variants,
                         tuple(dict.fromkeys(f for x in (r, *again) for f in x.fragments)),
                         critical=critical, kind="request", least=least,
                         why=f"a request the user wrote, {where}"))
    if substantive:
        latest = substantive[-1]
        where = story.where(latest.message)
        if story.later_requests and any(r.kind == "request" for r in story.later_requests):
            tail = [r for r in story.later_requests if r.kind == "request"][-1]  # the latest
            text = word(lang, "in_force_tail", where=story.where(tail.message))
            out.append(Entry(key, 1e12, 8.5, (text,), latest.fragments,
                             critical=True, kind="intent", why="where the request in force is"))
        elif len(substantive) == 1:
            out.append(Entry(key, 1e12, 8.5,
                             (word(lang, "in_force_one", where=where),), latest.fragments,
                             critical=True, kind="intent", why="the request in force"))
        else:
            out.append(Entry(key, 1e12, 8.5, (word(lang, "in_force", where=where),),
                             latest.fragments,
                             critical=True, kind="intent", why="the request in force"))
    return out


def build_goal(story: Story, key: str) -> list[Entry]:
    """The user's first request and the one in force (a chat's goal): the requests section
    cut to its first and latest requests and the line saying which is in force."""
    entries = build_requests(story, key)
    substantive = [r.message for r in story.requests if r.kind == "request"]
    first = substantive[0] if substantive else None
    return [e for e in entries if e.order == first or (e.critical and e.kind == "intent")]
