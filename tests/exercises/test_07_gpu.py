"""Graded tests for chapter 07 (GPU kernels), run in the kernel simulator.

Each probe launches the learner's kernel on numpy arrays, so it runs in the simulator:
every thread of every block, with bounds, race, uninitialised-read and barrier checks (a
kernel that breaks one fails with the simulator's report, naming thread and block). The
probe returns the output and the launch's memory traffic (``LaunchStats``) as plain data;
the judges compare with numpy and check the traffic, which tells a tiled kernel from a
naive one and a cooperative block from one thread doing all the work. Shapes are small
and never multiples of the block, so edge tiles and bounds guards are always exercised.
"""

from __future__ import annotations

import ast
import math
import re
import types

import numpy as np

from minitorch.course.grading import Forbidden, exercise, forbid, forbidding, probe
from minitorch.course.grading.delegation import Delegated, is_library, message
from minitorch.cuda import fusion_codegen, lowering
from minitorch.cuda.errors import KernelLanguageError
from minitorch.cuda.simulator import GlobalArray, SharedArray

#: What a kernel may ask an array besides its elements (the kernel language's ``a.size``,
#: ``a.ndim``); the simulator's arrays also keep their elements in plain Python objects
#: (``.data``, and ``.target``, the numpy array itself), which no GPU thread has.
_BACKING = (frozenset(GlobalArray.__slots__) | frozenset(SharedArray.__slots__)) - {"size", "ndim"}
#: Builtins that reach an object's attributes by name (``getattr(x, "data")``).
_INTROSPECTION = frozenset({"getattr", "setattr", "vars", "object", "type", "eval", "exec"})


def _outside_the_language(func, seen=()):
    """What ``func`` (a kernel's Python code, or a function it calls) uses of the simulator's
    arrays beyond the kernel language, as it is written ("x.data", "getattr"): [] if none."""
    from minitorch.cuda.jit import RawKernel, source_of

    code = getattr(func, "__code__", None)
    if code is None or is_library(code.co_filename) or func in seen:
        return []
    try:  # (not inspect.getsource: it runs other packages' code while the watch is on)
        tree = ast.parse(source_of(func))
    except (OSError, TypeError, SyntaxError, IndexError):
        tree = None
    found, names = [], set(code.co_names)
    if tree is not None:
        names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and (
                node.attr in _BACKING or node.attr.startswith("__")
            ):
                found.append(ast.unparse(node))
            elif isinstance(node, ast.Name) and node.id in _INTROSPECTION:
                found.append(node.id)
    else:  # no source: the attribute names its code looks up
        found = sorted(set(code.co_names) & _BACKING - set(func.__globals__))
    # the functions it calls (device functions, the notebook's helpers), too
    for name in sorted(names):
        called = func.__globals__.get(name)
        called = called.func if isinstance(called, RawKernel) else called
        if isinstance(called, types.FunctionType):
            found += _outside_the_language(called, (*seen, func))
    return found


def _launch(kernel, grid, block, *args):
    """Launch in the simulator; the launch's stats as a dict (with the kernel's check)."""
    from minitorch.cuda.jit import RawKernel

    if not isinstance(kernel, RawKernel):
        raise TypeError(
            f"expected a kernel made with @jit.rawkernel(), got {type(kernel).__name__}"
        )
    # catches: the exercise's name bound to one of minitorch's own kernels
    # (`softmax_kernel = kernels.softmax.softmax_kernel(32, "float32")`): the simulator, not
    # the learner's code, calls it, so only where its code lives tells it apart
    code = getattr(kernel.func, "__code__", None)
    if code is not None and is_library(code.co_filename):
        raise Delegated(message(f"minitorch's own kernel `{kernel.__name__}`"))
    # catches: a kernel that reads the simulator's copies of the arrays (`x.data[i]`, or
    # numpy on `x.target`) instead of their elements: the numbers come out right in the
    # simulator, but no GPU thread could run it, and its reads escape the traffic counts
    used = _outside_the_language(kernel.func)
    if used:
        raise KernelLanguageError(
            f"kernel `{kernel.__name__}` uses `{used[0]}`: inside a kernel an array is device "
            "memory, read and written one element at a time (`x[i]`), with `.size` and `.ndim` "
            "as its only attributes; what the simulator keeps behind it does not exist on a GPU"
        )
    kernel[grid, block](*args)
    return kernel.stats.as_dict()


