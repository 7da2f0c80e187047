"""The dream on two processors: a forked child shares what this process built, copy-on-write.

`run_split` runs a list of tasks in both processes: the model's window terms, in chunks of
observations (`memgit.dream.model.Context`), and then the offline rules.

Each task is a pure function of what both processes share (the collected window, the model), so which
process runs it cannot change what it finds. Both processes claim the next task from one queue (a pipe
holding the tasks' numbers, one byte each: a one-byte read from a pipe is atomic), in an order the
caller gives; the child sends back what its tasks found, pickled, and the parent puts every value back
at its task's index. The result is the same list a single process makes, so what a person reviews
never depends on the machine.

Only where forking is safe and worth it: Linux (macOS system libraries are unsafe after fork), no
other thread running, more than one processor, and a window large enough to pay for the fork. If
the child fails in any way (an exception, a signal, garbage on the pipe), the parent runs the tasks
the child did not report itself: a failure costs time, never a candidate.
"""
from __future__ import annotations

import gc
import os
import pickle
import signal
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


def run_split(tasks: Sequence[Callable[[], object]], first: Callable[[], object] | None = None,
              order: Sequence[int] | None = None) -> tuple[list, object]:
    """`[t() for t in tasks]`, computed in this process and a forked one, and `first()`'s value.

    The child starts on the queue at once; this process runs `first()` (its own work: what the child
    need not wait for) and then claims tasks too. Tasks are claimed in `order` (default: as given)."""
    n = len(tasks)
    if n > 255:
        raise ValueError("run_split queues at most 255 tasks")
    order = list(range(n)) if order is None else list(order)
    if sorted(order) != list(range(n)):
        raise ValueError("order must name every task once")
    queue_r, queue_w = os.pipe()
    os.write(queue_w, bytes(order))
    os.close(queue_w)
    out_r, out_w = os.pipe()

    def claim() -> list[tuple[int, object]]:  # the next task from the queue, until it is empty
        done = []
        while (b := os.read(queue_r, 1)):
            done.append((b[0], tasks[b[0]]()))
        return done

    pid = _fork()
    if pid == 0:
        _child(claim, out_r, out_w)
    results: dict[int, object] = {}
    mine = None
    reaped = pid <= 0
    try:
        os.close(out_w)
        gc.unfreeze()
        if first is not None:
            mine = first()
        if pid > 0:
            results.update(claim())
            reaped = True
            ok, theirs = _reply(pid, out_r)
            if ok:
                try:
                    results.update((int(i), found) for i, found in theirs)
                except (TypeError, ValueError):  # a reply of the wrong shape: redo its tasks below
                    pass
    finally:
        os.close(queue_r)
        os.close(out_r)
        if not reaped:  # this process failed first: the child's work is of no use, and no zombie is left
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    # whatever the child did not report (or no child at all), this process computes itself
    return [results[i] if i in results else tasks[i]() for i in range(n)], mine
