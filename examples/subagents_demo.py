"""Fan out three simulated sub-agents over one context snapshot and aggregate their results.

No network and no LLM: each "sub-agent" is a thread that reads its prompt fragment and
reports marked findings built from the anchors it was given. One of them hangs, so the
parent records a timeout instead of waiting forever, and the aggregator reports it.

    python examples/subagents_demo.py
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, wait
from pathlib import Path

import precis
from precis.subagents import (
    AnchorItem,
    ContextSnapshot,
    Mark,
    ResultAggregator,
    TaskResult,
    mark,
)

HERE = Path(__file__).resolve().parent
TIMEOUT_S = 0.5
PROMPT_CHARS = 700

TASKS = {
    "explore-1": "列出导出接口 /api/v2/orders/export 涉及的文件和 created_at 查询条件",
    "review-1": "Review the export query in app/routes/export.py for index use and memory",
    "docs-1": "Update docs/api/export.md for the 92-day limit and the status filter",
}


Outcome = tuple[str, tuple[Mark, ...], float]  # text, findings, seconds taken


def sub_agent(task_id: str, prompt: str, items: tuple[AnchorItem, ...],
              release: threading.Event) -> Outcome:
    """A stand-in for a model call: findings made from the anchors the prompt carried."""
    start = time.perf_counter()
    time.sleep(0.05)
    if task_id == "docs-1":  # this one hangs until the parent gives up on it
        release.wait()
        return "gave up", (), time.perf_counter() - start
    files = [mark(it.text, "HIGH" if it.level == "HIGH" else "MEDIUM", "file", task_id)
             for it in items if it.kind == "I" and "/" in it.text]
    rules = [mark(f"Respected: {it.text}", "MEDIUM", "constraint", task_id)
             for it in items if it.kind == "C"]
    # both sub-agents find the same problem: the aggregator reports it once
    shared = mark("date(created_at) 套了函数，idx_orders_created_at 索引用不上", "HIGH",
                  "issue", task_id)
    summary = f"read a {len(prompt)}-char prompt with {len(items)} anchors"
    return summary, (shared, *files, *rules), time.perf_counter() - start


def main() -> None:
    parent = precis.load(HERE / "coding_session.json")
    snapshot = ContextSnapshot.from_conversation(parent, session_id="shop-api")
    print(f"snapshot {snapshot.fingerprint}: {len(snapshot)} anchors "
          + ", ".join(f"{k}={len(v)}" for k, v in snapshot.anchors.items()))

    aggregator = ResultAggregator(TASKS)  # declared order = report order
    release = threading.Event()
    started: dict[str, float] = {}
    futures: dict[str, Future[Outcome]] = {}
    with ThreadPoolExecutor(max_workers=len(TASKS)) as pool:
        for task_id, task in TASKS.items():
            rendered = snapshot.render_for(task, PROMPT_CHARS, task_id=task_id)
            print(f"\n--- prompt for {task_id} ({len(rendered.text)}/{PROMPT_CHARS} chars)")
            print(rendered.text)
            started[task_id] = time.perf_counter()
            futures[task_id] = pool.submit(sub_agent, task_id, rendered.text,
                                           rendered.items, release)
        wait(futures.values(), timeout=TIMEOUT_S)
        for task_id, future in futures.items():
            waited = time.perf_counter() - started[task_id]
            if not future.done():
                aggregator.add(TaskResult(task_id, "timeout", elapsed=waited,
                                          error=f"no answer within {TIMEOUT_S} s"))
            elif future.exception() is not None:
                aggregator.add(TaskResult(task_id, "failed", elapsed=waited,
                                          error=repr(future.exception())))
            else:
                text, marks, took = future.result()
                aggregator.add(TaskResult(task_id, "ok", text, marks, took))
        release.set()  # let the hung worker finish so the pool can shut down

    normal, compact = aggregator.normal(), aggregator.compact()
    print(f"\n=== normal form ({len(normal)}/2000 chars)\n{normal}")
    print(f"\n=== compact form ({len(compact)}/500 chars)\n{compact}")
    print("\n=== HIGH only")
    for item in aggregator.high_only():
        print(f"- [{item.category}] {item.text} ({', '.join(item.tasks)})")


if __name__ == "__main__":
    main()