def _close(got, expected, what, rtol=1e-4, atol=1e-5):
    got = np.asarray(got, dtype=np.float64)
    assert got.shape == expected.shape, f"{what}: got shape {got.shape}, expected {expected.shape}"
    if not np.allclose(got, expected, rtol=rtol, atol=atol, equal_nan=False):
        bad = np.argwhere(~np.isclose(got, expected, rtol=rtol, atol=atol))[0]
        at = tuple(int(i) for i in bad)
        raise AssertionError(
            f"{what}: element {at if len(at) > 1 else at[0]} is {got[tuple(bad)]:.6g}, "
            f"expected {expected[tuple(bad)]:.6g}"
        )


def _uses_grid(func) -> bool:
    """Does the kernel's source use ``jit.grid`` (the ready-made global index)?"""
    from minitorch.cuda import jit
    from minitorch.cuda.jit import source_of

    try:
        tree = ast.parse(source_of(func))
    except (OSError, TypeError, SyntaxError, IndexError):
        return False
    bound = {name for name, value in func.__globals__.items() if value is jit.grid}
    return any(
        (isinstance(node, ast.Attribute) and node.attr == "grid")
        or (isinstance(node, ast.Name) and node.id in bound)
        for node in ast.walk(tree)
    )


# --- 07.1 global index and bounds guard ----------------------------------------------------
@probe
def axpy(nb, alpha, x, y, threads, blocks):
    out = np.zeros_like(x)
    # catches: the global index handed to `jit.grid(1)`, which computes it (the exercise)
    kernel = nb.axpy_kernel
    if _uses_grid(getattr(kernel, "func", kernel)):
        raise Delegated(message("`jit.grid`, the kernel language's ready-made global index"))
    stats = _launch(kernel, blocks, threads, alpha, x, y, out, x.size)
    return out, stats


def _axpy_case(run, n, threads, extra_blocks=0):
    x = run.rng.standard_normal(n).astype(np.float32)
    y = run.rng.standard_normal(n).astype(np.float32)
    alpha = float(np.round(run.rng.uniform(-3, 3), 2))
    blocks = (n + threads - 1) // threads + extra_blocks
    out, stats = run(axpy, alpha, x, y, threads, blocks)
    what = f"axpy_kernel[{blocks}, {threads}] with n={n}"
    _close(out, alpha * x.astype(np.float64) + y, what)
    assert stats["global_writes"] == n, (
        f"{what} wrote {stats['global_writes']} elements, expected each of the {n} once"
    )


# catches: no `if i < n` guard (reads past the end), `<=` instead of `<`, an index from
# threadIdx.x alone (blocks overwrite each other), forgetting alpha or y, calling numpy
@exercise("07.1")
def test_axpy_with_a_partial_last_block(run):
    _axpy_case(run, 37, 16)
    _axpy_case(run, int(run.rng.integers(50, 200)), 32)


# catches: a guard against the block size or the grid size instead of n
@exercise("07.1")
def test_axpy_with_more_blocks_than_needed(run):
    _axpy_case(run, 20, 8, extra_blocks=2)
    _axpy_case(run, 1, 4)


# --- 07.2 strided broadcasting elementwise ---------------------------------------------------
@probe
def strided_mul(nb, a, b, shape, a_strides, b_strides, a_offset, b_offset, threads):
    n = int(np.prod(shape))
    out = np.zeros(n, dtype=np.float32)
    blocks = (n + threads - 1) // threads
    args = (a, b, out, np.asarray(shape, dtype=np.int64))
    args += (np.asarray(a_strides, dtype=np.int64), np.asarray(b_strides, dtype=np.int64))
    _launch(nb.strided_mul_kernel, blocks, threads, *args, a_offset, b_offset, len(shape), n)
    return out


