from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator

import pytest


class EgressLog:
    """Every host the process tried to resolve or connect to; non-loopback ones are refused."""

    def __init__(self) -> None:
        self.hosts: list[str] = []

    def remote(self) -> list[str]:
        return [host for host in self.hosts if not _loopback(host)]


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture()
def egress(monkeypatch: pytest.MonkeyPatch) -> Iterator[EgressLog]:
    """Record all network egress (name look-ups and connects) and block anything remote."""
    log = EgressLog()
    real_connect = socket.socket.connect
    real_getaddrinfo = socket.getaddrinfo

    def connect(self: socket.socket, address: object) -> None:
        host = str(address[0]) if isinstance(address, tuple) else str(address)
        if self.family in (socket.AF_INET, socket.AF_INET6):
            log.hosts.append(host)
            if not _loopback(host):
                raise ConnectionRefusedError(f"egress to {host} blocked by the test")
        return real_connect(self, address)

    def getaddrinfo(host: object, *args: object, **kwargs: object) -> object:
        name = host.decode() if isinstance(host, bytes) else str(host)
        log.hosts.append(name)
        if not _loopback(name):
            raise socket.gaierror(f"look-up of {name} blocked by the test")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield log
