"""The fixture chapter's exercise tests (graded by the grading tests, not run by pytest)."""

from minitorch.grading import exercise


@exercise("99.1")
def test_add_small_numbers(nb):
    got = nb.add(2, 3)
    assert got == 5, f"add(2, 3) returned {got!r}, expected 5"


@exercise("99.1")
def test_add_negative_numbers(nb):
    got = nb.add(-2, -3)
    assert got == -5, f"add(-2, -3) returned {got!r}, expected -5"


@exercise("99.2")
def test_mul_small_numbers(nb):
    got = nb.mul(2, 3)
    assert got == 6, f"mul(2, 3) returned {got!r}, expected 6"


@exercise("99.2")
def test_mul_by_zero(nb):
    got = nb.mul(7, 0)
    assert got == 0, f"mul(7, 0) returned {got!r}, expected 0"


@exercise("99.2")
def test_mul_by_one(nb):
    got = nb.mul(7, 1)
    assert got == 7, f"mul(7, 1) returned {got!r}, expected 7"


@exercise("99.3")
def test_greet(nb):
    got = nb.greet("Ada")
    assert got == "hello Ada", f"greet('Ada') returned {got!r}, expected 'hello Ada'"
