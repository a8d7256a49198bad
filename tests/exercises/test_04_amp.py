"""Graded tests for chapter 04 (mixed precision).

Each judge (``@exercise``) draws its inputs, runs the learner's piece through a probe and
compares with minitorch's own implementation (``minitorch.amp``) here, in the grader's
process. Each exercise declares what it forbids: minitorch's own version of the piece
(and torch, always); an answer whose code calls it gets no points for the exercise (see
:mod:`minitorch.course.grading.delegation`).
"""

from __future__ import annotations

import math
from contextlib import contextmanager

import numpy as np

import minitorch as mt
from minitorch import amp, nn
from minitorch.amp import autocast_mode, grad_scaler
from minitorch.course import digits
from minitorch.course.grading import Delegated, Forbidden, exercise, forbid, probe
from minitorch.course.grading.delegation import message

# --- what each exercise forbids (torch is always forbidden) -----------------------------------
# Methods rather than whole classes: a notebook may import GradScaler or autocast (04.6 uses
# them), or ForeachNonFinite, without that counting as delegation; a subclass that leans on
# them calls these methods. (ForeachNonFinite.apply runs its forward from minitorch's own
# code, which the watch allows: the probes of 04.1 and 04.3 refuse the op itself, see
# _refusing_the_non_finite_op.)
_SCALER = tuple(
    (grad_scaler.GradScaler, name) for name in ("__init__", "scale", "unscale_", "step", "update")
)
_NON_FINITE_LABEL = "minitorch's own ForeachNonFinite"
_NON_FINITE = (
    grad_scaler.non_finite_check_and_unscale_,
    Forbidden((grad_scaler.ForeachNonFinite, "forward"), _NON_FINITE_LABEL),
)
FOUND_INF = forbid(*_NON_FINITE, *_SCALER)
UPDATE_SCALE = forbid(grad_scaler.update_scale, *_SCALER)
UNSCALE = forbid(*_NON_FINITE, *_SCALER)
_POLICY_PIECES = (
    autocast_mode.cast_inputs,
    autocast_mode.category,
    autocast_mode._widest,
    autocast_mode._eligible,
    autocast_mode._cast,
)
AUTOCAST_POLICY = forbid(
    *(
        Forbidden((autocast_mode.autocast, name), "minitorch's own autocast")
        for name in ("__init__", "__enter__", "__call__")
    ),
    *(Forbidden(f, f"minitorch's own autocast policy ({f.__name__})") for f in _POLICY_PIECES),
    # the layer Function.apply calls: called by hand, it runs cast_inputs on the answer's behalf
    Forbidden((autocast_mode.Autocast, "__call__"), "minitorch's own autocast (its layer)"),
)
# the probe hands LossScaler reference unscale_ and update_scale: only the scaler is forbidden
LOSS_SCALER = forbid(*_SCALER)
# the learner is given a GradScaler and autocast; minitorch's own training loop is forbidden
TRAIN_AMP = forbid(
    Forbidden(digits.train, "minitorch's own AMP training loop (course.digits.train)")
)


# --- helpers ---------------------------------------------------------------------------------
def _params_with_grads(grads):
    """Parameters whose .grad are the given arrays (None: no gradient)."""
    params = []
    for i, g in enumerate(grads):
        shape = (2, 3) if g is None else np.shape(g)
        p = nn.Parameter(mt.zeros(*shape) + i)
        if g is not None:
            p.grad = mt.tensor(np.asarray(g, dtype=np.float32))
        params.append(p)
    return params


def _random_grads(rng, count=4):
    return [
        rng.standard_normal(tuple(rng.integers(1, 5, size=2))).astype(np.float32)
        for _ in range(count)
    ]


@contextmanager
def _refusing_the_non_finite_op():
    """While the learner's code runs, an op of ForeachNonFinite (or of a subclass), however
    reached (``ForeachNonFinite.apply``: minitorch's own code then calls its forward), is
    delegation."""
    import threading

    used, here = [], threading.get_ident()

    def hook(cls, args, kwargs, out):  # this thread's ops only: a timed-out one may still run
        if threading.get_ident() != here:
            return
        if isinstance(cls, type) and issubclass(cls, grad_scaler.ForeachNonFinite):
            used.append(cls)

    with mt.function.register_apply_hook(hook):
        yield
    if used:
        raise Delegated(message(_NON_FINITE_LABEL))


# --- 04.1 found_inf --------------------------------------------------------------------------
@probe(forbid=FOUND_INF)
def found_inf_of(nb, cases, as_generator):
    out = []
    for grads in cases:
        params = _params_with_grads(grads)
        with _refusing_the_non_finite_op():
            result = nb.found_inf(p for p in params) if as_generator else nb.found_inf(params)
        out.append(bool(result) if isinstance(result, np.bool_) else result)  # numpy's bool too
    return out


def _poisoned(rng, value):
    grads = _random_grads(rng)
    k = int(rng.integers(1, len(grads)))  # never the first: checking only grads[0] fails
    flat = grads[k].reshape(-1)
    flat[int(rng.integers(0, flat.size))] = value
    return grads


