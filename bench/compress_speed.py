"""Speed and memory of the whole ``compress`` path, from a file on disk to JSON text.

Sessions of 10k to 1M tokens are built reproducibly (``bench/session.py``) and written as
OpenAI JSON files. The timed path is what a user runs: ``precis.load(path)`` ->
``compress(conv, level=normal, tokenizer=counter)`` -> ``result.to_dict()`` ->
``json.dumps``; best of ``--repeat`` runs, one process, one thread (one core). Memory: the
tracemalloc peak of one more run, and the peak RSS of a fresh subprocess that runs the
path once, next to the RSS it had after its imports (see ``_child``: on Linux the peak is
``VmHWM`` reset just before the run, since ``ru_maxrss`` there inherits the parent's peak).
Targets: the 200k-token session in under 200 ms; linear growth (flat ns/token).

    python bench/compress_speed.py [--sizes 10000,50000,100000,200000,500000,1000000]
                                   [--repeat 3] [--level normal] [--json OUT]
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import precis
from _common import parser, print_table, write_outputs
from _compress_common import counter, load_compress
from session import build_session

TARGET_TOKENS, TARGET_MS = 200_000, 200.0


def _run(path: Path, level: str, compress: Any, tok: precis.TokenCounter) -> str:
    conv = precis.load(path)
    result = compress(conv, level=level, tokenizer=tok)
    return json.dumps(result.to_dict(), ensure_ascii=False)


def _proc_status(field: str) -> float | None:
    """A ``/proc/self/status`` memory field in MB (None where there is no /proc)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def _reset_peak() -> bool:
    """Reset this process's peak RSS (Linux: ``5`` to /proc/self/clear_refs)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def _child(path: Path, level: str) -> None:
    """Run the path once in this fresh process and print its memory figures as JSON.

    ``rss_before_mb``: resident memory after the imports and the tokenizer's first use.
    ``rss_peak_mb``: the peak during the run. On Linux that is ``VmHWM`` reset just before
    the run (``ru_maxrss`` there also keeps the parent's peak across fork + exec);
    elsewhere ``ru_maxrss`` of the whole process (KB on Linux, bytes on macOS).
    """
    compress = load_compress()
    if compress is None:
        sys.exit(1)
    tok = counter()
    tok.count("warm up the tokenizer")
    before = _proc_status("VmRSS")
    reset = _reset_peak()
    _run(path, level, compress, tok)
    peak = _proc_status("VmHWM") if reset else None
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    maxrss = rss / (1024 * 1024 if sys.platform == "darwin" else 1024)
    print(json.dumps({"rss_before_mb": before, "rss_peak_mb": maxrss if peak is None else peak,
                      "rss_peak_source": "ru_maxrss" if peak is None else "VmHWM",
                      "ru_maxrss_mb": maxrss}))


def _subprocess_rss(path: Path, level: str) -> dict[str, Any]:
    out = subprocess.run([sys.executable, __file__, "--child", str(path), "--level", level],
                         capture_output=True, text=True, check=False)
    if out.returncode:
        tail = (out.stderr or out.stdout).strip().splitlines()[-3:]
        print(f"memory subprocess failed (exit {out.returncode}): " + " | ".join(tail))
        return {"rss_before_mb": None, "rss_peak_mb": None, "error": tail}
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--sizes", default="10000,50000,100000,200000,500000,1000000")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--level", default="normal")
    p.add_argument("--child", type=Path, default=None, help=argparse_hidden())
    args = p.parse_args()
    if args.child is not None:
        _child(args.child, args.level)
        return
    compress = load_compress()
    if compress is None:
        print("skipped: nothing to measure without precis.compact")
        return
    tok = counter()
    rows, figures = [], []
    with tempfile.TemporaryDirectory(prefix="precis-compress-speed-") as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            messages = build_session(args.data, size)
            tokens = tok.count_messages(messages)
            path = Path(tmp) / f"session_{size}.json"
            conv = precis.Conversation(messages=messages)
            path.write_text(json.dumps(conv.to_openai(), ensure_ascii=False), encoding="utf-8")
            times = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                out = _run(path, args.level, compress, tok)
                times.append(time.perf_counter() - start)
            best = min(times)
            tracemalloc.start()
            _run(path, args.level, compress, tok)
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            rss = _subprocess_rss(path, args.level)
            result = json.loads(out)
            rows.append([f"{tokens:,}", len(messages), best * 1000, tokens / best,
                         best / tokens * 1e9, f"{peak / 2**20:.1f}", _mb(rss["rss_before_mb"]),
                         _mb(rss["rss_peak_mb"]), result.get("compressed_tokens", "-")])
            figures.append({"tokens": tokens, "messages": len(messages),
                            "file_bytes": path.stat().st_size, "seconds": best,
                            "all_seconds": times, "tokens_per_second": tokens / best,
                            "ns_per_token": best / tokens * 1e9,
                            "tracemalloc_peak_mb": peak / 2**20, **rss,
                            "compressed_tokens": result.get("compressed_tokens")})
            print(f"{tokens:,} tokens: {best * 1000:,.0f} ms")
    print(f"\ntokenizer {tok.name}; level {args.level}; best of {args.repeat}; one core")
    print_table(["tokens", "messages", "ms", "tokens/s", "ns/token", "tracemalloc peak MB",
                 "RSS after imports MB", "RSS peak MB", "output tokens"], rows)
    per_token = [f["ns_per_token"] for f in figures]
    print(f"growth: ns/token from {per_token[0]:.0f} (smallest) to {per_token[-1]:.0f} "
          "(largest); flat = linear")
    near = [f for f in figures if f["tokens"] >= TARGET_TOKENS * 0.9]
    if near:
        at = min(near, key=lambda f: abs(f["tokens"] - TARGET_TOKENS))
        ms = at["seconds"] * 1000
        print(f"{at['tokens']:,}-token session: {ms:,.0f} ms (target < {TARGET_MS:.0f} ms: "
              f"{'met' if ms < TARGET_MS else 'NOT met'})")
    write_outputs(args, {"benchmark": "compress_speed", "tokenizer": tok.name,
                           "level": args.level, "repeat": args.repeat, "sizes": figures})


def _mb(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def argparse_hidden() -> str:
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    main()
