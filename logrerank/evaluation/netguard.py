"""Block outbound network access, and record every attempt (the offline guarantee's check).

Three ways to use it:

* ``with blocked_network() as guard: ...`` (``guard.attempts`` lists every connection or name
  lookup tried; blocked ones raise :class:`NetworkBlocked`);
* ``python -m pytest -p tests.netguard`` installs the guard for the whole test session
  (loopback allowed, so the app's own server and gradio_client still work) and fails the run if
  anything tried to go out;
* ``from logrerank.evaluation import netguard; netguard.install()`` at the top of a process
  (the offline tests' subprocesses, ``bench/load_test.py``'s server and clients).

The guard patches ``socket.socket.connect`` / ``connect_ex`` / ``sendto``,
``socket.create_connection`` and ``socket.getaddrinfo``: every TCP/UDP connection and DNS lookup
in CPython (urllib3, requests, httpx, asyncio, huggingface_hub) goes through one of them. Unix
sockets and, when allowed, loopback addresses pass.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
from collections.abc import Iterator
from typing import Any

_LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", ""}


class NetworkBlocked(RuntimeError):
    """A test tried to reach the network."""


def _is_loopback(host: Any) -> bool:
    if host is None:
        return True
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    host = str(host).strip("[]").split("%")[0].lower()
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _Guard:
    def __init__(self, allow_loopback: bool) -> None:
        self.allow_loopback = allow_loopback
        self.attempts: list[str] = []  # every non-local attempt (blocked)
        self.local: list[str] = []  # loopback / unix attempts (allowed or not)
        self._saved: dict[str, Any] = {}

    def _check(self, what: str, family: Any, address: Any) -> None:
        if family == getattr(socket, "AF_UNIX", object()) or isinstance(address, (str, bytes)):
            return  # unix socket path
        host = address[0] if isinstance(address, tuple) and address else address
        if _is_loopback(host):
            self.local.append(f"{what} {address!r}")
            if self.allow_loopback:
                return
        self.attempts.append(f"{what} {address!r}")
        raise NetworkBlocked(f"network access blocked in tests: {what} {address!r}")

    def install(self) -> None:
        guard = self
        real_connect = socket.socket.connect
        real_connect_ex = socket.socket.connect_ex
        real_sendto = socket.socket.sendto
        real_getaddrinfo = socket.getaddrinfo
        real_create = socket.create_connection
        self._saved = {
            "connect": real_connect,
            "connect_ex": real_connect_ex,
            "sendto": real_sendto,
            "getaddrinfo": real_getaddrinfo,
            "create_connection": real_create,
        }

        def connect(sock, address):
            guard._check("connect", sock.family, address)
            return real_connect(sock, address)

        def connect_ex(sock, address):
            guard._check("connect_ex", sock.family, address)
            return real_connect_ex(sock, address)

        def sendto(sock, data, *args):
            address = args[-1]
            guard._check("sendto", sock.family, address)
            return real_sendto(sock, data, *args)

        def getaddrinfo(host, *args, **kwargs):
            if not _is_loopback(host):
                try:
                    ipaddress.ip_address(str(host))  # numeric: no lookup, connect decides
                except ValueError:
                    guard.attempts.append(f"getaddrinfo {host!r}")
                    raise NetworkBlocked(f"DNS lookup blocked in tests: {host!r}") from None
            return real_getaddrinfo(host, *args, **kwargs)

        def create_connection(address, *args, **kwargs):
            guard._check("create_connection", None, address)
            return real_create(address, *args, **kwargs)

        socket.socket.connect = connect  # type: ignore[method-assign]
        socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
        socket.socket.sendto = sendto  # type: ignore[method-assign]
        socket.getaddrinfo = getaddrinfo
        socket.create_connection = create_connection

    def uninstall(self) -> None:
        if not self._saved:
            return
        socket.socket.connect = self._saved["connect"]  # type: ignore[method-assign]
        socket.socket.connect_ex = self._saved["connect_ex"]  # type: ignore[method-assign]
        socket.socket.sendto = self._saved["sendto"]  # type: ignore[method-assign]
        socket.getaddrinfo = self._saved["getaddrinfo"]
        socket.create_connection = self._saved["create_connection"]
        self._saved = {}


@contextlib.contextmanager
def blocked_network(allow_loopback: bool = False) -> Iterator[_Guard]:
    """Block the network inside the block; yields the guard (``.attempts``, ``.local``)."""
    guard = _Guard(allow_loopback)
    guard.install()
    try:
        yield guard
    finally:
        guard.uninstall()


_SESSION: _Guard | None = None


def install(allow_loopback: bool = True) -> _Guard:
    """Install the guard for the rest of the process (used by subprocesses and the plugin)."""
    global _SESSION
    if _SESSION is None:
        _SESSION = _Guard(allow_loopback)
        _SESSION.install()
    return _SESSION


def session_guard() -> _Guard | None:
    """The guard :func:`install` put in place for this process (None before)."""
    return _SESSION