# catches: NaN missed (comparisons with inf), -inf missed (g == inf), only the first grad checked
@exercise("04.1")
def test_found_inf_sees_inf_minus_inf_and_nan(run):
    values = [np.inf, -np.inf, np.nan, np.inf, np.nan]
    cases = [_poisoned(run.rng, v) for v in values] + [_random_grads(run.rng) for _ in range(3)]
    got = run(found_inf_of, cases, False)
    expected = [True] * len(values) + [False] * 3
    for value, g, e in zip(values + ["finite"] * 3, got, expected, strict=True):
        assert g is e, f"found_inf returned {g!r} for gradients holding {value}, expected {e}"


# catches: a crash on parameters without a gradient; a generator iterated twice; huge finite
# values taken for overflow
@exercise("04.1")
def test_found_inf_skips_missing_grads_and_takes_a_generator(run):
    big = np.full((2, 2), 6.0e4, dtype=np.float32)  # finite, near float16's max
    bad = run.rng.standard_normal((3, 2)).astype(np.float32)
    bad[int(run.rng.integers(0, 3)), int(run.rng.integers(0, 2))] = np.nan
    cases = [[None, big, None], [None, None], [None, bad]]
    got = run(found_inf_of, cases, True)
    assert got == [False, False, True], (
        f"found_inf(generator of parameters) gave {got}, expected [False, False, True] "
        "(a None grad has nothing to check; 6e4 is finite; the generator is read once)"
    )


# catches: the check made on the sum (finite values whose sum overflows), on a float16 copy of
# float32 gradients (1e5 is finite in float32)
@exercise("04.1")
def test_found_inf_judges_each_value_in_its_own_dtype(run):
    huge = np.array([3.0e38, 3.0e38, -1.0], dtype=np.float32)  # finite; their sum is not
    wide = np.full((2, 3), 1.0e5, dtype=np.float32) * run.rng.choice([-1.0, 1.0], (2, 3))
    got = run(found_inf_of, [[huge], [wide]], False)
    assert got == [False, False], (
        f"found_inf gave {got} for finite float32 gradients [3e38, 3e38, -1] and 1e5, "
        "expected [False, False] (check every value, each in its own dtype)"
    )


# catches: a gradient walked row by row (a 0-d gradient cannot be iterated), an empty
# gradient taken for an overflow (its max is undefined)
@exercise("04.1")
def test_found_inf_on_0d_and_empty_gradients(run):
    scalar = np.float32(run.rng.standard_normal())
    cases = [[scalar], [np.float32(np.nan)], [np.zeros((0, 3), np.float32), scalar]]
    got = run(found_inf_of, cases, False)
    assert got == [False, True, False], (
        f"found_inf gave {got} for a finite 0-d gradient, a NaN 0-d gradient and an empty one, "
        "expected [False, True, False]"
    )


# --- 04.2 update_scale -----------------------------------------------------------------------
@probe(forbid=UPDATE_SCALE)
def scale_sequence(nb, start, flags, growth_factor, backoff_factor, interval):
    scale, tracker, out = start, 0, []
    for found in flags:
        scale, tracker = nb.update_scale(
            scale, tracker, found, growth_factor, backoff_factor, interval
        )
        out.append((float(scale), int(tracker)))
    return out


def _expected_scales(start, flags, growth_factor, backoff_factor, interval):
    scale, tracker, out = start, 0, []
    for found in flags:
        scale, tracker = amp.update_scale(
            scale, tracker, found, growth_factor, backoff_factor, interval
        )
        out.append((scale, tracker))
    return out


def _check_scales(run, start, flags, growth_factor, backoff_factor, interval):
    got = run(scale_sequence, start, flags, growth_factor, backoff_factor, interval)
    expected = _expected_scales(start, flags, growth_factor, backoff_factor, interval)
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        ok = math.isclose(g[0], e[0], rel_tol=1e-6) and g[1] == e[1]
        history = "".join("x" if f else "." for f in flags[: i + 1])
        assert ok, (
            f"after the steps {history} (x: overflow) with growth_interval={interval}, "
            f"update_scale gave (scale, tracker) = {g}, expected {e}"
        )


# catches: growth on the interval-th call instead of the interval-th clean step, tracker not
# reset after growing or after backing off, growth on an overflow step
@exercise("04.2")
def test_scale_grows_after_growth_interval_clean_steps(run):
    flags = [False] * 7 + [True] + [False] * 4 + [True, True] + [False] * 3
    _check_scales(run, 1024.0, flags, 2.0, 0.5, 3)


# catches: factors hard-coded to 2 and 0.5; growth_interval 1 mishandled
@exercise("04.2")
def test_scale_rule_with_other_factors(run):
    flags = [bool(f) for f in run.rng.random(25) < 0.25]
    _check_scales(run, 2.0**16, flags, 4.0, 0.25, 1)
    interval = int(run.rng.integers(2, 6))
    _check_scales(run, 2.0**10, [bool(f) for f in run.rng.random(30) < 0.15], 3.0, 0.125, interval)


@probe(forbid=UPDATE_SCALE)
def scale_calls(nb, calls):
    out = []
    for args in calls:
        scale, tracker = nb.update_scale(*args)
        out.append((float(scale), int(tracker)))
    return out


