"""Private tests stay private: the learner's process gets the probes and exactly what they
use (a closure analysis), helper modules beside a test work, and students never see a
private test's name or source (issue 21, item 1)."""

from __future__ import annotations

import ast
import json
import textwrap
from pathlib import Path

from grading_fixtures import TIMEOUT

from minitorch.course.grading import grade
from minitorch.course.grading.closure import closure, shipped_code

SECRET = "SECRET-" + "7" * 10


def shipped_text(source: str) -> str:
    return ast.unparse(closure(textwrap.dedent(source), "<t>").module)


def test_a_judge_and_its_cases_inside_an_if_block_stay_in_the_grader():
    # catches: every top-level statement that binds no name being sent to the worker
    text = shipped_text(f"""
        from minitorch.course.grading import exercise, probe
        if True:
            CASES = [{SECRET!r}]
            def scale(x):
                return 2 * x
            @exercise("01.1")
            def test_hidden(run):
                assert run(p, 1) == CASES
        print(CASES)
        @probe
        def p(nb, x):
            return scale(nb.f(x))
    """)
    assert "def scale" in text and "def p" in text
    assert SECRET not in text and "CASES" not in text and "test_hidden" not in text
    assert "print" not in text


def test_a_judge_constant_a_probe_names_as_a_local_is_not_shipped():
    # catches: names matched textually (a local EXPECTED in a probe pulled in the global)
    text = shipped_text(f"""
        from minitorch.course.grading import exercise, probe
        EXPECTED = [{SECRET!r}]
        ROWS = 4
        @probe
        def p(nb, x):
            EXPECTED = nb.f(x)
            squares = [EXPECTED for EXPECTED in range(ROWS)]
            return EXPECTED, squares, (lambda EXPECTED: EXPECTED)(1)
        @exercise("01.1")
        def test_p(run):
            assert run(p, 1) == EXPECTED
    """)
    assert SECRET not in text and "ROWS = 4" in text


def test_what_a_probe_reads_is_followed_through_definitions():
    text = shipped_text("""
        import numpy as np
        import json, os
        from minitorch.course.grading import exercise, probe
        try:
            import scipy
        except ImportError:
            scipy = None
        BASE = 3
        def helper(x, k=BASE):
            return np.asarray(x) * k
        class Box:
            size = BASE
        @probe
        def p(nb, x):
            return helper(nb.f(x)).tolist(), Box.size, scipy is None
    """)
    for needed in ("import numpy as np", "BASE = 3", "def helper", "class Box", "scipy = None"):
        assert needed in text
    assert "json" not in text and "os" not in text.replace("Box", "")


def write_private(folder: Path) -> None:
    folder.mkdir()
    (folder / "cases.py").write_text(
        f"import numpy as np\nHIDDEN = {SECRET!r}\n\n"
        "def pair(rng):\n    return [int(v) for v in rng.integers(0, 9, size=2)]\n\n"
        "def answer(a, b):\n    return a + b\n"
    )
    (folder / "judge_only.py").write_text("raise RuntimeError('never imported in the sandbox')\n")
    (folder / "test_private_add.py").write_text(
        "from cases import pair, HIDDEN\n"
        "import cases\n"
        "from minitorch.course.grading import exercise, probe\n\n"
        "@probe\ndef add_pair(nb, seed):\n"
        "    import numpy as np\n"
        "    a, b = pair(np.random.default_rng(seed))\n"
        "    return nb.add(a, b), cases.answer(a, b)\n\n"
        "@exercise('99.1')\n"
        "def test_private_pairs(run):\n"
        "    got, expected = run(add_pair, 5)\n"
        "    assert got == expected, f'wrong ({len(HIDDEN)})'\n"
    )


def test_helper_modules_ship_only_what_the_probes_use(tmp_path):
    write_private(tmp_path / "private")
    parts = shipped_code(tmp_path / "private" / "test_private_add.py", "<private tests 0>")
    names = [name for name, _, _ in parts]
    assert names == ["cases", ""]  # judge_only.py is never sent
    helper = ast.unparse(parts[0][1])
    assert "def pair" in helper and "def answer" in helper and SECRET not in helper
    assert "HIDDEN" not in ast.unparse(parts[1][1])


def test_an_honest_private_test_with_a_helper_module_grades(make_notebook, chapter, tmp_path):
    # catches: "the grading worker did not start (exit code 70)" for every submission
    write_private(tmp_path / "private")
    honest = "def add(a, b):\n    return a + b\n"
    report = grade(
        make_notebook(honest),
        chapter=chapter,
        extra_test_dirs=[tmp_path / "private"],
        timeout=TIMEOUT,
    )
    result = report.result("99.1")
    assert result.status == "passed", result.reason


def test_students_see_neither_the_name_nor_the_values_of_a_private_test(
    make_notebook, chapter, tmp_path
):
    write_private(tmp_path / "private")
    snoop = (
        "import gc, sys\n"
        "def add(a, b):\n"
        "    modules = list(sys.modules.values())\n"
        "    seen = [repr(getattr(m, '__dict__', ''))[:20000] for m in modules]\n"
        "    for o in gc.get_objects():\n"
        "        try:\n"
        "            seen += [str(c) for c in o.co_consts]\n"
        "        except Exception:\n"
        "            pass\n"
        "    text = ' '.join(seen)\n"
        "    for needle in ('SEC' + 'RET-', 'test_' + 'private'):\n"
        "        if needle in text:\n"
        "            raise ValueError(text[text.find(needle):][:60])\n"
        "    return a + b + 1\n"
    )
    report = grade(
        make_notebook(snoop),
        chapter=chapter,
        extra_test_dirs=[tmp_path / "private"],
        timeout=10.0,  # (walking every object takes over a second while other tests run)
    )
    results = json.dumps(report.to_gradescope())
    assert SECRET not in results and "ValueError" not in results
    assert "test_private_pairs" not in results and "private test 1" in results
    assert [t.status for t in report.result("99.1").tests if t.private] == ["failed"]
    shown = report.to_gradescope(private_visibility="visible")
    assert "test_private_pairs" in json.dumps(shown)  # the instructor chose to show it
