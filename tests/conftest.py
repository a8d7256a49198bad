"""Options shared by the whole test suite."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--notebook",
        metavar="PATH",
        default=None,
        help="run the exercise tests against this notebook instead of the chapter's "
        "solution notebook (also: the MINITORCH_NOTEBOOK environment variable)",
    )