# catches: the tracker kept outside the arguments (a module global, an attribute of the
# function, counting its own calls): each call is handed a tracker, and the rule reads that one
@exercise("04.2")
def test_scale_rule_reads_the_tracker_it_is_given(run):
    interval = int(run.rng.integers(4, 8))
    calls = [
        (256.0, interval - 2, False, 2.0, 0.5, interval),  # one clean step short of growing
        (256.0, interval - 1, False, 2.0, 0.5, interval),  # the interval-th clean step
        (64.0, 1, False, 4.0, 0.25, interval),
        (64.0, interval - 1, True, 4.0, 0.25, interval),  # an overflow, however many clean
        (8.0, 0, False, 3.0, 0.125, 1),
    ]
    got = run(scale_calls, calls)
    names = ("scale", "growth_tracker", "found_inf", "growth_factor", "backoff_factor")
    names += ("growth_interval",)
    for args, g in zip(calls, got, strict=True):
        e = amp.update_scale(*args)
        ok = math.isclose(g[0], e[0], rel_tol=1e-6) and g[1] == e[1]
        call = ", ".join(f"{n}={a!r}" for n, a in zip(names, args, strict=True))
        assert ok, f"update_scale({call}) gave (scale, tracker) = {g}, expected {e}"


# catches: the scale rounded to an int, a floor at 1 (the scale backs off below 1 as often as
# the gradients overflow); the tracker only reduced (not reset to 0) by an overflow that
# follows a few clean steps
@exercise("04.2")
def test_scale_rule_from_a_fractional_scale_below_one(run):
    start = float(run.rng.uniform(0.3, 0.9))
    flags = [True] * 3 + [False] * 3 + [True] + [bool(f) for f in run.rng.random(12) < 0.3]
    _check_scales(run, start, flags, 2.0, 0.5, int(run.rng.integers(4, 8)))


# --- 04.3 unscale_ ---------------------------------------------------------------------------
@probe(forbid=UNSCALE)
def unscaled(nb, grads, scale, as_generator=False):
    params = _params_with_grads(grads)
    before = [p.grad for p in params]
    versions = [None if g is None else g._version for g in before]
    with _refusing_the_non_finite_op():
        found = nb.unscale_((p for p in params) if as_generator else params, scale)
    found = bool(found) if isinstance(found, np.bool_) else found
    # in place *through an op*: p.grad is the same tensor, and its version counter moved
    same = [
        p.grad is b and (b is None or b._version > v)
        for p, b, v in zip(params, before, versions, strict=True)
    ]
    values = [None if p.grad is None else np.array(p.grad.numpy()) for p in params]
    return found, same, values


# catches: multiplying by the scale, dividing twice, new gradient tensors instead of in place,
# an in-place write to the numpy array that bypasses the ops (no version bump, unseen by the
# tracer); 1 / scale taken in float16 (0 for a scale above 2**24)
@exercise("04.3")
def test_unscale_divides_every_gradient_in_place(run):
    for exponents in [(8, 17), (26, 40)]:
        _check_unscaled(run, float(2.0 ** int(run.rng.integers(*exponents))))


def _check_unscaled(run, scale, as_generator=False):
    grads = [g * scale for g in _random_grads(run.rng)] + [None]
    found, same, values = run(unscaled, grads, scale, as_generator)
    assert found is False, f"unscale_ returned {found!r} for finite gradients, expected False"
    assert all(same), (
        "unscale_ must change the gradients in place with a tensor op such as g.mul_ "
        "(p.grad stays the same tensor, and its version counter moves)"
    )
    for i, (g, v) in enumerate(zip(grads, values, strict=True)):
        if g is None:
            assert v is None, f"parameter {i} had no gradient and should keep none"
        else:
            np.testing.assert_allclose(
                v, g / scale, rtol=1e-6, err_msg=f"gradient {i} after unscale_ with scale {scale}"
            )


# catches: parameters read twice (found_inf(parameters), then a loop over an empty generator),
# 1 // scale (an integer division: wrong for a scale below 1 after backoffs)
@exercise("04.3")
def test_unscale_takes_a_generator_and_a_scale_below_one(run):
    _check_unscaled(run, float(run.rng.uniform(0.15, 0.9)), as_generator=True)


# catches: unscaling skipped when an overflow is found, the flag inverted, NaN missed; the
# poisoned gradient itself left scaled, the loop stopped at the first bad gradient; the flag
# of the last gradient only (a finite gradient always comes after the bad one)
@exercise("04.3")
def test_unscale_reports_overflow_and_still_unscales(run):
    grads = [*_poisoned(run.rng, np.nan), *_random_grads(run.rng, 1)]
    found, same, values = run(unscaled, grads, 4.0)
    assert found is True, f"unscale_ returned {found!r} with a NaN gradient, expected True"
    for i, g in enumerate(grads):  # NaN stays NaN; every finite value is unscaled
        np.testing.assert_allclose(
            values[i], g / 4.0, rtol=1e-6, err_msg=f"gradient {i} (unscale all, even then)"
        )


# catches: the overflow check made after the multiplication (on the products): after backoffs
# the scale is below 1, and a huge finite gradient times 1 / scale overflows float32; the
# gradients backward gave were finite, so the flag is False (the product is inf all the same)
@exercise("04.3")
def test_unscale_flags_the_gradients_it_was_given(run):
    scale = float(run.rng.uniform(0.2, 0.5))
    huge = _random_grads(run.rng, 1)[0]
    huge.reshape(-1)[int(run.rng.integers(0, huge.size))] = float(run.rng.uniform(1.8e38, 3e38))
    grads = [*_random_grads(run.rng, 2), huge]
    with np.errstate(over="ignore"):
        found, _, values = run(unscaled, grads, scale)
        expected = [g / np.float32(scale) for g in grads]
    assert found is False, (
        f"unscale_ returned {found!r} for finite gradients (the largest {huge.max():.3g}) "
        f"with scale {scale:.3g}, expected False: the flag says whether the gradients it was "
        "given hold an inf or NaN, even when dividing by a scale below 1 overflows"
    )
    for i, (v, e) in enumerate(zip(values, expected, strict=True)):
        np.testing.assert_allclose(
            v, e, rtol=1e-6, err_msg=f"gradient {i} after unscale_ with scale {scale:.3g}"
        )


