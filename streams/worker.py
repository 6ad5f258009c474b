"""Supervising ``attune worker`` subprocesses (demo, tests, benchmark): start, wait ready, stop, kill."""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

#: Printed by a worker after every completed rebalance (tables recovered), with its turns partitions.
READY_MARKER = "ATTUNE_READY"


def worker_env(*, plaintext: bool = False) -> dict[str, str]:
    """Environment for a worker subprocess (unbuffered, so logs reach the parent promptly). ``plaintext``
    drops the ``ATTUNE_KAFKA_*`` security settings (a worker on the embedded broker, which speaks plaintext)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if plaintext:
        env = {k: v for k, v in env.items() if not k.startswith("ATTUNE_KAFKA_")}
    return env


class WorkerProcess:
    """One ``attune worker`` in its own process group; its output is kept (and optionally logged)."""

    def __init__(
        self,
        broker: str,
        profile: str,
        args: Sequence[str] = (),
        log_path: Path | None = None,
        env: Mapping[str, str] | None = None,
    ):
        """``env``: the worker's whole environment (default: this process's, unbuffered)."""
        cmd = [sys.executable, "-m", "attune", "worker", "--broker", broker, "--profile", profile, *args]
        self.cmd = cmd
        self.lines: list[str] = []
        self._log = open(log_path, "a", encoding="utf-8") if log_path else None  # noqa: SIM115
        self._cond = threading.Condition()
        self.proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=dict(env) if env is not None else worker_env(),
            start_new_session=True,
            text=True,
            bufsize=1,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        atexit.register(self.stop)  # a supervisor that dies of an exception leaves no worker behind

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self._cond:
                self.lines.append(line.rstrip("\n"))
                self._cond.notify_all()
            if self._log is not None:
                self._log.write(line)
                self._log.flush()
        with self._cond:
            self._cond.notify_all()

    def ready_lines(self) -> list[str]:
        with self._cond:
            return [ln[ln.index(READY_MARKER) :] for ln in self.lines if READY_MARKER in ln]

    def partitions(self) -> list[int] | None:
        """Turns partitions from the latest ready line, or None before the first one."""
        ready = self.ready_lines()
        if not ready:
            return None
        part = ready[-1].rsplit("partitions=", 1)[-1].strip()
        return [int(p) for p in part.split(",") if p]

    def wait_ready(self, timeout: float = 60.0, count: int = 1) -> list[int]:
        """Wait for the ``count``-th ready line; raises with the worker's output if it dies or times out."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while len([ln for ln in self.lines if READY_MARKER in ln]) < count:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"worker exited ({self.proc.returncode}):\n" + self.tail())
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("worker not ready in time:\n" + self.tail())
                self._cond.wait(min(left, 0.2))
        return self.partitions() or []

    def tail(self, n: int = 40) -> str:
        with self._cond:
            return "\n".join(self.lines[-n:])

    def kill(self) -> None:
        """SIGKILL the whole process group: no shutdown hooks, no final commit (the crash test)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)
        self._close()

    def stop(self, timeout: float = 20.0) -> int:
        """SIGTERM (graceful: Faust commits and leaves the group), SIGKILL after ``timeout``."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        self._close()
        return self.proc.returncode

    def _close(self) -> None:
        self._reader.join(timeout=2)
        if self._log is not None:
            self._log.close()
            self._log = None
