"""Analysis quality on the hand-labelled set in tests/data/analysis_eval/.

Builds each labelled conversation as real messages, runs ``precis.analysis.analyze`` on it,
maps every gold fragment to the predicted fragment that overlaps it most, and reports:
per-type precision / recall / F1 and macro-F1 of the type classifier, HIGH / MEDIUM / LOW
accuracy and HIGH recall, duplicate-pair precision / recall, and chain detection accuracy.
Figures are given for the DEV half (odd lines, the half rules may be studied on), the TEST
half (even lines) and ALL. A second annotator's labels of the same fragments
(``second_annotator_*.jsonl``, made without seeing the first) are scored the same way: how
far two careful readers agree, a reference for the classifier's figures.

    python bench/analysis_quality.py [--json OUT]
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import precis
from _common import ROOT, parser, print_table, write_json
from precis.analysis import Analysis, analyze
from precis.analysis.model import FRAGMENT_TYPES

EVAL = ROOT / "tests" / "data" / "analysis_eval"
TRAIN = ROOT / "tests" / "data" / "analysis_train"  # fitting only (bench/analysis_fit.py)
LEVELS = ("HIGH", "MEDIUM", "LOW")


@dataclass
class Gold:
    id: str
    conv: str
    split: str
    type: str
    level: str
    message: int
    start: int
    end: int


def build(line: dict[str, Any]) -> tuple[list[dict[str, Any]], list[tuple[int, str, int, int]]]:
    """OpenAI messages for a labelled conversation + (message, fragment id, start, end)."""
    default_after = " " if line["lang"] == "en" else ""
    messages: list[dict[str, Any]] = []
    spans: list[tuple[int, str, int, int]] = []
    call_no = 0
    for msg in line["messages"]:
        text = ""
        index = len(messages)
        for frag in msg["fragments"]:
            start = len(text)
            text += frag["text"]
            spans.append((index, frag["id"], start, len(text)))
            text += frag.get("after", default_after)
        text = text.rstrip()
        if msg["role"] == "tool":
            call_no += 1
            call_id = f"call_{call_no}"
            if messages and messages[-1]["role"] == "assistant":
                messages[-1].setdefault("tool_calls", []).append({
                    "id": call_id, "type": "function",
                    "function": {"name": msg.get("tool_name", "tool"), "arguments": "{}"}})
            messages.append({"role": "tool", "tool_call_id": call_id, "content": text})
        else:
            messages.append({"role": msg["role"], "content": text})
    return messages, spans


def predict(
    line: dict[str, Any], split: str, analyzer: Callable[[precis.Conversation], Analysis] = analyze
) -> tuple[list[Gold], dict[str, dict[str, Any]]]:
    messages, spans = build(line)
    analysis = analyzer(precis.load(messages))
    items = list(analysis.items())
    golds: list[Gold] = []
    preds: dict[str, dict[str, Any]] = {}
    by_id = {f["id"]: f for m in line["messages"] for f in m["fragments"]}
    for message, fid, start, end in spans:
        best, overlap = None, 0
        for item in items:
            p = item.fragment.provenance
            if p.message != message or p.part != 0:
                continue
            o = min(end, p.end) - max(start, p.start)
            if o > overlap:
                best, overlap = item, o
        gold = by_id[fid]
        golds.append(Gold(fid, line["id"], split, gold["type"], gold["importance"],
                          message, start, end))
        if best is None:  # nothing predicted here (should not happen)
            preds[fid] = {"type": "none", "level": "LOW", "frag": None}
            continue
        group = next((g for g in analysis.consolidation.duplicates
                      if best.id in g.members), None)
        chain = next((c for c in analysis.consolidation.chains if best.id in c.fragments), None)
        preds[fid] = {"type": best.type, "level": best.level, "frag": best.id,
                      "group": (line["id"], group.kept) if group else None,
                      "chain": (line["id"], chain.id, chain.fragments.index(best.id))
                      if chain else None}
    return golds, preds


def prf(golds: list[Gold], preds: dict[str, dict[str, Any]]) -> tuple[list[list[Any]], float]:
    rows, f1s = [], []
    for t in FRAGMENT_TYPES:
        tp = sum(1 for g in golds if g.type == t and preds[g.id]["type"] == t)
        fp = sum(1 for g in golds if g.type != t and preds[g.id]["type"] == t)
        fn = sum(1 for g in golds if g.type == t and preds[g.id]["type"] != t)
        p = tp / (tp + fp) if tp + fp else 0.0
        r = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        f1s.append(f1)
        rows.append([t, tp + fn, p, r, f1])
    return rows, sum(f1s) / len(f1s)


def levels(golds: list[Gold], preds: dict[str, dict[str, Any]]) -> dict[str, float]:
    acc = sum(preds[g.id]["level"] == g.level for g in golds) / len(golds)
    out = {"accuracy": acc}
    for lv in LEVELS:
        n = [g for g in golds if g.level == lv]
        out[f"{lv}_recall"] = sum(preds[g.id]["level"] == lv for g in n) / len(n) if n else 0.0
    high = [g for g in golds if g.level == "HIGH"]
    out["HIGH_judged_LOW"] = sum(preds[g.id]["level"] == "LOW" for g in high) / len(high)
    return out


def duplicates(golds: list[Gold], preds: dict[str, dict[str, Any]],
               pairs: list[dict[str, Any]]) -> dict[str, float]:
    ids = {g.id for g in golds}
    # gold groups: transitive closure of the labelled pairs
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.get(x, x) != x:
            x = parent[x]
        return x

    gold_pairs = [(p["a"], p["b"]) for p in pairs if p["a"] in ids and p["b"] in ids]
    for a, b in gold_pairs:
        parent[find(a)] = find(b)
    predicted: set[tuple[str, str]] = set()
    by_group: dict[Any, list[str]] = defaultdict(list)
    for g in golds:
        if preds[g.id].get("group"):
            by_group[preds[g.id]["group"]].append(g.id)
    for members in by_group.values():
        for i, a in enumerate(members):
            for b in members[i + 1:]:
                if preds[a]["frag"] != preds[b]["frag"]:
                    predicted.add((a, b))
    correct = sum(1 for a, b in predicted if find(a) == find(b) and (a in parent or b in parent))
    found = sum(1 for a, b in gold_pairs
                if preds[a].get("group") and preds[a]["group"] == preds[b].get("group")
                and preds[a]["frag"] != preds[b]["frag"])
    return {"gold_pairs": len(gold_pairs), "predicted_pairs": len(predicted),
            "precision": correct / len(predicted) if predicted else 0.0,
            "recall": found / len(gold_pairs) if gold_pairs else 0.0}


def chains(golds: list[Gold], preds: dict[str, dict[str, Any]],
           gold_chains: list[dict[str, Any]]) -> dict[str, float]:
    ids = {g.id for g in golds}
    exact = partial = 0
    wanted = [c for c in gold_chains if all(f in ids for f in c["fragments"])]
    for c in wanted:
        tags = [preds[f].get("chain") for f in c["fragments"]]
        same = tags[0] is not None and all(t and t[:2] == tags[0][:2] for t in tags)
        ordered = same and [t[2] for t in tags] == sorted(t[2] for t in tags)
        if ordered:
            partial += 1
            chain_len = max(t[2] for t in tags) + 1
            frags = {preds[f]["frag"] for f in c["fragments"]}
            if len(frags) == len(c["fragments"]) == chain_len:
                exact += 1
        elif tags[-1] is not None and sum(1 for t in tags if t and t[:2] == tags[-1][:2]) >= 2:
            partial += 1
    n = len(wanted)
    return {"gold_chains": n, "exact": exact / n if n else 0.0,
            "linked_in_order": partial / n if n else 0.0}


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def main() -> None:
    args = parser(__doc__ or "").parse_args()
    golds: list[Gold] = []
    preds: dict[str, dict[str, Any]] = {}
    for lang in ("en", "zh"):
        lines = load_jsonl(EVAL / f"conversations_{lang}.jsonl")
        for n, line in enumerate(lines, start=1):
            g, p = predict(line, "DEV" if n % 2 else "TEST")
            golds += g
            preds.update(p)
    pairs = load_jsonl(EVAL / "duplicates_en.jsonl") + load_jsonl(EVAL / "duplicates_zh.jsonl")
    gchains = load_jsonl(EVAL / "chains_en.jsonl") + load_jsonl(EVAL / "chains_zh.jsonl")
    lang_of = {g.id: g.conv.split("-")[0] for g in golds}

    report: dict[str, Any] = {"benchmark": "analysis_quality", "fragments": len(golds)}
    summary_rows = []
    for split in ("DEV", "TEST", "ALL"):
        for lang in ("en", "zh", "all"):
            sel = [g for g in golds if (split == "ALL" or g.split == split)
                   and (lang == "all" or lang_of[g.id] == lang)]
            rows, macro = prf(sel, preds)
            lv = levels(sel, preds)
            dup = duplicates(sel, preds, pairs)
            ch = chains(sel, preds, gchains)
            report[f"{split}/{lang}"] = {"macro_f1": macro, "per_type": {
                r[0]: {"n": r[1], "precision": r[2], "recall": r[3], "f1": r[4]} for r in rows},
                "levels": lv, "duplicates": dup, "chains": ch, "fragments": len(sel)}
            summary_rows.append([split, lang, len(sel), macro, lv["accuracy"], lv["HIGH_recall"],
                                 lv["HIGH_judged_LOW"], dup["precision"], dup["recall"],
                                 ch["exact"], ch["linked_in_order"]])
            if split == "ALL" and lang == "all":
                print_table(["type", "n", "precision", "recall", "F1"], rows,
                            title="per-type classification (ALL)")
                print()
    print_table(["split", "lang", "n", "macro-F1", "level acc", "HIGH rec", "HIGH->LOW",
                 "dup P", "dup R", "chain exact", "chain linked"], summary_rows,
                title="analysis quality")
    second = second_annotator()
    if second:
        rows = []
        for split in ("DEV", "TEST", "ALL"):
            sel = [g for g in golds if split == "ALL" or g.split == split]
            macro = prf(sel, second)[1]
            lv = levels(sel, second)
            report[f"second_annotator/{split}"] = {"macro_f1": macro, "levels": lv}
            rows.append([split, len(sel), macro, lv["accuracy"], lv["HIGH_recall"],
                         lv["HIGH_judged_LOW"]])
        print()
        print_table(["split", "n", "macro-F1", "level acc", "HIGH rec", "HIGH->LOW"], rows,
                    title="a second annotator against the gold labels (agreement)")
    write_json(args.json, report)


def second_annotator() -> dict[str, dict[str, Any]]:
    """The second annotator's ``{fragment id: {"type", "level"}}`` (empty without the
    files)."""
    out: dict[str, dict[str, Any]] = {}
    for lang in ("en", "zh"):
        path = EVAL / f"second_annotator_{lang}.jsonl"
        if path.exists():
            for row in load_jsonl(path):
                out[row["id"]] = {"type": row["type"], "level": row["importance"]}
    return out


if __name__ == "__main__":
    main()
