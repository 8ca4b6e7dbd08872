"""The model layer of the type classifier: the labelled set with a model voting on the
fragments the rules are unsure about.

For each threshold, every fragment whose rule confidence is below it goes to precis's own
:class:`precis.llm.LLMTypeVoter` (the real prompt, client, batching and parsing), and the
labelled set is scored as in ``analysis_quality.py`` (DEV = odd lines, TEST = even lines).

With ``--base-url`` and ``--model`` (or ``$PRECIS_LLM_URL`` / ``$PRECIS_LLM_MODEL``) the
voter asks that OpenAI-compatible endpoint: a measurement of that model. Without them it
asks a stand-in started on 127.0.0.1 that speaks the same wire format and answers each
fragment with the label the *second annotator* gave it (``second_annotator_*.jsonl``, made
without seeing the gold labels; a fragment it cannot find gets no answer, so the rule answer
stands). That figure is what a model labelling like a careful second reader would reach: a
ceiling for the model layer and a choice of threshold, not a measurement of any model.

    python bench/analysis_voter.py [--thresholds 0.3,0.5,0.7,1.0] [--base-url URL --model M]
                                   [--json OUT]
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import precis
from _common import parser, print_table, write_json
from analysis_quality import EVAL, Gold, levels, load_jsonl, predict, prf, second_annotator
from precis.analysis import Analysis, AnalysisConfig, analyze
from precis.llm._voter import prompt_text

STAND_IN_MODEL = "second-annotator"
# a fragment line of the voter's prompt (precis/llm/prompts.json, classify.fragment)
_FRAGMENT_LINE = re.compile(r"^\[(\d+)\] \([^,()]*, [^,()]*\) (.*)$")


def second_annotator_labels() -> dict[str, str]:
    """The second annotator's type of each labelled fragment, by its text as the prompt
    shows it (texts labelled differently in two places are left out)."""
    by_id = second_annotator()
    labels: dict[str, str] = {}
    clashes: set[str] = set()
    for lang in ("en", "zh"):
        for line in load_jsonl(EVAL / f"conversations_{lang}.jsonl"):
            for message in line["messages"]:
                for fragment in message["fragments"]:
                    if fragment["id"] not in by_id:
                        continue
                    label = by_id[fragment["id"]]["type"]
                    key = prompt_text(fragment["text"])
                    if labels.setdefault(key, label) != label:
                        clashes.add(key)
    for key in clashes:
        del labels[key]
    return labels


def answer(prompt: str, labels: dict[str, str]) -> dict[str, str]:
    """The stand-in's reply to one batch: ``{number: type}`` for the fragments it knows."""
    out: dict[str, str] = {}
    for line in prompt.splitlines():
        match = _FRAGMENT_LINE.match(line)
        if match:
            label = labels.get(match.group(2))
            if label is not None:
                out[match.group(1)] = label
    return out


