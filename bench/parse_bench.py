"""Parse + segment throughput on the 200k-token mixed zh/en agent session.

The floor is ``json.loads`` of the same file, from its bytes on disk to Python objects
(read + UTF-8 decode + parse), the same boundary ``precis.load`` starts from. The
issue's target is the whole read + detect + parse + segment under 10x that time.

    python bench/parse_bench.py [--tokens 200000] [--repeat 5] [--json OUT]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import precis

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import best_of, parser, print_table, write_json
from session import DEFAULT_OUT, _counter, build_session


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--tokens", type=int, default=200_000)
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()

    path = DEFAULT_OUT / f"session_{args.tokens // 1000}k.json"
    if not path.exists():
        messages = build_session(args.data, args.tokens)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(precis.Conversation(messages=messages).to_openai(),
                                   ensure_ascii=False), encoding="utf-8")
    raw = path.read_bytes()
    conv = precis.load(path)
    counter = _counter()
    tokens = counter.count_messages(conv.messages)
    mb = len(raw) / 1e6

    floor, _ = best_of(lambda: json.loads(path.read_bytes()), args.repeat)
    t_load, _ = best_of(lambda: precis.load(path), args.repeat)
    t_seg, _ = best_of(lambda: precis.segment(conv), args.repeat)
    t_all, _ = best_of(lambda: precis.segment(precis.load(path)), args.repeat)
    seg = precis.segment(conv)

    rows = []
    for stage, secs in [("read + json.loads (floor)", floor), ("precis.load", t_load),
                        ("precis.segment", t_seg), ("load + segment", t_all)]:
        rows.append([stage, secs * 1000, tokens / secs, mb / secs, f"{secs / floor:.1f}x"])
    print(f"session: {path.name}, {mb:.2f} MB, {len(conv)} messages, "
          f"{len(seg.fragments):,} fragments, {tokens:,} tokens ({counter.name}); "
          f"best of {args.repeat}")
    print_table(["stage", "ms", "tokens/s", "MB/s", "vs json.loads"], rows)
    verdict = "met" if t_all / floor < 10 else "NOT met"
    print(f"target: load + segment under 10x json.loads -> {t_all / floor:.1f}x ({verdict})")
    write_json(args.json, {
        "benchmark": "parse_segment",
        "session": {"file": path.name, "bytes": len(raw), "messages": len(conv),
                    "fragments": len(seg.fragments), "tokens": tokens,
                    "tokenizer": counter.name},
        "repeat": args.repeat,
        "seconds": {"json_loads": floor, "load": t_load, "segment": t_seg,
                    "load_segment": t_all},
        "tokens_per_second": tokens / t_all,
        "ratio_vs_json_loads": t_all / floor,
    })


if __name__ == "__main__":
    main()
