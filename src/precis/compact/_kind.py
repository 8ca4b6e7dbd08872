"""What kind of conversation is summarized: its language, whether it is mostly small talk
(its summary is then a timeline), and so the template ``"auto"`` stands for."""

from __future__ import annotations

from precis.analysis import Analysis
from precis.compact.summary import HEADER
from precis.compact.templates import Template, builtin_templates, get_template
from precis.events import SessionEvents
from precis.model import Conversation
from precis.segment.model import Fragment

__all__ = ["choose_template", "earlier_template", "fragment_language", "mostly_talk"]

_TECHNICAL_KINDS = frozenset({"code", "sql", "json", "table", "tool_call", "tool_result"})
_TALK_MIN_FRAGMENTS = 20
_TALK_MAX_TECHNICAL = 0.02
_TALK_MIN_CHAT = 0.3


def mostly_talk(analysis: Analysis) -> bool:
    """The conversation is mostly social talk: no tool use or code to speak of, and a good
    share of small talk (or it holds an earlier summary that was a timeline). Its summary
    reads best as a timeline (who said what, when) than sorted into goals, decisions and
    facts."""
    if earlier_template(analysis.conversation) == "log":  # an earlier summary was one
        return True
    frags = analysis.segmentation.fragments
    types = analysis.classifications
    talk = [i for i, f in enumerate(frags) if f.role != "system"]
    if len(talk) < _TALK_MIN_FRAGMENTS:
        return False
    technical = sum(1 for i in talk if frags[i].kind in _TECHNICAL_KINDS)
    chat = sum(1 for i in talk if types[i].type == "chitchat")
    return technical <= _TALK_MAX_TECHNICAL * len(talk) and chat >= _TALK_MIN_CHAT * len(talk)


_LAYOUTS = ("claude", "service", "sections", "log")


def earlier_template(conv: Conversation) -> str | None:
    """The built-in layout of the latest summary precis wrote into ``conv`` before (a
    re-compaction keeps it: its lines stay under their titles), by the section titles it
    shows; None when it holds none."""
    for message in reversed(conv.messages):
        if message.role != "user" or not HEADER.match(message.text):
            continue
        shown = {line[3:].strip() for line in message.text.splitlines()
                 if line.startswith("## ")}
        best, hits = None, 0
        for name in _LAYOUTS:
            titles = {t for spec in builtin_templates()[name].sections
                      for t in spec.title.values()}
            found = len(shown & titles)
            if found > hits:
                best, hits = name, found
        if best is not None:
            return best
    return None


def fragment_language(fragments: list[Fragment] | tuple[Fragment, ...]) -> str:
    """The conversation's language: the user's, else everyone's (Han characters weigh
    against Latin words, as in segmentation)."""
    zh = en = 0
    for role_filter in ("user", None):
        for frag in fragments:
            if role_filter and frag.role != role_filter:
                continue
            if frag.language == "zh":
                zh += len(frag.text)
            elif frag.language == "en":
                en += len(frag.text) // 3
            elif frag.language == "mixed":
                zh += len(frag.text) // 2
        if zh or en:
            break
    return "zh" if zh > en else "en"


def choose_template(template: str | Template, events: SessionEvents,
                    analysis: Analysis) -> Template:
    """The template to summarize with: ``"auto"`` keeps the layout of a summary precis wrote
    into the conversation before (:func:`earlier_template`), else chooses by what happened
    (an agent session with file and shell tools: ``claude``, the handover; a service dialogue
    with domain tools: ``service``; a chat: ``sections``; mostly small talk: ``log``, a
    timeline); the name ``"sections"`` also gives small talk the timeline; any other name or
    template is itself."""
    earlier = earlier_template(analysis.conversation) if template == "auto" else None
    if earlier is not None:
        return get_template(earlier)  # a summary made again keeps its layout
    if template == "auto" and events.kind != "chat":
        return get_template("claude" if events.kind == "coding" else "service")
    if template in ("auto", "sections") and mostly_talk(analysis):
        return get_template("log")  # the default layout, for a conversation of small talk
    return get_template("sections" if template == "auto" else template)