@contextmanager
def stand_in(labels: dict[str, str]) -> Iterator[str]:
    """An OpenAI-compatible ``/chat/completions`` endpoint on 127.0.0.1 answering from
    ``labels``; yields its base URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            prompt = str(body["messages"][-1]["content"])
            reply = json.dumps(answer(prompt, labels))
            data = json.dumps({
                "id": "stand-in", "object": "chat.completion", "model": body.get("model"),
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": reply}}],
                "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
            }).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


class CountingVoter:
    """An :class:`~precis.llm.LLMTypeVoter` that counts what it was asked and answered, and
    remembers the last failure (classification keeps the rule answers when a model fails,
    so a dead endpoint would otherwise look like a model that changes nothing)."""

    def __init__(self, voter: Any) -> None:
        self.voter = voter
        self.name = voter.name
        self.asked = self.answered = self.failed = 0
        self.error: Exception | None = None

    def vote(self, items: Any, candidates: Any) -> Any:
        self.asked += len(items)
        try:
            votes = self.voter.vote(items, candidates)
        except Exception as exc:
            self.failed += len(items)
            self.error = exc
            raise
        self.answered += sum(v is not None for v in votes)
        return votes


def score(threshold: float | None, voter: CountingVoter | None) -> dict[str, Any]:
    """The labelled set's figures with ``voter`` asked below ``threshold`` (None: rules)."""

    def analyzer(conv: precis.Conversation) -> Analysis:
        if threshold is None or voter is None:
            return analyze(conv)
        return analyze(conv, AnalysisConfig(vote_below=threshold), voter=voter)

    golds: list[Gold] = []
    preds: dict[str, dict[str, Any]] = {}
    for lang in ("en", "zh"):
        for n, line in enumerate(load_jsonl(EVAL / f"conversations_{lang}.jsonl"), start=1):
            g, p = predict(line, "DEV" if n % 2 else "TEST", analyzer)
            golds += g
            preds.update(p)
    out: dict[str, Any] = {"threshold": threshold}
    for split in ("DEV", "TEST"):
        sel = [g for g in golds if g.split == split]
        _, macro = prf(sel, preds)
        out[split] = {"macro_f1": macro, "levels": levels(sel, preds)}
    if voter is not None:
        out["asked"], out["answered"], out["failed"] = voter.asked, voter.answered, voter.failed
        out["error"] = str(voter.error) if voter.error is not None else None
    return out


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--thresholds", default="0.3,0.5,0.7,1.0",
                   help="vote_below values to try (comma-separated, each from 0 to 1)")
    p.add_argument("--base-url", default=os.environ.get("PRECIS_LLM_URL"),
                   help="an OpenAI-compatible endpoint (default: the second-annotator stand-in)")
    p.add_argument("--model", default=os.environ.get("PRECIS_LLM_MODEL"))
    args = p.parse_args()
    try:
        thresholds = [float(t) for t in args.thresholds.split(",")]
    except ValueError:
        p.error(f"--thresholds: expected numbers, got {args.thresholds!r}")
    if any(not 0 <= t <= 1 for t in thresholds):
        p.error(f"--thresholds: each must be from 0 to 1, got {args.thresholds!r}")
    try:
        from precis.llm import ChatClient, LLMTypeVoter
    except ImportError as exc:  # the llm extra is missing
        print(f"skipped: {exc}")
        return

    def run(base_url: str, model: str) -> list[dict[str, Any]]:
        results = [score(None, None)]
        with ChatClient(base_url, model=model) as client:
            for t in thresholds:
                results.append(score(t, CountingVoter(LLMTypeVoter(client))))
        return results

    if args.base_url:
        if not args.model:
            p.error("--model (or $PRECIS_LLM_MODEL) is needed with --base-url")
        source = f"model {args.model} at {args.base_url}"
        results = run(args.base_url, args.model)
    else:
        labels = second_annotator_labels()
        if not labels:
            print("skipped: no second annotator labels in tests/data/analysis_eval")
            return
        source = "stand-in answering with the second annotator's labels (a ceiling)"
        with stand_in(labels) as url:
            results = run(url, STAND_IN_MODEL)

    rows = []
    for r in results:
        dev, test = r["DEV"], r["TEST"]
        rows.append([
            "rules only" if r["threshold"] is None else f"below {r['threshold']:.2f}",
            r.get("asked", "-"), r.get("answered", "-"),
            f"{dev['macro_f1']:.3f}", f"{test['macro_f1']:.3f}",
            f"{test['levels']['accuracy']:.3f}", f"{test['levels']['HIGH_recall']:.3f}",
            f"{test['levels']['HIGH_judged_LOW']:.1%}",
        ])
    print(f"voter: {source}")
    for r in results:
        if r.get("failed"):
            print(f"WARNING: below {r['threshold']:.2f}, the model failed on {r['failed']} "
                  f"fragments (their rule answers stand): {r['error']}")
    print_table(["vote", "asked", "answered", "DEV macro-F1", "TEST macro-F1",
                 "TEST level acc", "TEST HIGH kept HIGH", "TEST HIGH->LOW"], rows)
    write_json(args.json, {"benchmark": "analysis_voter", "voter": source, "results": results})


if __name__ == "__main__":
    main()
