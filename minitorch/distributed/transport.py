"""Point-to-point messages between the ranks of one machine: a mesh of loopback TCP links.

Rendezvous: rank 0 listens on ``MASTER_ADDR:MASTER_PORT``; every other rank opens its own
listening socket, connects to rank 0 and says ``(rank, port)``; rank 0 answers with
everyone's port; then each pair of ranks above 0 connects (the higher rank dials).

Each link has a reader thread that drains incoming messages into a per-peer inbox, so a
``send`` never waits for the receiver to call ``recv`` (no deadlock when all ranks send
first), and a closed connection is noticed at once: ``recv`` from a rank that exited or
crashed raises :class:`PeerGone`, and one that waits past its deadline raises
:class:`PeerTimeout`.

A message is a fixed header (tag, dtype, shape) followed by the array's raw bytes.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections import deque

import numpy as np

from .errors import PeerGone, PeerTimeout

_HELLO = struct.Struct("<ii")  # rank, listening port
_HEADER = struct.Struct("<qHB")  # tag, dtype number, ndim
_DIM = struct.Struct("<q")
_DTYPES = [
    np.dtype(n)
    for n in (
        "float32",
        "float64",
        "float16",
        "int64",
        "int32",
        "int16",
        "int8",
        "uint8",
        "bool",
    )
]
_DTYPE_NUMBER = {d: i for i, d in enumerate(_DTYPES)}
_GONE = "its connection closed (the process exited or crashed)"
_POLL = 0.5  # seconds a reader waits on an idle link before checking for shutdown


class Link:
    """One TCP connection to a peer, with a reader thread filling an inbox."""

    def __init__(self, sock: socket.socket, me: int, peer: int) -> None:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.settimeout(_POLL)
        self.sock = sock
        self.peer = peer
        self.inbox: deque = deque()
        self.ready = threading.Condition()
        self.closed_reason: str | None = None
        self.send_lock = threading.Lock()
        self.shutting_down = False
        self.reader = threading.Thread(
            target=self._read_loop, name=f"minitorch-link-{me}-{peer}", daemon=True
        )
        self.reader.start()

    # --- sending ------------------------------------------------------------------------
    def send(self, array: np.ndarray, tag: int, deadline: float) -> None:
        array = np.ascontiguousarray(array)
        number = _DTYPE_NUMBER.get(array.dtype)
        if number is None:
            raise TypeError(f"cannot send arrays of dtype {array.dtype}")
        header = _HEADER.pack(tag, number, array.ndim) + b"".join(_DIM.pack(n) for n in array.shape)
        with self.send_lock:
            if self.closed_reason is not None:
                raise PeerGone(self.peer, self.closed_reason)
            try:
                self.sock.settimeout(max(deadline - time.monotonic(), 0.001))
                self.sock.sendall(header)
                if array.nbytes:
                    self.sock.sendall(memoryview(array.reshape(-1)).cast("B"))
            except TimeoutError:
                raise PeerTimeout(self.peer, 0.0) from None
            except OSError as exc:
                raise PeerGone(self.peer, f"sending failed: {exc}") from None
            finally:
                self.sock.settimeout(_POLL)

    # --- receiving ----------------------------------------------------------------------
    def recv(self, tag: int, deadline: float) -> np.ndarray:
        with self.ready:
            while True:
                for i, (t, array) in enumerate(self.inbox):
                    if t == tag:
                        del self.inbox[i]
                        return array
                if self.closed_reason is not None:
                    raise PeerGone(self.peer, self.closed_reason)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise PeerTimeout(self.peer, 0.0)
                self.ready.wait(min(left, _POLL))

    def _read_loop(self) -> None:
        try:
            while True:
                head = self._read_exact(_HEADER.size)
                if head is None:
                    return self._close(_GONE)
                tag, number, ndim = _HEADER.unpack(head)
                dims = self._read_exact(_DIM.size * ndim) if ndim else b""
                shape = tuple(_DIM.unpack_from(dims, k * _DIM.size)[0] for k in range(ndim))
                array = np.empty(shape, dtype=_DTYPES[number])
                if array.nbytes and not self._read_into(memoryview(array.reshape(-1)).cast("B")):
                    return self._close("its connection closed in the middle of a message")
                with self.ready:
                    self.inbox.append((tag, array))
                    self.ready.notify_all()
        except ConnectionResetError:  # a killed process may reset rather than close
            self._close(_GONE)
        except OSError as exc:
            self._close(f"its connection failed ({exc})")

    def _read_exact(self, n: int) -> bytes | None:
        buf = bytearray(n)
        return bytes(buf) if self._read_into(memoryview(buf)) else None

    def _read_into(self, view: memoryview) -> bool:
        got = 0
        while got < len(view):
            try:
                n = self.sock.recv_into(view[got:])
            except TimeoutError:
                if self.shutting_down:
                    return False
                continue
            if n == 0:
                return False
            got += n
        return True

    def _close(self, reason: str) -> None:
        with self.ready:
            if self.closed_reason is None:
                self.closed_reason = "closed by this rank" if self.shutting_down else reason
            self.ready.notify_all()

    def close(self) -> None:
        self.shutting_down = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        self._close("closed by this rank")


class Mesh:
    """Links from this rank to every other rank of the group."""

    def __init__(self, rank: int, world_size: int, addr: str, port: int, timeout: float) -> None:
        self.rank = rank
        self.world_size = world_size
        self.links: dict[int, Link] = {}
        if world_size > 1:
            self._connect(addr, port, time.monotonic() + timeout, timeout)

    def send(self, dst: int, array: np.ndarray, tag: int, deadline: float) -> None:
        self.links[dst].send(array, tag, deadline)

    def recv(self, src: int, tag: int, deadline: float) -> np.ndarray:
        return self.links[src].recv(tag, deadline)

    def gone(self) -> list[int]:
        """The ranks whose connection has closed."""
        return sorted(r for r, link in self.links.items() if link.closed_reason is not None)

    def close(self) -> None:
        for link in self.links.values():
            link.close()
        self.links.clear()

    # --- rendezvous ---------------------------------------------------------------------
    def _connect(self, addr: str, port: int, deadline: float, timeout: float) -> None:
        if self.rank == 0:
            listener = _listen(addr, port)
            socks = self._gather_hellos(listener, deadline, timeout)
            ports = [port] + [socks[r][1] for r in range(1, self.world_size)]
            table = struct.pack(f"<{self.world_size}i", *ports)
            for r in range(1, self.world_size):
                socks[r][0].sendall(table)
                self._add(r, socks[r][0])
            listener.close()
            return
        listener = _listen(addr, 0)
        master = _dial(addr, port, deadline, f"rank 0 at {addr}:{port}", timeout)
        master.sendall(_HELLO.pack(self.rank, listener.getsockname()[1]))
        raw = _recv_exact(master, 4 * self.world_size, deadline, "rank 0's table of ports")
        ports = struct.unpack(f"<{self.world_size}i", raw)
        self._add(0, master)
        for r in range(1, self.rank):  # dial the lower ranks, they accept us
            sock = _dial(addr, ports[r], deadline, f"rank {r}", timeout)
            sock.sendall(_HELLO.pack(self.rank, 0))
            self._add(r, sock)
        pending = set(range(self.rank + 1, self.world_size))
        while pending:
            sock, peer = _accept_hello(listener, deadline, pending, timeout)
            pending.discard(peer)
            self._add(peer, sock)
        listener.close()

    def _gather_hellos(self, listener: socket.socket, deadline: float, timeout: float) -> dict:
        socks: dict = {}
        pending = set(range(1, self.world_size))
        while pending:
            sock, peer, peer_port = _accept_hello(
                listener, deadline, pending, timeout, with_port=True
            )
            pending.discard(peer)
            socks[peer] = (sock, peer_port)
        return socks

    def _add(self, peer: int, sock: socket.socket) -> None:
        self.links[peer] = Link(sock, self.rank, peer)


def _listen(addr: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((addr, port))
    except OSError as exc:
        sock.close()
        raise RuntimeError(
            f"init_process_group: rank 0 cannot listen on {addr}:{port} ({exc}); "
            "is another job using MASTER_PORT?"
        ) from None
    sock.listen(64)
    return sock


def _dial(addr: str, port: int, deadline: float, who: str, timeout: float) -> socket.socket:
    while True:
        try:
            return socket.create_connection((addr, port), timeout=1.0)
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"init_process_group: timed out after {timeout:g} s connecting to {who}"
                ) from None
            time.sleep(0.02)


def _accept_hello(
    listener: socket.socket, deadline: float, pending: set, timeout: float, with_port: bool = False
) -> tuple:
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise RuntimeError(
                f"init_process_group: timed out after {timeout:g} s waiting for rank(s) "
                f"{sorted(pending)} to join"
            )
        listener.settimeout(min(left, _POLL))
        try:
            sock, _ = listener.accept()
        except TimeoutError:
            continue
        raw = _recv_exact(sock, _HELLO.size, deadline, "a joining rank")
        peer, peer_port = _HELLO.unpack(raw)
        if peer not in pending:
            sock.close()
            raise RuntimeError(
                f"init_process_group: rank {peer} joined twice, or is outside the world "
                "(two jobs on the same MASTER_PORT?)"
            )
        return (sock, peer, peer_port) if with_port else (sock, peer)


def _recv_exact(sock: socket.socket, n: int, deadline: float, what: str) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        sock.settimeout(max(deadline - time.monotonic(), 0.001))
        try:
            part = sock.recv(n - len(buf))
        except TimeoutError:
            part = None
        if not part:
            raise RuntimeError(f"init_process_group: no answer from {what}")
        buf += part
    return bytes(buf)
