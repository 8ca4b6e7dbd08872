"""What kind of conversation is summarized: its language, and whether it is mostly small
talk (its summary is then a timeline)."""

from __future__ import annotations

from precis.analysis import Analysis
from precis.compact.summary import HEADER
from precis.compact.templates import builtin_templates
from precis.segment.model import Fragment

__all__ = ["fragment_language", "mostly_talk"]

_TECHNICAL_KINDS = frozenset({"code", "sql", "json", "table", "tool_call", "tool_result"})
_TALK_MIN_FRAGMENTS = 20
_TALK_MAX_TECHNICAL = 0.02
_TALK_MIN_CHAT = 0.3


def mostly_talk(analysis: Analysis) -> bool:
    """The conversation is mostly social talk: no tool use or code to speak of, and a good
    share of small talk (or it holds an earlier summary that was a timeline). Its summary
    reads best as a timeline (who said what, when) than sorted into goals, decisions and
    facts."""
    titles = [f"\n## {title}\n" for spec in builtin_templates()["log"].sections
              for title in spec.title.values()]
    for message in analysis.conversation.messages:  # an earlier summary was a timeline
        if message.role == "user" and HEADER.match(message.text) and any(
                title in message.text for title in titles):
            return True
    frags = analysis.segmentation.fragments
    types = analysis.classifications
    talk = [i for i, f in enumerate(frags) if f.role != "system"]
    if len(talk) < _TALK_MIN_FRAGMENTS:
        return False
    technical = sum(1 for i in talk if frags[i].kind in _TECHNICAL_KINDS)
    chat = sum(1 for i in talk if types[i].type == "chitchat")
    return technical <= _TALK_MAX_TECHNICAL * len(talk) and chat >= _TALK_MIN_CHAT * len(talk)


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
