"""A warm fork server for the CLI, so the shared scorer can drive hundreds of cases in CI time.

Scoring tests/unseen runs memgit five or six times per case; most of each run was Python starting,
importing memgit and its libraries, compiling the word lists and loading the lemma and jieba tables.
This server pays that once: it imports every memgit module and loads those tables, then waits on a
Unix socket. The client (`python3 -S -I tests/forkserver.py client SOCKET ARGS...`, what the scorer's
`--cmd` names) sends its argv, working directory, environment and its own stdin, stdout and stderr;
the server forks a child that takes them over and runs `memgit.cli.main()` exactly as
`python3 -m memgit` would, in a process of its own, on real files and real git. The child's exit
code goes back to the client, which exits with it.

Only state that imports and the pure, cached loaders build lives in the parent: no command ever runs
there, so no child sees another's workspace. tests/test_unseen.py compares the server's results with
plain `python3 -m memgit` runs on a few cases.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys

_LEN = struct.Struct("!I")
DIED = 70  # the child ended without reporting (killed): the client's exit code


def _warm() -> None:
    """Import every memgit module and load what the commands would load on first use."""
    import importlib
    import pkgutil

    import memgit
    from memgit import text, wordlists

    for mod in pkgutil.walk_packages(memgit.__path__, "memgit."):
        if not mod.name.endswith("__main__"):
            importlib.import_module(mod.name)
    for name, module in list(sys.modules.items()):
        if name == "memgit" or name.startswith("memgit."):
            for value in list(vars(module).values()):
                if isinstance(value, wordlists.LazyPattern):
                    value.pattern  # compiles it
    text.is_english_word("warm")  # lemminflect's tables
    text.never_a_noun("warm")
    text._segmenter().cut("预热")  # rjieba's dictionary


def _child(conn: socket.socket, listener: socket.socket, fds: list[int], request: dict) -> None:
    listener.close()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = ["memgit", *request["argv"]]
    code = 0
    try:
        from memgit.cli import main

        main()
    except SystemExit as e:
        if isinstance(e.code, int):
            code = e.code
        elif e.code is not None:
            print(e.code, file=sys.stderr)
            code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
    try:
        conn.sendall(_LEN.pack(code & 0xFF))
    finally:
        os._exit(code & 0xFF)


def serve(path: str) -> None:
    _warm()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    print("ready", flush=True)
    while True:
        while True:  # reap finished children
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
        conn, _ = listener.accept()
        msg, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
        while len(msg) < _LEN.size or len(msg) < _LEN.size + _LEN.unpack_from(msg)[0]:
            more = conn.recv(1 << 16)
            if not more:
                break
            msg += more
        try:
            (n,) = _LEN.unpack_from(msg)
            request = json.loads(msg[_LEN.size:_LEN.size + n])
        except (struct.error, ValueError):
            for fd in fds:
                os.close(fd)
            conn.close()
            continue
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(conn, listener, fds, request)
        for fd in fds:
            os.close(fd)
        conn.close()


def client(path: str, argv: list[str]) -> int:
    payload = json.dumps({"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ)}).encode()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(path)
        socket.send_fds(s, [_LEN.pack(len(payload)) + payload], [0, 1, 2])
        got = b""
        while len(got) < _LEN.size:
            more = s.recv(_LEN.size - len(got))
            if not more:
                print("memgit (fork server): the command's process died without an exit code", file=sys.stderr)
                return DIED
            got += more
        return _LEN.unpack(got)[0]


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        serve(sys.argv[2])
    elif sys.argv[1:2] == ["client"]:
        sys.exit(client(sys.argv[2], sys.argv[3:]))
    else:
        sys.exit("usage: forkserver.py serve SOCKET | client SOCKET ARGS...")
