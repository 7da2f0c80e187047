"""The offline rules on two processors: the same candidates, in the same order, whatever fails."""
from __future__ import annotations

import os
import shutil
import sys
import threading
from datetime import date
from pathlib import Path

import pytest

from memgit.adopt import init
from memgit.dream import parallel, signals
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


def _rule(i: int):
    def rule(ctx):
        return [(i, ctx["x"] * i, os.getpid())]
    return rule


def test_each_rule_runs_once_and_results_come_back_in_registry_order() -> None:
    rules = [_rule(i) for i in range(13)]
    out = parallel.run_split(rules, {"x": 3})
    assert [[(i, x) for i, x, _ in found] for found in out] == [[(i, 3 * i)] for i in range(13)]
    pids = {pid for found in out for _, _, pid in found}
    assert os.getpid() in pids  # the parent took its share of the queue


def test_a_child_that_dies_costs_time_not_candidates() -> None:
    parent = os.getpid()

    def dies_in_child(ctx):
        if os.getpid() != parent:
            os._exit(9)  # killed mid-run, before it could report anything
        return ["parent's"]

    rules = [dies_in_child] + [_rule(i) for i in range(1, 6)]
    out = parallel.run_split(rules, {"x": 1})
    assert out[0] == ["parent's"]
    assert [[(i, x) for i, x, _ in found] for found in out[1:]] == [[(i, i)] for i in range(1, 6)]


def test_a_rule_that_raises_in_the_child_is_rerun_and_raises_here() -> None:
    parent = os.getpid()

    def flaky(ctx):
        if os.getpid() != parent:
            raise RuntimeError("child only")
        return ["ok"]

    out = parallel.run_split([flaky, _rule(1), _rule(2)], {"x": 2})
    assert out[0] == ["ok"] and out[1][0][:2] == (1, 2) and out[2][0][:2] == (2, 4)

    def broken(ctx):
        raise ValueError("a bug")

    with pytest.raises(ValueError):  # a bug is not swallowed: the parent reruns it and sees it
        parallel.run_split([broken, _rule(1)], {"x": 1})


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


def test_a_forked_value_comes_back_or_is_computed_here() -> None:
    parent = os.getpid()
    assert parallel.Forked(lambda: {"pid": os.getpid(), "x": [1, 2]}).result()["x"] == [1, 2]
    assert parallel.Forked(lambda: os.getpid()).result() != parent  # it was computed in the child

    def dies_in_child():
        if os.getpid() != parent:
            os._exit(3)
        return "here"

    assert parallel.Forked(dies_in_child).result() == "here"


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