def _strided_case(run, shape, permute, broadcast_dims):
    """a: a permuted, offset view of a bigger storage; b: broadcast along some dims."""
    ndim = len(shape)
    rng = run.rng
    # a is stored contiguously in the order `permute`, starting at an offset
    stored_shape = tuple(shape[p] for p in permute)
    a_offset = int(rng.integers(0, 5))
    storage = rng.standard_normal(a_offset + int(np.prod(stored_shape)) + 3).astype(np.float32)
    stored = storage[a_offset : a_offset + int(np.prod(stored_shape))].reshape(stored_shape)
    a_view = np.transpose(stored, np.argsort(permute))
    a_strides = [s // 4 for s in a_view.strides]
    b_shape = tuple(1 if d in broadcast_dims else shape[d] for d in range(ndim))
    b_offset = int(rng.integers(0, 3))
    b_storage = rng.standard_normal(b_offset + int(np.prod(b_shape))).astype(np.float32)
    b_arr = b_storage[b_offset:].reshape(b_shape)
    b_strides = [0 if d in broadcast_dims else s // 4 for d, s in enumerate(b_arr.strides)]
    expected = (a_view.astype(np.float64) * b_arr).reshape(-1)
    got = run(strided_mul, storage, b_storage, list(shape), a_strides, b_strides, a_offset,
              b_offset, 32)  # fmt: skip
    _close(got, expected, f"strided_mul_kernel on shape {shape} (a permuted by {permute}, "
           f"b broadcast along dims {sorted(broadcast_dims)})")  # fmt: skip


# catches: unravelling the first dim fastest, ignoring the offsets, assuming contiguous
# inputs (i instead of the strided position), mixing up a's and b's strides
@exercise("07.2")
def test_strided_mul_of_a_transposed_view(run):
    _strided_case(run, (3, 5), (1, 0), set())
    _strided_case(run, (2, 3, 4), (2, 0, 1), set())


# catches: ignoring stride 0 (broadcast dims), a missing bounds guard, 1-d edge cases
@exercise("07.2")
def test_strided_mul_with_broadcasting(run):
    _strided_case(run, (4, 6), (0, 1), {0})
    _strided_case(run, (3, 2, 5), (1, 2, 0), {1, 2})
    _strided_case(run, (7,), (0,), set())
    dims = int(run.rng.integers(2, 5))
    shape = tuple(int(s) for s in run.rng.integers(1, 5, size=dims))
    _strided_case(run, shape, tuple(int(p) for p in run.rng.permutation(dims)), {0})


# The sizes the grader launches with. It sets them in the notebook (where the kernels read
# them) for the launch: the judges reason about these, never about values read back from
# the notebook, which an int subclass could make report one size and use another.
BLOCK, ROW_BLOCK, TILE = 64, 32, 8


# --- 07.3 block reduction tree --------------------------------------------------------------
@probe
def block_sums(nb, x, block):
    blocks = max((x.size + block - 1) // block, 1)
    partial = np.zeros(blocks, dtype=np.float32)
    with nb._grader_sets(BLOCK=block):
        stats = _launch(nb.block_sum_kernel, blocks, block, x, partial, x.size)
    return partial, stats


def _block_sum_case(run, n, block=BLOCK):
    x = run.rng.standard_normal(n).astype(np.float32)
    partial, stats = run(block_sums, x, block)
    padded = np.zeros(len(partial) * block)
    padded[:n] = x
    what = f"block_sum_kernel with n={n}, BLOCK={block}"
    _close(partial, padded.reshape(-1, block).sum(axis=1), what, 1e-4)
    return stats, block


# catches: no 0.0 for threads past n (reads uninitialised shared memory), no syncthreads
# inside the tree (a race), a syncthreads only some threads reach, a wrong partial index
@exercise("07.3")
def test_block_sums_with_a_ragged_end(run):
    _block_sum_case(run, 150)
    _block_sum_case(run, int(run.rng.integers(2, 64)))


# catches: thread 0 adding up the whole block alone (no tree), a tree on global memory.
# A tree the lesson's way, finished by warp shuffles (`shfl_down_sync`, no barrier between
# the lanes of a warp), counts each shuffle as a step: it keeps its points
@exercise("07.3")
def test_the_sum_is_a_tree(run):
    stats, block = _block_sum_case(run, 200)
    steps = int(math.log2(block))
    # warp shuffles per block, a warp's 32 lanes counted once
    shuffles = math.ceil(stats["shuffles"] / (32 * stats["grid"][0]))
    assert stats["barriers"] + shuffles >= steps, (
        f"the block passed {stats['barriers']} syncthreads() and {shuffles} warp shuffles; a "
        f"tree over {block} threads takes {steps} steps, each after a syncthreads() (or, "
        "inside a warp, a shfl_down_sync)"
    )
    assert stats["max_thread_shared_reads"] <= 2 * steps + 2, (
        f"one thread read shared memory {stats['max_thread_shared_reads']} times; in a tree "
        f"each thread reads at most 2 cells per step ({2 * steps} for {steps} steps)"
    )
    assert stats["global_reads"] <= 200, (
        f"the kernel read global memory {stats['global_reads']} times for 200 elements: "
        "load each element once into shared memory and reduce there"
    )


# catches: a block size written into the kernel (`stride = 32`, a tree of `range(6)` steps,
# a shared array of 64 cells) where the text says any power of two
@exercise("07.3")
def test_block_sums_for_any_power_of_two(run):
    _block_sum_case(run, 96, 32)  # a multiple of the block
    stats, _ = _block_sum_case(run, 200, 256)
    assert stats["barriers"] + math.ceil(stats["shuffles"] / (32 * stats["grid"][0])) >= 8, (
        f"with BLOCK=256 a block passed {stats['barriers']} syncthreads(); a tree over 256 "
        "threads takes 8 steps"
    )


# --- 07.4 softmax -----------------------------------------------------------------------------
@probe
def softmax_rows(nb, x, block):
    rows, ncols = x.shape
    out = np.zeros_like(x)
    with nb._grader_sets(ROW_BLOCK=block):
        stats = _launch(nb.softmax_kernel, rows, block, x.reshape(-1), out.reshape(-1), ncols)
    return out, stats


def _softmax_reference(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


# catches: a row offset other than blockIdx.x * ncols, columns past ncols (bounds),
# rows shorter than the block, a missing max-tree or sum-tree syncthreads (races)
@exercise("07.4")
def test_softmax_rows_of_any_length(run):
    for ncols in (1, 5, 32, 77):
        x = run.rng.standard_normal((3, ncols)).astype(np.float32) * 3
        out, _ = run(softmax_rows, x, ROW_BLOCK)
        _close(out, _softmax_reference(x), f"softmax_kernel on shape {x.shape}", 1e-4, 1e-6)


# catches: not subtracting the row max (exp overflows to inf and the row becomes nan); a max
# that starts at 0.0 instead of a value of the row (a row of large negative values then
# underflows: every exp is 0 and the row becomes nan)
@exercise("07.4")
def test_softmax_of_large_values(run):
    x = (run.rng.standard_normal((3, 40)) * 400).astype(np.float32)
    x[1, 3] = 1000.0
    x[2] = -1000.0 - np.abs(x[2])  # every value of the row far below 0
    out, _ = run(softmax_rows, x, ROW_BLOCK)
    _close(out, _softmax_reference(x), "softmax_kernel on values from -2000 to 1000", 1e-4, 1e-6)


# catches: one thread computing the whole row, no syncthreads between reading the max
# and reusing the shared cells for the sums (a race)
@exercise("07.4")
def test_softmax_threads_share_the_row(run):
    x = run.rng.standard_normal((2, 200)).astype(np.float32)
    block = ROW_BLOCK
    out, stats = run(softmax_rows, x, block)
    _close(out, _softmax_reference(x), "softmax_kernel on shape (2, 200)", 1e-4, 1e-6)
    share = math.ceil(200 / block)
    assert stats["max_thread_global_reads"] <= 3 * share + 3, (
        f"one thread read {stats['max_thread_global_reads']} elements of a 200-column row; "
        f"with {block} threads per row each reads about {share} per pass (3 passes)"
    )


# catches: ROW_BLOCK written into the kernel as 32 (the column stride, the tree's first
# stride, the shared array's size) where the text says any power of two
@exercise("07.4")
def test_softmax_for_any_power_of_two(run):
    for block, ncols, rows in ((64, 40, 2), (128, 150, 1)):
        x = (run.rng.standard_normal((rows, ncols)) * 3).astype(np.float32)
        out, _ = run(softmax_rows, x, block)
        what = f"softmax_kernel on shape {x.shape} with ROW_BLOCK={block}"
        _close(out, _softmax_reference(x), what, 1e-4, 1e-6)


# --- 07.5 tiled matmul ------------------------------------------------------------------------
@probe
def tiled_matmul(nb, a, b, tile):
    m, k = a.shape
    n = b.shape[1]
    out = np.zeros((m, n), dtype=np.float32)
    grid = ((n + tile - 1) // tile, (m + tile - 1) // tile)
    args = (a.reshape(-1), b.reshape(-1), out.reshape(-1), m, n, k)
    with nb._grader_sets(TILE=tile):
        stats = _launch(nb.matmul_tiled_kernel, grid, (tile, tile), *args)
    return out, stats


def _matmul_case(run, m, n, k, tile=TILE):
    a = run.rng.standard_normal((m, k)).astype(np.float32)
    b = run.rng.standard_normal((k, n)).astype(np.float32)
    out, stats = run(tiled_matmul, a, b, tile)
    what = f"matmul_tiled_kernel for ({m}, {k}) @ ({k}, {n}) with TILE={tile}"
    _close(out, a.astype(np.float64) @ b, what)
    return stats, tile


# catches: no 0.0 where a tile sticks out past an edge (uninitialised reads or wrong sums),
# no guard on the final write, rows and columns swapped, a missing syncthreads (races)
@exercise("07.5")
def test_tiled_matmul_with_edge_tiles(run):
    _matmul_case(run, 19, 13, 23)
    _matmul_case(run, 1, 9, 17)
    m, n, k = (int(v) for v in run.rng.integers(2, 20, size=3))
    _matmul_case(run, m, n, k)


# catches: a naive kernel (reads a and b from global memory k times per output element)
@exercise("07.5")
def test_tiled_matmul_reads_each_tile_once(run):
    m, n, k = 24, 16, 40
    stats, tile = _matmul_case(run, m, n, k)
    tiles = math.ceil(m / tile) * math.ceil(n / tile) * math.ceil(k / tile)
    bound = 2 * tiles * tile * tile
    assert stats["global_reads"] <= bound, (
        f"the kernel read global memory {stats['global_reads']} times; with {tile} x {tile} "
        f"tiles in shared memory it needs at most {bound} (a naive kernel reads {2 * m * n * k})"
    )


# catches: TILE written into the kernel as 8 (the tiles' row length, the inner loop, the
# shared arrays' size) where the text says any power of two
@exercise("07.5")
def test_tiled_matmul_for_any_power_of_two(run):
    for tile, (m, n, k) in ((4, (9, 6, 11)), (16, (9, 13, 20))):
        stats, _ = _matmul_case(run, m, n, k, tile)
        tiles = math.ceil(m / tile) * math.ceil(n / tile) * math.ceil(k / tile)
        assert stats["global_reads"] <= 2 * tiles * tile * tile, (
            f"with TILE={tile}, the kernel read global memory {stats['global_reads']} times "
            f"for ({m}, {k}) @ ({k}, {n}); tiles of {tile} x {tile} need at most "
            f"{2 * tiles * tile * tile}"
        )


# --- 07.6 fused kernel from a graph -----------------------------------------------------------
# catches: minitorch's fused_lines itself, its way of writing a number (fusion_codegen.operand), and
# the lowering of chapter 05's fused node, whose source holds fused_lines' lines (a fake node
# handed to lowering.source calls minitorch's fused_lines from minitorch's own code)
FUSED_LINES = forbid(
    fusion_codegen.fused_lines,
    Forbidden(
        fusion_codegen.operand,
        "minitorch's own fusion_codegen.operand (how its fused_lines writes numbers)",
    ),
    *(
        Forbidden(f, f"minitorch's own lowering.{f.__name__} (which runs its fused_lines)")
        for f in (lowering.source, lowering.compile_fused)
    ),
)


@probe
def fused(nb, steps, arrays):
    steps = [tuple(step) for step in steps]
    with forbidding(FUSED_LINES, nb):
        lines = nb.fused_lines(steps)
    lines = [str(line) for line in lines]
    kernel = fusion_codegen.compile_lines(lines, len(arrays))
    shape = np.broadcast_shapes(*(a.shape for a in arrays))
    out = fusion_codegen.launch_fused(kernel, list(arrays), shape, np.float64, block=32)
    return lines, out, kernel.stats.as_dict()


def _fused_case(run, steps, shapes):
    arrays = [run.rng.uniform(0.5, 2.0, size=s) for s in shapes]
    lines, out, stats = run(fused, [list(s) for s in steps], arrays)
    assert len(lines) == len(steps), f"fused_lines gave {len(lines)} lines for {len(steps)} steps"
    for k, line in enumerate(lines):
        assert line.replace(" ", "").startswith(f"t{k}="), (
            f"line {k} is {line!r}; it should assign t{k}"
        )
    _close(out, fusion_codegen.reference(steps, arrays), f"the fused kernel of {steps}", 1e-6, 1e-9)
    return stats, lines


# catches: operands swapped in sub/div, results numbered from 1, a step's op looked up in
# the wrong table, numbers written as something other than a float literal
@exercise("07.6")
def test_fused_lines_compute_the_graph(run):
    _fused_case(run, [("mul", "x0", "x1"), ("exp", "t0"), ("add", "t1", 1.0)], [(3, 4), (4,)])
    _fused_case(run, [("sub", "x1", "x0"), ("div", "t0", "x0"), ("neg", "t1")], [(5,), (5,)])
    _fused_case(run, [("sub", 2.5, "x0"), ("relu", "t0"), ("maximum", "t1", 0.25)], [(2, 3)])


# catches: a number rounded to a few decimals; an int or a numpy scalar written as it is
# (repr(v) without float(): "2", "np.float64(0.5)") instead of as a float literal
@exercise("07.6")
def test_fused_lines_write_every_number_as_a_float_literal(run):
    scale = float(run.rng.uniform(0.1, 3.0))  # many digits: every one of them counts
    shift, floor = int(run.rng.integers(2, 9)), np.float64(run.rng.uniform(0.5, 1.5))
    steps = [("mul", "x0", scale), ("add", "t0", shift), ("maximum", "t1", floor)]
    _, lines = _fused_case(run, steps, [(3, 5)])
    bare = [line for line in lines if re.search(r"(?<![\w.])\d+(?![\w.])|np\.", line)]
    assert not bare, (
        f"fused_lines wrote {bare} for the steps {steps}: the kernel language needs every "
        f"number as a float literal ({shift} is an int here)"
    )
    literals = [float(m) for m in re.findall(r"\d+\.\d*(?:[eE][+-]?\d+)?", lines[0])]
    assert scale in literals, (
        f"fused_lines wrote {lines[0]!r} for the step {steps[0]}: its number reads back as "
        f"{literals}, not {scale!r} (every digit of the float must survive)"
    )


# catches: a fused node that loses a step, sigmoid/tanh/sqrt/log spelled wrong, delegating
# to minitorch's fusion_codegen.fused_lines
@exercise("07.6")
def test_fused_lines_one_kernel_one_pass(run):
    steps = [("mul", "x0", 3.0), ("sigmoid", "t0"), ("tanh", "x1"), ("add", "t1", "t2"),
             ("sqrt", "t3"), ("log", "t4"), ("minimum", "t5", "x0")]  # fmt: skip
    stats, _ = _fused_case(run, steps, [(4, 3), (3,)])
    assert stats["global_writes"] == 12, (
        f"the fused kernel wrote {stats['global_writes']} elements; one per output (12) "
        "means no intermediate went to memory"
    )


# --- 07.7 a convolution within a read budget (design task) ----------------------------------
@probe
def conv1d(nb, x, w, block):
    n = x.size
    blocks = max((n + block - 1) // block, 1)
    out = np.zeros_like(x)
    with nb._grader_sets(CONV_BLOCK=block, WIDTH=int(w.size)):
        stats = _launch(nb.conv1d_kernel, blocks, block, x, w, out, n)
    return out, stats


def _conv_reference(x, w):
    """``out[i] = sum_j w[j] * x[i + j - r]``, 0 outside ``x`` (PyTorch's conv1d, padding r)."""
    r = w.size // 2
    padded = np.concatenate([np.zeros(r), x.astype(np.float64), np.zeros(r)])
    return np.array([padded[i : i + w.size] @ w.astype(np.float64) for i in range(x.size)])


def _conv_case(run, n, width, block):
    x = run.rng.standard_normal(n).astype(np.float32)
    w = run.rng.standard_normal(width).astype(np.float32)  # no symmetry: a flip shows
    out, stats = run(conv1d, x, w, block)
    what = f"conv1d_kernel with n={n}, WIDTH={width}, CONV_BLOCK={block}"
    _close(out, _conv_reference(x, w), what, 1e-4, 1e-5)
    assert stats["global_writes"] == n, (
        f"{what} wrote {stats['global_writes']} elements, expected each of the {n} once"
    )
    return stats, what


# catches: the filter flipped (a true convolution), not centred (a causal filter), no zeros
# past the ends (reads outside x, or garbage), a tile without its halo (wrong values at
# every block's edge), a missing barrier (a race), a width or block size written in as
# 5 or 64, a guard that keeps threads past n from a barrier
@exercise("07.7")
def test_conv1d_values_at_the_ends_and_the_block_edges(run):
    _conv_case(run, 150, 5, 64)
    _conv_case(run, 3, 7, 16)  # shorter than the filter
    _conv_case(run, 70, 3, 32)


# catches: a correct kernel over the budget: every output reading its WIDTH inputs and
# WIDTH weights from global memory, the weights read by every thread, one thread loading
# its block's tile alone
@exercise("07.7")
def test_conv1d_stays_within_the_read_budget(run):
    for n, width, block in ((300, 7, 128), (200, 5, 64), (45, 3, 16)):
        stats, what = _conv_case(run, n, width, block)
        blocks = max(math.ceil(n / block), 1)
        budget = n + 2 * width * blocks
        assert stats["global_reads"] <= budget, (
            f"{what} read global memory {stats['global_reads']} times; the budget is {budget} "
            f"(n + 2 * WIDTH * blocks; read naively it takes {2 * width * n})"
        )
        assert stats["max_thread_global_reads"] <= 4, (
            f"{what}: one thread read {stats['max_thread_global_reads']} elements from global "
            "memory; the budget allows each thread at most 4"
        )