# --- 04.4 autocast_dtypes ----------------------------------------------------------------------
POLICY = {
    "matmul": "lower_precision_fp",
    "linear": "lower_precision_fp",
    "softmax": "fp32",
    "cross_entropy": "fp32",
    "cat": "promote",
    "index_put": "promote",
}


# another policy: the answer reads the one it is given (not a table of its own, nor the
# package's autocast_mode.POLICY)
OTHER_POLICY = {
    "add": "fp32",
    "matmul": "promote",
    "relu": "lower_precision_fp",
    "gelu": "fp32",
}


@probe(forbid=AUTOCAST_POLICY)
def autocast_choice(nb, cases, policy=None):
    out = []
    for op, names, fast in cases:
        dtypes = [getattr(mt, n) for n in names]
        result = nb.autocast_dtypes(op, dtypes, getattr(mt, fast), dict(policy or POLICY))
        out.append([d.name if isinstance(d, mt.dtype) else repr(d) for d in result])
        if [d.name for d in dtypes] != list(names):  # the caller's list is the caller's
            out[-1] = [f"changed the caller's list to {[d.name for d in dtypes]}"]
    return out


def _reference_choice(op, names, fast, policy=None):
    kind = (policy or POLICY).get(op)
    dtypes = [getattr(mt, n) for n in names]
    floats = [d for d in dtypes if d.is_floating_point]
    if kind is None or not floats:
        return list(names)
    target = {"lower_precision_fp": getattr(mt, fast), "fp32": mt.float32}.get(kind)
    if target is None:
        target = floats[0]
        for d in floats[1:]:
            target = mt.promote_types(target, d)
    keep = [not d.is_floating_point or (d is mt.float64 and kind != "promote") for d in dtypes]
    return [n if k else target.name for n, k in zip(names, keep, strict=True)]


def _check_choices(run, cases, policy=None):
    given = f", policy={policy}" if policy else ""
    for (op, names, fast), got in zip(cases, run(autocast_choice, cases, policy), strict=True):
        expected = _reference_choice(op, names, fast, policy)
        assert got == expected, (
            f"autocast_dtypes({op!r}, {names}, fast_dtype={fast}{given}) gave {got}, "
            f"expected {expected}"
        )


# catches: the policy argument ignored (a table of one's own, or the package's
# autocast_mode.POLICY); results remembered between calls by op and dtypes alone (a cache in a
# module global: the same op and inputs under the other fast dtype, or another policy, differ)
@exercise("04.4")
def test_the_fast_dtype_and_the_policy_given(run):
    fast, other = [str(n) for n in run.rng.permutation(["float16", "bfloat16"])]
    same = [("matmul", ["float32", "int64"], fast), ("matmul", ["float32", "int64"], other)]
    _check_choices(run, [*same, ("softmax", [other], fast), ("relu", [fast], fast)])
    _check_choices(
        run,
        [
            ("add", ["float16", "float16"], fast),
            ("matmul", ["float16", "bfloat16"], fast),
            ("matmul", ["bfloat16", "int64", "float64"], fast),
            ("relu", ["float32"], fast),
            ("gelu", [other, "bool"], fast),
            ("linear", ["float32", "float32"], fast),
            ("softmax", [other], fast),
            ("cat", ["float16", "float32"], fast),
        ],
        OTHER_POLICY,
    )


# catches: the categories mixed up, unlisted ops cast, the fast dtype hard-coded
@exercise("04.4")
def test_each_category_picks_its_dtype(run):
    fast = str(run.rng.choice(["float16", "bfloat16"]))
    _check_choices(
        run,
        [
            ("matmul", ["float32", "float32"], fast),
            ("linear", ["float32", "float32", "float32"], fast),
            ("softmax", [fast], fast),
            ("cross_entropy", ["float16", "int64"], fast),
            ("relu", [fast], fast),
            ("add", ["float16", "float32"], fast),
            ("cat", ["float16", "float32"], fast),
        ],
    )


# catches: the casts written into the caller's list of dtypes; lower_precision_fp casting only
# float32 inputs (a float16 input under bfloat16 autocast becomes bfloat16 too)
@exercise("04.4")
def test_every_floating_input_is_cast_into_a_new_list(run):
    fast, other = [str(n) for n in run.rng.permutation(["float16", "bfloat16"])]
    _check_choices(
        run,
        [
            ("matmul", [other, "int64", "float32"], fast),
            ("linear", [other, other], fast),
            ("softmax", [other, "float64"], fast),
        ],
    )


