"""`memgit schedule`: crontab lines that are idempotent, removable, and leave every other line alone.

A fake `crontab` (a shell script storing its stdin in a file and printing it
for -l) stands in for the system binary, first on PATH.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from memgit.errors import ConfigError, MemgitError
from memgit.lifecycle import schedule
from memgit.workspace import Workspace

FAKE_CRONTAB = """\
#!/bin/sh
case "$1" in
  -l) if [ -f "$FAKE_CRONTAB" ]; then cat "$FAKE_CRONTAB"; else echo "no crontab for $(id -un)" >&2; exit 1; fi ;;
  -) cat > "$FAKE_CRONTAB" ;;
  *) echo "usage: crontab [-l | -]" >&2; exit 2 ;;
esac
"""

FOREIGN = (b"MAILTO=ada@example.com\n"
           b"# nightly backup, caf\xe9 (latin-1 byte kept as is)\n"
           b"15 2 * * * restic backup ~/vault  >/dev/null 2>&1   \n"
           b"\n"
           b"*/5 * * * * date +\\%s >> /tmp/ticks\n")


@pytest.fixture
def crontab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fake crontab's store (absent until something is installed)."""
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir()
    exe = bin_dir / "crontab"
    exe.write_text(FAKE_CRONTAB)
    exe.chmod(0o755)
    store = tmp_path / "crontab.store"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_CRONTAB", str(store))
    return store


def ours(text: str, ws: Workspace) -> list[str]:
    return [line for line in text.split("\n") if schedule.marker(ws) in line]


def job_line(text: str, ws: Workspace, job: str) -> str:
    hits = [line for line in ours(text, ws) if line.endswith(f"{schedule.marker(ws)} {job}")]
    assert len(hits) == 1, text
    return hits[0]


# -- install ----------------------------------------------------------------------------
def test_install_writes_one_line_per_job_with_absolute_paths_and_a_log(workspace, crontab, run_cli):
    code, out, err = run_cli(workspace, "schedule", "install")
    assert code == 0, err
    text = crontab.read_text()
    root = str(workspace.root)
    log = workspace.repo.git_dir.resolve() / "memgit" / "cron.log"
    dream = job_line(text, workspace, "dream")
    assert dream.startswith("0 3 * * * ")
    assert f"{sys.executable} -m memgit -C {root} dream;" in dream
    assert dream.endswith(f">> {log} 2>&1 {schedule.marker(workspace)} dream")
    assert job_line(text, workspace, "janitor").startswith("10 3 * * * ")
    assert job_line(text, workspace, "reflect").startswith("20 3 * * * ")
    assert job_line(text, workspace, "expire").startswith("30 3 1 * * ")          # expire = "30d": monthly
    assert job_line(text, workspace, "associate").startswith("40 3 * * 0 ")       # the weekly diary
    assert "-C " + root + " dream --associate;" in job_line(text, workspace, "associate")
    assert ours(text, workspace)[0].startswith(f"{schedule.marker(workspace)} {root} (")
    assert text.endswith("\n") and len(ours(text, workspace)) == 6
    assert log.parent.is_dir()
    assert f"Output goes to {log}" in out


def test_install_is_idempotent_and_replaces_only_this_workspaces_lines_in_place(workspace, crontab, run_cli):
    crontab.write_bytes(FOREIGN)
    assert run_cli(workspace, "schedule", "install")[0] == 0
    first = crontab.read_bytes()
    assert first.startswith(FOREIGN)
    code, out, _ = run_cli(workspace, "schedule", "install")
    assert code == 0 and out.startswith("Already installed:")
    assert crontab.read_bytes() == first
    # a foreign line added after ours stays after ours; a re-install with a new cadence edits in place
    crontab.write_bytes(first + b"0 12 * * * echo noon\n")
    code, out, _ = run_cli(workspace, "schedule", "install", "--every", "3d", "--at", "04:15")
    assert code == 0 and out.startswith("Replaced")
    new = crontab.read_bytes()
    assert new.startswith(FOREIGN) and new.endswith(b"0 12 * * * echo noon\n")
    text = new.decode("utf-8", "surrogateescape")
    assert len(ours(text, workspace)) == 6
    assert job_line(text, workspace, "dream").startswith("15 4 */3 * * ")
    assert job_line(text, workspace, "janitor").startswith("25 4 * * * ")


