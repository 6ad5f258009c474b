"""TLS and SASL for every Kafka client attune makes (worker, ``publish``, ``tail``, ``demo``, admin, audits).

Read from the environment only (``ATTUNE_KAFKA_*``, secrets also from ``*_FILE`` paths for mounted
secrets): a password never appears on a command line (``ps``, shell history) and this module never puts
one in a repr, a log line or an error message. One object, :class:`KafkaSecurity`, turns the settings into
aiokafka keyword arguments (and, in :mod:`streams._faust.credentials`, Faust ``broker_credentials``), so the
worker's Faust clients and attune's own aiokafka clients always connect the same way.
docs/operations.md, "Secure Kafka: TLS and SASL".
"""

from __future__ import annotations

import contextlib
import functools
import os
import ssl
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

PREFIX = "ATTUNE_KAFKA_"
PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
Protocol = Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]
Mechanism = Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"]

#: Every variable this module reads (docs/configuration.md lists them; a test keeps the two in step).
VARIABLES = (
    "SECURITY_PROTOCOL",
    "SASL_MECHANISM",
    "SASL_USERNAME",
    "SASL_PASSWORD",
    "SASL_PASSWORD_FILE",
    "SASL_OAUTH_TOKEN_FILE",
    "SSL_CA_FILE",
    "SSL_CERT_FILE",
    "SSL_KEY_FILE",
    "SSL_KEY_PASSWORD",
    "SSL_KEY_PASSWORD_FILE",
    "SSL_CHECK_HOSTNAME",
)


class SecurityConfigError(ValueError):
    """A broker security setting that cannot work; the message names the variable, never a secret."""


