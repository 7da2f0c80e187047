"""The offline rules on two processors: the same candidates, in the same order, whatever fails."""
from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from datetime import date
from pathlib import Path

import pytest

from memgit.adopt import init
from memgit.dream import model, parallel, signals
from memgit.dream.collect import collect
from memgit.dream.model import Context
from memgit.workspace import Workspace

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the rules fork on Linux only")

SAMPLE = Path(__file__).resolve().parent.parent / "sample_memory"


def _count_forks(monkeypatch) -> list[int]:
    """The pids of the children os.fork() makes from now on (in this process)."""
    forked: list[int] = []
    real_fork = os.fork

    def fork():
        pid = real_fork()
        if pid:
            forked.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", fork)
    return forked


def _task(i: int, x: int = 1, pause: float = 0.0):
    def task():
        time.sleep(pause)
        return [(i, x * i, os.getpid())]
    return task


def test_each_task_runs_once_and_values_come_back_at_their_index() -> None:
    tasks = [_task(i, 3, 0.02) for i in range(13)]
    out, mine = parallel.run_split(tasks, first=lambda: os.getpid(), order=range(12, -1, -1))
    assert [[(i, x) for i, x, _ in found] for found in out] == [[(i, 3 * i)] for i in range(13)]
    assert mine == os.getpid()  # `first` ran in this process
    pids = {pid for found in out for _, _, pid in found}
    assert os.getpid() in pids and len(pids) == 2  # both processes took a share of the queue
    with pytest.raises(ValueError):
        parallel.run_split(tasks, order=range(12))  # an order must name every task


def test_a_child_that_dies_costs_time_not_candidates() -> None:
    parent = os.getpid()

    def dies_in_child():
        if os.getpid() != parent:
            os._exit(9)  # killed mid-run, before it could report anything
        return ["parent's"]

    out, _ = parallel.run_split([dies_in_child] + [_task(i) for i in range(1, 6)])
    assert out[0] == ["parent's"]
    assert [[(i, x) for i, x, _ in found] for found in out[1:]] == [[(i, i)] for i in range(1, 6)]


def test_a_task_that_raises_in_the_child_is_rerun_and_raises_here() -> None:
    parent = os.getpid()

    def flaky():
        if os.getpid() != parent:
            raise RuntimeError("child only")
        return ["ok"]

    out, _ = parallel.run_split([flaky, _task(1, 2), _task(2, 2)])
    assert out[0] == ["ok"] and out[1][0][:2] == (1, 2) and out[2][0][:2] == (2, 4)

    def broken():
        raise ValueError("a bug")

    with pytest.raises(ValueError):  # a bug is not swallowed: the parent reruns it and sees it
        parallel.run_split([broken, _task(1)])


def test_a_failure_here_leaves_no_child_behind() -> None:
    def slow():
        time.sleep(30)
        return []

    def fails():
        raise KeyError("first")

    before = _children()
    with pytest.raises(KeyError):
        parallel.run_split([slow, slow], first=fails)
    # the child was killed and reaped, not left to run or linger as a zombie (children of this process
    # from before, a test runner's own, are not its)
    assert _children() <= before


def _children() -> set[int]:
    """This process's child processes, running or not yet reaped (Linux /proc)."""
    return {int(p) for f in Path("/proc/self/task").glob("*/children") for p in f.read_text().split()}


def test_no_fork_with_another_thread_running_or_a_small_window() -> None:
    assert not parallel.worth_forking(10)
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        assert not parallel.worth_forking(10**6)
    finally:
        stop.set()
        t.join()


def test_the_dream_finds_the_same_candidates_on_two_processors(tmp_path, monkeypatch) -> None:
    shutil.copytree(SAMPLE, tmp_path / "ws")
    init(tmp_path / "ws")
    ws = Workspace(tmp_path / "ws")
    col = collect(ws, date(2026, 11, 30), 30)
    assert col.observations
    one = signals.find_candidates(Context(col, "MEMORY.md", "USER.md"))
    monkeypatch.setattr(parallel, "MIN_OBSERVATIONS", 0)
    monkeypatch.setattr(parallel, "_processors", lambda: 2)
    forked = _count_forks(monkeypatch)
    two = signals.find_candidates(Context(col, "MEMORY.md", "USER.md"))
    assert forked, "the rules did not run on two processors"
    assert one, "the sample's dream found nothing to compare"
    assert [(c.kind, c.op, c.score, c.features) for c in two] == [(c.kind, c.op, c.score, c.features) for c in one]


def test_the_window_is_cut_into_chunks_that_cover_it_in_order(tmp_path) -> None:
    shutil.copytree(SAMPLE, tmp_path / "ws")
    init(tmp_path / "ws")
    obs = collect(Workspace(tmp_path / "ws"), date(2026, 11, 30), 30).observations
    for n in (0, 1, 2, len(obs)):
        parts = model._chunks(obs[:n])
        assert [o for p in parts for o in obs[:n][p]] == obs[:n]
        assert len(parts) <= model._CHUNKS
    assert len(model._chunks(obs)) == min(model._CHUNKS, len(obs))


def test_the_model_built_on_two_processors_is_the_one_built_on_one(tmp_path, monkeypatch) -> None:
    shutil.copytree(SAMPLE, tmp_path / "ws")
    init(tmp_path / "ws")
    ws = Workspace(tmp_path / "ws")
    one = Context(collect(ws, date(2026, 11, 30), 30), "MEMORY.md", "USER.md")
    monkeypatch.setattr(parallel, "MIN_OBSERVATIONS", 0)
    monkeypatch.setattr(parallel, "_processors", lambda: 2)
    forked = _count_forks(monkeypatch)
    two = Context(collect(ws, date(2026, 11, 30), 30), "MEMORY.md", "USER.md")
    assert forked, "the window's terms were not found on a second processor"
    assert [o.terms for o in two.obs] == [o.terms for o in one.obs]
    assert two.df == one.df and two._obs_by_term == one._obs_by_term
