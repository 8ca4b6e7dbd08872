"""Segmentation throughput: MB/s, tokens/s and fragments/s of ``split_text`` and ``segment``.

Two inputs:

* a synthetic mixed Chinese / English / code text (deterministic, ``--mb`` megabytes of
  UTF-8), as one message and as chat-sized messages (~2 kB each);
* the real sessions under the shared data folder, loaded first (load time not counted);
  skipped when the folder is absent.

    python bench/segment_bench.py [--mb 4] [--repeat 5] [--json OUT]

The read + parse + segment target against ``json.loads`` is measured by parse_bench.py.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

import precis
from precis.segment import segment, split_text

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import best_of, parser, print_table, write_json

EN = [
    "The quick brown fox jumps over the lazy dog.",
    "We need to refactor the parser in src/app/main.py before v1.2.3 ships.",
    "Dr. Smith said the error rate is 3.14% (see Fig. 2).",
    "Is this correct?",
    "Call `client.get()` and check e.g. the status code.",
    "Visit https://example.com/docs/index.html for details.",
]
ZH = [
    "我们需要在下周之前完成数据迁移。",
    "这个接口的响应时间太长了，平均要3.5秒！",
    "请帮我把这段代码改成异步的？",
    "注意：不要修改 config.yaml 里面的端口；",
    "用户反馈说登录页面经常白屏……",
    "结论是使用 PostgreSQL 作为主数据库。",
]
CODE = (
    "```python\nimport os\n\ndef main(argv):\n    for a in argv:\n"
    "        print(a.strip())\n    return 0\n```"
)
TABLE = "| 选项 | 结论 |\n|---|---|\n| A | 否 |\n| B | 是 |"
SQL = "SELECT id, name FROM users WHERE age > 3;"


def _block(r: random.Random) -> str:
    x = r.random()
    if x < 0.6:
        if r.random() < 0.5:
            return " ".join(r.choice(EN) for _ in range(r.randint(1, 6)))
        return "".join(r.choice(ZH) for _ in range(r.randint(1, 6)))
    if x < 0.75:
        return "\n".join(
            f"- {r.choice(EN)}" if r.random() < 0.5 else f"{i + 1}. {r.choice(ZH)}"
            for i in range(r.randint(2, 5))
        )
    if x < 0.85:
        return CODE
    if x < 0.9:
        return TABLE
    if x < 0.95:
        return "## " + r.choice(EN)
    return SQL


def synthetic_text(megabytes: float, seed: int = 0) -> str:
    """Mixed zh / en / code Markdown of about ``megabytes`` MB of UTF-8."""
    r = random.Random(seed)
    out: list[str] = []
    size = 0
    while size < megabytes * 1e6:
        block = _block(r)
        out.append(block)
        size += len(block.encode("utf-8")) + 2
    return "\n\n".join(out)


def _tokens(texts: list[str]) -> tuple[int, str]:
    try:
        counter = precis.get_counter("o200k_base")
    except precis.PrecisError:
        counter = precis.get_counter("estimate")
    return sum(counter.count(t) for t in texts), counter.name


def _row(name: str, secs: float, mb: float, tokens: int, fragments: int) -> list[Any]:
    return [name, secs * 1000, mb / secs, tokens / secs, fragments / secs]


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--mb", type=float, default=4.0, help="size of the synthetic text")
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()

    text = synthetic_text(args.mb)
    mb = len(text.encode("utf-8")) / 1e6
    tokens, counter_name = _tokens([text])
    one = precis.Conversation(messages=[precis.Message.of("user", text)])
    chunks = [text[i : i + 2000] for i in range(0, len(text), 2000)]
    roles = ("user", "assistant")
    chat = precis.Conversation(
        messages=[precis.Message.of(roles[i % 2], c) for i, c in enumerate(chunks)]
    )
    n_frag = len(segment(one).fragments)
    rows = [
        _row(
            "split_text (one text)",
            best_of(lambda: split_text(text), args.repeat)[0],
            mb,
            tokens,
            n_frag,
        ),
        _row(
            "segment (one message)",
            best_of(lambda: segment(one), args.repeat)[0],
            mb,
            tokens,
            n_frag,
        ),
        _row(
            f"segment ({len(chunks):,} messages)",
            best_of(lambda: segment(chat), args.repeat)[0],
            mb,
            tokens,
            len(segment(chat).fragments),
        ),
    ]
    print(
        f"synthetic zh/en/code text: {mb:.2f} MB, {tokens:,} tokens ({counter_name}), "
        f"{n_frag:,} fragments; best of {args.repeat}"
    )
    print_table(["input", "ms", "MB/s", "tokens/s", "fragments/s"], rows)
    keys = ["input", "ms", "mb_s", "tokens_s", "fragments_s"]
    payload: dict[str, Any] = {
        "benchmark": "segment",
        "synthetic": {
            "mb": mb,
            "tokens": tokens,
            "counter": counter_name,
            "rows": [dict(zip(keys, r, strict=True)) for r in rows],
        },
    }

    transcripts = args.data / "transcripts"
    if not transcripts.is_dir():
        print(f"\nreal sessions skipped: {transcripts} not found (pass --data PATH)")
    else:
        real_rows = []
        for path in sorted(transcripts.rglob("*")):
            if path.suffix not in {".json", ".jsonl", ".traj"}:
                continue
            convs = precis.load_all(path).conversations
            texts = [part.text for c in convs for m in c for part in m.parts]
            size = sum(len(t.encode("utf-8")) for t in texts) / 1e6
            n_tok = _tokens(texts)[0]
            secs = best_of(lambda convs=convs: [segment(c) for c in convs], args.repeat)[0]
            frags = sum(len(segment(c).fragments) for c in convs)
            real_rows.append(_row(path.name, secs, size, n_tok, frags))
        print(f"\nreal sessions (text of all parts; load not counted; best of {args.repeat})")
        print_table(["file", "ms", "MB/s", "tokens/s", "fragments/s"], real_rows)
        payload["real"] = [dict(zip(["file", *keys[1:]], r, strict=True)) for r in real_rows]
    write_json(args.json, payload)


if __name__ == "__main__":
    main()
