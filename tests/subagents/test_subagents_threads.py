"""Thread safety: many threads add results at once; nothing is lost and the forms do not
depend on which thread came first."""

from __future__ import annotations

import random
import threading

from precis.subagents import Mark, ResultAggregator, Status, TaskResult

THREADS = 16
PER_THREAD = 8


def _result(thread: int, k: int) -> TaskResult:
    task_id = f"t{thread}-{k}"
    shared = Mark("连接池 pool_size 需要从 10 调到 50", "HIGH", "issue", f"agent-{thread}")
    own = Mark(f"task {task_id} checked src/worker_{thread}/part_{k}.py", "MEDIUM", "file")
    status: Status = "failed" if (thread + k) % 9 == 0 else "ok"
    return TaskResult(task_id, status, f"done {task_id}", (shared, own), elapsed=0.5,
                      error="boom" if status == "failed" else None)


def _all() -> list[TaskResult]:
    return [_result(t, k) for t in range(THREADS) for k in range(PER_THREAD)]


def _concurrent(results: list[TaskResult], seed: int, declared: list[str] | None = None,
                ) -> ResultAggregator:
    """Add ``results`` from THREADS threads released together, in a shuffled order."""
    agg = ResultAggregator(declared or ())
    order = results[:]
    random.Random(seed).shuffle(order)
    chunks = [order[i::THREADS] for i in range(THREADS)]
    barrier = threading.Barrier(THREADS)
    errors: list[BaseException] = []

    def worker(chunk: list[TaskResult]) -> None:
        try:
            barrier.wait()
            for r in chunk:
                agg.add(r)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(c,)) for c in chunks]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    return agg


def _sequential(results: list[TaskResult], declared: list[str] | None = None,
                ) -> ResultAggregator:
    agg = ResultAggregator(declared or ())
    for r in results:
        agg.add(r)
    return agg


def test_sixteen_threads_lose_nothing() -> None:
    results = _all()
    agg = _concurrent(results, seed=1)
    assert len(agg) == THREADS * PER_THREAD
    assert {r.task_id for r in agg.results()} == {r.task_id for r in results}


def test_forms_do_not_depend_on_thread_order() -> None:
    results = _all()
    reference = _sequential(results)
    for seed in range(5):
        agg = _concurrent(results, seed)
        assert agg.results() == reference.results()
        assert agg.normal() == reference.normal()
        assert agg.compact() == reference.compact()
        assert agg.high_only() == reference.high_only()


def test_declared_order_survives_concurrent_adds() -> None:
    results = _all()
    declared = [r.task_id for r in results][::-1]  # submission order, reversed on purpose
    agg = _concurrent(results, seed=7, declared=declared)
    assert [r.task_id for r in agg.results()] == declared


def test_the_shared_finding_is_merged_across_all_tasks() -> None:
    agg = _concurrent(_all(), seed=3)
    shared = [f for f in agg.findings() if f.text.startswith("连接池")]
    assert len(shared) == 1 and shared[0].count == THREADS * PER_THREAD
    assert len(shared[0].sources) == THREADS


def test_reading_while_writing_sees_whole_results() -> None:
    results = _all()
    agg = ResultAggregator()
    stop = threading.Event()
    seen: list[str] = []

    def reader() -> None:
        while not stop.is_set():
            first = agg.normal(300).splitlines()[0]
            seen.append(first)

    readers = [threading.Thread(target=reader) for _ in range(4)]
    for t in readers:
        t.start()
    def writer(chunk: list[TaskResult]) -> None:
        for r in chunk:
            agg.add(r)

    writers = [threading.Thread(target=writer, args=(results[i::THREADS],))
               for i in range(THREADS)]
    for t in writers:
        t.start()
    for t in writers:
        t.join()
    stop.set()
    for t in readers:
        t.join()
    assert len(agg) == len(results)
    # every header a reader saw counts whole tasks: the counts add up to the total
    for header in seen:
        if "no tasks" in header:
            continue
        total = int(header.split(": ")[1].split(" tasks")[0])
        counts = header.split("(")[1].rstrip(")").split(", ")
        assert sum(int(c.split()[0]) for c in counts) == total
