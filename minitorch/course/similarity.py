"""Which students' answers read alike, for an instructor to look at (never a grade).

Each notebook's answers are the top-level functions and classes it defines that the blank
exercise notebook leaves unfinished (all of them when there is no blank notebook). Each is
normalised before comparing: parsed, docstrings dropped, every local name (arguments,
variables, inner functions) renamed by order of first use, and printed again, so renaming
and reformatting change nothing. Two students' versions of one answer whose token
sequences match at ``threshold`` or more (difflib's ratio) are a pair to review; answers
under ``MIN_TOKENS`` tokens are too short to tell copying from the one obvious answer.
"""

from __future__ import annotations

import ast
import builtins
import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from minitorch.course import manifest

THRESHOLD = 0.9
MIN_TOKENS = 40
_TOKEN = re.compile(r"\w+|[^\w\s]")
_KEEP = set(dir(builtins)) | {"self", "cls"}


@dataclass(frozen=True)
class Pair:
    """Two students whose ``answers`` read alike, at ``ratio`` on average."""

    first: str
    second: str
    answers: tuple[str, ...]
    ratio: float


class _Renamer(ast.NodeTransformer):
    """Local names to v0, v1, ... by first use; attributes and globals read kept."""

    def __init__(self, local: set[str]) -> None:
        self.local = local
        self.names: dict[str, str] = {}

    def _name(self, name: str) -> str:
        if name not in self.local or name in _KEEP:
            return name
        return self.names.setdefault(name, f"v{len(self.names)}")

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = self._name(node.id)
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.arg = self._name(node.arg)
        node.annotation = None
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        node.name = self._name(node.name)
        node.returns = None
        if node.body and isinstance(node.body[0], ast.Expr):
            if isinstance(getattr(node.body[0], "value", None), ast.Constant):
                node.body = node.body[1:] or [ast.Pass()]
        self.generic_visit(node)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef  # noqa: N815 (ast's visitor names)


def _local_names(node: ast.AST) -> set[str]:
    """Names bound inside ``node``: arguments, assignments, loop and inner def names."""
    names = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.arg):
            names.add(sub.arg)
        elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
            names.add(sub.id)
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and sub is not node:
            names.add(sub.name)
    return names


def normalised(node: ast.AST) -> list[str]:
    """The tokens of a definition with its local names renamed and its format dropped."""
    node = _Renamer(_local_names(node)).visit(ast.parse(ast.unparse(node)).body[0])
    return _TOKEN.findall(ast.unparse(node))


def _definitions(path: Path) -> dict[str, ast.AST]:
    from minitorch.course.grading.errors import NotebookError
    from minitorch.course.grading.notebook import code_cells, without_magics

    found: dict[str, ast.AST] = {}
    try:
        cells = code_cells(path)
    except (NotebookError, OSError):
        return found
    for _, source in cells:
        try:
            tree = ast.parse(without_magics(source))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found[node.name] = node
    return found


def _unfinished(chapter: manifest.Chapter) -> set[str] | None:
    """The names the blank notebook leaves to the learner; None without a blank notebook."""
    blank = chapter.exercise_notebook
    if not blank.is_file():
        return None
    return {
        name
        for name, node in _definitions(blank).items()
        if any(isinstance(n, ast.Name) and n.id == "NotImplementedError" for n in ast.walk(node))
    }


def answers(path: Path, wanted: set[str] | None) -> dict[str, list[str]]:
    """A notebook's answers (name -> normalised tokens), long enough to compare."""
    out = {}
    for name, node in _definitions(path).items():
        if wanted is not None and name not in wanted:
            continue
        try:
            tokens = normalised(node)
        except (SyntaxError, ValueError, RecursionError):
            continue
        if len(tokens) >= MIN_TOKENS:
            out[name] = tokens
    return out


def similar_pairs(
    notebooks: Iterable[tuple[str, Path]],
    chapter: manifest.Chapter,
    threshold: float = THRESHOLD,
) -> list[Pair]:
    """Pairs of students (``(student, notebook)``) with answers that read alike, each
    pair once with those answers, the pairs with the most alike answers first."""
    wanted = _unfinished(chapter)
    owners = {
        name: exercise
        for exercise in chapter.exercises
        for piece in exercise.pieces
        for name in {piece.partition(":")[2].split(".")[0]}
    }
    by_student = [(student, answers(path, wanted)) for student, path in notebooks]
    pairs = []
    for i, (first, mine) in enumerate(by_student):
        for second, theirs in by_student[i + 1 :]:
            alike: list[tuple[str, float]] = []
            for name in sorted(mine.keys() & theirs.keys()):
                matcher = difflib.SequenceMatcher(None, mine[name], theirs[name], autojunk=False)
                if matcher.real_quick_ratio() < threshold or matcher.quick_ratio() < threshold:
                    continue
                ratio = matcher.ratio()
                if ratio >= threshold:
                    alike.append((f"{owners[name].id} {name}" if name in owners else name, ratio))
            if alike:
                mean = round(sum(r for _, r in alike) / len(alike), 3)
                pairs.append(Pair(first, second, tuple(a for a, _ in alike), mean))
    pairs.sort(key=lambda p: (-len(p.answers), -p.ratio, p.first, p.second))
    return pairs
