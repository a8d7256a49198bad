"""pyproject.toml and environment.yml must declare the same dependencies."""

import re
from importlib.metadata import requires

from minitorch.manifest import ROOT


def _name(requirement: str) -> str:
    """``numpy>=1.26`` -> ``numpy`` (normalised as pip does)."""
    name = re.split(r"[<>=!~;\[ ]", requirement.strip(), maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", name).lower()


def _pyproject_deps(extras: tuple[str, ...] = ("test",)) -> set[str]:
    """Runtime deps plus the given extras, as declared in pyproject.toml (installed metadata)."""
    names = set()
    for req in requires("minitorch"):
        extra = re.search(r"extra == .(\w+).", req)
        if extra is None or extra.group(1) in extras:
            names.add(_name(req))
    return names


def _conda_deps() -> set[str]:
    names = set()
    text = (ROOT / "environment.yml").read_text()
    for line in text.split("\ndependencies:", 1)[1].splitlines():
        m = re.match(r"^  - ([A-Za-z0-9_.\-]+)", line)  # top-level conda entries only
        if m and m.group(1) not in ("python", "pip"):
            names.add(_name(m.group(1)))
    return names


def test_environment_yml_matches_pyproject():
    pyproject, conda = _pyproject_deps(), _conda_deps()
    assert pyproject == conda, (
        f"only in pyproject.toml: {sorted(pyproject - conda)}; "
        f"only in environment.yml: {sorted(conda - pyproject)}"
    )


def test_environment_yml_installs_minitorch_itself():
    text = (ROOT / "environment.yml").read_text()
    assert re.search(r"^\s+- -e \.\s*$", text, re.M), "environment.yml must pip-install -e ."


def test_torch_is_never_a_runtime_dependency():
    assert "torch" not in _pyproject_deps(extras=("test",))
    assert "torch" in _pyproject_deps(extras=("reference",)), "torch is the reference extra"
