"""Text that came from a student, made safe for the files an instructor opens.

A spreadsheet runs a CSV cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a
carriage return as a formula; OWASP's advice for CSV injection
(https://owasp.org/www-community/attacks/CSV_Injection) is to prepend a single quote to
such a cell, which every spreadsheet then shows as text. ``csv`` quotes the rest (commas,
quotes, line breaks). A Markdown viewer renders HTML, links and table pipes; ``md_text``
escapes them and folds every line break, so a file name or a message stays one inline
run of text that cannot open a list item, a heading, a table cell or a tag.
"""

from __future__ import annotations

import re
from typing import Any

from minitorch.course.grading.plain import clean_text

#: What a spreadsheet takes for the start of a formula (OWASP's list).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

_LINE_BREAKS = re.compile(r"[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]+")
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
#: What opens a block when a line starts with it: a heading, a list item, a quote
#: (``>`` is an entity by then), a setext underline, a numbered item.
_BLOCK_START = re.compile(r"^(\s*)(#{1,6}(?=\s|$)|[+-](?=\s|$)|[=-]+\s*$|\d{1,9}[.)](?=\s|$))")


def csv_cell(value: Any) -> Any:
    """A value for a CSV cell: numbers as they are, text that a spreadsheet would run as a
    formula prefixed with ``'`` (also when spaces or line breaks come before the sign)."""
    if value is None:
        return ""
    if not isinstance(value, str):
        return value
    value = value.encode("utf-8", "replace").decode("utf-8")  # a lone surrogate: "?"
    if value.startswith(FORMULA_STARTS) or value.lstrip(" \n\r\t").startswith(FORMULA_STARTS):
        return "'" + value
    return value


def md_text(value: Any, limit: int | None = None) -> str:
    """``value`` as inline Markdown that renders as the same text: HTML's ``& < >``
    as entities, the punctuation of emphasis, code, links and tables backslash-escaped
    (and a block marker at the start: ``#``, ``-``, ``1.``), line breaks folded to a
    space, terminal escapes, control and invisible formatting characters dropped and lone
    surrogates replaced (``clean_text``); cut to ``limit`` characters (before escaping)."""
    text = clean_text(_LINE_BREAKS.sub(" ", str(value)), limit or 10**9)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MARKDOWN_SPECIAL.sub(r"\\\1", text)
    return _BLOCK_START.sub(_escape_block_start, text)


def _escape_block_start(found: re.Match) -> str:
    marker = found[2]
    if marker[0].isdigit():  # "12." -> "12\."
        digits = marker.rstrip(".)")
        return found[1] + digits + "\\" + marker[len(digits) :]
    return found[1] + "\\" + marker


def md_code_block(text: str) -> list[str]:
    """``text`` as a fenced code block (Markdown shows it verbatim, HTML included): the
    fence is longer than any run of backticks in the text, so the text cannot close it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = _CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    body = body.encode("utf-8", "replace").decode("utf-8")
    return [fence, *body.split("\n"), fence]
