"""The token-counting corpus shared by ``calibrate_estimator.py`` and ``tokens_bench.py``.

Built from the real public conversations in ``../shared/data`` (never copied into the repo):

=========  ==========================================================================
language   sources
=========  ==========================================================================
zh         ShareGPT-zh messages; CrossWOZ dialogues (short turns joined per dialogue)
en         tau-bench system/user/assistant text; Claude Code text + thinking;
           SWE-agent and OpenHands agent messages; LoCoMo sessions ("Speaker: text")
code       tool results and tool-call arguments (tau-bench JSON, Claude Code, SWE-agent,
           OpenHands), the OpenHands git patches
mixed      a held-out zh piece joined with a held-out en or code piece (built on demand)
=========  ==========================================================================

Each source is cut into *units* (a conversation where a source has many, a message or a
session where it has few). A unit lands in the calibration or the held-out half by the
parity of the SHA-1 of ``"<source>:<unit key>"``: a fixed rule, the same on every machine.
Units are chunked into realistic pieces: a message as it is when it is 200-800 characters,
longer texts cut at a line break near every 500 characters, short turns of one unit joined
until they reach 400 characters. Identical texts are kept once (OpenHands repeats events,
tau-bench repeats its system prompt).
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from precis.tokens import HFTokenizerCounter, TiktokenCounter, TokenCounter

__all__ = [
    "LANGS",
    "MIN_PIECE_CHARS",
    "Corpus",
    "Piece",
    "WholeConversation",
    "build_corpus",
    "error_stats",
    "mixed_pieces",
    "real_counters",
]

LANGS = ("zh", "en", "code", "mixed")
MIN_PIECE_CHARS = 200
"""Pieces shorter than this are not measured (error on tiny texts is dominated by rounding)."""

_TARGET = 500
_MAX_WHOLE = 800


@dataclass(frozen=True)
class Piece:
    source: str
    lang: str
    text: str
    heldout: bool


@dataclass(frozen=True)
class WholeConversation:
    """All the text of one conversation (one unit of a conversation-level source)."""

    source: str
    lang: str
    text: str
    heldout: bool


@dataclass
class Corpus:
    pieces: list[Piece] = field(default_factory=list)
    conversations: list[WholeConversation] = field(default_factory=list)

    def half(self, heldout: bool) -> list[Piece]:
        return [p for p in self.pieces if p.heldout is heldout]


def _is_heldout(source: str, key: str) -> bool:
    return int(hashlib.sha1(f"{source}:{key}".encode()).hexdigest(), 16) % 2 == 1


def _split_long(text: str) -> Iterator[str]:
    """Cut ``text`` at a line break (else a space, else anywhere) near every 500 chars."""
    start = 0
    n = len(text)
    while n - start > _MAX_WHOLE:
        window = text[start + _TARGET - 150 : start + _TARGET + 200]
        cut = window.rfind("\n")
        if cut < 0:
            cut = window.rfind(" ")
        end = start + _TARGET - 150 + cut + 1 if cut >= 0 else start + _TARGET
        yield text[start:end]
        start = end
    if start < n:
        yield text[start:]


def _chunk(texts: Iterable[str]) -> Iterator[str]:
    """Realistic pieces from one unit's texts (see the module docstring)."""
    buffer: list[str] = []
    size = 0
    for text in texts:
        if not text.strip():
            continue
        if len(text) > _MAX_WHOLE:
            yield from _split_long(text)
            continue
        if len(text) >= 400 and not buffer:
            yield text
            continue
        buffer.append(text)
        size += len(text) + 1
        if size >= 400:
            yield "\n".join(buffer)
            buffer, size = [], 0
    if buffer:
        yield "\n".join(buffer)


