"""load_notebook: every cell runs on its own; failures are recorded, loading goes on."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from grading_fixtures import ADD, GREET, MUL, markdown

from minitorch.course.grading import MissingDefinition, Namespace, NotebookError, load_notebook
from minitorch.course.manifest import ROOT


def test_definitions_are_attributes(make_notebook):
    nb = load_notebook(make_notebook(ADD, MUL, "who = __name__"))
    assert nb.add(2, 3) == 5
    assert nb.mul(2, 3) == 6
    assert nb.who == "__main__"
    assert "add" in nb and "nothing" not in nb
    assert nb._failures == []


def test_cells_share_one_namespace_and_run_in_order(make_notebook):
    nb = load_notebook(make_notebook("x = 1", "x += 1\ny = x * 10", "def f():\n    return y"))
    assert (nb.x, nb.y, nb.f()) == (2, 20, 20)


def test_a_syntax_error_loses_only_its_own_cell(make_notebook):
    bad_mul = "def mul(a, b):\n    return a *\n"
    path = make_notebook(markdown("# title"), ADD, bad_mul, GREET)
    nb = load_notebook(path)
    assert nb.add(1, 1) == 2 and nb.greet("x") == "hello x"
    [failure] = nb._failures
    assert failure.cell == 3  # the markdown cell counts
    assert str(failure) == "cell 3 raised SyntaxError: invalid syntax (line 2)"
    with pytest.raises(MissingDefinition) as caught:
        nb.mul(2, 3)
    message = str(caught.value)
    assert message.startswith("the notebook defines no `mul`")
    assert "cell 3 raised SyntaxError: invalid syntax (line 2)" in message
    assert not caught.value.not_implemented


def test_a_missing_name_is_an_attribute_error_that_says_what_to_do(make_notebook):
    nb = load_notebook(make_notebook(ADD))
    assert not hasattr(nb, "mul")
    with pytest.raises(AttributeError, match=r"the notebook defines no `mul`: define it"):
        _ = nb.mul
    with pytest.raises(AttributeError) as dunder:
        _ = nb.__wrapped__
    assert not isinstance(dunder.value, MissingDefinition)


def test_a_missing_name_lists_the_failed_cells_when_none_defines_it(make_notebook):
    nb = load_notebook(make_notebook("1 / 0", ADD, "undefined_name + 1"))
    with pytest.raises(MissingDefinition) as caught:
        _ = nb.mul
    assert str(caught.value) == (
        "the notebook defines no `mul` (cells that failed while loading: "
        "cell 1 raised ZeroDivisionError: division by zero (line 1); "
        "cell 3 raised NameError: name 'undefined_name' is not defined (line 1))"
    )


def test_sys_exit_keyboard_interrupt_and_errors_are_recorded(make_notebook):
    cells = [
        "import sys\nsys.exit(3)",
        "raise KeyboardInterrupt",
        "x = 1\n\nraise ValueError('bad\\nsecond line')",
        ADD,
    ]
    nb = load_notebook(make_notebook(*cells))
    assert [str(f) for f in nb._failures] == [
        "cell 1 raised SystemExit: 3 (line 2)",
        "cell 2 raised KeyboardInterrupt (line 1)",
        "cell 3 raised ValueError: bad (line 3)",
    ]
    assert nb.x == 1 and nb.add(1, 2) == 3


def test_a_runaway_cell_times_out_and_the_rest_load(make_notebook):
    nb = load_notebook(make_notebook("while True:\n    pass", ADD), cell_timeout=0.3)
    assert [str(f) for f in nb._failures] == ["cell 1 timed out after 0.3 s"]
    assert nb.add(2, 2) == 4


def test_magics_and_shell_lines_are_skipped(make_notebook):
    cells = [
        "%matplotlib inline\nimport math",
        "%%time\nthis is not python",
        "!ls -l\nif True:\n    !echo hi\n    z = 3\nz += 1\n1 / 0",
    ]
    nb = load_notebook(make_notebook(*cells))
    assert nb.math.pi > 3 and nb.z == 4
    assert [str(f) for f in nb._failures] == [
        "cell 3 raised ZeroDivisionError: division by zero (line 6)"
    ]


def test_check_does_nothing_while_a_notebook_loads(make_notebook):
    code = "from minitorch.course.grading import check\nresult = check('01.1')"
    nb = load_notebook(make_notebook(code))
    assert nb._failures == [] and nb.result is None


def test_display_and_the_repository_root_are_there(make_notebook):
    nb = load_notebook(make_notebook("display('shown')\nimport minitorch.course.manifest as m"))
    assert nb._failures == []
    assert str(ROOT) in sys.path and nb.m.ROOT == ROOT


def test_skipped_cells_are_recorded_not_run(make_notebook):
    nb = load_notebook(make_notebook("x = 1", "x = 2"), skip_cells={2: "was skipped"})
    assert nb.x == 1
    assert [str(f) for f in nb._failures] == ["cell 2 was skipped"]


def test_a_missing_or_broken_notebook_is_a_notebook_error(tmp_path: Path):
    with pytest.raises(NotebookError, match="no notebook"):
        load_notebook(tmp_path / "nope.ipynb")
    broken = tmp_path / "broken.ipynb"
    broken.write_text("{not json")
    with pytest.raises(NotebookError, match="is not a Jupyter notebook"):
        load_notebook(broken)
    broken.write_text('{"nbformat": 4, "cells": 3}')
    with pytest.raises(NotebookError, match="has no list of cells"):
        load_notebook(broken)


def test_a_live_namespace_says_to_run_the_defining_cell():
    nb = Namespace({"a": 1}, live=True)
    assert nb.a == 1
    with pytest.raises(MissingDefinition, match="run the cell that defines it first"):
        _ = nb.b
    assert dir(nb) == ["a"]
    with pytest.raises(AttributeError, match="read-only"):
        nb.a = 2