@dataclass(frozen=True, slots=True)
class KafkaSecurity:
    """How to reach the brokers. The default is plaintext without authentication (the embedded broker)."""

    protocol: Protocol = "PLAINTEXT"
    mechanism: Mechanism | None = None
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    #: OAUTHBEARER: a file holding the current token, re-read at every (re)authentication (a sidecar renews it).
    oauth_token_file: Path | None = None
    ca_file: Path | None = None
    cert_file: Path | None = None
    key_file: Path | None = None
    key_password: str | None = field(default=None, repr=False)
    check_hostname: bool = True

    @property
    def tls(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")

    @property
    def sasl(self) -> bool:
        return self.protocol in ("SASL_PLAINTEXT", "SASL_SSL")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> KafkaSecurity:
        """Settings from ``ATTUNE_KAFKA_*``; raises :class:`SecurityConfigError` for anything that cannot work
        (including a setting that would be silently ignored, such as a CA file with a plaintext protocol)."""
        env = os.environ if env is None else env

        def get(name: str) -> str | None:
            v = env.get(PREFIX + name)
            return v if v not in (None, "") else None

        protocol = (get("SECURITY_PROTOCOL") or "PLAINTEXT").upper()
        if protocol not in PROTOCOLS:
            raise SecurityConfigError(f"{PREFIX}SECURITY_PROTOCOL={protocol!r}: use one of {', '.join(PROTOCOLS)}")
        mechanism = get("SASL_MECHANISM")
        mechanism = mechanism.upper() if mechanism else None
        sec = cls(
            protocol=protocol,  # type: ignore[arg-type]
            mechanism=mechanism,  # type: ignore[arg-type]
            username=get("SASL_USERNAME"),
            password=_secret(env, "SASL_PASSWORD"),
            oauth_token_file=_path(get("SASL_OAUTH_TOKEN_FILE")),
            ca_file=_path(get("SSL_CA_FILE")),
            cert_file=_path(get("SSL_CERT_FILE")),
            key_file=_path(get("SSL_KEY_FILE")),
            key_password=_secret(env, "SSL_KEY_PASSWORD"),
            check_hostname=_flag(get("SSL_CHECK_HOSTNAME"), "SSL_CHECK_HOSTNAME"),
        )
        sec.validate()
        return sec

    def validate(self) -> None:
        p = PREFIX
        if self.sasl:
            if self.mechanism is None:
                raise SecurityConfigError(f"{p}SECURITY_PROTOCOL={self.protocol} needs {p}SASL_MECHANISM")
            if self.mechanism not in MECHANISMS:
                raise SecurityConfigError(f"{p}SASL_MECHANISM={self.mechanism!r}: use one of {', '.join(MECHANISMS)}")
            if self.mechanism == "OAUTHBEARER":
                if self.oauth_token_file is None:
                    raise SecurityConfigError(f"{p}SASL_MECHANISM=OAUTHBEARER needs {p}SASL_OAUTH_TOKEN_FILE")
                _readable(self.oauth_token_file, "SASL_OAUTH_TOKEN_FILE")
            elif not (self.username and self.password):
                raise SecurityConfigError(
                    f"{p}SASL_MECHANISM={self.mechanism} needs {p}SASL_USERNAME and {p}SASL_PASSWORD "
                    f"(or {p}SASL_PASSWORD_FILE)"
                )
        else:
            stray = [n for n, v in (("SASL_MECHANISM", self.mechanism), ("SASL_USERNAME", self.username)) if v]
            stray += ["SASL_PASSWORD"] if self.password else []
            if stray:
                raise SecurityConfigError(
                    f"{', '.join(p + s for s in stray)} set, but {p}SECURITY_PROTOCOL={self.protocol} does not "
                    "authenticate: use SASL_PLAINTEXT or SASL_SSL"
                )
        tls_files = (("SSL_CA_FILE", self.ca_file), ("SSL_CERT_FILE", self.cert_file), ("SSL_KEY_FILE", self.key_file))
        if not self.tls:
            stray = [p + n for n, v in tls_files if v]
            if stray:
                raise SecurityConfigError(
                    f"{', '.join(stray)} set, but {p}SECURITY_PROTOCOL={self.protocol} does not use TLS: "
                    "use SSL or SASL_SSL"
                )
            return
        for name, path in tls_files:
            if path is not None:
                _readable(path, name)
        if (self.cert_file is None) != (self.key_file is None):
            raise SecurityConfigError(f"a client certificate needs both {p}SSL_CERT_FILE and {p}SSL_KEY_FILE")

    def ssl_context(self) -> ssl.SSLContext | None:
        """The TLS context: the system's CAs unless ``SSL_CA_FILE`` is given; a client certificate if set."""
        if not self.tls:
            return None
        ctx = ssl.create_default_context(cafile=str(self.ca_file) if self.ca_file else None)
        ctx.check_hostname = self.check_hostname
        if self.cert_file is not None and self.key_file is not None:
            try:
                ctx.load_cert_chain(str(self.cert_file), str(self.key_file), password=self.key_password)
            except (ssl.SSLError, OSError) as e:  # the message names the files, never the key password
                raise SecurityConfigError(
                    f"cannot load the client certificate {self.cert_file} / key {self.key_file}: {e.__class__.__name__}"
                ) from None
        return ctx

    def client_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``AIOKafkaProducer``, ``AIOKafkaConsumer`` and ``AIOKafkaAdminClient``."""
        if self.protocol == "PLAINTEXT":
            return {}
        out: dict[str, Any] = {"security_protocol": self.protocol}
        if self.tls:
            out["ssl_context"] = self.ssl_context()
        if self.sasl:
            out["sasl_mechanism"] = self.mechanism
            if self.mechanism == "OAUTHBEARER":
                out["sasl_oauth_token_provider"] = token_provider(self.oauth_token_file)  # type: ignore[arg-type]
            else:
                out["sasl_plain_username"] = self.username
                out["sasl_plain_password"] = self.password
        return out

    def describe(self) -> str:
        """One line for logs and errors: protocol, mechanism, user and files, never a password or token."""
        parts: list[str] = [self.protocol]
        if self.sasl:
            parts.append(f"{self.mechanism}" + (f" user={self.username}" if self.username else ""))
        if self.tls:
            parts.append(f"ca={self.ca_file or 'system'}" + (f" cert={self.cert_file}" if self.cert_file else ""))
            parts.append("" if self.check_hostname else "hostname-check=off")
        return " ".join(p for p in parts if p)


def _path(v: str | None) -> Path | None:
    return Path(v).expanduser() if v else None


def _flag(v: str | None, name: str) -> bool:
    if v is None:
        return True
    if v.lower() in ("1", "true", "yes", "on"):
        return True
    if v.lower() in ("0", "false", "no", "off"):
        return False
    raise SecurityConfigError(f"{PREFIX}{name}={v!r}: use true or false")


def _secret(env: Mapping[str, str], name: str) -> str | None:
    """``NAME`` or ``NAME_FILE`` (the file's content, one trailing newline stripped); both is an error."""
    value, path = env.get(PREFIX + name) or None, env.get(f"{PREFIX}{name}_FILE") or None
    if value and path:
        raise SecurityConfigError(f"set {PREFIX}{name} or {PREFIX}{name}_FILE, not both")
    if path:
        p = _readable(Path(path).expanduser(), f"{name}_FILE")
        return p.read_text(encoding="utf-8").removesuffix("\n")
    return value


def _readable(path: Path, name: str) -> Path:
    if not path.is_file():
        raise SecurityConfigError(f"{PREFIX}{name}: no such file {path}")
    if not os.access(path, os.R_OK):
        raise SecurityConfigError(f"{PREFIX}{name}: {path} is not readable by this process")
    return path


def token_provider(path: Path) -> Any:
    from aiokafka.abc import AbstractTokenProvider

    class FileTokenProvider(AbstractTokenProvider):
        """The OAUTHBEARER token as the file holds it now (renewed outside attune, e.g. by a sidecar)."""

        async def token(self) -> str:
            return path.read_text(encoding="utf-8").strip()

    return FileTokenProvider()


_USING: list[KafkaSecurity] = []


@functools.cache
def _from_env() -> KafkaSecurity:
    return KafkaSecurity.from_env()


def current() -> KafkaSecurity:
    """This process's settings: read once from the environment, unless :func:`using` says otherwise."""
    return _USING[-1] if _USING else _from_env()


@contextlib.contextmanager
def using(sec: KafkaSecurity) -> Iterator[KafkaSecurity]:
    """Connect with ``sec`` inside the block, whatever the environment says (``attune demo`` talks plaintext
    to its own embedded broker even on a host configured for a secure cluster)."""
    _USING.append(sec)
    try:
        yield sec
    finally:
        _USING.pop()


def reset() -> None:
    """Forget the settings read from the environment (tests change it)."""
    _from_env.cache_clear()


def client_kwargs() -> dict[str, Any]:
    """What every aiokafka client attune builds passes on: ``AIOKafkaConsumer(..., **client_kwargs())``."""
    return current().client_kwargs()
