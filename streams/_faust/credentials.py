"""Faust ``broker_credentials`` from attune's Kafka security settings (streams.security).

The same TLS/SASL settings as every aiokafka client attune builds (``KafkaSecurity.client_kwargs``), in the
form Faust's own clients take, so the worker's Faust clients and attune's own connect the same way.
"""

from __future__ import annotations

from typing import Any

import faust
from faust.auth import OAuthCredentials

from ..security import KafkaSecurity, token_provider


def faust_credentials(sec: KafkaSecurity) -> Any:
    """Faust ``broker_credentials`` for ``sec`` (None for plaintext)."""
    if sec.protocol == "PLAINTEXT":
        return None
    ctx = sec.ssl_context()
    if sec.protocol == "SSL":
        return faust.SSLCredentials(ctx)
    if sec.mechanism == "OAUTHBEARER":
        assert sec.oauth_token_file is not None  # KafkaSecurity.validate requires it for OAUTHBEARER
        return OAuthCredentials(oauth_cb=token_provider(sec.oauth_token_file), ssl_context=ctx)
    return faust.SASLCredentials(username=sec.username, password=sec.password, ssl_context=ctx, mechanism=sec.mechanism)