# catches: float64 narrowed, integer/bool inputs cast, promote by itemsize (f16 + bf16 is f32),
# promote with no floating input crashing (nothing to promote: the inputs stay as they are)
@exercise("04.4")
def test_float64_and_non_floating_inputs(run):
    _check_choices(
        run,
        [
            ("matmul", ["float64", "float64"], "float16"),
            ("softmax", ["float64"], "bfloat16"),
            ("cat", ["float16", "bfloat16"], "float16"),
            ("cat", ["bfloat16", "float64", "float16"], "bfloat16"),
            ("index_put", ["float16", "int64", "float32"], "float16"),
            ("linear", ["bool", "float32"], "bfloat16"),
            ("matmul", ["int64", "int64"], "float16"),
            ("cat", ["int64", "bool"], "bfloat16"),
        ],
    )


# catches: promote over the first two floating inputs (or the first two inputs) only: an op
# that joins three or more inputs takes the promotion of all its floating inputs
@exercise("04.4")
def test_promote_reads_every_floating_input(run):
    fast = str(run.rng.choice(["float16", "bfloat16"]))
    _check_choices(
        run,
        [
            ("cat", ["float16", "float16", "float32"], fast),
            ("cat", ["bfloat16", "float32", "bfloat16"], fast),
            ("cat", ["bfloat16", "bfloat16", "bfloat16", "float16"], fast),
            ("index_put", ["float16", "int64", "float16", "float64"], fast),
            ("cat", ["bfloat16", "int64", "bfloat16", "bool", "float32"], fast),
        ],
    )


# --- 04.5 LossScaler -------------------------------------------------------------------------
def _gradient_steps(rng, steps=16, overflows=(2, 3, 9)):
    seq = []
    for i in range(steps):
        g = rng.standard_normal(4).astype(np.float32)
        if i in overflows:
            g[int(rng.integers(0, 4))] = [np.inf, np.nan, -np.inf][i % 3]
        seq.append(g)
    return seq


def _two_groups():
    """Two parameters in two param groups (the scaler must see every group)."""
    p, q = nn.Parameter(mt.tensor([0.5, -0.5])), nn.Parameter(mt.tensor([1.0, 2.0]))
    return p, q, mt.optim.SGD([{"params": [p]}, {"params": [q], "lr": 0.05}], lr=0.1)


@contextmanager
def _reference_pieces(nb):
    """The reference unscale_ and update_scale: 04.5 is graded apart from 04.2 and 04.3."""
    refs = {"unscale_": _reference_unscale_, "update_scale": amp.update_scale}
    old = {k: nb._globals.get(k) for k in refs}
    nb._globals.update(refs)
    try:
        yield
    finally:
        nb._globals.update(old)


def _loss(p, q, g):
    return (p * mt.tensor(g[:2])).sum() + (q * mt.tensor(g[2:])).sum()


def _grads_of(*params):
    """The parameters' gradients as float32 arrays (None: no gradient)."""
    return [None if t.grad is None else np.array(t.grad.detach().numpy()) for t in params]


@probe(forbid=LOSS_SCALER)
def loss_scaler_run(nb, seq, init_scale, interval):
    p, q, opt = _two_groups()
    out = []
    with _reference_pieces(nb):
        scaler = nb.LossScaler(init_scale=init_scale, growth_interval=interval)
        for g in seq:
            opt.zero_grad()
            loss = _loss(p, q, g)
            before = loss.item()
            scaler.scale(loss).backward()
            after = loss.item()  # the caller's loss: scale() returns a new tensor
            stepped = scaler.step(opt)
            grads = _grads_of(p, q)
            scaler.update()
            params = p.detach().numpy().tolist() + q.detach().numpy().tolist()
            out.append((float(scaler.scale_value), bool(stepped), params, before, after, grads))
    return out


@probe(forbid=LOSS_SCALER)
def interleaved_scalers(nb, seqs, init_scales, intervals):
    """Scalers of their own models and optimizers, taking each stage of a step in turn:
    each scales its loss and runs backward, then each steps, then each updates. The scale
    of each, and whether it stepped, after every update."""
    setups = [_two_groups() for _ in seqs]
    out = [[] for _ in seqs]
    with _reference_pieces(nb):
        scalers = [
            nb.LossScaler(init_scale=s, growth_interval=k)
            for s, k in zip(init_scales, intervals, strict=True)
        ]
        for i in range(len(seqs[0])):
            for (p, q, opt), scaler, seq in zip(setups, scalers, seqs, strict=True):
                opt.zero_grad()
                scaler.scale(_loss(p, q, seq[i])).backward()
            stepped = [
                scaler.step(opt) for (_, _, opt), scaler in zip(setups, scalers, strict=True)
            ]
            for scaler in scalers:
                scaler.update()
            for k, scaler in enumerate(scalers):
                out[k].append((float(scaler.scale_value), bool(stepped[k])))
    return out


def _reference_unscale_(parameters, scale):
    grads = [p.grad for p in parameters if p.grad is not None]
    with mt.no_grad():
        return bool(grad_scaler.non_finite_check_and_unscale_(grads, 1.0 / scale).item())


def _reference_scaler_run(seq, init_scale, interval):
    p, q, opt = _two_groups()
    scaler = amp.GradScaler(init_scale=init_scale, growth_interval=interval)
    out = []
    for g in seq:
        opt.zero_grad()
        scaler.scale((p * mt.tensor(g[:2])).sum() + (q * mt.tensor(g[2:])).sum()).backward()
        before = p.detach().numpy().tolist() + q.detach().numpy().tolist()
        scaler.step(opt)
        grads = _grads_of(p, q)
        params = p.detach().numpy().tolist() + q.detach().numpy().tolist()
        scaler.update()
        out.append((scaler.get_scale(), before != params, params, grads))
    return out