class _Builder:
    def __init__(self) -> None:
        self.corpus = Corpus()
        self._seen: set[str] = set()

    def unit(
        self,
        source: str,
        key: str,
        items: list[tuple[str, str]],
        *,
        whole: bool = False,
    ) -> None:
        """Add one unit: ``items`` are (lang, text) in order; consecutive same-lang texts
        are chunked together."""
        heldout = _is_heldout(source, key)
        fresh = [(lang, t) for lang, t in items if t and t.strip() and t not in self._seen]
        self._seen.update(t for _, t in fresh)
        run: list[str] = []
        run_lang = ""
        for lang, text in [*fresh, ("", "")]:
            if lang != run_lang and run:
                for piece in _chunk(run):
                    self.corpus.pieces.append(Piece(source, run_lang, piece, heldout))
                run = []
            run_lang = lang
            if text:
                run.append(text)
        if whole and fresh:
            langs = [lang for lang, _ in fresh]
            main = max(set(langs), key=langs.count)
            text = "\n\n".join(t for _, t in fresh)
            self.corpus.conversations.append(WholeConversation(source, main, text, heldout))


def _text_of(value: Any) -> str:
    """Text of a content value: a string, or a list of blocks with ``text``."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_text_of(v.get("text", "")) for v in value if isinstance(v, dict))
    return ""


def _args_text(value: Any) -> str:
    """Tool-call arguments as a model sees them (a JSON string is kept as it is)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _sharegpt(b: _Builder, path: Path) -> None:
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh):
            if not line.strip():
                continue
            conv = json.loads(line)["conversations"]
            b.unit("sharegpt-zh", str(n), [("zh", m["value"]) for m in conv], whole=True)


def _crosswoz(b: _Builder, path: Path) -> None:
    with zipfile.ZipFile(path) as zf:
        data = json.loads(zf.read(zf.namelist()[0]))
    for key, dialogue in data.items():
        items = [("zh", m["content"]) for m in dialogue["messages"]]
        b.unit("crosswoz", key, items, whole=True)


def _tau(b: _Builder, path: Path) -> None:
    for n, task in enumerate(json.loads(path.read_text(encoding="utf-8"))):
        items: list[tuple[str, str]] = []
        for m in task["traj"]:
            lang = "code" if m["role"] == "tool" else "en"
            items.append((lang, m.get("content") or ""))
            for call in m.get("tool_calls") or []:
                items.append(("code", _args_text(call["function"]["arguments"])))
        b.unit("tau-bench", str(n), items, whole=True)


def _claude_code(b: _Builder, path: Path) -> None:
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        message = record.get("message")
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        items: list[tuple[str, str]] = []
        if isinstance(content, str):
            items.append(("en", content))
        for block in content if isinstance(content, list) else []:
            kind = block.get("type")
            if kind in ("text", "thinking"):
                items.append(("en", block.get(kind, "")))
            elif kind == "tool_use":
                inp = block.get("input") or {}
                items.append(("code", "\n".join(_args_text(v) for v in inp.values())))
            elif kind == "tool_result":
                items.append(("code", _text_of(block.get("content"))))
        for i, (lang, text) in enumerate(items):
            key = f"{record.get('uuid', '')}:{i}"
            b.unit(f"claude-code/{path.stem}", key, [(lang, text)])


def _swe_agent(b: _Builder, path: Path) -> None:
    for n, m in enumerate(json.loads(path.read_text(encoding="utf-8"))["history"]):
        lang = "code" if m["role"] == "tool" else "en"
        b.unit("swe-agent", str(n), [(lang, _text_of(m.get("content")))])
        calls = m.get("tool_calls")
        if isinstance(calls, list):
            for call in calls:
                args = _args_text(call["function"]["arguments"])
                b.unit("swe-agent", f"{n}:call", [("code", args)])


