"""Secure Kafka (issue 15 part 3): TLS and SASL settings from the environment, for every client attune makes.

Configuration is tested directly; TLS end to end through a TLS-terminating proxy in front of the embedded
broker (worker, ``publish`` and ``tail`` all connect through it, with a client certificate); SASL through
the broker's answer to the handshake the client really sends.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from _tls_proxy import Pki, TlsProxy, make_pki

from streams import security
from streams._faust.credentials import faust_credentials
from streams.security import KafkaSecurity, SecurityConfigError

SECRET = "pa55-w0rd-never-printed"
P = security.PREFIX


@pytest.fixture(autouse=True)
def _fresh_settings(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for k in list(os.environ):
        if k.startswith(P):
            monkeypatch.delenv(k)
    security.reset()
    yield
    security.reset()


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


def env(**kw: str | Path) -> dict[str, str]:
    return {P + k: str(v) for k, v in kw.items()}


# -- configuration -------------------------------------------------------------------------------------------
def test_default_is_plaintext_and_adds_nothing() -> None:
    sec = KafkaSecurity.from_env({})
    assert sec.protocol == "PLAINTEXT" and sec.client_kwargs() == {} and faust_credentials(sec) is None


def test_sasl_ssl_scram_with_secret_files_and_a_private_ca(tmp_path: Path, pki: Pki) -> None:
    pw = tmp_path / "pw"
    pw.write_text(SECRET + "\n")
    sec = KafkaSecurity.from_env(
        env(
            SECURITY_PROTOCOL="sasl_ssl",
            SASL_MECHANISM="scram-sha-512",
            SASL_USERNAME="svc-attune",
            SASL_PASSWORD_FILE=pw,
            SSL_CA_FILE=pki.ca,
        )
    )
    kw = sec.client_kwargs()
    assert kw["security_protocol"] == "SASL_SSL" and kw["sasl_mechanism"] == "SCRAM-SHA-512"
    assert kw["sasl_plain_username"] == "svc-attune" and kw["sasl_plain_password"] == SECRET  # newline stripped
    ctx = kw["ssl_context"]
    assert ctx.check_hostname and [c["subject"] for c in ctx.get_ca_certs()] == [((("commonName", "attune-test-ca"),),)]
    creds = faust_credentials(sec)
    assert (creds.protocol.value, creds.mechanism.value, creds.username) == ("SASL_SSL", "SCRAM-SHA-512", "svc-attune")
    assert SECRET not in repr(sec) and SECRET not in sec.describe() and SECRET not in repr(creds)


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256"])
def test_sasl_plaintext_mechanisms(mechanism: str) -> None:
    sec = KafkaSecurity.from_env(
        env(SECURITY_PROTOCOL="SASL_PLAINTEXT", SASL_MECHANISM=mechanism, SASL_USERNAME="u", SASL_PASSWORD=SECRET)
    )
    assert sec.client_kwargs() == {
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": mechanism,
        "sasl_plain_username": "u",
        "sasl_plain_password": SECRET,
    }


def test_mutual_tls_and_hostname_check_off(pki: Pki) -> None:
    sec = KafkaSecurity.from_env(
        env(
            SECURITY_PROTOCOL="SSL",
            SSL_CA_FILE=pki.ca,
            SSL_CERT_FILE=pki.client_cert,
            SSL_KEY_FILE=pki.client_key,
            SSL_CHECK_HOSTNAME="false",
        )
    )
    kw = sec.client_kwargs()
    assert kw["security_protocol"] == "SSL" and not kw["ssl_context"].check_hostname
    assert "hostname-check=off" in sec.describe() and str(pki.client_cert) in sec.describe()


def test_oauthbearer_reads_the_token_file_at_every_authentication(tmp_path: Path) -> None:
    tok = tmp_path / "token"
    tok.write_text("token-1\n")
    sec = KafkaSecurity.from_env(
        env(SECURITY_PROTOCOL="SASL_PLAINTEXT", SASL_MECHANISM="OAUTHBEARER", SASL_OAUTH_TOKEN_FILE=tok)
    )
    provider = sec.client_kwargs()["sasl_oauth_token_provider"]
    assert asyncio.run(provider.token()) == "token-1"
    tok.write_text("token-2")  # renewed by a sidecar
    assert asyncio.run(provider.token()) == "token-2"
    assert faust_credentials(sec).mechanism.value == "OAUTHBEARER"


@pytest.mark.parametrize(
    ("settings", "names"),
    [
        ({"SECURITY_PROTOCOL": "TLS"}, "SECURITY_PROTOCOL='TLS'"),
        ({"SECURITY_PROTOCOL": "SASL_SSL"}, "needs ATTUNE_KAFKA_SASL_MECHANISM"),
        ({"SECURITY_PROTOCOL": "SASL_PLAINTEXT", "SASL_MECHANISM": "GSSAPI"}, "SASL_MECHANISM='GSSAPI'"),
        ({"SECURITY_PROTOCOL": "SASL_PLAINTEXT", "SASL_MECHANISM": "PLAIN", "SASL_USERNAME": "u"}, "SASL_PASSWORD"),
        ({"SECURITY_PROTOCOL": "SASL_PLAINTEXT", "SASL_MECHANISM": "OAUTHBEARER"}, "SASL_OAUTH_TOKEN_FILE"),
        ({"SASL_MECHANISM": "PLAIN", "SASL_USERNAME": "u", "SASL_PASSWORD": SECRET}, "does not authenticate"),
        (
            {
                "SECURITY_PROTOCOL": "SASL_PLAINTEXT",
                "SASL_MECHANISM": "PLAIN",
                "SASL_USERNAME": "u",
                "SASL_PASSWORD": SECRET,
                "SASL_PASSWORD_FILE": "/etc/hostname",
            },
            "not both",
        ),
        ({"SECURITY_PROTOCOL": "SSL", "SSL_CA_FILE": "/nonexistent/ca.pem"}, "SSL_CA_FILE: no such file"),
        ({"SSL_CA_FILE": "/etc/hostname"}, "does not use TLS"),
        ({"SECURITY_PROTOCOL": "SSL", "SSL_CERT_FILE": "/etc/hostname"}, "both ATTUNE_KAFKA_SSL_CERT_FILE"),
        ({"SECURITY_PROTOCOL": "SSL", "SSL_CHECK_HOSTNAME": "maybe"}, "SSL_CHECK_HOSTNAME='maybe'"),
    ],
)
def test_settings_that_cannot_work_are_refused_by_name(settings: dict[str, str], names: str) -> None:
    with pytest.raises(SecurityConfigError) as info:
        KafkaSecurity.from_env(env(**settings))
    assert names in str(info.value) and SECRET not in str(info.value)


def test_a_key_that_does_not_match_is_an_error_without_the_key_password(pki: Pki) -> None:
    sec = KafkaSecurity.from_env(
        env(
            SECURITY_PROTOCOL="SSL",
            SSL_CA_FILE=pki.ca,
            SSL_CERT_FILE=pki.client_cert,
            SSL_KEY_FILE=pki.server_key,
            SSL_KEY_PASSWORD=SECRET,
        )
    )
    with pytest.raises(SecurityConfigError) as info:
        sec.client_kwargs()
    assert str(pki.client_cert) in str(info.value) and SECRET not in str(info.value)


def test_no_command_takes_a_secret_on_its_command_line() -> None:
    from attune.cli import build_parser

    def options(p: argparse.ArgumentParser) -> Iterator[str]:
        for action in p._actions:
            yield from action.option_strings
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    yield from options(sub)

    found = [o for o in options(build_parser()) if any(w in o for w in ("password", "secret", "token", "sasl"))]
    assert not found, found


def test_every_client_attune_builds_gets_the_settings(pki: Pki, monkeypatch: pytest.MonkeyPatch) -> None:
    """No aiokafka client in ``streams/`` is built without ``security.client_kwargs()``, and the worker's Faust
    configuration carries the same settings as ``broker_credentials``."""
    import re

    from streams.settings import StreamSettings

    root = Path(__file__).parent.parent / "streams"
    for path in root.glob("*.py"):
        for m in re.finditer(r"AIOKafka(?:Consumer|Producer|AdminClient)\((.*?)\n\s*\)", path.read_text(), re.S):
            assert "security.client_kwargs()" in m.group(1) or "**kwargs" in m.group(1), (path.name, m.group(0))
    monkeypatch.setenv(P + "SECURITY_PROTOCOL", "SSL")
    monkeypatch.setenv(P + "SSL_CA_FILE", str(pki.ca))
    security.reset()
    creds = StreamSettings().faust_config()["broker_credentials"]
    assert creds.protocol.value == "SSL"
    from streams.io import producer_for

    kw = security.client_kwargs()
    assert kw["security_protocol"] == "SSL"

    async def built() -> str:
        return producer_for("kafka://127.0.0.1:1", "kafka").client._security_protocol  # never started

    assert asyncio.run(built()) == "SSL"


def test_the_demo_talks_plaintext_to_its_own_broker_whatever_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from streams.worker import worker_env

    monkeypatch.setenv(P + "SECURITY_PROTOCOL", "SASL_SSL")
    monkeypatch.setenv(P + "SASL_PASSWORD", SECRET)
    with security.using(KafkaSecurity()):
        assert security.client_kwargs() == {}
    assert not [k for k in worker_env(plaintext=True) if k.startswith(P)]
    assert worker_env()[P + "SECURITY_PROTOCOL"] == "SASL_SSL"


def _attune(args: list[str], extra_env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith(P)} | extra_env
    return subprocess.run(
        [sys.executable, "-m", "attune", *args], capture_output=True, text=True, env=e, timeout=timeout
    )


def test_bad_settings_stop_every_broker_command_with_one_line() -> None:
    bad = env(
        SECURITY_PROTOCOL="SASL_SSL",
        SASL_MECHANISM="PLAIN",
        SASL_USERNAME="u",
        SASL_PASSWORD=SECRET,
        SSL_CA_FILE="/nonexistent/ca.pem",
    )
    for cmd in (["tail", "alerts.safety", "--idle-timeout", "1"], ["worker"]):
        r = _attune([*cmd, "--broker", "kafka://127.0.0.1:9"], bad)
        assert r.returncode == 2, r.stderr
        assert "SSL_CA_FILE: no such file /nonexistent/ca.pem" in r.stderr and "Traceback" not in r.stderr
        assert SECRET not in r.stderr + r.stdout


# -- against the embedded broker -----------------------------------------------------------------------------
@pytest.mark.broker
@pytest.mark.slow
def test_worker_publish_and_tail_over_mutual_tls(pki: Pki, tmp_path: Path) -> None:
    """Every connection goes through TLS with a client certificate: the broker is reachable only behind the
    proxy (it advertises the proxy's port), and the scores come back through it."""
    from _stream_helpers import synthetic

    from streams import WorkerProcess
    from streams.broker import EmbeddedBroker, free_port
    from streams.worker import worker_env

    tls_port = free_port()
    tls = env(SECURITY_PROTOCOL="SSL", SSL_CA_FILE=pki.ca, SSL_CERT_FILE=pki.client_cert, SSL_KEY_FILE=pki.client_key)
    convs = tmp_path / "convs.jsonl"
    convs.write_text("".join(c.model_dump_json() + "\n" for c in synthetic(3, 6, prefix="tls")))
    broker = EmbeddedBroker(advertised_port=tls_port, log_path=tmp_path / "tansu.log")
    with broker, TlsProxy(tls_port, broker.port, pki, require_client_cert=True) as proxy:
        url = f"kafka://127.0.0.1:{tls_port}"
        worker = WorkerProcess(
            url, "tansu", ["--inactivity-timeout", "30"], tmp_path / "worker.log", env=worker_env() | tls
        )
        try:
            worker.wait_ready(90)
            r = _attune(["publish", str(convs), "--broker", url, "--profile", "tansu"], tls)
            assert r.returncode == 0, r.stderr
            r = _attune(
                [
                    "tail",
                    "scores.verdict",
                    "--broker",
                    url,
                    "--from-beginning",
                    "--idle-timeout",
                    "15",
                    "--max",
                    "3",
                    "--json",
                ],
                tls,
                timeout=90,
            )
            assert r.returncode == 0, r.stderr
            assert r.stdout.count('"kind":"conversation_verdict"') == 3, r.stdout[-2000:]
        finally:
            worker.stop(15)
        assert proxy.handshakes >= 3  # worker, publish and tail each connected through TLS
        # Without the client certificate, or trusting another CA, nothing connects: one line, exit 69.
        for settings in (
            env(SECURITY_PROTOCOL="SSL", SSL_CA_FILE=pki.ca),
            env(
                SECURITY_PROTOCOL="SSL",
                SSL_CA_FILE=pki.other_ca,
                SSL_CERT_FILE=pki.client_cert,
                SSL_KEY_FILE=pki.client_key,
            ),
            {},  # plaintext against a TLS port
        ):
            r = _attune(["tail", "alerts.safety", "--broker", url, "--idle-timeout", "2"], settings, timeout=90)
            assert r.returncode == 69, (settings, r.stderr[-1500:])
            assert "Traceback" not in r.stderr and "error: cannot reach the Kafka broker" in r.stderr, r.stderr
            assert "with SSL ca=" in r.stderr or not settings


@pytest.mark.broker
@pytest.mark.slow
def test_the_client_really_negotiates_the_configured_sasl_mechanism(broker) -> None:
    """The embedded broker without authentication offers no SASL mechanism: a client configured for SCRAM
    must fail at the handshake (proof the settings reach the wire), with one line naming the settings."""
    sasl = env(
        SECURITY_PROTOCOL="SASL_PLAINTEXT", SASL_MECHANISM="SCRAM-SHA-256", SASL_USERNAME="svc", SASL_PASSWORD=SECRET
    )
    r = _attune(["tail", "alerts.safety", "--broker", broker.url, "--idle-timeout", "2"], sasl, timeout=90)
    assert r.returncode == 69, r.stderr[-1500:]
    assert "SASL_PLAINTEXT SCRAM-SHA-256 user=svc" in r.stderr and "ATTUNE_KAFKA_" in r.stderr
    assert SECRET not in r.stderr + r.stdout and "Traceback" not in r.stderr
    r = _attune(["tail", "alerts.safety", "--broker", broker.url, "--idle-timeout", "1"], {}, timeout=60)
    assert r.returncode == 0, r.stderr  # the same broker, plaintext: fine


def test_every_security_variable_is_documented() -> None:
    root = Path(__file__).parent.parent
    config, ops = ((root / "docs" / n).read_text() for n in ("configuration.md", "operations.md"))
    missing = [P + v for v in security.VARIABLES if f"`{P}{v}`" not in config]
    assert not missing, missing
    assert "## Secure Kafka: TLS and SASL" in ops
