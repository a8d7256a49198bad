"""The course around the framework: what teaching minitorch needs, and minitorch does not.

- ``manifest``: the one list of chapters and graded exercises, and where the course's
  notebooks are;
- ``grading``: ``check()`` in a notebook, the sandboxed grader and its tests' contract;
- ``generate``: the exercise notebooks, generated from the solution notebooks;
- ``grade``: the grading command (``python -m minitorch.grade``);
- ``notebook``: lesson helpers (``show_source``, progress bars, notebook metadata);
- ``viz*``: the lessons' pictures; ``digits``: the example model and data of chapter 04.

The framework never imports this package, and ``pip install minitorch`` alone does not
install what it needs (JupyterLab, matplotlib, scikit-learn): the ``course`` extra does.
"""
