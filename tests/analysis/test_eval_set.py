"""The hand-labelled evaluation set is well formed (so benchmark figures mean something)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from precis.analysis.model import FRAGMENT_TYPES

EVAL = Path(__file__).resolve().parents[1] / "data" / "analysis_eval"


def _jsonl(name: str) -> list[dict]:
    return [json.loads(x) for x in (EVAL / name).read_text(encoding="utf-8").splitlines()
            if x.strip()]


@pytest.fixture(scope="module")
def fragments() -> dict[str, dict]:
    out: dict[str, dict] = {}
    for lang in ("en", "zh"):
        for conv in _jsonl(f"conversations_{lang}.jsonl"):
            assert conv["lang"] == lang
            assert conv["domain"] in {"coding", "data", "product", "support"}
            n = 0
            for msg in conv["messages"]:
                assert msg["role"] in {"user", "assistant", "system", "tool"}
                for frag in msg["fragments"]:
                    n += 1
                    assert frag["id"] == f"{conv['id']}-f{n}"
                    assert frag["id"] not in out
                    out[frag["id"]] = dict(frag, lang=lang, conv=conv["id"])
    return out


def test_sizes_and_labels(fragments: dict[str, dict]) -> None:
    assert len(fragments) >= 400
    by_lang = Counter(f["lang"] for f in fragments.values())
    assert by_lang["en"] >= 200 and by_lang["zh"] >= 200
    types = Counter(f["type"] for f in fragments.values())
    assert set(types) == set(FRAGMENT_TYPES)
    assert min(types.values()) >= 12
    assert {f["importance"] for f in fragments.values()} == {"HIGH", "MEDIUM", "LOW"}


def test_pairs_and_chains_point_at_labelled_fragments(fragments: dict[str, dict]) -> None:
    pairs = _jsonl("duplicates_en.jsonl") + _jsonl("duplicates_zh.jsonl")
    chains = _jsonl("chains_en.jsonl") + _jsonl("chains_zh.jsonl")
    assert len(pairs) >= 30 and len(chains) >= 15
    for pair in pairs:
        assert pair["a"] in fragments and pair["b"] in fragments
        assert fragments[pair["a"]]["conv"] == fragments[pair["b"]]["conv"]
    for chain in chains:
        assert len(chain["fragments"]) >= 2
        assert all(f in fragments for f in chain["fragments"])


def test_the_second_annotator_labels_every_fragment_once(fragments: dict[str, dict]) -> None:
    rows = _jsonl("second_annotator_en.jsonl") + _jsonl("second_annotator_zh.jsonl")
    ids = [r["id"] for r in rows]
    assert sorted(ids) == sorted(fragments)
    assert {r["type"] for r in rows} <= set(FRAGMENT_TYPES)
    assert {r["importance"] for r in rows} <= {"HIGH", "MEDIUM", "LOW"}


TRAIN = EVAL.parent / "analysis_train"


def test_the_training_set_is_well_formed_and_covers_every_type() -> None:
    seen: set[str] = set()
    types: Counter[str] = Counter()
    files = sorted(TRAIN.glob("conversations_*.jsonl"))
    assert files
    for path in files:
        for k, x in enumerate(path.read_text("utf-8").splitlines(), 1):
            if not x.strip():
                continue
            conv = json.loads(x)
            where = f"{path.name}:{k}"
            assert conv["lang"] in {"en", "zh"}, where
            assert conv["domain"] in {"coding", "data", "product", "support"}, where
            assert conv["id"] not in seen, where
            seen.add(conv["id"])
            n = 0
            for msg in conv["messages"]:
                assert msg["role"] in {"user", "assistant", "system", "tool"}, where
                for frag in msg["fragments"]:
                    n += 1
                    assert frag["id"] == f"{conv['id']}-f{n}", where
                    assert frag["text"].strip(), where
                    assert frag["importance"] in {"HIGH", "MEDIUM", "LOW"}, where
                    assert isinstance(frag.get("after", ""), str), where
                    types[frag["type"]] += 1
    assert set(types) == set(FRAGMENT_TYPES)
    assert min(types.values()) >= 50