# catches: a step taken on inf/NaN gradients, no backoff after a skip, growth counted on
# skipped steps, the loss not scaled, step not reporting whether it stepped; only the first
# param group unscaled and checked; unscaling skipped on an overflowing step (the finite
# gradients left scaled: whoever reads p.grad after step, a logger, a clipping that comes
# later, sees them scale_value times too large)
@exercise("04.5")
def test_loss_scaler_matches_grad_scaler(run):
    seq = _gradient_steps(run.rng)
    interval = int(run.rng.integers(2, 5))
    with np.errstate(over="ignore", invalid="ignore"):
        got = run(loss_scaler_run, seq, 1024.0, interval)
        expected = _reference_scaler_run(seq, 1024.0, interval)
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        kind = "an overflowing" if not np.isfinite(seq[i]).all() else "a clean"
        # catches: the caller's loss scaled in place (loss.mul_): the loop that called
        # scale(loss) reads its loss afterwards, and would see it scaled
        before, after = g[3], g[4]
        assert after == before or (math.isnan(after) and math.isnan(before)), (
            f"step {i}: scale(loss) changed the loss it was given from {before} to {after}; "
            "return loss * scale_value, a new tensor, and leave the caller's loss as it is"
        )
        assert g[1] == e[1], f"step {i} ({kind} step): step() returned {g[1]}, expected {e[1]}"
        assert math.isclose(g[0], e[0]), (
            f"after step {i} ({kind} step) the scale is {g[0]}, expected {e[0]}"
        )
        np.testing.assert_allclose(g[2], e[2], rtol=1e-6, err_msg=f"parameters after step {i}")
        for name, a, b in zip("pq", g[5], e[3], strict=True):
            np.testing.assert_allclose(
                a,
                b,
                rtol=1e-6,
                err_msg=f"the gradient of {name} after step() of step {i} ({kind} step): "
                "step() unscales every gradient, also when it then skips the step",
            )


# catches: the scaler's state shared between instances (class attributes), init_scale ignored
@exercise("04.5")
def test_two_scalers_keep_their_own_state(run):
    seq = _gradient_steps(run.rng, steps=6)
    first = run(loss_scaler_run, seq, 2.0**8, 2)
    second = run(loss_scaler_run, seq[:3], 2.0**4, 3)
    with np.errstate(over="ignore", invalid="ignore"):
        first_expected = _reference_scaler_run(seq, 2.0**8, 2)
        second_expected = _reference_scaler_run(seq[:3], 2.0**4, 3)
    for got, expected, init, interval in (
        (first, first_expected, 2.0**8, 2),
        (second, second_expected, 2.0**4, 3),
    ):
        scales, ref_scales = [g[0] for g in got], [e[0] for e in expected]
        assert scales == ref_scales, (
            f"a LossScaler(init_scale={init}, growth_interval={interval}) had the scales "
            f"{scales} after its steps, expected {ref_scales}; keep all its state on self"
        )
    # catches: found_inf kept in a module global, the tracker kept on the class: two scalers
    # that take their steps in turn (both step, then both update) read each other's
    seqs = [_gradient_steps(run.rng, 9, (2, 3)), _gradient_steps(run.rng, 9, (5, 6))]
    got = run(interleaved_scalers, seqs, [2.0**8, 2.0**6], [2, 3])
    for k, (seq, init, interval) in enumerate(zip(seqs, [2.0**8, 2.0**6], [2, 3], strict=True)):
        with np.errstate(over="ignore", invalid="ignore"):
            expected = [(e[0], e[1]) for e in _reference_scaler_run(seq, init, interval)]
        for i, (g, e) in enumerate(zip(got[k], expected, strict=True)):
            steps = "".join("x" if not np.isfinite(g).all() else "." for g in seq[: i + 1])
            assert tuple(g) == e, (
                f"two LossScalers taking their steps in turn (both scale and backpropagate, "
                f"both step, both update): after the steps {steps} (x: overflow), scaler {k} "
                f"(init_scale={init}, growth_interval={interval}) has (scale_value, stepped) "
                f"= {tuple(g)}, expected {e}; keep all its state on self"
            )


# --- 04.6 train_amp --------------------------------------------------------------------------
def _stale_gradients(model, rng):
    """Gradients already on the model when train_amp is called (the caller's own backward,
    a gradient-norm log, say): large, so that any of them left in an update shows."""
    for p in model.parameters():
        p.grad = mt.tensor((rng.standard_normal(p.shape) * 100).astype(np.float32))


def _tiny_setup(seed, dtype_name, init_scale):
    mt.manual_seed(seed)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    opt = mt.optim.SGD(model.parameters(), lr=0.5)
    scaler = amp.GradScaler(init_scale=init_scale, growth_interval=2)
    rng = np.random.default_rng(seed)
    batches = [
        (
            mt.tensor(rng.standard_normal((5, 6)).astype(np.float32)),
            mt.tensor(rng.integers(0, 3, 5)),
        )
        for _ in range(6)
    ]
    _stale_gradients(model, rng)
    return model, opt, scaler, batches, getattr(mt, dtype_name)


