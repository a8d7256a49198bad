"""The simulator's kernel language is what cupyx.jit compiles: each construct the simulator
could run as Python but a GPU cannot compile is refused before any thread runs, naming the
construct and its line; and (where the toolchain is installed) cupyx.jit is shown to refuse
it too, while the constructs kept compile."""

from __future__ import annotations

import math

import numpy as np
import pytest

from minitorch.cuda import codegen, gpu, jit, toolchain
from minitorch.cuda import cross_compile as cc
from minitorch.cuda.errors import KernelLanguageError

MISSING = toolchain.missing()
W = np.ones(64, dtype=np.float32)  # a global array (refused inside a kernel)


def helper(v):  # a plain Python function (refused inside a kernel)
    return v * 2.0


#: construct -> (kernel body, after `i = jit.grid(1)`; what the refusal says)
REFUSED = {
    "chained comparison": ("if 0 <= i < n:\n    out[i] = x[i]", "a chained comparison"),
    "int then float": ("acc = 0\nif i < n:\n    acc = acc + x[i]\n    out[i] = acc",
                       r"`acc` is first an int \(`acc = 0`, line 4\), then given a float"),
    "augmented int": ("acc = 0\nacc += 0.5\nif i < n:\n    out[i] = acc", "`acc` is first an int"),
    "list": ("vals = [0.0] * 4\nif i < n:\n    out[i] = vals[1]", "a list"),
    "comprehension": ("s = [1.0 for _ in range(3)]\nif i < n:\n    out[i] = x[i]", "a list"),
    "dict": ("d = {}\nif i < n:\n    out[i] = x[i]", "a dict"),
    "tuple by a variable": ("v = (1.0, 2.0)\nif i < n:\n    out[i] = v[i % 2]",
                            "indexing the tuple `v` with a variable"),
    "abs": ("if i < n:\n    out[i] = abs(x[i])", r"the Python built-in `abs\(\)`.*jit\.fabs"),
    "round": ("if i < n:\n    out[i] = round(x[i])", r"the Python built-in `round\(\)`"),
    "print": ("if i < n:\n    print(i)", r"the Python built-in `print\(\)`"),
    "is": ("if i is not None and i < n:\n    out[i] = x[i]", "`is` / `in`"),
    "in": ("if i in (1, 2):\n    out[i] = x[i]", "`is` / `in`"),
    "math.floor": ("if i < n:\n    out[i] = math.floor(x[i])", r"`math\.floor`"),
    "math.inf": ("if i < n:\n    out[i] = min(x[i], math.inf)", r"`math\.inf`"),
    "plain function": ("if i < n:\n    out[i] = helper(x[i])", "calling `helper`, a plain Python"),
    "global array": ("if i < n:\n    out[i] = W[i]", r"the global `W` \(an array\)"),
    "f-string": ("s = f'{i}'\nif i < n:\n    out[i] = x[i]", "an f-string"),
    "assert": ("assert n > 0\nif i < n:\n    out[i] = x[i]", "assert"),
    "lambda": ("f = lambda v: v\nif i < n:\n    out[i] = x[i]", "a lambda"),
    "nested def": ("def g(v):\n    return v\nif i < n:\n    out[i] = x[i]", "a nested function"),
    "loop else": ("j = 0\nwhile j < 2:\n    j = j + 1\nelse:\n    j = 5\nif i < n:\n    out[i] = j",
                  "`else` on a loop"),
    "for over a tuple": ("acc = 0.0\nfor v in (1.0, 2.0):\n    acc = acc + v\nif i < n:\n"
                         "    out[i] = acc", r"a for loop over something other than range"),
    "shared size of a parameter": ("buf = jit.shared_memory(jit.float32, n)\nbuf[0] = 1.0",
                                   "a shared-memory size that depends on `n`"),
    "return a value": ("if i < n:\n    out[i] = x[i]\nreturn 1", "return of a value"),
    "walrus": ("if (j := i) < n:\n    out[j] = x[j]", "`:=`"),
    "star": ("if i < n:\n    out[i] = max(*(x[i], 0.0))", r"`\*` unpacking"),
    "try": ("try:\n    v = 1.0\nexcept Exception:\n    v = 0.0\nif i < n:\n    out[i] = v",
            "try/except"),
    "del": ("v = 1.0\ndel v\nif i < n:\n    out[i] = x[i]", "del"),
    "raise": ("if i >= n:\n    raise ValueError('too far')\nout[i] = x[i]", "raise"),
    "method call": ("if i < n:\n    out[i] = x[i].conjugate()", r"the method call"),
}  # fmt: skip

