"""Handover coverage: can an agent continue from the compacted context?

Wraps the shared protocol in ``../shared/eval/handover/handover.py`` (read its docstring):
real sessions cut at a handover point, a checklist of what a new agent must know there, a
blind reader that sees only the compacted context and the questions. This script makes the
packets for several systems and budgets, and grades the readers' answers into one table.

Systems: ``precis`` (``precis compress --budget B --tokenizer o200k_base -O openai``),
``reference`` (the session's own LLM summary, for the Claude Code sessions that have one)
and ``recent`` (keep-most-recent truncation: the system prompt and the latest messages that
fit the budget). Budgets: ``1x`` / ``2x`` of each session's ``budget_1x`` (the size of the
reference summary, or 15% of the prefix where there is none).

    python bench/handover.py packets OUT [--budgets 1x,2x] [--systems precis,reference,recent]
                                         [--runs a,b]
    # a reader per folder group writes OUT/<system>-<budget>-<run>/<session>/answers.json
    # (give it only context.md and questions.json, and the instruction of handover.py)
    python bench/handover.py grade OUT [--json FILE] [--plot PNG]
    python bench/handover.py presence OUT      # no reader: keywords present, bare-token lines
    python bench/handover.py recent INPUT BUDGET OUTPUT   # the keep-most-recent compactor
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shlex
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DEFAULT_DATA, print_table, write_outputs

EVAL = DEFAULT_DATA.parent / "eval" / "handover"
PRECIS = ("{python} -m precis.cli compress {input} --budget {budget} --tokenizer o200k_base "
          "--output openai -o {output}")
RECENT = "{python} " + str(Path(__file__).resolve()) + " recent {input} {budget} {output}"
GROUPS = {"258c7280": "claude-code", "4d5611e5": "claude-code", "8463c716": "claude-code",
          "rust-port": "claude-code", "swe-marshmallow": "swe-agent", "tau-d17": "tau-bench",
          "tau-d27": "tau-bench", "sgd8": "chat-zh", "sgd133": "chat-zh", "sgd333": "chat-zh"}


def protocol(folder: Path) -> ModuleType:
    """The shared ``handover.py`` (skips with a message when the folder is absent)."""
    script = folder / "handover.py"
    if not script.is_file():
        print(f"skipped: {script} not found (pass --eval PATH to the handover folder)")
        sys.exit(0)
    spec = importlib.util.spec_from_file_location("handover_protocol", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cmd_packets(args: argparse.Namespace) -> None:
    runs = [r for r in args.runs.split(",") if r] or [""]
    for system in args.systems.split(","):
        for budget in args.budgets.split(","):
            if system == "reference":
                compactor = "reference"
            else:
                template = PRECIS if system == "precis" else RECENT
                compactor = template.replace("{python}", shlex.quote(sys.executable))
            for run in runs:
                out = Path(args.out) / "-".join(p for p in (system, budget, run) if p)
                cmd = [sys.executable, str(args.eval / "handover.py"), "packets", str(out),
                       "--budget", budget, "--compactor", compactor]
                print(f"== {out.name}", flush=True)
                subprocess.run(cmd, check=True)


def _runs(out: Path) -> dict[str, list[Path]]:
    """``system-budget`` -> its run folders that hold answers."""
    found: dict[str, list[Path]] = defaultdict(list)
    for d in sorted(p for p in out.iterdir() if p.is_dir()):
        if any((s / "answers.json").is_file() for s in d.iterdir() if s.is_dir()):
            parts = d.name.split("-")
            key = "-".join(parts[:2])
            found[key].append(d)
    return found


def grade(out: Path, proto: ModuleType) -> dict[str, Any]:
    """Per system-budget, per run and session: items answered, critical ones, by category."""
    report: dict[str, Any] = {}
    for key, dirs in _runs(out).items():
        runs = []
        for d in dirs:
            sessions: dict[str, Any] = {}
            for s in sorted(p for p in d.iterdir() if (p / "answers.json").is_file()):
                items = proto.load_items(s.name)
                answers = {a["id"]: a.get("answer", "") for a in json.loads(
                    (s / "answers.json").read_text(encoding="utf-8"))["answers"]}
                ok = {i["id"]: proto.passes(i, answers.get(i["id"], "")) for i in items}
                sessions[s.name] = {
                    "passed": sum(ok.values()), "items": len(ok),
                    "critical_passed": sum(ok[i["id"]] for i in items if i.get("critical")),
                    "critical": sum(1 for i in items if i.get("critical")),
                    "failed": [i for i, v in ok.items() if not v]}
            runs.append({"run": d.name, "sessions": sessions})
        report[key] = runs
    return report


def _share(passed: int, total: int) -> float:
    return round(100 * passed / total, 1) if total else 0.0


def cmd_grade(args: argparse.Namespace) -> None:
    proto = protocol(args.eval)
    report = grade(Path(args.out), proto)
    keys = sorted(report)
    sessions = sorted({s for runs in report.values() for r in runs for s in r["sessions"]},
                      key=lambda s: (GROUPS.get(s, "~"), s))
    headers = ["session", "kind", *(f"{k} ({len(report[k])} runs)" for k in keys)]
    rows: list[list[Any]] = []

    def cell(key: str, names: list[str], critical: bool = False) -> str:
        shares = []
        for run in report[key]:
            got = [run["sessions"][n] for n in names if n in run["sessions"]]
            if len(got) != len(names):
                continue
            p = sum(g["critical_passed" if critical else "passed"] for g in got)
            t = sum(g["critical" if critical else "items"] for g in got)
            shares.append(_share(p, t))
        return " / ".join(f"{x:.1f}" for x in shares) if shares else "-"

    for s in sessions:
        rows.append([s, GROUPS.get(s, "?"), *(cell(k, [s]) for k in keys)])
    for group in sorted(set(GROUPS.values())):
        names = [s for s in sessions if GROUPS.get(s) == group]
        if names:
            rows.append([f"[{group}]", "", *(cell(k, names) for k in keys)])
    rows.append(["all items", "", *(cell(k, sessions) for k in keys)])
    rows.append(["critical items", "", *(cell(k, sessions, critical=True) for k in keys)])
    print_table(headers, rows, title="share of checklist items a blind reader answered (%), "
                                     "each reader run shown")
    write_outputs(args, {"benchmark": "handover", "report": report,
                         "kinds": {s: GROUPS.get(s, "?") for s in sessions}})


def cmd_presence(args: argparse.Namespace) -> None:
    proto = protocol(args.eval)
    rows = []
    for d in sorted(p for p in Path(args.out).iterdir() if p.is_dir()):
        present = total = bare = 0
        for s in sorted(p for p in d.iterdir() if (p / "context.md").is_file()):
            text = (s / "context.md").read_text(encoding="utf-8")
            lowered = text.lower()
            items = proto.load_items(s.name)
            present += sum(all(any(a.lower() in lowered for a in g) for g in i["keywords"])
                           for i in items)
            total += len(items)
            bare += proto.bare_token_lines(text)[0]
        rows.append([d.name, _share(present, total), bare])
    print_table(["packets", "keywords present %", "bare-token lines"], rows,
                title="no reader: an upper bound of what a reader can answer")


def cmd_recent(args: argparse.Namespace) -> None:
    """Keep-most-recent truncation: the system prompt, then the latest messages (whole,
    tool exchanges kept together) that fit the budget by o200k_base."""
    import precis
    from precis.compact._pairs import repair, valid_starts

    conv = precis.load(args.input)
    counter = precis.get_counter("o200k_base")
    system = [m for m in conv.messages if m.role == "system"]
    rest = [m for m in conv.messages if m.role != "system"]
    valid = valid_starts(rest)
    start = len(rest)
    for s in range(len(rest) - 1, -1, -1):
        if counter.count_messages(system + rest[s:]) > int(args.budget):
            break
        if valid[s]:
            start = s
    kept, _ = repair(system + rest[start:])
    Path(args.output).write_text(json.dumps(precis.Conversation(kept).to_openai(),
                                            ensure_ascii=False), encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--eval", type=Path, default=EVAL,
                    help=f"the handover evaluation folder (default: {EVAL})")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("packets")
    p.add_argument("out")
    p.add_argument("--budgets", default="1x,2x")
    p.add_argument("--systems", default="precis,reference,recent")
    p.add_argument("--runs", default="a,b", help="one packet copy per reader run")
    g = sub.add_parser("grade")
    g.add_argument("out")
    g.add_argument("--json", type=Path, default=None)
    g.add_argument("--plot", type=Path, default=None)
    r = sub.add_parser("presence")
    r.add_argument("out")
    t = sub.add_parser("recent")
    t.add_argument("input")
    t.add_argument("budget")
    t.add_argument("output")
    args = ap.parse_args()
    {"packets": cmd_packets, "grade": cmd_grade, "presence": cmd_presence,
     "recent": cmd_recent}[args.cmd](args)


if __name__ == "__main__":
    main()