def test_remove_takes_out_only_this_workspaces_lines(workspace, crontab, run_cli, tmp_path):
    from memgit.adopt import init

    other_root = tmp_path / "other"
    other_root.mkdir()
    (other_root / "MEMORY.md").write_text("# MEMORY\n")
    init(other_root)
    other = Workspace(other_root)
    crontab.write_bytes(FOREIGN)
    assert run_cli(workspace, "schedule", "install")[0] == 0
    assert run_cli(other, "schedule", "install", "--at", "05:00")[0] == 0
    both = crontab.read_bytes()
    other_lines = ours(both.decode("utf-8", "surrogateescape"), other)
    assert len(other_lines) == 6
    code, out, _ = run_cli(workspace, "schedule", "remove")
    assert code == 0 and out.startswith("Removed 6 line(s)")
    assert crontab.read_bytes() == FOREIGN + ("\n".join(other_lines) + "\n").encode()
    code, out, _ = run_cli(workspace, "schedule", "remove")
    assert code == 0 and out.startswith("No memgit schedule")
    assert run_cli(other, "schedule", "remove")[0] == 0
    assert crontab.read_bytes() == FOREIGN


def test_show_lists_this_workspaces_lines(workspace, crontab, run_cli):
    code, out, _ = run_cli(workspace, "schedule", "show")
    assert code == 0 and out.startswith("No memgit schedule for ")
    run_cli(workspace, "schedule", "install")
    code, out, _ = run_cli(workspace, "schedule", "show")
    assert code == 0 and out.splitlines() == ours(crontab.read_text(), workspace)


def test_every_hours_and_long_cadences_map_onto_cron_fields(workspace):
    def cron(every: str, at: str = "03:00") -> str:
        return schedule.plan(workspace, every, at)[0].cron()

    assert cron("1d") == "0 3 * * *"
    assert cron("3d", "23:59") == "59 23 */3 * *"
    assert cron("7d") == "0 3 * * 0"
    assert cron("31d") == "0 3 1 * *"
    assert cron("6h") == "0 3,9,15,21 * * *"
    assert cron("5h", "00:30") == "30 0,5,10,15,20 * * *"
    assert schedule.plan(workspace, "6h")[0].calendar() == "*-*-* 03,09,15,21:00:00"
    followers = schedule.plan(workspace, None, "23:55")
    assert [j.at for j in followers] == ["23:55", "00:05", "00:15", "00:25", "00:35"]


@pytest.mark.parametrize("args, message", [
    (["--every", "0d"], "--every '0d' is out of range"),
    (["--every", "32d"], "--every '32d' is out of range"),
    (["--every", "24h"], "--every '24h' is out of range"),
    (["--every", "3w"], "--every '3w' is not a cadence"),
    (["--every", "often"], "--every 'often' is not a cadence"),
    (["--at", "24:00"], "--at '24:00' is not a time of day"),
    (["--at", "3:60"], "--at '3:60' is not a time of day"),
    (["--at", "3pm"], "--at '3pm' is not a time of day"),
])
def test_bad_every_or_at_is_a_clean_error_and_changes_nothing(workspace, crontab, run_cli, args, message):
    crontab.write_bytes(FOREIGN)
    code, _, err = run_cli(workspace, "schedule", "install", *args)
    assert code == 1
    assert err.startswith(f"Error: {message}") and "Traceback" not in err
    assert crontab.read_bytes() == FOREIGN