#: constructs cupyx.jit compiles, which the simulator keeps
KEPT = {
    "break": "j = 0\nwhile True:\n    j = j + 1\n    if j > 3:\n        break\nif i < n:\n"
    "    out[i] = x[i] + j",
    "continue": "acc = 0.0\nfor j in range(4):\n    if j == 2:\n        continue\n"
    "    acc = acc + 1.0\nif i < n:\n    out[i] = acc",
    "tuple constant": "v = (1.0, 2.0)\nif i < n:\n    out[i] = v[1] + x[i]",
    "tuple unpacking": "a, b = 1.0, 2.0\nif i < n:\n    out[i] = a + b",
    "float then int": "acc = 0.0\nacc = 3\nif i < n:\n    out[i] = acc",
    "conditional expression": "if i < n:\n    out[i] = x[i] if x[i] > 0 else 0",
    "min of three": "if i < n:\n    out[i] = min(x[i], 0.0, 1.0)",
    "math.sin and pi": "if i < n:\n    out[i] = math.sin(x[i]) * math.pi",
    "casts": "if i < n:\n    out[int(i)] = float(i) + jit.float32(1)",
    "global number": "if i < n:\n    out[i] = x[i] * SCALE",
    "negative thread offset": "j = jit.threadIdx.x - 1\nif j >= 0 and i < n:\n    out[i] = x[j]",
    "shuffle offset variable": "v = 1.0\noff = 16\nwhile off > 0:\n"
    "    v = v + jit.shfl_down_sync(0xFFFFFFFF, v, off)\n    off = off // 2\nif i < n:\n"
    "    out[i] = v",
}
SCALE = 2.0


def kernel_of(name: str, body: str) -> jit.RawKernel:
    lines = "".join(f"    {line}\n" for line in body.split("\n"))
    source = f"@rawkernel()\ndef kern(x, out, n):\n    i = jit.grid(1)\n{lines}"
    namespace = {"jit": jit, "math": math, "helper": helper, "W": W, "SCALE": SCALE}
    return codegen.compile_kernel(source, "kern", namespace)


def args() -> tuple:
    return np.linspace(-1, 1, 64).astype(np.float32), np.zeros(64, np.float32), 64


def gpu_compiles(kernel: jit.RawKernel) -> bool:
    """Whether cupyx.jit and NVRTC compile the kernel, with no check of ours on the way."""
    from cupyx.jit import _compile, _cuda_types

    twin = gpu.compile_kernel(kernel)
    types = tuple(cc.cupy_type(a) for a in args())
    try:
        code = _compile.transpile(twin._func, ["__global__"], "cuda", types, _cuda_types.void).code
        toolchain.to_ptx(code, "sm_90")
    except Exception:
        return False
    return True


@pytest.mark.parametrize("construct", sorted(REFUSED))
def test_the_simulator_refuses_what_cupyx_jit_cannot_compile(construct):
    # catches: a kernel that passes every simulated test and then fails to compile on a GPU
    body, says = REFUSED[construct]
    kernel = kernel_of(construct, body)
    with pytest.raises(KernelLanguageError, match=rf"^kernel `kern`, line \d+: .*{says}"):
        kernel[2, 32](*args())
    if MISSING is None:
        assert not gpu_compiles(kernel), f"cupyx.jit compiles {construct}: the rule is not needed"


