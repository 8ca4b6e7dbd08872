"""The handover rewritten into prose by an LLM (``compress(..., llm=client)``,
``precis compress --llm``), checked by rules.

The rule handover stays the reference. The model gets its sections (every line with its
citations) and a token target, and writes prose. Then precis checks the prose: every user
request of the handover must be there (its message number, ``msg 12``, or its words), and
every exact value a line shows (file path, identifier, command, number, URL, error name)
character for character. The lines that held what is missing are put back after the prose,
whole and with their citations (:func:`restore`). The result must fit the same budget as
the rule output, counted by the same counter. A rewrite that does not fit, or that needed
more than half its lines put back, is sent back once with what went wrong; when the second
answer fails too, or the model fails at all (down, timeout, HTTP error, junk or empty
answer), the rule handover stands and :class:`LLMRewrite` says why. The exact values the
prose shows that the rule handover does not (a model's invention, or a value it changed)
are reported (``unverified``), not removed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from precis.compact._facts import exact_facts
from precis.compact._labels import label
from precis.compact.summary import Summary, SummaryItem
from precis.errors import PrecisError

if TYPE_CHECKING:
    from precis.llm import ChatModel

__all__ = ["LLMRewrite", "lost_values", "restore", "rewrite_summary", "skipped",
           "unverified"]

_ATTEMPTS = 2  # the first answer, and one more after saying what was wrong with it
_MOST_RESTORED = 0.5  # a rewrite that needs more than this share of its lines put back fails
_TARGET_SHARE = 0.85  # the model is asked for this share of the room (put-backs need some)
_MIN_TARGET = 32
# "msg 12", "msg 3, 7", "消息 12": the message numbers of a request line (precis's words)
_MSG = re.compile(r"\bmsg (\d+(?:, \d+)*)|消息 (\d+(?:、\d+)*)")
_QUOTE = re.compile(r"[\"“「](.+?)[\"”」]", re.DOTALL)
_EDGE = "A-Za-z0-9_"
_MIN_QUOTE = 8  # a request's words count as there only when at least this long
_SHOWN = 20  # unverified values reported at most
_REQUESTS = frozenset({"request", "qa"})  # lines that tell a user message (and its answer)


@dataclass(frozen=True)
class LLMRewrite:
    """What ``compress(..., llm=...)`` did with the model.

    ``used_llm`` says whether the summary message is the model's prose; ``error`` why it is
    not (``None`` when it is); ``restored`` the rule lines (with their citations) put back
    after the prose because it left out a request or an exact value of theirs; ``attempts``
    the requests sent; ``llm_tokens`` the prompt and completion tokens the endpoint reported
    (also for answers that were not used: they were spent); ``target_tokens`` the length
    the model was asked for; ``unverified`` the exact values the prose shows that the rule
    handover does not.
    """

    used_llm: bool
    model: str | None
    error: str | None
    restored: tuple[str, ...] = ()
    attempts: int = 0
    llm_tokens: int = 0
    target_tokens: int = 0
    unverified: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"used_llm": self.used_llm, "model": self.model, "error": self.error,
                "restored": list(self.restored), "attempts": self.attempts,
                "llm_tokens": self.llm_tokens, "target_tokens": self.target_tokens,
                "unverified": list(self.unverified)}

    def describe(self) -> str:
        """One line for people (``-O markdown``'s header, the CLI's warning)."""
        if self.used_llm:
            back = (f"; {_count(len(self.restored), 'rule line')} put back" if self.restored
                    else "; nothing was missing")
            odd = (f"; {_count(len(self.unverified), 'value')} not in the rule summary: "
                   f"{', '.join(self.unverified[:5])}{', …' if len(self.unverified) > 5 else ''}"
                   if self.unverified else "")
            return f"prose by {self.model}{back}{odd}"
        if not self.attempts:
            return f"not used ({self.error})"
        return f"not used ({self.error}); the rule summary stands"


def _count(n: int, thing: str) -> str:
    return f"{n} {thing}{'s' * (n != 1)}"


def _model_name(llm: object) -> str | None:
    name = getattr(llm, "model", None)
    return name if isinstance(name, str) else None


def skipped(llm: object, why: str) -> LLMRewrite:
    """The report when there was nothing for the model to rewrite."""
    return LLMRewrite(used_llm=False, model=_model_name(llm), error=why)


@dataclass(frozen=True)
class _Keep:
    """What the prose must hold of one rule line: its exact values, and for a request its
    message numbers and its quoted words (either is enough)."""

    item: SummaryItem
    values: tuple[str, ...]
    messages: tuple[str, ...] = ()
    words: str = ""


def _norm(text: str) -> str:
    return " ".join(text.split())


def _keeps(summary: Summary) -> list[_Keep]:
    out: list[_Keep] = []
    for item in (*summary.short, *summary.items):
        messages: tuple[str, ...] = ()
        words = ""
        if item.type in _REQUESTS:
            found = _MSG.search(item.text)
            if found:
                messages = tuple(re.findall(r"\d+", found.group(1) or found.group(2)))
            quoted = _QUOTE.search(item.text)
            if quoted:
                words = _norm(quoted.group(1).rstrip("…")).lower()
        values = tuple(dict.fromkeys(
            v for f in exact_facts(_MSG.sub(" ", item.text)) if (v := _norm(f.text.rstrip("…")))))
        if values or messages:
            out.append(_Keep(item, values, messages, words))
    return out


def _has(prose: str, value: str) -> bool:
    """``value`` in ``prose`` as a whole token: ``18`` is not in ``2018`` nor in ``180``
    (a number may be followed by its unit, ``0.42s``, as the facts are read)."""
    after = "0-9" if value[-1:].isdigit() else _EDGE
    return re.search(rf"(?<![{_EDGE}]){re.escape(value)}(?![{after}])", prose) is not None


def _request_there(prose: str, keep: _Keep) -> bool:
    if not keep.messages:
        return True
    if len(keep.words) >= _MIN_QUOTE and keep.words in prose.lower():
        return True
    return any(re.search(rf"(?i)(?:\bmsgs?|\bmessages?|消息|第)\s*#?\s*{n}(?![0-9])", prose)
               for n in keep.messages)


def lost_values(prose: str, keep: _Keep) -> list[str]:
    """What of ``keep`` the prose lacks: its exact values, and ``msg N`` for a request
    neither quoted nor numbered."""
    prose = _norm(prose)
    lost = [v for v in keep.values if not _has(prose, v)]
    if not _request_there(prose, keep):
        lost.insert(0, f"msg {keep.messages[0]}")
    return lost


def restore(prose: str, summary: Summary) -> tuple[str, tuple[str, ...], list[str], int]:
    """``prose`` with the rule lines that held what it left out put back under a label (a
    line only while it holds something neither the prose nor a line put back before it
    has); those lines, the values that were missing, and how many lines had something to
    keep."""
    keeps = _keeps(summary)
    missing: list[str] = []
    back: list[str] = []
    held = prose
    for keep in keeps:
        lost = lost_values(held, keep)
        if lost:
            missing.extend(v for v in lost if v not in missing)
            back.append(keep.item.render())
            held += "\n" + keep.item.text
    if not back:
        return prose, (), [], len(keeps)
    block = "\n".join([label(summary.language, "put_back"), *(f"- {line}" for line in back)])
    return f"{prose}\n\n{block}", tuple(back), missing, len(keeps)


def unverified(prose: str, rule: str) -> tuple[str, ...]:
    """The exact values of ``prose`` that the text ``rule`` does not hold."""
    held = _norm(rule)
    found = dict.fromkeys(v for f in exact_facts(_MSG.sub(" ", prose))
                          if (v := _norm(f.text.rstrip("…"))) and v not in held)
    return tuple(found)[:_SHOWN]


def _clean(text: str, summary: Summary) -> str:
    """The model's answer without what it should not have written: a fence or the
    prompt's ``<handover>`` tags around it all, a copy of the summary's header line."""
    text = text.strip()
    if text.startswith("<handover>") and text.endswith("</handover>"):
        text = text[len("<handover>"):-len("</handover>")].strip()
    fenced = re.fullmatch(r"```[\w-]*\n(.*)\n```", text, re.DOTALL)
    if fenced:
        text = fenced.group(1).strip()
    first, _, rest = text.partition("\n")
    if first.strip() == summary.header():
        text = rest.strip()
    return text


def rewrite_summary(llm: ChatModel, summary: Summary, *, room: int,
                    measure: Callable[[Summary], int], limit: int
                    ) -> tuple[Summary | None, LLMRewrite]:
    """The prose rewrite of ``summary`` by ``llm`` (see the module docs), or None.

    ``room`` is what the text under the header may take (tokens); ``measure`` gives the
    size of the output with a summary in it, which must stay within ``limit``.
    """
    from precis.llm import build_rewrite_messages, rewrite_feedback
    from precis.llm._summarize import spent_tokens

    model = _model_name(llm)
    body = summary.render().partition("\n")[2].strip()
    if not body:
        return None, skipped(llm, "the summary has no lines to rewrite")
    target = max(_MIN_TARGET, int(room * _TARGET_SHARE))
    messages: list[dict[str, str]] = build_rewrite_messages(body, tokens=target,
                                                            language=summary.language)
    spent = attempts = 0
    problem = ""
    for _ in range(_ATTEMPTS):
        attempts += 1
        try:
            completion = llm.complete(messages, max_tokens=max(256, 2 * room))
        except Exception as exc:  # a model (ours or a caller's wrapper) never breaks compaction
            problem = str(exc) if isinstance(exc, PrecisError) else f"{type(exc).__name__}: {exc}"
            break
        spent += spent_tokens(completion)
        text = getattr(completion, "text", None)
        if not isinstance(text, str) or not _clean(text, summary):
            problem = "the model gave no text"
            break
        prose = _clean(text, summary)
        full, back, missing, checked = restore(prose, summary)
        candidate = replace(summary, prose=full)
        size = measure(candidate)
        if size <= limit and len(back) <= _MOST_RESTORED * checked:
            return candidate, LLMRewrite(used_llm=True, model=model, error=None, restored=back,
                                         attempts=attempts, llm_tokens=spent,
                                         target_tokens=target,
                                         unverified=unverified(prose, body))
        over = size - limit  # tokens the output is over its limit
        if over > 0:
            problem = (f"the output with the rewrite ({_count(len(back), 'rule line')} put "
                       f"back) takes {size} tokens, over the limit of {limit}")
            # the text under the header took about room + over: ask for less, by that share
            target = max(_MIN_TARGET, int(target * 0.9 * room / (room + over)))
        else:
            problem = (f"the rewrite left out what {len(back)} of {checked} rule lines hold "
                       f"({', '.join(missing[:5])}{', …' if len(missing) > 5 else ''})")
        messages = [*messages, {"role": "assistant", "content": prose},
                    {"role": "user", "content": rewrite_feedback(
                        tokens=room + over if over > 0 else None, target=target,
                        lost=missing, language=summary.language)}]
    return None, LLMRewrite(used_llm=False, model=model, error=problem, attempts=attempts,
                            llm_tokens=spent, target_tokens=target)

