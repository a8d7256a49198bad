"""The worker: the sandboxed process that runs a learner's notebook and the probes.

It trusts the grader and nothing else; the grader trusts nothing it sends. Over the
socket it was given (length-prefixed JSON frames):

1. it receives ``{"helpers": [[name, code]], "modules": [[name, code]], "cells": [[number,
   source]], "skip": {...}, "cell_timeout": s, "origin": name}``: the code of the helper
   modules the probes import and of the probe modules (marshal, base64), and the notebook's
   code cells, and a fresh key with which it tags every frame it sends (see
   :mod:`minitorch.course.grading.frames`), and answers ``{"ready": true}`` once the modules
   ran;
2. it runs the cells, sending ``{"cell": n}`` before each and ``{"loaded": [failures]}``
   at the end;
3. it answers each ``{"id", "module", "probe", "args", "timeout"}`` with ``{"id", "ok":
   data}`` or ``{"id", "raised": {...}}`` (see :func:`minitorch.course.grading.probes.call_probe`).
"""

from __future__ import annotations

import base64
import json
import marshal
import os
import socket
import struct
import sys
import types
from typing import Any

from minitorch.course.grading import plain
from minitorch.course.grading.frames import Signer
from minitorch.course.grading.notebook import load_cells
from minitorch.course.grading.probes import call_probe, is_probe

_HEADER = struct.Struct(">I")


class Channel:
    """Length-prefixed JSON frames over a socket (blocking; the worker's side)."""

    def __init__(self, fd: int) -> None:
        self.sock = socket.socket(fileno=fd)
        self.sock.setblocking(True)
        self.dumps = json.dumps  # bound now: a notebook that patches json cannot break us
        self.loads = json.loads
        self.signer: Signer | None = None

    def send(self, message: Any) -> None:
        data = self.dumps(message, allow_nan=False).encode("utf-8")
        if self.signer is not None:
            data = self.signer.seal(data)
        self.sock.sendall(_HEADER.pack(len(data)) + data)

    def _exactly(self, size: int) -> bytes:
        chunks, left = [], size
        while left:
            chunk = self.sock.recv(min(left, 1 << 20))
            if not chunk:
                raise EOFError
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def receive(self) -> Any:
        (size,) = _HEADER.unpack(self._exactly(_HEADER.size))
        return self.loads(self._exactly(size).decode("utf-8"))


def _run_module(name: str, code: str) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__file__ = name
    sys.modules[name] = module
    exec(marshal.loads(base64.b64decode(code)), module.__dict__)
    return module


def _modules(helpers: list[list[str]], specs: list[list[str]]) -> list[dict[str, Any]]:
    """Run the helper modules the probes import, then each probe module's code in a
    fresh module; each module's probes by name."""
    for name, code in helpers:
        _run_module(name, code)
    return [
        {k: v for k, v in vars(_run_module(name, code)).items() if is_probe(v)}
        for name, code in specs
    ]


def serve(fd: int) -> None:
    """Load the notebook and answer probe calls until the grader hangs up."""
    channel = Channel(fd)
    setup = channel.receive()
    key = setup.pop("key", None)
    if isinstance(key, str):
        channel.signer = Signer(bytes.fromhex(key))
    del key
    probes = _modules(setup.get("helpers", []), setup["modules"])
    channel.send({"ready": True})
    skip = {int(cell): problem for cell, problem in setup.get("skip", {}).items()}
    nb = load_cells(
        [(int(n), str(src)) for n, src in setup["cells"]],
        origin=setup.get("origin", "the notebook"),
        cell_timeout=setup.get("cell_timeout"),
        skip_cells=skip,
        on_cell=lambda number: channel.send({"cell": number}),
    )
    failures = [f.to_dict() | {"source": ""} for f in nb._failures]
    channel.send({"loaded": failures})
    while True:
        try:
            request = channel.receive()
        except (EOFError, OSError):
            break
        if request.get("op") == "bye":
            break
        func = probes[request["module"]][request["probe"]]
        args = plain.decode(request["args"])
        reply = call_probe(func, nb, args, request.get("timeout"), request.get("limit"))
        reply["id"] = request["id"]
        channel.send(reply)
    sys.stdout.flush()
    os._exit(0)
