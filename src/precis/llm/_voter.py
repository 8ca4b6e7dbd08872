"""An LLM as the model layer of fragment classification (seed 002 二.2).

:class:`LLMTypeVoter` implements :class:`~precis.analysis.classify.TypeVoter`: the fragments
the rules are unsure about are sent in numbered batches, and the model answers with a JSON
object ``{"1": "fact", "2": "goal"}``. An answer that is not one of the candidate types, a
missing number or an unreadable reply abstains (``None``), so the rule answer stands. A
failing endpoint raises :class:`~precis.errors.LLMError`, which
:func:`~precis.analysis.classify_all` turns into ``voter_failed`` on the rule answers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from precis.errors import ConfigError
from precis.llm._client import ChatModel
from precis.llm._http import check_positive_int
from precis.llm._prompts import prompt_data

if TYPE_CHECKING:
    from precis.analysis.model import Classification, FragmentType
    from precis.segment.model import Fragment

__all__ = ["MAX_CHARS", "LLMTypeVoter", "prompt_text"]

_WHERE = "voter"
_LINE = re.compile(r"^\W*(\d{1,6})\W+([a-z_]+)\W*$", re.MULTILINE)
_TOKENS_PER_ANSWER = 8


MAX_CHARS = 600  # a fragment's text is cut to this many characters in the prompt


def prompt_text(text: object, max_chars: int = MAX_CHARS) -> str:
    """A fragment's text as the prompt shows it: white space collapsed, cut to
    ``max_chars`` characters (`` ...`` marks a cut)."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= max_chars else flat[:max_chars] + " ..."


class LLMTypeVoter:
    """Asks ``client`` for the type of each low-confidence fragment.

    Up to ``batch_size`` fragments go in one request, each cut to ``max_chars`` characters.
    A vote gets confidence ``confidence`` (a model's word is not calibrated like the rule
    layer's softmax) and the evidence ``model:vote``.
    """

    def __init__(
        self,
        client: ChatModel,
        *,
        batch_size: int = 40,
        max_chars: int = MAX_CHARS,
        confidence: float = 0.7,
    ) -> None:
        self.client = client
        self.batch_size = check_positive_int("batch_size", batch_size, where=_WHERE)
        self.max_chars = check_positive_int("max_chars", max_chars, where=_WHERE)
        if (isinstance(confidence, bool) or not isinstance(confidence, (int, float))
                or not 0 <= confidence <= 1):
            raise ConfigError(f"confidence must be a number from 0 to 1, got {confidence!r}",
                              where=_WHERE)
        self.confidence = float(confidence)
        self.name = f"llm:{getattr(client, 'model', type(client).__name__)}"
        self.asked = 0  # fragments sent to the model
        self.unreadable = 0  # ... whose answer named no type at all (junk, or left out)

    def vote(
        self,
        items: Sequence[tuple[Fragment, Classification]],
        candidates: Sequence[FragmentType],
    ) -> list[Classification | None]:
        votes: list[Classification | None] = []
        for start in range(0, len(items), self.batch_size):
            batch = items[start : start + self.batch_size]
            votes.extend(self._batch([fragment for fragment, _ in batch], candidates))
        return votes

    def messages(
        self, fragments: Sequence[Fragment], candidates: Sequence[FragmentType]
    ) -> list[dict[str, str]]:
        """The prompt for one batch (the system message lists the candidate types)."""
        t = prompt_data()["classify"]
        types = "\n".join(f"- {name}: {t['types'].get(name, name)}" for name in candidates)
        lines = [
            t["fragment"].format(index=i, role=f.role, kind=f.kind, text=self._cut(f.text))
            for i, f in enumerate(fragments, 1)
        ]
        return [
            {"role": "system", "content": t["system"].format(types=types)},
            {"role": "user", "content": "\n".join(lines)},
        ]

    def _cut(self, text: str) -> str:
        return prompt_text(text, self.max_chars)

    def _batch(
        self, fragments: Sequence[Fragment], candidates: Sequence[FragmentType]
    ) -> list[Classification | None]:
        from precis.analysis.model import Classification

        completion = self.client.complete(
            self.messages(fragments, candidates),
            max_tokens=16 + _TOKENS_PER_ANSWER * len(fragments),
        )
        answers = _parse(completion.text)
        allowed = set(candidates)
        out: list[Classification | None] = []
        self.asked += len(fragments)
        for i in range(1, len(fragments) + 1):
            name = answers.get(i)
            if name is None:
                self.unreadable += 1
            if name in allowed:
                out.append(Classification(name, self.confidence, evidence=("model:vote",)))
            else:
                out.append(None)
        return out


def _parse(text: Any) -> dict[int, str]:
    """``{number: type}`` from a reply: a JSON object (possibly in a code fence or among
    other words), else lines such as ``1: fact``. Unreadable parts are left out."""
    if not isinstance(text, str):
        return {}
    found: dict[int, str] = {}
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        try:
            data = json.loads(text[start : end + 1])
        except ValueError:
            data = None
        if isinstance(data, dict):
            for key, value in data.items():
                number = _number(key)
                if number is not None and isinstance(value, str):
                    found[number] = value.strip().lower()
            return found
    for match in _LINE.finditer(text.lower()):
        found.setdefault(int(match.group(1)), match.group(2))
    return found


def _number(key: object) -> int | None:
    text = str(key).strip().strip("[]()#")
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 6 else None
