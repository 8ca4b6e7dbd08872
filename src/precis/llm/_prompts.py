"""Prompts for summarising with an LLM: seed 004's four slots, plan-aware hints.

The four slots follow seed 004's strategies: ``tool_calls`` (strategy 1, a run of earlier
tool calls), ``previous_round`` (strategy 4, an earlier user-assistant round),
``large_message`` (strategy 5, one large message of the current round) and
``current_round`` (strategy 6, the tool calls of the current round). The default prompts,
in English and Chinese, are data (``prompts.json`` in this package); :class:`SummaryPrompts`
overrides any of them.

A prompt is two messages: the slot's instruction as the system message, then one user
message holding the content between markers, the length limit, the final instruction and,
last of all, the plan hint (the current plan, its subtasks and their states), so it is the
last thing the model reads before it answers. One user message, not several, because some
chat templates reject two user messages in a row.

The rewrite of a handover into prose (``compress(..., llm=...)``) has its own prompt:
:func:`build_rewrite_messages`, and :func:`rewrite_feedback` when the first answer was too
long or lost exact values.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, fields
from functools import cache
from importlib import resources
from typing import Any, Literal, get_args

from precis._settings import settings_table
from precis.errors import ConfigError

__all__ = [
    "SUMMARY_SLOTS",
    "PlanHint",
    "Subtask",
    "SummaryPrompts",
    "SummarySlot",
    "build_rewrite_messages",
    "build_summary_messages",
    "prompt_language",
    "rewrite_feedback",
]

SummarySlot = Literal["tool_calls", "previous_round", "large_message", "current_round"]
SUMMARY_SLOTS: tuple[SummarySlot, ...] = get_args(SummarySlot)
_LANGUAGES = ("en", "zh")
_DETECT_CHARS = 4000  # the language of a long text is judged from its start


@cache
def prompt_data() -> dict[str, Any]:
    """The package's ``prompts.json`` (read once)."""
    text = resources.files("precis.llm").joinpath("prompts.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def prompt_language(language: str, content: str = "") -> Literal["en", "zh"]:
    """The language of the default prompts for a conversation in ``language``.

    ``zh...`` gives Chinese and ``en...`` English; anything else (``auto``, ``mixed``,
    ``none``) is decided from the start of ``content``: Chinese when Han characters make up
    a good share of it (``zh`` or ``mixed``), else English.
    """
    if not isinstance(language, str):
        raise ConfigError(f"language must be a string like 'en' or 'zh', got {language!r}",
                          where="language")
    code = language.lower()
    if code.startswith("zh"):
        return "zh"
    if code.startswith("en"):
        return "en"
    from precis.segment._lang import detect_language

    detected = detect_language(content[:_DETECT_CHARS])
    return "zh" if detected in ("zh", "mixed") else "en"


@dataclass(frozen=True)
class Subtask:
    """One subtask of a plan; ``state`` is ``todo``, ``in_progress``, ``done``,
    ``abandoned`` or any word of the caller's."""

    name: str
    state: str = "todo"
    description: str = ""


@dataclass(frozen=True)
class PlanHint:
    """What the agent is working on, for plan-aware summaries (seed 004): the information
    the plan and its unfinished subtasks need is kept."""

    name: str
    description: str = ""
    state: str = ""
    subtasks: tuple[Subtask, ...] = ()

    def __post_init__(self) -> None:
        for key in ("name", "description", "state"):
            if not isinstance(getattr(self, key), str):
                raise ConfigError(f"{key} must be a string, got {getattr(self, key)!r}",
                                  where="plan_hint")
        subtasks = tuple(self.subtasks)
        for i, sub in enumerate(subtasks):
            if not isinstance(sub, Subtask):
                raise ConfigError(f"subtasks[{i}] must be a Subtask, got {sub!r}",
                                  where="plan_hint")
        object.__setattr__(self, "subtasks", subtasks)

    def render(self, language: str) -> str:
        """The hint as text in ``language`` (``en`` or ``zh``)."""
        t = prompt_data()["summary"][prompt_language(language)]["plan"]
        lines = [t["header"], t["name"].format(text=self.name.strip())]
        if self.description.strip():
            lines.append(t["description"].format(text=self.description.strip()))
        if self.state.strip():
            lines.append(t["state"].format(text=_state(t, self.state)))
        if self.subtasks:
            lines.append(t["subtasks"])
        for i, sub in enumerate(self.subtasks, 1):
            lines.append(t["subtask"].format(index=i, state=_state(t, sub.state),
                                             name=sub.name.strip()))
            if sub.description.strip():
                lines.append(t["subtask_description"].format(text=sub.description.strip()))
        return "\n".join(lines)


def _state(templates: Mapping[str, Any], state: str) -> str:
    word = state.strip()
    return str(templates["states"].get(word.lower().replace(" ", "_"), word))


@dataclass(frozen=True)
class SummaryPrompts:
    """The instruction of each summary slot; ``None`` or a blank string means the default
    prompt in the conversation's language (seed 004's ``PromptConfig``)."""

    tool_calls: str | None = None
    previous_round: str | None = None
    large_message: str | None = None
    current_round: str | None = None

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None and not isinstance(value, str):
                raise ConfigError(f"a prompt must be text, got {type(value).__name__}",
                                  where=f"prompts.{f.name}")

    @classmethod
    def from_dict(cls, data: Any, where: str = "prompts") -> SummaryPrompts:
        """From a mapping such as a JSON config table; unknown keys are an error."""
        return cls(**settings_table(data, cls, where))

    def prompt(self, slot: SummarySlot, language: str) -> str:
        """The instruction for ``slot``: the override, else the default in ``language``."""
        custom = getattr(self, _slot(slot))
        if isinstance(custom, str) and custom.strip():
            return custom
        return str(prompt_data()["summary"][prompt_language(language)][slot])


def _slot(slot: object) -> SummarySlot:
    if slot not in SUMMARY_SLOTS:
        raise ConfigError(
            f"unknown summary slot {slot!r}; known: {', '.join(SUMMARY_SLOTS)}", where="slot"
        )
    return slot


def build_summary_messages(
    slot: SummarySlot,
    content: str,
    *,
    prompts: SummaryPrompts | None = None,
    plan_hint: PlanHint | str | None = None,
    language: str = "auto",
    max_chars: int | None = None,
) -> list[dict[str, str]]:
    """The chat messages that ask a model to summarise ``content`` for ``slot``.

    ``language`` chooses the default prompts (``en``, ``zh``, or ``auto``: from the
    content, see :func:`prompt_language`). ``max_chars`` adds a length limit. ``plan_hint``
    (a :class:`PlanHint` or ready text) comes last.
    """
    slot = _slot(slot)
    if not isinstance(content, str):
        raise ConfigError(f"content must be text, got {type(content).__name__}",
                          where="content")
    lang = prompt_language(language, content)
    t = prompt_data()["summary"][lang]
    system = (prompts or SummaryPrompts()).prompt(slot, lang)
    parts = [t["content_begin"], content, t["content_end"]]
    if max_chars is not None:
        if isinstance(max_chars, bool) or not isinstance(max_chars, int) or max_chars < 1:
            raise ConfigError(f"max_chars must be a positive integer, got {max_chars!r}",
                              where="max_chars")
        parts.append(t["length"].format(chars=len(content), max_chars=max_chars))
    parts.append(t["answer"])
    hint = _hint(plan_hint, lang)
    if hint:
        parts.append(hint)
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": "\n".join(parts[:3]) + "\n\n" + "\n\n".join(parts[3:])},
    ]


