"""pyproject.toml and environment.yml must declare the same dependencies."""

import re
from importlib.metadata import requires

from minitorch.course.manifest import ROOT


def _name(requirement: str) -> str:
    """``numpy>=1.26`` -> ``numpy`` (normalised as pip does)."""
    name = re.split(r"[<>=!~;\[ ]", requirement.strip(), maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", name).lower()


def _pyproject_deps(extras: tuple[str, ...] = ("course", "test")) -> set[str]:
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
    assert "torch" not in _pyproject_deps(extras=("course", "test"))
    assert "torch" in _pyproject_deps(extras=("reference",)), "torch is the reference extra"


def test_the_framework_runs_without_the_course(tmp_path):
    # catches: the framework importing the course's packages (JupyterLab, matplotlib,
    # scikit-learn, tqdm, nbformat, greenlet) or the course tooling: with numpy (and
    # ml-dtypes) alone, import minitorch and train chapter 03's MLP
    import subprocess
    import sys

    script = """
import sys
BLOCKED = ("matplotlib", "sklearn", "tqdm", "nbformat", "greenlet", "IPython", "ipywidgets",
           "jupyterlab", "ml_dtypes", "torch", "minitorch.course")
class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.startswith(BLOCKED):
            raise ImportError(f"blocked: {name}")
sys.meta_path.insert(0, Blocker())
import minitorch as mt
from minitorch import nn, optim
mt.manual_seed(0)
x = mt.randn(64, 16)
y = (x[:, 0] > 0).long()
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2))
opt = optim.Adam(model.parameters(), lr=0.01)
first = None
for _ in range(60):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    first = first if first is not None else loss.item()
assert loss.item() < 0.5 * first, (first, loss.item())
print("trained", round(first, 2), "->", round(loss.item(), 2))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "trained" in done.stdout