@pytest.fixture(scope="module")
def kept_reports() -> dict[str, cc.KernelReport]:
    if MISSING is not None:
        pytest.skip(f"needs the CUDA compile toolchain: {MISSING}")
    launches = [cc.Launch(n, kernel_of(n, body), args(), (32, 1, 1)) for n, body in KEPT.items()]
    return {r.name: r for r in cc.reports(launches)}


@pytest.mark.parametrize("construct", sorted(KEPT))
def test_what_cupyx_jit_compiles_the_simulator_runs(construct, request):
    # catches: a rule refusing what a GPU compiles (the language shrinking for nothing)
    kernel_of(construct, KEPT[construct])[2, 32](*args())
    if MISSING is None:
        report = request.getfixturevalue("kept_reports")[construct]
        assert report.ok, report.summary()


def test_a_variable_type_depends_on_the_launch():
    # `acc = 0` then `acc + x[j]`: an int array keeps acc an int; a float array would not
    source = """@rawkernel()
def total(x, out, n):
    acc = 0
    for j in range(n):
        acc = acc + x[j]
    out[0] = acc
"""
    kernel = codegen.compile_kernel(source, "total")
    out = np.zeros(1, np.int64)
    kernel[1, 1](np.arange(5), out, 5)
    assert out[0] == 10
    with pytest.raises(KernelLanguageError, match=r"line 5: `acc` is first an int .* float"):
        kernel[1, 1](np.arange(5.0), np.zeros(1), 5)


def test_device_functions_are_held_to_the_language_and_may_return():
    source = """@rawkernel(device=True)
def twice(v):
    return v * 2.0


@rawkernel(device=True)
def listy(v):
    return [v][0]


@rawkernel()
def uses_twice(x, out, n):
    i = grid(1)
    if i < n:
        out[i] = twice(x[i])


@rawkernel()
def uses_listy(x, out, n):
    i = grid(1)
    if i < n:
        out[i] = listy(x[i])
"""
    good = codegen.compile_kernel(source, "uses_twice")
    x, out, n = args()
    good[2, 32](x, out, n)
    np.testing.assert_allclose(out, 2 * x)
    bad = codegen.compile_kernel(source, "uses_listy")
    with pytest.raises(KernelLanguageError, match=r"kernel `listy`, line \d+: a list"):
        bad[2, 32](x, out, n)


def test_an_exercise_placeholder_still_raises_not_implemented():
    source = """@rawkernel()
def todo(x, out, n):
    raise NotImplementedError("write the kernel")
"""
    with pytest.raises(NotImplementedError, match="write the kernel"):
        codegen.compile_kernel(source, "todo")[1, 1](*args())


# --- a kernel reaches device memory only through its arguments (issue 21) -----------------
REACHING_IN = {
    "the simulator through jit": "        jit.simulator.state.reads = 0\n",
    "a backing array": "        out.target[0] = 1.0\n",
    "the simulator module by another name": "        SIMULATOR.state.launch = None\n",
}


@pytest.mark.parametrize("name", list(REACHING_IN))
def test_a_kernel_cannot_reach_the_simulators_internals(tmp_path, name):
    # catches: counters reset from inside a kernel, numpy on the simulator's backing arrays
    source = (
        "from minitorch.cuda import jit\n"
        "SIMULATOR = jit.simulator\n"
        "@jit.rawkernel()\n"
        "def reach(x, out, n):\n"
        "    i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x\n"
        "    if i < n:\n" + REACHING_IN[name] + "        out[i] = x[i]\n"
    )
    path = tmp_path / "reach.py"
    path.write_text(source)
    namespace: dict = {}
    exec(compile(source, str(path), "exec"), namespace)
    x, out = np.ones(8, np.float32), np.zeros(8, np.float32)
    with pytest.raises(KernelLanguageError, match="kernel `reach`, line 7"):
        namespace["reach"][1, 8](x, out, 8)
    assert not out.any()