def _as_floats(losses):
    """The losses a pass returned, as floats; a TypeError (not a float) otherwise."""
    if not isinstance(losses, list) or not all(isinstance(v, float) for v in losses):
        kinds = [type(v).__name__ for v in losses] if isinstance(losses, list) else losses
        raise TypeError(f"train_amp returned {kinds!r}, not a list of Python floats")
    return [float(v) for v in losses]


@probe(forbid=TRAIN_AMP)
def trained(nb, seed, dtype_name, init_scale, max_norm):
    import threading

    model, opt, scaler, batches, dtype = _tiny_setup(seed, dtype_name, init_scale)
    matmul_dtypes, here = [], threading.get_ident()

    def record(cls, args, kwargs, out):  # this thread's ops only: a timed-out one may still run
        if cls.name == "linear" and threading.get_ident() == here:
            matmul_dtypes.append(out.dtype.name)

    backward_under_autocast = []
    first = next(iter(model.parameters()))
    first.register_hook(
        lambda grad: backward_under_autocast.append(autocast_mode.is_autocast_enabled("cpu"))
    )
    given = list(batches)
    with mt.function.register_apply_hook(record), np.errstate(over="ignore", invalid="ignore"):
        losses = _as_floats(nb.train_amp(model, opt, scaler, batches, dtype, max_norm))
    params = [p.detach().numpy().tolist() for p in model.parameters()]
    dtypes = sorted(set(matmul_dtypes))
    kept = len(batches) == len(given) and all(a is b for a, b in zip(batches, given, strict=True))
    return (
        losses,
        scaler.get_scale(),
        params,
        dtypes,
        backward_under_autocast,
        (len(given), len(batches), kept),
    )


def _reference_pass(model, opt, scaler, batches, dtype, max_norm):
    losses = []
    for x, y in batches:
        opt.zero_grad()
        with mt.autocast("cpu", dtype=dtype):
            loss = nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        if max_norm is not None:
            scaler.unscale_(opt)
            nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    return losses


def _reference_train(seed, dtype_name, init_scale, max_norm):
    model, opt, scaler, batches, dtype = _tiny_setup(seed, dtype_name, init_scale)
    with np.errstate(over="ignore", invalid="ignore"):
        losses = _reference_pass(model, opt, scaler, batches, dtype, max_norm)
    return losses, scaler.get_scale(), [p.detach().numpy().tolist() for p in model.parameters()]


def _check_training(run, seed, dtype_name, init_scale, max_norm):
    got = run(trained, seed, dtype_name, init_scale, max_norm)
    losses, scale, params, dtypes, under, (count, left, kept) = got
    ref_losses, ref_scale, ref_params = _reference_train(seed, dtype_name, init_scale, max_norm)
    setting = f"{dtype_name}, init_scale={init_scale:g}, max_norm={max_norm}"
    # catches: the caller's list of batches changed (popped from as the loop goes): a caller
    # passes the same list again, one epoch after another
    assert kept, (
        f"train_amp changed the list of batches it was given: {count} batches before the "
        f"pass, {left} after, or others in their place; read the list without changing it"
    )
    assert dtypes == [dtype_name], (
        f"with dtype={dtype_name} the linear layers ran in {dtypes}, expected [{dtype_name!r}]"
    )
    assert under and not any(under), (
        "backward ran inside an autocast region: only the forward and the loss belong there"
    )
    assert len(losses) == len(ref_losses), (
        f"train_amp returned {len(losses)} losses for {len(ref_losses)} batches"
    )
    np.testing.assert_allclose(
        losses, ref_losses, rtol=2e-3, err_msg=f"the losses returned ({setting})"
    )
    assert scale == ref_scale, (
        f"the scaler's scale after the pass ({setting}) is {scale}, expected {ref_scale}"
    )
    for i, (a, b) in enumerate(zip(params, ref_params, strict=True)):
        np.testing.assert_allclose(
            a, b, rtol=2e-3, atol=1e-5, err_msg=f"parameter {i} after the pass ({setting})"
        )


# catches: the forward outside autocast, the loss not scaled, optimizer.step() called directly
# (stepping on overflow), update() forgotten, zero_grad forgotten, backward inside autocast;
# zero_grad after the step instead of before backward: the gradients the model arrived with
# leak into the first batch's update (the bfloat16 pass's first step is clean)
@exercise("04.6")
def test_train_amp_matches_a_correct_pass(run):
    seed = int(run.rng.integers(0, 1000))
    _check_training(run, seed, "float16", 2.0**20, None)  # huge scale: the first steps overflow
    _check_training(run, seed + 1, "bfloat16", 2.0**8, None)


# catches: clipping before unscale_ (the scaled gradients clipped), clipping skipped
@exercise("04.6")
def test_train_amp_clips_the_unscaled_gradients(run):
    seed = int(run.rng.integers(0, 1000))
    _check_training(run, seed, "float16", 2.0**10, 0.05)


# catches: `if max_norm:` (max_norm=0.0 is given: clipping to 0 zeroes the gradients, so no
# parameter moves); losses returned as tensors instead of floats
@exercise("04.6")
def test_train_amp_clips_to_a_zero_max_norm(run):
    _check_training(run, int(run.rng.integers(0, 1000)), "bfloat16", 2.0**6, 0.0)


