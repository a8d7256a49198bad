"""The fixture chapter's exercise tests (graded by the grading tests, not run by pytest).

Each probe runs the learner's function in the learner's process; each judge decides here.
"""

from minitorch.course.grading import exercise, probe


@probe
def add(nb, a, b):
    return nb.add(a, b)


@probe
def mul(nb, a, b):
    return nb.mul(a, b)


@probe
def greet(nb, name):
    return nb.greet(name)


@exercise("99.1")
def test_add_small_numbers(run):
    got = run(add, 2, 3)
    assert got == 5, f"add(2, 3) returned {got!r}, expected 5"


@exercise("99.1")
def test_add_negative_numbers(run):
    got = run(add, -2, -3)
    assert got == -5, f"add(-2, -3) returned {got!r}, expected -5"


@exercise("99.2")
def test_mul_small_numbers(run):
    got = run(mul, 2, 3)
    assert got == 6, f"mul(2, 3) returned {got!r}, expected 6"


@exercise("99.2")
def test_mul_by_zero(run):
    got = run(mul, 7, 0)
    assert got == 0, f"mul(7, 0) returned {got!r}, expected 0"


@exercise("99.2")
def test_mul_by_one(run):
    got = run(mul, 7, 1)
    assert got == 7, f"mul(7, 1) returned {got!r}, expected 7"


@exercise("99.3")
def test_greet(run):
    got = run(greet, "Ada")
    assert got == "hello Ada", f"greet('Ada') returned {got!r}, expected 'hello Ada'"
