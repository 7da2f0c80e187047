"""The dream on two processors: a forked child shares what this process built, copy-on-write.

`Forked` computes one value in a child while this process goes on (the model's window terms);
`run_split` runs the offline rules in both processes.

Each rule is a pure function of the shared model (`memgit.dream.model.Context`), so which process
runs it cannot change what it finds. Both processes claim the next rule from one queue (a pipe
holding the rules' numbers, one byte each: a one-byte read from a pipe is atomic), costliest-first
as the registry cannot know; the child sends back what its rules found, pickled, and the parent
puts every rule's candidates back in registry order. The result is the same list a single process
makes, so what a person reviews never depends on the machine.

Only where forking is safe and worth it: Linux (macOS system libraries are unsafe after fork), no
other thread running, more than one processor, and a window large enough to pay for the fork. If
the child fails in any way (an exception, a signal, garbage on the pipe), the parent runs the rules
the child did not report itself: a failure costs time, never a candidate.
"""
from __future__ import annotations

import gc
import os
import pickle
import sys
import threading
from typing import Callable, NoReturn, Sequence

# a window with fewer observations dreams in well under a second on one processor: forking
# (copying the page tables of a process of ~100 MB) would cost more than it saves
MIN_OBSERVATIONS = 1500


def _processors() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def worth_forking(observations: int) -> bool:
    return (sys.platform.startswith("linux") and hasattr(os, "fork") and observations >= MIN_OBSERVATIONS
            and threading.active_count() == 1 and _processors() > 1)


def _read_all(fd: int) -> bytes:
    chunks = []
    while True:
        b = os.read(fd, 1 << 20)
        if not b:
            return b"".join(chunks)
        chunks.append(b)


def _fork() -> int:
    """os.fork(), -1 if it fails. Objects that live through the fork are frozen first: the collector never
    traces them again, so no process writes to their pages just to scan them and far fewer are copied."""
    gc.freeze()
    try:
        return os.fork()
    except OSError:
        return -1


def _child(work: Callable[[], object], unused: int, out: int) -> NoReturn:
    """In the child: `work()`, pickled to `out`, then exit at once — never back into the caller's frames,
    whose `finally` blocks (a lock's release) belong to the parent. Whatever fails, the exit code says so
    and the parent does the work itself."""
    code = 1
    try:
        os.close(unused)
        data = pickle.dumps(work(), protocol=pickle.HIGHEST_PROTOCOL)
        with os.fdopen(out, "wb") as f:
            f.write(data)
        code = 0
    except BaseException:  # noqa: BLE001 - whatever happens, the parent redoes the work
        pass
    finally:
        os._exit(code)


def _reply(pid: int, fd: int) -> tuple[bool, object]:
    """The child's value, once it exited cleanly: (True, value); (False, None) for any failure."""
    data = _read_all(fd)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        return False, None
    try:
        return True, pickle.loads(data)
    except Exception:  # noqa: BLE001 - a garbled reply
        return False, None


class Forked:
    """`fn()` computed in a forked child while this process goes on; `result()` is its value, or `fn()`
    computed here when the child failed in any way (the value must pickle)."""

    def __init__(self, fn: Callable[[], object]) -> None:
        self.fn = fn
        self._r, w = os.pipe()
        self.pid = _fork()
        if self.pid == 0:
            _child(fn, self._r, w)
        gc.unfreeze()
        os.close(w)

    def result(self) -> object:
        try:
            ok, value = _reply(self.pid, self._r) if self.pid > 0 else (False, None)
        finally:
            os.close(self._r)
        return value if ok else self.fn()


def run_split(rules: Sequence[Callable], ctx) -> list[list]:
    """Each rule's candidates, `rules[i](ctx)` at index i, computed in this process and a forked one."""
    n = len(rules)
    if n > 255:
        raise ValueError("run_split queues at most 255 rules")
    queue_r, queue_w = os.pipe()
    os.write(queue_w, bytes(range(n - 1, -1, -1)))  # the registry's last rules first: its costliest
    os.close(queue_w)
    out_r, out_w = os.pipe()

    def claim() -> list[tuple[int, list]]:  # the next rule from the queue, until it is empty
        done = []
        while (b := os.read(queue_r, 1)):
            done.append((b[0], rules[b[0]](ctx)))
        return done

    pid = _fork()
    if pid == 0:
        _child(claim, out_r, out_w)
    results: dict[int, list] = {}
    try:
        os.close(out_w)
        if pid > 0:
            results.update(claim())
            ok, theirs = _reply(pid, out_r)
            if ok:
                try:
                    results.update((int(i), found) for i, found in theirs)
                except (TypeError, ValueError):  # a reply of the wrong shape: redo its rules below
                    pass
    finally:
        os.close(queue_r)
        os.close(out_r)
        gc.unfreeze()
    # whatever the child did not report (or no child at all), this process finds itself
    return [results[i] if i in results else rules[i](ctx) for i in range(n)]
