"""Fingerprints of code: what a function's code does, whatever its name, file or depth.

The watch tells the package's code from the learner's by where it was written (its file,
name and first line). A learner who runs the package's *source* as their own (``exec`` of
``inspect.getsource(...)``, the text pasted inside ``if True:``, a function or a class
body, the function renamed) gets new code objects in a file of their own, which that test
does not see. What such a copy keeps is the instructions: :func:`fingerprint` digests them
with the accidents of where the source was compiled left out (line numbers, jump offsets,
the names of the function and its own locals, the docstring, a name read as a global at
module level and as a closure's variable inside a function), so a recompiled copy of a
forbidden function has the forbidden function's fingerprint.

Short functions are not fingerprinted (:data:`MIN_INSTRUCTIONS`): a one-line method
(``return self.net(x)``) is what an honest learner writes too.
"""

from __future__ import annotations

import dis
import hashlib
from types import CodeType

#: Functions with fewer instructions than this get no fingerprint.
MIN_INSTRUCTIONS = 16

#: Instructions that say where the code was compiled, not what it does.
_PLACEMENT = frozenset(
    {
        "RESUME",
        "COPY_FREE_VARS",
        "MAKE_CELL",
        "PUSH_NULL",
        "NOP",
        "EXTENDED_ARG",
        "CACHE",
        "PRECALL",
    }
)
_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)


def _kind(opname: str) -> str:
    """LOAD_GLOBAL, LOAD_DEREF, LOAD_FAST ... -> LOAD: one name read wherever it lives."""
    for kind in ("LOAD", "STORE", "DELETE"):
        if opname.startswith(kind + "_") and opname not in (
            "LOAD_CONST",
            "LOAD_ATTR",
            "LOAD_METHOD",
            "STORE_ATTR",
            "DELETE_ATTR",
            "STORE_SUBSCR",
            "DELETE_SUBSCR",
            "LOAD_ASSERTION_ERROR",
            "LOAD_BUILD_CLASS",
        ):
            return kind
    return "ATTR" if opname in ("LOAD_ATTR", "LOAD_METHOD") else opname


def _const(value: object) -> str:
    if isinstance(value, CodeType):
        return _digest(value)[0]
    if isinstance(value, str):
        return repr(" ".join(value.split()))
    if isinstance(value, (tuple, frozenset)):
        return f"{type(value).__name__}({', '.join(map(_const, value))})"
    return repr(value)


def _digest(code: CodeType) -> tuple[str, int]:
    """(sha256 of the normalised instructions, how many there are)."""
    own = set(code.co_varnames) | set(code.co_cellvars)
    renamed: dict[str, str] = {}
    steps: list[str] = []
    for ins in dis.get_instructions(code):
        if ins.opname in _PLACEMENT:
            continue
        kind = _kind(ins.opname)
        if ins.opcode in _JUMPS:
            arg = "jump"
        elif kind in ("LOAD", "STORE", "DELETE") and isinstance(ins.argval, str):
            name = ins.argval
            arg = renamed.setdefault(name, f"v{len(renamed)}") if name in own else name
        elif ins.opname == "KW_NAMES":
            arg = _const(code.co_consts[ins.arg])
        elif ins.opname == "LOAD_CONST":
            arg = _const(ins.argval)
        else:
            arg = ins.argrepr if ins.opname == "BINARY_OP" else repr(ins.argval)
        steps.append(f"{kind} {arg}")
    return hashlib.sha256("\n".join(steps).encode()).hexdigest(), len(steps)


def fingerprint(code: CodeType) -> str | None:
    """The fingerprint of ``code`` (see the module docstring), or None when it is too short
    to tell a copy from an answer of one's own."""
    digest, size = _digest(code)
    return digest if size >= MIN_INSTRUCTIONS else None
