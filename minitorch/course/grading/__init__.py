"""Exercises and grading: the same exercise tests serve three ways.

- ``check("01.3")`` inside a notebook runs one exercise's tests on the spot, and
  ``hint("01.3")`` shows the next level of its hints (:mod:`minitorch.course.hints`);
- :func:`grade` grades a whole notebook, the learner's code in a sandboxed process
  (``python -m minitorch.grade``);
- pytest runs the tests against the solution notebooks (``tests/exercises``).

An exercise test is a *judge* registered with ``@exercise("01.3")``: a function of
``run`` that calls the learner's code through *probes* (``@probe`` functions of ``nb``,
the notebook's definitions) and compares what they return, as plain data, with the
reference. See :mod:`minitorch.course.grading.probes`.

**Delegation** (one mechanism for every chapter, :mod:`minitorch.course.grading.delegation`): an
exercise declares the ready-made implementations it forbids, and its probes watch for
them. An answer that calls one (directly, through an alias, a captured original, after
``importlib.reload``, through a class attribute or subclass) gets no points for the whole
exercise and the message "your answer used minitorch's own X: write it yourself"::

    from minitorch.course.grading import exercise, forbid, forbidding, probe

    WALK = forbid(nn.Module.named_parameters, nn.Module.parameters, np.unravel_index)

    @probe(forbid=WALK)                 # the whole probe is watched
    def walk(nb, name):
        return [n for n, _ in nb.named_parameters(MODELS[name]())]

    @probe
    def trained(nb, seed):              # or only the learner's call, when the probe
        model = make_model(seed)        # itself uses a forbidden piece to set things up
        with forbidding(WALK, nb):
            names = list(nb.named_parameters(model))
        return names

``forbid`` takes functions, methods, properties, classes (their methods, and any class
of the notebook that is or subclasses them), ``(owner, "attr")`` pairs, numpy and other
C functions, and package names; torch is always forbidden. Only calls made from code
outside the libraries count (the learner's cells, the probes), so the package may call
a forbidden piece on the learner's behalf. Give delegating mutants a name starting with
``delegates`` in ``tests/exercises/mutants_NN.py``: the shared harness
(``tests/exercises/mutants.py``) checks that they get no points and that message.
"""

from minitorch.course.grading.check import CheckResult, check
from minitorch.course.grading.delegation import Delegated, Forbidden, forbid, forbidding
from minitorch.course.grading.errors import GradingError, NotebookError
from minitorch.course.grading.grader import grade
from minitorch.course.grading.namespace import MissingDefinition, Namespace
from minitorch.course.grading.notebook import load_notebook
from minitorch.course.grading.probes import LearnerError, LocalRunner, Runner, probe, tensor_data
from minitorch.course.grading.registry import exercise
from minitorch.course.grading.report import GradeReport
from minitorch.course.hints import hint

__all__ = [
    "CheckResult",
    "Delegated",
    "Forbidden",
    "GradeReport",
    "GradingError",
    "LearnerError",
    "LocalRunner",
    "MissingDefinition",
    "Namespace",
    "NotebookError",
    "Runner",
    "check",
    "exercise",
    "forbid",
    "forbidding",
    "grade",
    "hint",
    "load_notebook",
    "probe",
    "tensor_data",
]