# The goal: a workload the learner has not seen. A small classifier on clusters in a few
# dimensions, trained in float16 for GOAL_PASSES passes from a scale of 2**24 (the first
# steps overflow), with one batch that overflows float16 in its forward in every other pass,
# clipped at 1.0; then its accuracy on held-out points, judged here.
GOAL_PASSES = 5
GOAL_ACCURACY = 0.9


def _goal_workload(rng):
    """Sizes (inputs, hidden units, classes), the training batches, the batch that is
    poisoned in every other pass, and the held-out points (which stay in the grader)."""
    d, hidden, k = int(rng.integers(6, 11)), int(rng.integers(12, 25)), int(rng.integers(3, 5))
    basis, _ = np.linalg.qr(rng.standard_normal((d, d)))
    centers = basis[:k] * 3.5  # k orthogonal directions, 3.5 * sqrt(2) apart

    def draw(n):
        y = rng.integers(0, k, n)
        return (centers[y] + rng.standard_normal((n, d))).astype(np.float32), y

    x, y = draw(12 * 32)
    batches = [(x[i : i + 32], y[i : i + 32]) for i in range(0, len(x), 32)]
    return (d, hidden, k), batches, int(rng.integers(0, len(batches))), draw(400)


def _goal_model(seed, sizes):
    d, hidden, k = sizes
    mt.manual_seed(seed)
    return nn.Sequential(nn.Linear(d, hidden), nn.ReLU(), nn.Linear(hidden, k))


def _goal_passes(train, seed, sizes, batches, poisoned):
    """GOAL_PASSES calls of ``train`` (one per pass): the losses of each pass, the scale
    after each, the parameters at the end."""
    model = _goal_model(seed, sizes)
    _stale_gradients(model, np.random.default_rng(seed))
    optimizer = mt.optim.SGD(model.parameters(), lr=0.3)
    scaler = amp.GradScaler(init_scale=2.0**24, growth_interval=5)
    clean = [(mt.tensor(x), mt.tensor(y)) for x, y in batches]
    x, y = batches[poisoned]
    x = x.copy()
    x[0, 0] = 1.0e5  # beyond float16's 65504: the first layer's output overflows
    losses, scales = [], []
    with np.errstate(over="ignore", invalid="ignore"):
        for n in range(GOAL_PASSES):
            given = list(clean)
            if n % 2 == 1:
                given[poisoned] = (mt.tensor(x), mt.tensor(y))
            losses.append(train(model, optimizer, scaler, given, mt.float16, 1.0))
            scales.append(scaler.get_scale())
    return losses, scales, [np.array(p.detach().numpy()) for p in model.parameters()]


@probe(forbid=TRAIN_AMP)
def goal_run(nb, seed, sizes, batches, poisoned):
    losses, scales, params = _goal_passes(nb.train_amp, seed, sizes, batches, poisoned)
    return [_as_floats(v) for v in losses], scales, params


def _accuracy(params, x, y):
    """The two-layer classifier's accuracy on (x, y), computed here in float32."""
    w1, b1, w2, b2 = (np.asarray(p, dtype=np.float32) for p in params)
    with np.errstate(all="ignore"):
        logits = np.maximum(x @ w1.T + b1, 0) @ w2.T + b2
    return float((logits.argmax(1) == y).mean())


# catches (by the goal, on a workload the learner has not seen): steps taken on overflowing
# gradients (NaN parameters), the scale never updated (every step overflows), clipping the
# scaled gradients (the updates shrink to nothing), the gradients never zeroed (they pile up),
# the loss not scaled, a loop that stops at the first non-finite loss
@exercise("04.6")
def test_train_amp_reaches_the_goal_through_overflows(run):
    seed = int(run.rng.integers(0, 1000))
    sizes, batches, poisoned, (x_test, y_test) = _goal_workload(run.rng)
    losses, scales, params = run(goal_run, seed, sizes, batches, poisoned)
    ref_losses, ref_scales, ref_params = _goal_passes(
        _reference_pass, seed, sizes, batches, poisoned
    )
    workload = (
        f"{sizes[0]} inputs, {sizes[1]} hidden units, {sizes[2]} classes; {GOAL_PASSES} passes "
        f"of {len(batches)} batches in float16 from init_scale=2**24, batch {poisoned} "
        "overflowing in passes 2 and 4, max_norm=1.0"
    )
    counts = [len(v) for v in losses]
    assert counts == [len(batches)] * GOAL_PASSES, (
        f"train_amp returned {counts} losses in the passes of {workload}; expected one per "
        "batch in each pass"
    )
    bad = [i for i, p in enumerate(params) if not np.isfinite(np.asarray(p, float)).all()]
    assert not bad, (
        f"after the passes of {workload}, parameters {bad} hold inf or NaN: an update was "
        "made from overflowing gradients"
    )
    accuracy = _accuracy(params, x_test, y_test)
    reference = _accuracy(ref_params, x_test, y_test)
    assert accuracy >= GOAL_ACCURACY, (
        f"held-out accuracy {accuracy:.1%} after the passes of {workload}; the goal is "
        f"{GOAL_ACCURACY:.0%} (a correct train_amp reaches {reference:.1%}, with the scale "
        f"after each pass {[f'2**{math.log2(s):g}' for s in ref_scales]}; yours: "
        f"{[f'2**{math.log2(s):g}' if s > 0 else s for s in scales]})"
    )
