"""Older kinds of delegation (issue 36, item 6), graded as the grader grades them: each
hostile answer goes into a copy of its chapter's solution notebook and must get no points
on its exercise (or lose points), while the solution keeps full marks."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from minitorch.course.grading.delegation import is_delegation

EXERCISES = Path(__file__).resolve().parents[1] / "exercises"


@pytest.fixture(scope="module")
def mutants():
    sys.path.insert(0, str(EXERCISES))
    try:
        import mutants

        yield mutants
    finally:
        sys.path.remove(str(EXERCISES))


def _grade(mutants, chapter_id, exercise_id, source):
    nb = mutants.mutant_namespace(chapter_id, {exercise_id: {"h": source}}, exercise_id, "h")
    return mutants.grade(chapter_id, exercise_id, nb)


# catches: numpy's helpers the exercise's own list did not name (a zero-strided view of any
# shape, made without memory, and numpy's private broadcast of such views)
NUMPY_ROUTES = {
    "01.4": """
import numpy as np
from numpy.lib import stride_tricks
def broadcast_shapes(*shapes):
    views = [stride_tricks.as_strided(np.zeros(1), tuple(s), (0,) * len(s)) for s in shapes]
    return tuple(np.lib._stride_tricks_impl._broadcast_shape(*views))
""",
    "01.5": """
import numpy as np
from numpy.lib import stride_tricks
def broadcast_index(out_index, out_shape, in_shape):
    positions = np.arange(max(int(np.prod(in_shape)), 1)).reshape(in_shape)
    pad = len(out_shape) - len(in_shape)
    steps = [0 if n == 1 else s for n, s in zip(in_shape, positions.strides)]
    view = stride_tricks.as_strided(positions, tuple(out_shape), (0,) * pad + tuple(steps))
    position, index = int(view[tuple(out_index)]), []
    for n in reversed(in_shape):
        position, i = divmod(position, n)
        index.append(i)
    return tuple(reversed(index))
""",
    "01.3": """
import numpy as np
def unravel_index(position, shape):
    return tuple(int(i) for i in np.mgrid[tuple(slice(0, s) for s in shape)].reshape(
        len(shape), -1)[:, position]) if shape else ()
""",
}


@pytest.mark.parametrize("exercise_id", sorted(NUMPY_ROUTES))
def test_numpys_index_and_broadcast_helpers_are_refused_in_every_index_exercise(
    mutants, exercise_id
):
    result = _grade(mutants, "01", exercise_id, NUMPY_ROUTES[exercise_id])
    assert result.score == 0 and is_delegation(result.reason), (result.score, result.reason)


# catches: ranks (threads of one process) that swap their data through a shared dict and send
# zero arrays of the ring's sizes, so that the traffic's counts match the ring's
SHARED_MEMORY_RINGS = {
    "06.1": """
import numpy as np
_board = {}
def ring_reduce_scatter(chunks, rank, world_size, send, recv):
    import time
    _board[rank] = [np.array(c, dtype=np.float64) for c in chunks]
    while len(_board) < world_size:
        time.sleep(0.001)
    out = [np.array(c, dtype=np.float64) for c in chunks]
    for step in range(world_size - 1):
        j = (rank - step) % world_size
        send(np.zeros(len(chunks[j])))
        recv()
    mine = (rank + 1) % world_size
    out[mine] = sum(_board[q][mine] for q in range(world_size))
    time.sleep(0.05)
    _board.clear()
    return out
""",
    "06.3": """
import numpy as np
_board = {}
def ring_all_reduce(array, rank, world_size, send, recv):
    import time
    _board[rank] = np.array(array, dtype=np.float64)
    while len(_board) < world_size:
        time.sleep(0.001)
    size = np.asarray(array).size
    step_size = -(-size // world_size)
    for _ in range(2 * (world_size - 1)):
        send(np.zeros(min(step_size, size)))
        recv()
    total = sum(_board[q] for q in range(world_size))
    time.sleep(0.05)
    _board.clear()
    return np.array(total).reshape(np.shape(array))
""",
}


@pytest.mark.parametrize("exercise_id", sorted(SHARED_MEMORY_RINGS))
def test_a_ring_whose_messages_carry_no_data_loses_points(mutants, exercise_id):
    result = _grade(mutants, "06", exercise_id, SHARED_MEMORY_RINGS[exercise_id])
    assert result.score < result.max_score, (result.score, result.reason)
    assert "must carry the data" in str(result.to_dict()), result.to_dict()


# catches: the package's own piece run as the learner's: its module's source compiled under
# another file name, or the piece wrapped in the package's own decorator
RECOMPILED = {
    "01.1": """
import inspect
import minitorch.shape as S
exec(compile(inspect.getsource(S), "my_shape.py", "exec"), scope := {"__name__": "my_shape"})
contiguous_strides = scope["contiguous_strides"]
""",
    "01.4": """
import minitorch
import minitorch.shape as S
broadcast_shapes = minitorch.enable_grad()(S.broadcast_shapes)
""",
}


@pytest.mark.parametrize("exercise_id", sorted(RECOMPILED))
def test_the_packages_piece_under_another_name_gets_no_points(mutants, exercise_id):
    result = _grade(mutants, "01", exercise_id, RECOMPILED[exercise_id])
    assert result.score == 0 and is_delegation(result.reason), (result.score, result.reason)


def test_the_grader_refuses_and_flags_the_packages_source_end_to_end(tmp_path):
    # the whole way: a sandboxed worker runs the notebook, the watch refuses the recompiled
    # piece, and the review flags the code that ran the package's source
    import nbformat

    from minitorch.course import manifest
    from minitorch.course.grading import grade
    from minitorch.course.grading.notebook import opens_at_work

    chapter = manifest.chapter("01")
    nb = nbformat.read(chapter.solution, as_version=4)
    end = next(i for i, cell in enumerate(nb.cells) if opens_at_work(cell))  # (graded cells)
    hostile = [nbformat.v4.new_code_cell(RECOMPILED[e]) for e in ("01.1", "01.4")]
    nb.cells[end:end] = hostile
    path = tmp_path / chapter.solution.name
    nbformat.write(nb, path)
    report = grade(path, chapter=chapter, exercises=["01.1", "01.2", "01.4"])
    for exercise_id in ("01.1", "01.4"):
        result = report.result(exercise_id)
        assert result.score == 0 and is_delegation(result.reason), (exercise_id, result)
    assert report.result("01.2").score == report.result("01.2").max_score  # the honest one
    seen = [flag["seen"] for flag in report.to_gradescope()["review"]]
    assert any("runs code from text" in s for s in seen), seen
