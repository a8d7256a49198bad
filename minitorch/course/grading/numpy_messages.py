"""numpy's assertion messages (``assert_allclose``, ``assert_array_equal``) in one line, in the
learner's terms: what was compared, where the first difference is, yours and the expected.

numpy's own first line is "Not equal to tolerance rtol=1e-06, atol=0": the grader shows one
line per test, and that one says neither what was compared nor what came back.
"""

from __future__ import annotations

import re

_HEADER = re.compile(r"^(Not equal to tolerance (?P<tol>.*)|Arrays are not (almost )?equal.*)$")
_SHAPES = re.compile(r"^\(shapes (?P<actual>\(.*?\)), (?P<desired>\(.*?\)) mismatch\)")
_COUNT = re.compile(r"^Mismatched elements: (?P<k>\d+) / (?P<n>\d+)")
_AT = re.compile(
    r"^\s*\[(?P<index>[^\]]*)\]: (?P<actual>.*) \(ACTUAL\), (?P<desired>.*) \(DESIRED\)$"
)


def rephrase(text: str) -> str | None:
    """One line for numpy's multi-line message, or None when ``text`` is not one."""
    lines = text.strip("\n").splitlines()
    if not lines or not _HEADER.match(lines[0]):
        return None
    tol = _HEADER.match(lines[0]).group("tol")
    what = lines[1].strip() if len(lines) > 1 and not _is_detail(lines[1]) else ""
    what = what or "the values"
    for line in lines[1:]:
        shapes = _SHAPES.match(line.strip())
        if shapes:
            return f"{what}: yours have shape {shapes['actual']}, expected {shapes['desired']}"
    count = next((m for m in map(_COUNT.match, lines) if m), None)
    at = next((m for m in map(_AT.match, lines) if m), None)
    out = what
    if count is not None:
        out += f": {count['k']} of {count['n']} elements differ"
    if at is not None:
        where = f" at index [{at['index']}]" if at["index"] else ""
        out += f"; first{where}: yours {at['actual']}, expected {at['desired']}"
    else:
        actual, desired = _field(lines, "ACTUAL"), _field(lines, "DESIRED")
        if actual and desired:
            out += f": yours {actual}, expected {desired}"
    if tol:
        out += f" (tolerance {tol})"
    return out


def _is_detail(line: str) -> bool:
    return bool(_COUNT.match(line) or _SHAPES.match(line.strip()) or line.startswith(" ACTUAL"))


def _field(lines: list[str], name: str) -> str:
    """The value numpy printed after `` ACTUAL:`` (``array(1.)`` -> ``1.``), short."""
    for line in lines:
        if line.strip().startswith(name + ":"):
            value = line.split(":", 1)[1].strip()
            inner = re.fullmatch(r"array\((.*)\)", value)
            value = inner.group(1) if inner else value
            return value if len(value) <= 80 else value[:77] + "..."
    return ""