def _openhands(b: _Builder, path: Path) -> None:
    for r, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        record = json.loads(line)
        for event in record["history"]:
            key = f"{r}:{event.get('id')}"
            if "observation" in event:
                b.unit("openhands", key, [("code", str(event.get("content") or ""))])
            elif event.get("action") in ("message", "system"):
                b.unit("openhands", key, [("en", str(event.get("message") or ""))])
            elif event.get("action") in ("run", "edit", "str_replace_editor"):
                args = event.get("args") or {}
                thought = str(args.get("thought") or "")
                code = str(args.get("command") or args.get("content") or "")
                b.unit("openhands", key, [("en", thought), ("code", code)])
        patch = (record.get("test_result") or {}).get("git_patch") or ""
        b.unit("openhands", f"{r}:patch", [("code", patch)])


def _locomo(b: _Builder, path: Path) -> None:
    for sample in json.loads(path.read_text(encoding="utf-8")):
        conv = sample["conversation"]
        for key, turns in conv.items():
            if not key.startswith("session_") or not isinstance(turns, list):
                continue
            lines = [f"{t['speaker']}: {t['text']}" for t in turns]
            b.unit("locomo", f"{sample.get('sample_id')}:{key}", [("en", x) for x in lines],
                   whole=True)


_SOURCES = (
    ("transcripts/zh/sharegpt-zh-first500.jsonl", _sharegpt),
    ("transcripts/zh/crosswoz_test.json.zip", _crosswoz),
    ("transcripts/openai/tau-bench-gpt-4o-airline-first100.json", _tau),
    ("transcripts/claude-code/python-to-rust-port.transcript.jsonl", _claude_code),
    ("transcripts/claude-code/marot-spotter.subagent-aa84377.jsonl", _claude_code),
    ("transcripts/openai/swe-agent-marshmallow-1867.traj", _swe_agent),
    ("transcripts/openai/openhands-multi-swe-bench.output.jsonl", _openhands),
    ("locomo/locomo_dev.json", _locomo),
)


def build_corpus(data: Path) -> Corpus:
    """Read every source under ``data`` (a missing file is skipped)."""
    b = _Builder()
    for rel, reader in _SOURCES:
        path = data / rel
        if path.is_file():
            reader(b, path)
    return b.corpus


def mixed_pieces(pieces: list[Piece]) -> list[Piece]:
    """Mixed zh/en text: each zh piece joined with the next en or code piece of the same
    half (cycling), alternately before and after it."""
    zh = [p for p in pieces if p.lang == "zh"]
    other = [p for p in pieces if p.lang in ("en", "code")]
    out: list[Piece] = []
    for heldout in (False, True):
        zs = [p for p in zh if p.heldout is heldout]
        os_ = [p for p in other if p.heldout is heldout]
        if not zs or not os_:
            continue
        for i, z in enumerate(zs):
            o = os_[(i * 7) % len(os_)]
            text = f"{z.text}\n\n{o.text}" if i % 2 else f"{o.text}\n\n{z.text}"
            out.append(Piece(f"{z.source}+{o.source}", "mixed", text, heldout))
    return out


def real_counters(data: Path) -> dict[str, TokenCounter]:
    """The real tokenizer of every estimator family, from ``data/tokenizers``."""
    folder = data / "tokenizers"
    return {
        "cl100k": TiktokenCounter("cl100k_base", path=folder / "cl100k_base.tiktoken"),
        "o200k": TiktokenCounter("o200k_base", path=folder / "o200k_base.tiktoken"),
        "qwen": HFTokenizerCounter(folder / "qwen3" / "tokenizer.json"),
    }


def error_stats(estimates: list[int], truths: list[int]) -> dict[str, float]:
    """Mean / worst absolute relative error and mean signed error (bias), in percent."""
    errors = [(e - t) / t for e, t in zip(estimates, truths) if t > 0]
    if not errors:
        return {"n": 0, "mean": float("nan"), "worst": float("nan"), "bias": float("nan")}
    absolute = sorted(abs(e) for e in errors)
    return {
        "n": len(errors),
        "mean": 100 * sum(absolute) / len(absolute),
        "p95": 100 * absolute[min(len(absolute) - 1, int(0.95 * len(absolute)))],
        "worst": 100 * absolute[-1],
        "bias": 100 * sum(errors) / len(errors),
    }
