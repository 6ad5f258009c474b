"""``attune broker``: the embedded broker as a command, in memory or durable on disk, until Ctrl-C."""

from __future__ import annotations

import contextlib
import fcntl
import signal
import sys
import tempfile
import threading
from pathlib import Path
from types import FrameType

from .broker import EmbeddedBroker, _port_open
from .durable import VERIFIED_SEAWEEDFS, DurableBroker, weed_binary


def _last_lines(path: Path, n: int = 3) -> str:
    with contextlib.suppress(OSError):
        return " | ".join(ln.strip() for ln in path.read_text(errors="replace").splitlines()[-n:] if ln.strip())
    return ""


def run_broker(port: int, data: Path | None, storage: str | None) -> int:
    """Start the broker (and its storage), print where it is, serve until SIGINT/SIGTERM, stop both cleanly.

    Exit codes: 0 after a clean stop; 1 if the broker or its storage would not start or died while serving;
    2 for a missing extra, a port already in use, or a data directory another broker holds (its lock is
    inherited by SeaweedFS). Tansu and SeaweedFS get SIGKILL if this process dies without stopping them.
    """
    if _port_open("127.0.0.1", port):
        print(f"error: port {port} is already in use on 127.0.0.1 (another broker?); choose --port", file=sys.stderr)
        return 2
    if data is not None:
        try:
            weed_binary()
        except FileNotFoundError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
    logdir = data if data is not None else Path(tempfile.mkdtemp(prefix="attune-broker-"))
    logdir.mkdir(parents=True, exist_ok=True)
    with (logdir / ".attune-broker.lock").open("w") as lock:
        try:  # two brokers writing one directory would corrupt it; the lock goes with the process
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"error: {logdir} is in use by another attune broker", file=sys.stderr)
            return 2
        broker: EmbeddedBroker | DurableBroker
        if data is not None:
            broker = DurableBroker(data, port=port, hold_fds=(lock.fileno(),), die_with_parent=True)
        else:
            engine = storage or "memory://tansu/"
            broker = EmbeddedBroker(port, log_path=logdir / "tansu.log", storage=engine, die_with_parent=True)
        return _serve(broker, storage, logdir)


def _serve(broker: EmbeddedBroker | DurableBroker, storage: str | None, logdir: Path) -> int:
    stop = threading.Event()

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):  # before starting anything: a signal mid-start stops both too
        signal.signal(sig, on_signal)
    store = broker.store if isinstance(broker, DurableBroker) else None
    try:
        broker.start()  # a DurableBroker stops its storage if Tansu fails
    except (RuntimeError, TimeoutError, FileNotFoundError) as e:
        detail = _last_lines(logdir / "tansu.log", 1)
        print(f"error: the broker did not start: {e}" + (f"; Tansu said: {detail}" if detail else ""), file=sys.stderr)
        return 1
    url = broker.url
    if store is not None:
        kept = f"durable: topics, records and offsets kept in {store.data_dir}"
        kept += f" (SeaweedFS {VERIFIED_SEAWEEDFS}, S3 on {store.endpoint})"
    elif storage:
        kept = f"storage: {storage}"
    else:
        kept = "memory: everything is gone when it stops; --data DIR keeps it on disk"
    print(f"attune broker: {url} ({kept})", flush=True)
    profile = "tansu-durable" if store is not None else "tansu"
    print(f"  use it: export ATTUNE_BROKER={url} ATTUNE_BROKER_PROFILE={profile}   (Ctrl-C stops the broker)")
    print(f"  logs: {logdir}", flush=True)
    died = ""
    while not stop.wait(0.5):
        if store is not None and not store.running():
            died = f"SeaweedFS exited ({_last_lines(logdir / 'seaweedfs.log')})"
        elif not broker.running():
            died = f"Tansu exited ({_last_lines(logdir / 'tansu.log')})"
        if died:
            break
    broker.stop()
    if died:
        print(f"error: {died}; the broker is stopped", file=sys.stderr)
        return 1
    print("attune broker: stopped", flush=True)
    return 0