def test_config_cadences_associate_and_off(workspace):
    cfg = workspace.root / "memgit.toml"
    base = cfg.read_text()
    cfg.write_text(base + '\n[schedule]\njanitor = "off"\nreflect = "2d"\n')
    ws = Workspace(workspace.root)
    jobs = {j.name: j for j in schedule.plan(ws)}
    assert "janitor" not in jobs and str(jobs["reflect"].every) == "2d" and "associate" in jobs
    cfg.write_text(base.replace("[dream]\n", "[dream]\nassociate = true\n"))
    assert "associate" not in {j.name for j in schedule.plan(Workspace(workspace.root))}
    cfg.write_text(base + '\n[schedule]\nexpire = "monthly"\n')
    with pytest.raises(ConfigError, match=r"\[schedule\] expire in memgit.toml 'monthly' is not a cadence"):
        schedule.plan(Workspace(workspace.root))


def test_percent_in_the_workspace_path_is_escaped_for_cron(tmp_path, crontab):
    from memgit.adopt import init

    root = tmp_path / "ws 100%"
    root.mkdir()
    (root / "MEMORY.md").write_text("# MEMORY\n")
    init(root)
    ws = Workspace(root)
    schedule.install(ws, schedule.plan(ws))
    dream = job_line(crontab.read_text(), ws, "dream")
    assert "'" + str(root).replace("%", "\\%") + "'" in dream
    assert "%" not in dream.replace("\\%", "")


def test_without_crontab_on_path_the_error_points_to_systemd(workspace, tmp_path, run_cli, monkeypatch):
    empty = tmp_path / "emptybin"
    empty.mkdir()
    code, _, err = run_cli(workspace, "schedule", "install", env={"PATH": str(empty)})
    assert code == 1
    assert err.startswith("Error: the `crontab` command is not on PATH; install cron")
    assert "--systemd" in err and "Traceback" not in err
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(MemgitError, match="not on PATH"):
        schedule.remove(workspace)
    code, out, _ = run_cli(workspace, "schedule", "install", "--systemd", env={"PATH": str(empty)})
    assert code == 0 and "[Timer]" in out


def test_systemd_prints_units_and_never_touches_crontab(workspace, crontab, run_cli):
    code, out, err = run_cli(workspace, "schedule", "install", "--systemd", "--every", "3d", "--at", "04:00")
    assert code == 0, err
    assert not crontab.exists()
    wid = schedule.workspace_id(workspace)
    log = workspace.repo.git_dir.resolve() / "memgit" / "cron.log"
    assert f"# ~/.config/systemd/user/memgit-{wid}-dream.service" in out
    assert f"ExecStart={sys.executable} -m memgit -C {workspace.root} dream\n" in out
    assert f"StandardOutput=append:{log}" in out
    assert "OnCalendar=*-*-01/3 04:00:00" in out
    assert "OnCalendar=*-*-01 04:30:00" in out                      # expire, monthly
    assert "OnCalendar=Sun *-*-* 04:40:00" in out                   # the weekly diary
    assert out.rstrip().endswith(f"memgit-{wid}-associate.timer")
    assert "systemctl --user enable --now" in out


def test_the_installed_line_runs_and_appends_to_its_log(workspace, crontab, run_cli):
    assert run_cli(workspace, "schedule", "install")[0] == 0
    line = job_line(crontab.read_text(), workspace, "dream")
    command = re.sub(r"^(\S+\s+){5}", "", line).replace("\\%", "%")    # what cron hands to sh
    log = workspace.repo.git_dir.resolve() / "memgit" / "cron.log"
    for _ in range(2):
        p = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True, timeout=120, check=False,
                           env={"HOME": os.environ["HOME"], "GIT_CONFIG_NOSYSTEM": "1",
                                "GIT_AUTHOR_NAME": "cron", "GIT_AUTHOR_EMAIL": "cron@example.com",
                                "GIT_COMMITTER_NAME": "cron", "GIT_COMMITTER_EMAIL": "cron@example.com"})
        assert p.returncode == 0 and p.stdout == "" and p.stderr == ""
    text = log.read_text()
    assert text.count("Reviewed ") == 2            # two dream summaries, the first not overwritten
    assert "Traceback" not in text
