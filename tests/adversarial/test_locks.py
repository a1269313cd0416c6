"""Issue items 1 and 3: a killed run never leaves its folder locked, and every writer (the
evaluation included) takes the one lock.

A dead holder's lock is taken over with a warning naming it; workers forked by a run neither
keep its lock nor outlive it; ``kill -9`` at a random moment of a command leaves a folder the
next command opens without manual cleanup.
"""

from __future__ import annotations

import json
import logging
import os
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.demo import bundled_corpus_dir
from medrealmm.store import RunStore
from medrealmm.store.lock import StoreLockedError, lock_path, process_start

SRC = str(Path(__file__).resolve().parents[2] / "src")
ENV = {**os.environ, "PYTHONPATH": SRC, "MEDREALMM_PROGRESS": "0"}
CLI = [sys.executable, "-c", "import sys; from medrealmm.cli import main; sys.exit(main())"]

# Holds the lock file with flock, as an orphaned worker of a killed run would, and writes
# what a dead (or reused) holder would have left in it.
ORPHAN = """
import fcntl, json, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
os.write(fd, sys.argv[2].encode())
print('held', flush=True)
time.sleep(60)
"""


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _orphan_holding(store: Path, info: dict) -> subprocess.Popen:
    store.mkdir(parents=True, exist_ok=True)
    path = lock_path(store / "store.sqlite")
    orphan = subprocess.Popen(
        [sys.executable, "-c", ORPHAN, str(path), json.dumps(info)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert orphan.stdout is not None and orphan.stdout.readline().strip() == "held"
    return orphan


@pytest.mark.parametrize("reused", [False, True], ids=["pid-dead", "pid-reused"])
def test_a_lock_whose_holder_is_gone_is_taken_over_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, reused: bool
) -> None:
    if reused and process_start(os.getpid()) is None:
        pytest.skip("no /proc start times on this system")
    # reused: the recorded pid is alive (this process) but started at another time
    pid = os.getpid() if reused else _dead_pid()
    info = {
        "pid": pid,
        "host": socket.gethostname(),
        "since": "2026-01-01T00:00:00+00:00",
        "started": "1" if reused else "12345",
    }
    orphan = _orphan_holding(tmp_path, info)
    try:
        with caplog.at_level(logging.WARNING, "medrealmm.store"), RunStore(tmp_path, writer=True):
            text = caplog.text
            assert f"pid {pid} on {socket.gethostname()} since 2026-01-01" in text
            assert "process start " + info["started"] in text and "taking it over" in text
            recorded = json.loads(lock_path(tmp_path / "store.sqlite").read_text())
            assert recorded["pid"] == os.getpid()
            # while this process holds it, nobody else gets it (the lock is real again)
            probe = subprocess.run(
                [sys.executable, "-c", _PROBE, str(tmp_path)], env=ENV, capture_output=True
            )
            assert probe.returncode == 3, probe.stderr
    finally:
        orphan.kill()
        orphan.wait()


_PROBE = """
import sys
from medrealmm.store import RunStore
from medrealmm.store.lock import StoreLockedError
try:
    RunStore(sys.argv[1], writer=True)
except StoreLockedError:
    sys.exit(3)
"""


def test_a_live_holder_is_never_taken_over(tmp_path: Path) -> None:
    info = {"pid": os.getpid(), "host": socket.gethostname(), "since": "x"}
    info["started"] = process_start(os.getpid())
    orphan = _orphan_holding(tmp_path, info)  # the record names a live process as it is
    try:
        with pytest.raises(StoreLockedError, match=rf"pid {os.getpid()} on "):
            RunStore(tmp_path, writer=True)
        other_host = {**info, "pid": _dead_pid(), "host": "elsewhere.example"}
        lock_path(tmp_path / "store.sqlite").write_text(json.dumps(other_host))
        with pytest.raises(StoreLockedError, match=r"on elsewhere\.example"):
            RunStore(tmp_path, writer=True)  # a holder on another host is not ours to judge
    finally:
        orphan.kill()
        orphan.wait()


FORK_AND_DIE = """
import os, sys, time
from medrealmm.store import RunStore
store = RunStore(sys.argv[1], writer=True)
child = os.fork()
if child == 0:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1), os.dup2(devnull, 2)  # the test reads the parent's output to its end
    time.sleep(60)
    os._exit(0)
print(child, flush=True)
os.kill(os.getpid(), 9)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_does_not_keep_its_parents_lock(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-c", FORK_AND_DIE, str(tmp_path)], env=ENV, capture_output=True, text=True
    )
    child = int(run.stdout.strip())
    try:
        with RunStore(tmp_path, writer=True):  # no takeover needed: the child never held it
            pass
    finally:
        os.kill(child, signal.SIGKILL)


def test_pool_workers_die_with_their_parent(tmp_path: Path) -> None:
    script = (
        "import os, time\n"
        "from medrealmm.engines import process_pool\n"
        "pool = process_pool(2)\n"
        "pids = list({pool.submit(os.getpid).result() for _ in range(8)} | "
        "set(pool._processes))\n"
        "print(' '.join(map(str, pids)), flush=True)\n"
        "os.kill(os.getpid(), 9)\n"
    )
    run = subprocess.run([sys.executable, "-c", script], env=ENV, capture_output=True, text=True)
    workers = [int(p) for p in run.stdout.split()]
    assert workers
    assert _all_gone(workers, within=5.0), f"workers outlived their parent: {workers}"


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False
    return state in ("Z", "X")


def _all_gone(pids: list[int], within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if all(_gone(pid) for pid in pids):
            return True
        time.sleep(0.1)
    return all(_gone(pid) for pid in pids)


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_kill_9_of_deid_run_with_workers_leaves_the_folder_usable(tmp_path: Path) -> None:
    run = tmp_path / "run"
    built = CliRunner().invoke(
        app,
        [
            "corpus",
            "build",
            str(bundled_corpus_dir() / "consultations.jsonl"),
            str(run),
            "--workers",
            "1",
        ],
    )
    assert built.exit_code == 0, built.output
    command = [*CLI, "deid", "run", str(run), "--no-llm"]
    parent = subprocess.Popen(
        [*command, "--engine", "local", "--workers", "2"],
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while len(_children(parent.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    workers = _children(parent.pid)
    assert len(workers) >= 2, "the image workers never started"
    time.sleep(random.uniform(0.0, 3.0))  # a random moment of the masking
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    assert _all_gone(workers, within=5.0), f"image workers outlived the run: {workers}"
    rerun = subprocess.run(
        [*command, "--limit", "1"], env=ENV, capture_output=True, text=True, timeout=300
    )
    assert rerun.returncode == 0, rerun.stderr[-2000:]


def _held_by(store: Path, pid: int, timeout: float = 60) -> bool:
    path = lock_path(store / "store.sqlite")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if json.loads(path.read_text()).get("pid") == pid:
                return True
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    return False


@pytest.mark.slow
def test_two_evaluations_of_one_results_folder_send_no_call_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from medrealmm.testing import FakeOpenAIServer, FakeReply
    from medrealmm.testing.synthetic_store import build_synthetic_store

    builder, results = build_synthetic_store(tmp_path / "builder", cases=3), tmp_path / "results"
    builder = builder.parent if builder.is_file() else builder
    server = FakeOpenAIServer(lambda body: FakeReply(content="您好，请补充病史。"), latency_s=2.0)
    server.start()
    env = {
        **ENV,
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_API_KEY": "t",
        "MEDREALMM_PROBE": "off",
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    args = ["eval", "run", str(builder), "--out", str(results), "--model", "fake-vlm"]
    args += ["--images", "off", "--grader-images", "off"]
    try:
        first = subprocess.Popen(
            [*CLI, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        assert _held_by(results, first.pid), "the first evaluation never took the lock"
        second = CliRunner().invoke(app, args)
        assert second.exit_code == 2, second.output
        assert f"in use by pid {first.pid} on {socket.gethostname()} since " in second.output
        replies = tmp_path / "replies.jsonl"
        replies.write_text('{"instance_id": "x", "reply": "y"}\n', encoding="utf-8")
        imported = CliRunner().invoke(
            app, ["eval", "import-responses", str(results), str(replies), "--name", "doc"]
        )
        assert imported.exit_code == 2 and f"pid {first.pid}" in imported.output
        output, _ = first.communicate(timeout=300)
        assert first.returncode == 0, output.decode()[-2000:]
    finally:
        server.stop()
    assert server.completed_calls == 3  # one reply per instance, none sent twice


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_kill_9_of_corpus_build_at_a_random_moment_leaves_the_folder_usable(
    tmp_path: Path,
) -> None:
    from cases import good_record, write_dataset

    data, run = tmp_path / "data", tmp_path / "run"
    lines = [json.dumps(good_record(f"c{i:05d}"), ensure_ascii=False).encode() for i in range(1500)]
    write_dataset(data, lines)
    command = [*CLI, "corpus", "build", str(data / "consultations.jsonl"), str(run)]
    finished = subprocess.run([*command, "--workers", "1", "--limit", "50"], env=ENV, timeout=300)
    assert finished.returncode == 0  # a run with finished work, then a rebuild killed at random
    builder = subprocess.Popen(
        [*command, "--workers", "2"], env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    time.sleep(random.uniform(0.5, 4.0))
    children = _children(builder.pid)
    builder.send_signal(signal.SIGKILL)
    builder.wait()
    assert _all_gone(children, within=5.0), f"workers outlived the build: {children}"
    rerun = subprocess.run(
        [*command, "--workers", "1"], env=ENV, capture_output=True, text=True, timeout=300
    )
    assert rerun.returncode == 0, rerun.stderr[-2000:]


# -- every command that changes a run's rows holds its one writer lock ----------------------
HOLD = (
    "import sys, time; from medrealmm.store import RunStore; "
    "s = RunStore(sys.argv[1], writer=True); print('held', flush=True); time.sleep(120)"
)

#: Every command that changes a run store's rows (or its meta), with arguments that get it
#: as far as opening the store of the folder ``{run}``; each must be refused while another
#: process holds the lock. ``{corpus}`` is the bundled corpus folder, ``{file}`` any file.
WRITERS = {
    "run": ["run", "{run}", "--config", "{config}"],
    "demo": ["demo", "--out", "{run}"],
    "corpus build": ["corpus", "build", "{corpus}/consultations.jsonl", "{run}"],
    "corpus review queue": ["corpus", "review", "queue", "{run}"],
    "corpus review import": ["corpus", "review", "import", "{run}", "{file}"],
    "corpus review status": ["corpus", "review", "status", "{run}"],  # advances the queue
    "deid run": ["deid", "run", "{run}", "--no-llm"],
    "mccp extract": ["mccp", "extract", "{corpus}", "{run}"],
    "mccp export-validation": ["mccp", "export-validation", "{run}"],  # records its sample
    "mccp import-validation": ["mccp", "import-validation", "{run}", "{file}"],
    "rubric generate": ["rubric", "generate", "{run}"],
    "rubric refine": ["rubric", "refine", "{run}"],
    "rubric import-feedback": ["rubric", "import-feedback", "{run}", "{file}"],
    "eval run": ["eval", "run", "{run}", "--model", "offline"],
    "eval import-responses": ["eval", "import-responses", "{run}", "{file}", "--name", "x"],
    "eval import-labels": ["eval", "import-labels", "{run}", "{file}"],
    "release withdraw": ["release", "withdraw", "c1", "--reason", "asked", "--store", "{run}"],
    "models probe": ["models", "probe", "some-model", "--run", "{run}"],  # keeps its result
}

#: Commands that leave every row as it was, and why.
NOT_WRITERS = {
    "validate": "reads an input file",
    "deid text": "masks text given on the command line",
    "deid image": "masks one image file",
    "corpus review export": "writes a sheet from the queue",
    "rubric export-round": "writes review files from the rounds",
    "rubric status": "reads the rounds",
    "eval score": "reads the scores",
    "eval export": "reads the replies, verdicts and scores",
    "eval compare": "reads the scores",
    "eval meta": "reads verdicts and labels (--calibrate: only the LLM cache, not rows)",
    "report": "reads the rows into another folder",
    "release build": "reads the rows into another folder",
    "release verify": "reads a release",
    "release keygen": "writes a key pair, no run",
    "release sign": "signs a release folder, no run",
    "release accept-dua": "writes a user-level acceptance file",
    "review export-suspects": "writes a file from decided tasks",
    # The review app and its accounts write while pipeline commands run, by design: a
    # physician's decision or a new account must not wait for a day-long `eval run`.
    # Each request is its own transaction, and the rows it writes remove the report
    # made from them like any other write (``store.derived``).
    "review serve": "the review app, alongside runs by design",
    "review add-user": "accounts, alongside runs by design",
}


def _command_paths() -> set[str]:
    from typer.main import get_command

    def walk(command: object, path: tuple[str, ...]) -> list[str]:
        subcommands = getattr(command, "commands", None)
        if not subcommands:
            return [" ".join(path)]
        return [p for name, sub in subcommands.items() for p in walk(sub, (*path, name))]

    return set(walk(get_command(app), ()))


def test_every_command_is_known_as_a_writer_or_not() -> None:
    """A new command must say here whether it changes rows (and then take the lock)."""
    assert _command_paths() == set(WRITERS) | set(NOT_WRITERS)
    assert not set(WRITERS) & set(NOT_WRITERS)


def test_every_command_that_changes_rows_takes_the_writer_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run, file = tmp_path / "run", tmp_path / "input.jsonl"
    RunStore(run).close()
    file.write_text("", encoding="utf-8")
    config = tmp_path / "pipeline.yaml"
    config.write_text(f"input: {bundled_corpus_dir()}\nworkers: 1\n", encoding="utf-8")
    values = {"run": run, "corpus": bundled_corpus_dir(), "file": file, "config": config}
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # never reached
    monkeypatch.setenv("OPENAI_API_KEY", "t")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(run)], env=ENV, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        for name, args in WRITERS.items():
            argv = [arg.format(**values) for arg in args]
            result = CliRunner().invoke(app, argv)
            assert result.exit_code == 2, f"{name}: {result.output}"
            message = " ".join(result.output.split())
            assert f"is in use by pid {holder.pid} on {socket.gethostname()} since " in message, (
                f"{name}: {result.output}"
            )
            assert "finished work is kept" in message and "Traceback" not in result.output
    finally:
        holder.kill()
        holder.wait()
    with RunStore(run) as store:
        assert store.stages() == {}  # no refused command wrote a row
