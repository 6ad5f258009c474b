"""Where redaction is needed: anything that is not this machine."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit


def is_loopback_url(url: str | None) -> bool:
    """True when ``url`` points at this machine (``localhost``, ``127.0.0.0/8``, ``::1``).

    Private LAN addresses (10/8, 192.168/16) are *not* loopback: the text would leave this host. A
    malformed or missing URL counts as external, so a mistake errs on the side of redacting.
    """
    if not url:
        return False
    try:
        host = urlsplit(url if "://" in url else "http://" + url).hostname
    except ValueError:
        return False
    if not host:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