def _hint(plan_hint: PlanHint | str | None, language: str) -> str:
    if plan_hint is None:
        return ""
    if isinstance(plan_hint, PlanHint):
        return plan_hint.render(language)
    if isinstance(plan_hint, str):
        return plan_hint.strip()
    raise ConfigError(
        f"plan_hint must be a PlanHint or text, got {type(plan_hint).__name__}",
        where="plan_hint",
    )



_WORDS_PER_TOKEN = {"en": 0.7, "zh": 0.8}  # what a token target reads as, for the model
_LOST_SHOWN = 40  # exact values a feedback message names at most


def _words(tokens: int, language: str) -> int:
    return max(1, int(tokens * _WORDS_PER_TOKEN[language]))


def build_rewrite_messages(handover: str, *, tokens: int, language: str = "auto"
                           ) -> list[dict[str, str]]:
    """The chat messages that ask a model to rewrite ``handover`` (a rule handover's
    sections, lines and citations) into prose of at most ``tokens`` tokens, in ``language``
    (``en``, ``zh`` or ``auto``: from the handover)."""
    if not isinstance(handover, str):
        raise ConfigError(f"handover must be text, got {type(handover).__name__}",
                          where="handover")
    tokens = _positive("tokens", tokens)
    lang = prompt_language(language, handover)
    t = prompt_data()["rewrite"][lang]
    return [{"role": "system", "content": t["system"]},
            {"role": "user", "content": t["user"].format(handover=handover, tokens=tokens,
                                                         words=_words(tokens, lang))}]


def rewrite_feedback(*, tokens: int | None, target: int, lost: list[str] | tuple[str, ...],
                     language: str) -> str:
    """What the model is told after a rewrite that took ``tokens`` tokens (``None``: it
    fitted) of a ``target``, leaving out the exact values ``lost``."""
    lang = prompt_language(language)
    t = prompt_data()["rewrite"][lang]
    parts: list[str] = []
    if tokens is not None:
        parts.append(t["shorter"].format(tokens=tokens, target=_positive("target", target),
                                         words=_words(target, lang)))
    if lost:
        shown = ", ".join(lost[:_LOST_SHOWN]) + (", …" if len(lost) > _LOST_SHOWN else "")
        parts.append(t["lost"].format(values=shown))
    parts.append(t["again"])
    return " ".join(parts)


def _positive(key: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{key} must be a positive integer, got {value!r}", where=key)
    return value
