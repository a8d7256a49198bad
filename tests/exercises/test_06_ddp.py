"""Graded tests for chapter 06 (collectives and data parallel training, by hand).

The *probes* run the learner's code where it would run for real: the ring functions on N
simulated ranks (threads linked by queues, ``minitorch.distributed.simulate``), the bucket
inside a real backward pass, gradient averaging on a simulated group, and ``no_sync``
accumulation on a real ``DistributedDataParallel``. They return plain data: results, and
what each rank sent (the ring's traffic tells the ring from a naive exchange). The
*judges* draw the inputs and compare with the reference in the grader's process. Each
exercise declares what it forbids: minitorch's own version of the piece (and torch,
always); an answer whose code calls it gets no points for the exercise (see
:mod:`minitorch.course.grading.delegation`).
"""

from __future__ import annotations

import math

import numpy as np

import minitorch
import minitorch.distributed as dist
import minitorch.nn.functional as F
from minitorch import nn, optim
from minitorch.course.grading import Forbidden, exercise, forbid, forbidding, probe
from minitorch.course.grading.delegation import Delegated, message
from minitorch.course.grading.judging import checked_array
from minitorch.distributed import buckets, group, ring, sampler
from minitorch.distributed.backends.local import LocalBackend
from minitorch.distributed.ddp import DistributedDataParallel as DDP

# --- what each exercise forbids (torch is always forbidden) -----------------------------------
# Methods rather than DistributedDataParallel or DistributedSampler whole: a notebook may
# import those classes (06.8 uses DDP) without that counting as delegation.
_RINGS = (ring.ring_reduce_scatter, ring.ring_all_gather, ring.ring_all_reduce)
# the embedded backend's collectives run the package's rings on whatever links they get: an
# answer that builds a LocalBackend on the simulator's send/recv delegates through them
_BACKEND = tuple((LocalBackend, name) for name in ("all_reduce", "all_gather", "reduce_scatter"))
REDUCE_SCATTER = forbid(*_RINGS, *_BACKEND, group.reduce_scatter)
ALL_GATHER = forbid(*_RINGS, *_BACKEND, group.all_gather, group.all_gather_into_tensor)
# 06.3 is graded with minitorch's own reduce-scatter and all-gather (see its probe): only the
# whole all-reduce is forbidden
ALL_REDUCE = forbid(ring.ring_all_reduce, (LocalBackend, "all_reduce"), group.all_reduce)
SHARD = forbid(
    sampler.shard_indices,
    *(
        Forbidden((sampler.DistributedSampler, name), "minitorch's own DistributedSampler")
        for name in ("__init__", "__iter__", "__len__")
    ),
)
_DDP_BACKWARD = tuple(
    (DDP, name)
    for name in (
        "_grad_ready",
        "_start_backward",
        "_launch_ready_buckets",
        "_launch",
        "_finish_backward",
        "_write_back",
    )
)
# a DDP built to read its bucket_indices is minitorch's assignment, too
ASSIGN_BUCKETS = forbid(buckets.assign_buckets, (DDP, "__init__"))
# Bucket's methods rather than the class: a notebook may import Bucket (to read it) without
# that counting as delegation, while a subclass of it still calls them (super().__init__, fill)
_BUCKET = tuple((buckets.Bucket, name) for name in ("__init__", "reset", "fill", "nbytes"))
GRAD_BUCKET = forbid(*_BUCKET, *_DDP_BACKWARD)
AVERAGE = forbid(group.all_reduce, *_BUCKET, *_DDP_BACKWARD)
# the probe builds the DDP; the learner's answer must only drive it (no_sync, one step)
ACCUMULATE = forbid(*_DDP_BACKWARD)


# --- helpers -------------------------------------------------------------------------------
def _ring_run(nb, name, world_size, inputs):
    """Run the learner's ``name`` on ``world_size`` simulated ranks; results and traffic."""
    from minitorch.distributed.simulate import run_ring

    fn = getattr(nb, name)

    def learners(*args):  # called from here, not from the simulator: a notebook name bound
        return fn(*args)  # to minitorch's own ring function is then a call the watch sees

    results, traffic = run_ring(learners, world_size, [tuple(a) for a in inputs], timeout=2.0)
    messages = [[np.asarray(m, dtype=np.float64).ravel() for m in r] for r in traffic.messages]
    return results, traffic.sent, traffic.unreceived, messages


def _check_messages_carry_data(messages, candidates, what):
    """Each value of a message rank r sent is a value of one of ``candidates(r)`` (what the
    ring can have to send at that rank: partial sums, or the final values), the same one for
    the whole message (its order is the answer's: a column-major ring is a ring too).

    catches: ranks that swap their data through memory they share (one process, N threads)
    and send zero arrays of the ring's sizes, so that the traffic's counts match."""
    for r, sent in enumerate(messages):
        for step, piece in enumerate(sent):
            fits = piece.size == 0 or any(
                np.isclose(piece[:, None], c[None, :], rtol=1e-6).any(axis=1).all()
                for c in candidates(r)
            )
            assert fits, (
                f"{what}: rank {r}'s message in step {step} ({piece.size} elements, starting "
                f"{float(piece[0]):.6g}) is not part of the data the ring carries (a partial "
                "sum of the ranks' values): the ring's messages must carry the data"
            )


def _partial_sums(flat, r):
    """Rank r's values, then r's plus r - 1's, ... (what a ring that sends to the right can
    have summed by each step), each flattened."""
    n, total, sums = len(flat), 0, []
    for k in range(n):
        total = total + flat[(r - k) % n]
        sums.append(np.asarray(total, dtype=np.float64).ravel())
    return sums


def _close(got, expected, what):
    got = np.asarray(got, dtype=np.float64) if not isinstance(got, np.ndarray) else got
    assert got.shape == np.shape(expected), (
        f"{what}: got shape {got.shape}, expected {np.shape(expected)}"
    )
    bad = ~np.isclose(got, expected, rtol=1e-9, atol=1e-9)
    if bad.any():  # (the first element that differs: a whole buffer does not fit a message)
        i = tuple(int(k) for k in np.argwhere(bad)[0])
        raise AssertionError(
            f"{what}: element {i} of {got.size} is {float(got[i]):.6g}, expected "
            f"{float(np.asarray(expected)[i]):.6g} ({int(bad.sum())} elements differ)"
        )


def _ranks(n):
    return f"{n} rank" if n == 1 else f"{n} ranks"


def _chunk_lengths(run, n):
    """Different lengths, so a wrong chunk index shows in the traffic too."""
    return [int(k) for k in run.rng.permutation(np.arange(1, n + 1))]


# --- 06.1 ring reduce-scatter --------------------------------------------------------------
@probe(forbid=REDUCE_SCATTER)
def reduce_scatter(nb, world_size, chunks):
    before = [[c.copy() for c in rank_chunks] for rank_chunks in chunks]
    results, sent, unreceived, messages = _ring_run(
        nb, "ring_reduce_scatter", world_size, [(c,) for c in chunks]
    )
    untouched = all(
        np.array_equal(a, b) for r, rank_chunks in enumerate(chunks)
        for a, b in zip(rank_chunks, before[r], strict=True)
    )  # fmt: skip
    results = [[np.asarray(c, dtype=np.float64) for c in r] for r in results]
    return results, sent, unreceived, untouched, messages


def _check_reduce_scatter(run, n):
    lengths = _chunk_lengths(run, n)
    chunks = [[run.rng.standard_normal(k).round(3) for k in lengths] for _ in range(n)]
    results, sent, unreceived, untouched, messages = run(reduce_scatter, n, chunks)
    # catches: adding into the caller's arrays in place (+=) instead of into new ones
    assert untouched, (
        f"{_ranks(n)}: reduce-scatter changed the caller's chunks; add into new arrays"
    )
    for r in range(n):
        owned = (r + 1) % n
        total = sum(chunks[q][owned] for q in range(n))
        _close(
            results[r][owned], total, f"{_ranks(n)}: rank {r}'s chunk {owned} after reduce-scatter"
        )
    for r in range(n):
        expected = [lengths[(r - s) % n] for s in range(n - 1)]
        assert sent[r] == expected, (
            f"{_ranks(n)}, chunks 0 to {n - 1} of {lengths} elements: rank {r} sent messages "
            f"of {sent[r]} elements in steps 0 to {len(sent[r]) - 1}, expected {expected} (one "
            f"whole chunk per step, N - 1 = {n - 1} steps; the lengths tell which chunk went)"
        )
    assert unreceived == [0] * n, f"{_ranks(n)}: messages left unreceived: {unreceived}"
    flat = [np.concatenate(rank_chunks) for rank_chunks in chunks]
    _check_messages_carry_data(messages, lambda r: _partial_sums(flat, r), _ranks(n))


# catches: replacing instead of adding; a wrong chunk index; N steps instead of N - 1
@exercise("06.1")
def test_reduce_scatter_two_ranks(run):
    _check_reduce_scatter(run, 2)


# catches: (rank + step) for (rank - step); an owner off by one; sending the whole list
@exercise("06.1")
def test_reduce_scatter_more_ranks(run):
    for n in (3, 5):
        _check_reduce_scatter(run, n)


# catches: a loop that runs its body before it tests the step count (`while True: ...
# break`): with one rank there are N - 1 = 0 steps, and a rank that sends to itself adds its
# own chunk in twice
@exercise("06.1")
def test_reduce_scatter_one_rank(run):
    chunk = run.rng.standard_normal(int(run.rng.integers(2, 6))).round(3)
    results, sent, unreceived, untouched, _ = run(reduce_scatter, 1, [[chunk]])
    assert untouched, "1 rank: reduce-scatter changed the caller's chunk; add into new arrays"
    assert sent == [[]], (
        f"1 rank (world_size=1): rank 0 sent {len(sent[0])} message(s) of {sent[0]} elements, "
        "expected none: reduce-scatter takes N - 1 = 0 steps"
    )
    assert len(results[0]) == 1, f"1 rank: rank 0 returned {len(results[0])} chunks, not 1"
    _close(results[0][0], chunk, "1 rank: chunk 0 after reduce-scatter (one rank's own chunk)")


# --- 06.2 ring all-gather ------------------------------------------------------------------
@probe(forbid=ALL_GATHER)
def all_gather(nb, world_size, chunks):
    before = [([id(c) for c in r], [c.copy() for c in r]) for r in chunks]
    inputs = [(c,) for c in chunks]
    results, sent, unreceived, messages = _ring_run(nb, "ring_all_gather", world_size, inputs)
    untouched = all(
        [id(c) for c in r] == ids
        and all(np.array_equal(a, b, equal_nan=True) for a, b in zip(r, old, strict=True))
        for r, (ids, old) in zip(chunks, before, strict=True)
    )
    results = [[np.asarray(c, dtype=np.float64) for c in r] for r in results]
    return results, sent, unreceived, untouched, messages


def _check_all_gather(run, n):
    lengths = _chunk_lengths(run, n)
    owned = [run.rng.standard_normal(k).round(3) for k in lengths]  # chunk j's final value
    chunks = [
        [owned[j] if j == (r + 1) % n else np.full(lengths[j], np.nan) for j in range(n)]
        for r in range(n)
    ]
    results, sent, unreceived, untouched, messages = run(all_gather, n, chunks)
    # catches: the received chunks stored into the caller's list, or copied into its arrays
    assert untouched, (
        f"{_ranks(n)}: all-gather changed the caller's list of chunks; return a new one"
    )
    for r in range(n):
        assert len(results[r]) == n, f"{_ranks(n)}: rank {r} returned {len(results[r])} chunks"
        for j in range(n):
            _close(results[r][j], owned[j], f"{_ranks(n)}: rank {r}'s chunk {j} after all-gather")
    for r in range(n):
        assert len(sent[r]) == n - 1, (
            f"{_ranks(n)}: rank {r} sent {len(sent[r])} messages, not N - 1"
        )
    assert unreceived == [0] * n, f"{_ranks(n)}: messages left unreceived: {unreceived}"
    final = np.concatenate(owned)
    _check_messages_carry_data(messages, lambda r: [final], _ranks(n))


# catches: storing into the wrong index; sending a chunk not yet received (NaN)
@exercise("06.2")
def test_all_gather_two_ranks(run):
    _check_all_gather(run, 2)


# catches: sending chunk (rank - step) instead of (rank + 1 - step); N steps
@exercise("06.2")
def test_all_gather_more_ranks(run):
    for n in (3, 4):
        _check_all_gather(run, n)


# catches: a loop that runs its body before it tests the step count (`while True: ...
# break`): with one rank there are N - 1 = 0 steps, nothing to send or receive
@exercise("06.2")
def test_all_gather_one_rank(run):
    chunk = run.rng.standard_normal(int(run.rng.integers(2, 6))).round(3)
    results, sent, unreceived, untouched, _ = run(all_gather, 1, [[chunk]])
    assert untouched, "1 rank: all-gather changed the caller's list of chunks; return a new one"
    assert sent == [[]], (
        f"1 rank (world_size=1): rank 0 sent {len(sent[0])} message(s) of {sent[0]} elements, "
        "expected none: all-gather takes N - 1 = 0 steps"
    )
    assert len(results[0]) == 1, f"1 rank: rank 0 returned {len(results[0])} chunks, not 1"
    _close(results[0][0], chunk, "1 rank: chunk 0 after all-gather (the one rank's own chunk)")


# --- 06.3 ring all-reduce ------------------------------------------------------------------
# 06.3 is graded with minitorch's own reduce-scatter and all-gather in place of the learner's
# 06.1 and 06.2 (a mistake there costs points once), so only the all-reduces are forbidden.
@probe(forbid=ALL_REDUCE)
def all_reduce(nb, world_size, arrays):
    from minitorch.distributed import ring as package_ring

    before = [a.copy() for a in arrays]
    names = ("ring_reduce_scatter", "ring_all_gather")
    own = {name: nb._globals.get(name) for name in names}
    nb._globals.update({name: getattr(package_ring, name) for name in names})
    try:
        inputs = [(a,) for a in arrays]
        results, sent, unreceived, messages = _ring_run(nb, "ring_all_reduce", world_size, inputs)
    finally:
        nb._globals.update(own)
    untouched = all(np.array_equal(a, b) for a, b in zip(arrays, before, strict=True))
    shared = [
        isinstance(r, np.ndarray) and np.shares_memory(r, a)
        for r, a in zip(results, arrays, strict=True)
    ]
    return [np.asarray(r) for r in results], sent, unreceived, untouched, shared, messages


def _check_all_reduce(run, n, shape):
    arrays = [np.asarray(run.rng.standard_normal(shape).round(3)) for _ in range(n)]
    results, sent, unreceived, untouched, shared, messages = run(all_reduce, n, arrays)
    # catches: the sum written into the caller's array (through a flat view) and returned
    assert untouched, f"{_ranks(n)}, shape {shape}: all-reduce changed the caller's array"
    for r in range(n):
        _close(results[r], sum(arrays), f"{_ranks(n)}, shape {shape}: rank {r}'s all-reduce")
        # catches: the caller's array itself (or a view of it) handed back, as one rank may
        assert not shared[r], (
            f"{_ranks(n)}, shape {shape}: rank {r}'s all-reduce returned the caller's array "
            "itself (or a view of it); return the sum as a new array"
        )
    size = int(np.prod(shape))
    ring = 2 * (n - 1) * math.ceil(size / n)
    for r in range(n):
        assert len(sent[r]) == 2 * (n - 1) and sum(sent[r]) <= ring, (
            f"{_ranks(n)}, {size} elements: rank {r} sent {len(sent[r])} messages of "
            f"{sum(sent[r])} elements in all; the ring sends 2(N-1) = {2 * (n - 1)} chunks of "
            f"about n/N elements ({ring} at most)"
        )
    assert unreceived == [0] * n, f"messages left unreceived: {unreceived}"
    what = f"{_ranks(n)}, shape {shape}"
    _check_messages_carry_data(messages, lambda r: _partial_sums(arrays, r), what)


# catches: only reduce-scatter (no all-gather); the result not reshaped; np.split
@exercise("06.3")
def test_all_reduce_matrix(run):
    _check_all_reduce(run, 3, (4, 5))


# catches: a naive exchange of whole arrays (too much traffic); sizes that don't divide
@exercise("06.3")
def test_all_reduce_uneven_sizes_and_ranks(run):
    _check_all_reduce(run, 4, (7,))
    _check_all_reduce(run, 2, (3, 1, 3))


# catches: one rank returning the flattened input, or the caller's array itself, instead of
# a new array of its shape
@exercise("06.3")
def test_all_reduce_one_rank(run):
    _check_all_reduce(run, 1, tuple(int(s) for s in run.rng.integers(2, 5, size=2)))


# catches: flattening with len(array) or reshaping to (-1, *shape[1:]): a 0-d array (one
# number, "any shape") has no len and its sum is 0-d too
@exercise("06.3")
def test_all_reduce_of_a_0d_array(run):
    _check_all_reduce(run, int(run.rng.integers(2, 4)), ())


# --- 06.4 DistributedSampler's share --------------------------------------------------------
@probe(forbid=SHARD)
def shards(nb, indices, num_replicas, drop_last):
    # catches: a DistributedSampler made without its __init__ (object.__new__) and iterated by
    # minitorch's own code (a BatchSampler, a DataLoader), which the watch lets call the
    # package's share: nothing in this probe but the answer runs the module's shard_indices
    package, ran = sampler.shard_indices, []

    def counted(*args, **kwargs):
        ran.append(len(args))
        return package(*args, **kwargs)

    out = []
    sampler.shard_indices = counted
    try:
        for r in range(num_replicas):
            given = list(indices)  # each rank's own copy of the epoch, checked afterwards
            out.append([int(i) for i in nb.shard(given, num_replicas, r, drop_last)])
            if given != list(indices):
                raise AssertionError(
                    f"shard(..., rank={r}) changed the caller's list of indices to {given}; "
                    "pad or cut a copy"
                )
    finally:
        sampler.shard_indices = package
    if ran:
        raise Delegated(message("minitorch's own DistributedSampler (its shard_indices)"))
    return out


def _check_shards(run, n, replicas, drop_last):
    indices = [int(i) for i in run.rng.permutation(100)[:n]]
    got = run(shards, indices, replicas, drop_last)
    for r in range(replicas):
        expected = dist.shard_indices(indices, replicas, r, drop_last)
        assert got[r] == expected, (
            f"shard({n} indices, num_replicas={replicas}, rank={r}, drop_last={drop_last}) "
            f"returned {got[r]}, expected {expected} (from the indices {indices})"
        )


# catches: contiguous blocks instead of every N-th index; starting at the wrong rank
@exercise("06.4")
def test_shard_divides_evenly(run):
    _check_shards(run, 12, 3, False)


# catches: no padding (ranks get different counts); padding with the last index
@exercise("06.4")
def test_shard_pads_by_repeating_the_front(run):
    _check_shards(run, 10, 4, False)
    _check_shards(run, 2, 5, False)  # padding longer than the list


# catches: drop_last ignored; cutting a whole extra round
@exercise("06.4")
def test_shard_drop_last_cuts_the_tail(run):
    _check_shards(run, 11, 3, True)
    _check_shards(run, 9, 3, True)


# catches: an empty epoch (no indices) crashing the padding (dividing by the length)
@exercise("06.4")
def test_shard_of_an_empty_epoch(run):
    for drop_last in (False, True):
        _check_shards(run, 0, int(run.rng.integers(2, 5)), drop_last)


# catches: drop_last skipped when the epoch is shorter than num_replicas (every rank then
# gets nothing); padding appended to the caller's list
@exercise("06.4")
def test_shard_drop_last_with_fewer_indices_than_replicas(run):
    replicas = int(run.rng.integers(3, 6))
    _check_shards(run, replicas - 1, replicas, True)
    _check_shards(run, replicas + 1, replicas, False)


# --- 06.5 bucket assignment ----------------------------------------------------------------
@probe(forbid=ASSIGN_BUCKETS)
def bucket_indices(nb, sizes, cap):
    given = list(sizes)
    buckets = [[int(i) for i in b] for b in nb.assign_buckets(given, cap)]
    if given != list(sizes):
        raise AssertionError(f"assign_buckets changed the caller's sizes {list(sizes)} to {given}")
    return buckets


def _check_buckets(run, sizes, cap):
    got = run(bucket_indices, sizes, cap)
    expected = dist.assign_buckets(sizes, cap)
    assert got == expected, f"assign_buckets({sizes}, {cap}) returned {got}, expected {expected}"


# catches: walking from the first parameter; an empty bucket at the end
@exercise("06.5")
def test_buckets_from_the_last_parameter(run):
    _check_buckets(run, [4, 4, 4, 4, 4], 8)
    _check_buckets(run, [int(s) for s in run.rng.integers(1, 9, size=9)], 12)


# catches: closing before adding the parameter that crosses the cap; > instead of >=
@exercise("06.5")
def test_bucket_closes_once_it_reaches_the_cap(run):
    _check_buckets(run, [3, 5, 3, 5], 8)
    _check_buckets(run, [2, 100, 2, 2, 7], 6)


# catches: the bytes over the cap carried into the next bucket (it starts from 0); buckets
# ordered by size; sizes reversed in place
@exercise("06.5")
def test_buckets_of_random_sizes(run):
    for _ in range(4):
        sizes = [int(s) for s in run.rng.integers(1, 11, size=int(run.rng.integers(8, 16)))]
        _check_buckets(run, sizes, int(run.rng.integers(5, 16)))


# catches: one empty bucket for a model without parameters (sizes == []): never an empty one
@exercise("06.5")
def test_no_parameters_no_buckets(run):
    _check_buckets(run, [], int(run.rng.integers(1, 100)))


# --- 06.6 a bucket filled by post-accumulate-grad hooks -----------------------------------------
def _bucket_model():
    minitorch.manual_seed(3)
    return nn.Sequential(nn.Linear(5, 6), nn.Tanh(), nn.Linear(6, 4), nn.Tanh(), nn.Linear(4, 3))


def _bucket_inputs(seed):
    rng = np.random.default_rng(seed)
    return [minitorch.from_numpy(rng.standard_normal((3, 5)).astype(np.float32)) for _ in range(2)]


_BUCKET_PARAMS = (3, 4, 5)  # 2.bias, then the last layer: not the order they arrive in
_BUCKET_WHAT = (
    "a bucket of [2.bias, 4.weight, 4.bias] of Sequential(Linear(5, 6), Tanh, Linear(6, 4), "
    "Tanh, Linear(4, 3)), each pass on a batch of 3"
)


@probe(forbid=GRAD_BUCKET)
def bucket_events(nb, seed):
    """Two backward passes (no zero_grad between): what was launched, and when."""
    model = _bucket_model()
    params = list(model.parameters())
    events = []
    bucket = nb.GradBucket(
        [params[i] for i in _BUCKET_PARAMS],
        lambda buffer: events.append(
            ("launch", np.array(buffer, dtype=np.float64, copy=True), np.asarray(buffer).dtype.name)
        ),
    )
    params[0].register_post_accumulate_grad_hook(lambda p: events.append(("first layer", None)))
    for x in _bucket_inputs(seed):
        model(x).pow(2).sum().backward()
        events.append(("end", None))
    del bucket
    return events


@probe(forbid=GRAD_BUCKET)
def in_flight(nb, seed):
    """The arrays handed to ``launch``, as they were at the launch and as they are when
    backward has ended, where DDP waits for the (asynchronous) all-reduce to finish."""
    model = _bucket_model()
    params = list(model.parameters())
    launched = []
    bucket = nb.GradBucket(
        [params[i] for i in _BUCKET_PARAMS],
        lambda buffer: launched.append((buffer, np.array(buffer, dtype=np.float64, copy=True))),
    )
    passes = []
    for x in _bucket_inputs(seed):
        launched.clear()
        model(x).pow(2).sum().backward()
        # the wait: the all-reduce reads (and writes) the launched array until here
        passes.append([(at_launch, np.array(a, dtype=np.float64)) for a, at_launch in launched])
    del bucket
    return passes


def _expected_buffers(seed):
    model = _bucket_model()
    params = list(model.parameters())
    out = []
    for x in _bucket_inputs(seed):
        model(x).pow(2).sum().backward()
        out.append(np.concatenate([params[i].grad.numpy().ravel() for i in _BUCKET_PARAMS]))
    return out


# catches: launching at every hook; no reset for the next backward; a wrong layout; a float64
# buffer (np.zeros' default dtype)
@exercise("06.6")
def test_bucket_launches_once_per_backward_with_the_gradients(run):
    seed = int(run.rng.integers(1000))
    events = run(bucket_events, seed)
    dtypes = sorted({e[2] for e in events if e[0] == "launch"})
    assert dtypes in ([], ["float32"]), f"the launched buffer is {dtypes}, expected float32"
    launches = [e[1] for e in events if e[0] == "launch"]
    expected = _expected_buffers(seed)
    assert len(launches) == 2, (
        f"launch was called {len(launches)} times in two backward passes; call it once per "
        "pass, when the last parameter of the bucket has its gradient (then start counting again)"
    )
    _close(launches[0], expected[0], f"{_BUCKET_WHAT}: the buffer launched in the first pass")


# catches: a tensor hook (the incoming gradient) instead of the accumulated .grad
@exercise("06.6")
def test_bucket_uses_the_accumulated_gradient(run):
    seed = int(run.rng.integers(1000))
    launches = [e[1] for e in run(bucket_events, seed) if e[0] == "launch"]
    expected = _expected_buffers(seed)
    assert len(launches) == 2, f"launch was called {len(launches)} times in two backward passes"
    _close(
        launches[1], expected[1], f"{_BUCKET_WHAT}: the second pass's buffer (no zero_grad between)"
    )


# catches: the buffer zeroed (or scaled, or refilled) right after its launch, a scratch array
# shared by every bucket: harmless for an all-reduce that copies at once, fatal for an
# asynchronous one, which reads and writes the launched array until it is waited on
@exercise("06.6")
def test_the_launched_buffer_is_left_alone_until_the_wait(run):
    seed = int(run.rng.integers(1000))
    passes = run(in_flight, seed)
    expected = _expected_buffers(seed)
    for k, launched in enumerate(passes):
        assert len(launched) == 1, f"{_BUCKET_WHAT}: pass {k + 1} launched {len(launched)} times"
        at_launch, at_wait = launched[0]
        _close(at_launch, expected[k], f"{_BUCKET_WHAT}: pass {k + 1}'s buffer at its launch")
        changed = np.flatnonzero(np.asarray(at_launch) != np.asarray(at_wait))
        if changed.size:
            i = int(changed[0])
            raise AssertionError(
                f"{_BUCKET_WHAT}, pass {k + 1}: element {i} of the array handed to launch "
                f"held {float(at_launch.flat[i]):.6g} at the launch, but "
                f"{float(at_wait.flat[i]):.6g} when backward ended ({changed.size} elements "
                "changed), where DDP waits for its all-reduce: an asynchronous "
                "all-reduce reads and writes that array until then, so nothing else may "
                "write into it"
            )


@probe(forbid=GRAD_BUCKET)
def called_directly(nb, seed, order):
    """A bucket whose hook registrations are held back, as DDP's own hook holds them (it
    calls ``bucket._grad_ready(p)`` itself, to honour ``no_sync``): launches per pass."""
    from minitorch.mine.ddp import _hooks_held_back

    model = _bucket_model()
    params = list(model.parameters())
    mine = [params[i] for i in _BUCKET_PARAMS]
    launches = []
    with _hooks_held_back() as held:
        bucket = nb.GradBucket(mine, lambda b: launches.append(np.array(b, dtype=np.float64)))
    registered = sorted(next(k for k, q in enumerate(params) if q is p) for p, _ in held)
    rng = np.random.default_rng(seed)
    expected = []
    for _ in range(2):
        for p in mine:
            p.grad = minitorch.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32))
        expected.append(np.concatenate([p.grad.numpy().ravel() for p in mine]).tolist())
        for k in order:
            bucket._grad_ready(mine[k])
    return registered, launches, expected


# catches: the hook method under another name (DDP calls bucket._grad_ready(p) itself), a
# hook registered on only some parameters, or twice on one
@exercise("06.6")
def test_ddp_can_call_the_hook_method_itself(run):
    seed = int(run.rng.integers(1000))
    registered, launches, expected = run(called_directly, seed, [2, 0, 1])
    assert registered == sorted(_BUCKET_PARAMS), (
        f"{_BUCKET_WHAT}: hooks were registered on the parameters at {registered} of "
        f"model.parameters(), expected one on each of {sorted(_BUCKET_PARAMS)}"
    )
    assert len(launches) == 2, (
        f"{_BUCKET_WHAT}: called as bucket._grad_ready(p) for each parameter, twice over, it "
        f"launched {len(launches)} times, expected 2"
    )
    for k in range(2):
        _close(launches[k], expected[k], f"{_BUCKET_WHAT}: the buffer of call round {k + 1}")


# catches: launching at the end of backward (queue_callback) instead of when full
@exercise("06.6")
def test_bucket_launches_while_backward_runs(run):
    order = [e[0] for e in run(bucket_events, 7)]
    first = order.index("launch") if "launch" in order else len(order)
    assert first < order.index("first layer"), (
        f"events in order: {order}; the bucket holds the last layer's parameters, so it is "
        "full (and must launch) before backward reaches the first layer"
    )


@probe(forbid=GRAD_BUCKET)
def same_shape_bucket(nb, seed):
    """A bucket of two layers of the same shapes: one launch, with each gradient in its slot."""
    minitorch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 4))
    launches = []
    bucket = nb.GradBucket(
        list(model.parameters()), lambda b: launches.append(np.array(b, dtype=np.float64))
    )
    x = minitorch.from_numpy(np.random.default_rng(seed).standard_normal((3, 4)).astype(np.float32))
    model(x).pow(2).sum().backward()
    del bucket
    expected = np.concatenate([p.grad.numpy().ravel() for p in model.parameters()])
    return launches, expected


# catches: slots found by shape (or by anything but identity): two parameters of the same shape
# then share one slot
@exercise("06.6")
def test_bucket_of_parameters_with_equal_shapes(run):
    launches, expected = run(same_shape_bucket, int(run.rng.integers(1000)))
    assert len(launches) == 1, f"launch was called {len(launches)} times in one backward pass"
    _close(launches[0], expected, "the buffer of two (4, 4) layers")


@probe(forbid=GRAD_BUCKET)
def two_buckets(nb, seed):
    """Two buckets whose parameters arrive interleaved (each holds a weight of the last layer
    and one of the first), two backward passes: what each launched, at its launch and when
    backward had ended (where DDP waits for the all-reduces)."""
    minitorch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2))
    first, _, last = model
    groups = {"weights": [last.weight, first.weight], "biases": [last.bias, first.bias]}
    launches = {k: [] for k in groups}
    keep = [
        nb.GradBucket(
            params, lambda b, k=k: launches[k].append([np.array(b, dtype=np.float64), b, None])
        )
        for k, params in groups.items()
    ]
    rng = np.random.default_rng(seed)
    expected = {k: [] for k in groups}
    for _ in range(2):
        model.zero_grad()
        x = minitorch.from_numpy(rng.standard_normal((4, 3)).astype(np.float32))
        model(x).pow(2).sum().backward()
        for k, params in groups.items():
            expected[k].append(np.concatenate([p.grad.numpy().ravel() for p in params]))
            for entry in launches[k]:
                if entry[2] is None:  # the launched array as it is at the wait
                    entry[1:] = [None, np.array(entry[1], dtype=np.float64)]
    del keep
    return {k: [(e[0], e[2]) for e in v] for k, v in launches.items()}, expected


_TWO_BUCKETS = (
    "Sequential(Linear(3, 5), Tanh, Linear(5, 2)), one bucket of [2.weight, 0.weight] and one "
    "of [2.bias, 0.bias]"
)


# catches: the count of arrived gradients kept on the class (shared by every bucket of the
# model) instead of on each bucket; one scratch array shared by the buckets, which the
# second bucket overwrites while the first one's all-reduce is still in flight
@exercise("06.6")
def test_two_buckets_keep_their_own_counts(run):
    launches, expected = run(two_buckets, int(run.rng.integers(1000)))
    for k, buffers in launches.items():
        assert len(buffers) == 2, (
            f"the bucket of the {k} launched {len(buffers)} times in two backward passes; "
            "each bucket counts its own parameters and launches once per pass"
        )
        for n, ((at_launch, at_wait), e) in enumerate(zip(buffers, expected[k], strict=True)):
            what = f"{_TWO_BUCKETS}: the bucket of the {k}, pass {n + 1}"
            _close(at_launch, e, f"{what}, at its launch")
            _close(at_wait, e, f"{what}, when backward ended (its all-reduce still reads it)")


# --- 06.7 averaging gradients -------------------------------------------------------------
class _Frozen(nn.Module):
    def __init__(self):
        super().__init__()
        minitorch.manual_seed(11)
        self.body = nn.Linear(4, 3)
        self.head = nn.Linear(3, 2)
        self.unused = nn.Linear(2, 2)  # gets no gradient
        self.scale = nn.Parameter(minitorch.ones(2))
        self.scale.requires_grad_(False)  # frozen

    def forward(self, x):
        return self.head(self.body(x).tanh()) * self.scale


_FROZEN_WHAT = (
    "a model of body=Linear(4, 3), head=Linear(3, 2), unused=Linear(2, 2) (never called, so "
    "no gradient) and a frozen scale (requires_grad=False), rank r's batch of r + 2 rows"
)


def _rank_batch(rank, seed):
    rng = np.random.default_rng(seed + rank)
    return minitorch.from_numpy(rng.standard_normal((rank + 2, 4)).astype(np.float32))


def _rank_grads(rank, seed):
    model = _Frozen()
    model(_rank_batch(rank, seed)).pow(2).mean().backward()
    return model, [None if p.grad is None else p.grad.numpy().copy() for p in model.parameters()]


@probe(forbid=AVERAGE)
def averaged(nb, world_size, seed):
    from minitorch.distributed.simulate import run_group

    # the replicas are built one after another: the random init is not thread-safe
    models = [_rank_grads(rank, seed)[0] for rank in range(world_size)]

    def one_rank(model, rank, n, all_reduce):
        before = [(p.grad, None if p.grad is None else p.grad._version) for p in model.parameters()]
        nb.average_gradients(model.parameters(), all_reduce, n)  # a generator, read once
        # a gradient divided in place moved its version twice (the all-reduce, the division);
        # one written through .numpy() moved it once: the division bypassed the ops
        bypassed = [
            g is not None and p.grad is g and g._version - v < 2
            for p, (g, v) in zip(model.parameters(), before, strict=True)
        ]
        grads = [
            None if p.grad is None else p.grad.detach().numpy().copy() for p in model.parameters()
        ]
        return grads, any(bypassed)

    results, _ = run_group(one_rank, world_size, [(m,) for m in models], timeout=2.0)
    return results


def _check_average(run, n):
    seed = int(run.rng.integers(1000))
    results = run(averaged, n, seed)
    got = [grads for grads, _ in results]
    per_rank = [_rank_grads(r, seed)[1] for r in range(n)]
    names = [name for name, _ in _Frozen().named_parameters()]
    for r in range(n):
        for k, name in enumerate(names):
            if per_rank[0][k] is None:
                assert got[r][k] is None, (
                    f"{_FROZEN_WHAT}: rank {r}'s {name} had no gradient, and must keep None"
                )
                continue
            total = sum(g[k] for g in per_rank)
            mean = total / n
            assert got[r][k] is not None, (
                f"{_FROZEN_WHAT}: rank {r}'s {name}.grad is None after averaging"
            )
            checked_array(got[r][k], mean, f"{_FROZEN_WHAT}: rank {r}'s {name}.grad")
            if np.allclose(got[r][k], total, rtol=1e-5, atol=1e-6):
                raise AssertionError(
                    f"{n} ranks, {_FROZEN_WHAT}: rank {r}'s {name}.grad is the sum over the "
                    f"ranks, not the average: divide it by world_size ({n})"
                )
            if not np.allclose(got[r][k], mean, rtol=1e-5, atol=1e-6):
                raise AssertionError(
                    f"{n} ranks, {_FROZEN_WHAT}: rank {r}'s {name}.grad is not the average of "
                    f"the ranks' gradients: element 0 is {got[r][k].flat[0]:.6g}, expected "
                    f"{mean.flat[0]:.6g} (off by up to {np.abs(got[r][k] - mean).max():.3g})"
                )
    # Right values: was the division a tensor op, or a write into the numpy array?
    assert not any(bypassed for _, bypassed in results), (
        "the averages are right, but a gradient was divided through its numpy array: "
        "divide with a tensor op (div_), so that the write goes through Function.apply like "
        "every other"
    )


# catches: summing without dividing; dividing twice; failing on a None gradient; the
# parameters (a generator) read twice; the division written into the numpy array
@exercise("06.7")
def test_average_two_ranks(run):
    _check_average(run, 2)


# catches: dividing by something other than world_size; averaging the parameters
@exercise("06.7")
def test_average_four_ranks(run):
    _check_average(run, 4)


@probe(forbid=AVERAGE)
def averaged_given(nb, grads_per_rank):
    from minitorch.distributed.simulate import run_group

    def one_rank(grads, rank, n, all_reduce):
        params = [nn.Parameter(minitorch.zeros(*g.shape)) for g in grads]
        for p, g in zip(params, grads, strict=True):
            p.grad = minitorch.from_numpy(g.copy())
        nb.average_gradients(params, all_reduce, n)
        return [p.grad.detach().numpy().copy() for p in params]

    results, _ = run_group(
        one_rank, len(grads_per_rank), [(g,) for g in grads_per_rank], timeout=2.0
    )
    return results


# catches: a gradient that is all zeros on this rank skipped (the other ranks still all-reduce
# theirs: only a None gradient is skipped, the same on every rank)
@exercise("06.7")
def test_average_with_a_zero_gradient_on_one_rank(run):
    n = int(run.rng.integers(2, 4))
    grads = [
        [run.rng.standard_normal((2, 3)).astype(np.float32) for _ in range(3)] for _ in range(n)
    ]
    grads[int(run.rng.integers(n))][1][...] = 0.0
    results = run(averaged_given, grads)
    for r in range(n):
        for k in range(3):
            mean = sum(g[k] for g in grads) / n
            got = checked_array(results[r][k], mean, f"rank {r}'s gradient {k}")
            if not np.allclose(got, mean, rtol=1e-5, atol=1e-6):
                raise AssertionError(f"{n} ranks: rank {r}'s gradient {k} is not the average")


# --- 06.8 no_sync accumulation ------------------------------------------------------------
def _accum_model():
    minitorch.manual_seed(5)
    return nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3))


def _accum_data(seed, k):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((4 * k, 6)).astype(np.float32)
    y = rng.integers(0, 3, 4 * k)
    return x, y


@probe
def accumulate(nb, seed, k, stale=False):
    import minitorch.distributed.ddp as ddp_module

    if dist.is_initialized():
        dist.destroy_process_group()
    dist.init_process_group(init_method="tcp://127.0.0.1:29500", rank=0, world_size=1)
    calls, forwards, backwards = [], [0], []  # all-reduces, backwards: forwards run so far
    real = ddp_module.all_reduce

    def counting(*args, **kwargs):
        calls.append(forwards[0])
        return real(*args, **kwargs)

    def count_forward(module, inputs, output):
        forwards[0] += 1

    ddp_module.all_reduce = counting
    try:
        model = dist.DistributedDataParallel(_accum_model(), bucket_cap_mb=0.0001)
        model.module.register_forward_hook(count_forward)
        first = next(iter(model.module.parameters()))
        first.register_post_accumulate_grad_hook(lambda p: backwards.append(forwards[0]))
        opt = optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
        x, y = _accum_data(seed, k)
        micro = [
            (minitorch.from_numpy(x[i * 4 : (i + 1) * 4]), minitorch.tensor(y[i * 4 : (i + 1) * 4]))
            for i in range(k)
        ]
        if stale:  # what an earlier backward left in .grad
            for p in model.module.parameters():
                p.grad = minitorch.full(p.shape, 0.25)
        with forbidding(ACCUMULATE, nb):
            loss = nb.accumulate_and_step(model, opt, micro, F.cross_entropy)
        if not isinstance(loss, float):
            raise TypeError(f"accumulate_and_step returned a {type(loss).__name__}, not a float")
        params = [p.detach().numpy().copy() for p in model.module.parameters()]
        grads = [
            None if p.grad is None else p.grad.numpy().copy() for p in model.module.parameters()
        ]
        return float(loss), params, calls, len(model.bucket_indices), backwards, grads
    finally:
        ddp_module.all_reduce = real
        dist.destroy_process_group()


def _full_batch_step(seed, k):
    model = _accum_model()
    opt = optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    x, y = _accum_data(seed, k)
    loss = F.cross_entropy(model(minitorch.from_numpy(x)), minitorch.tensor(y))
    loss.backward()
    opt.step()
    grads = [p.grad.numpy().copy() for p in model.parameters()]
    return loss.item(), [p.detach().numpy().copy() for p in model.parameters()], grads


# catches: losses not divided by k; zero_grad per micro-batch; a step per micro-batch
@exercise("06.8")
def test_accumulation_equals_the_full_batch_step(run):
    seed, k = int(run.rng.integers(1000)), 3
    loss, params, _, _, _, _ = run(accumulate, seed, k)
    want_loss, want, _ = _full_batch_step(seed, k)
    assert abs(loss - want_loss) < 1e-5, (
        f"returned loss {loss:.6f}, the full batch's is {want_loss:.6f}"
    )
    for got, expected in zip(params, want, strict=True):
        got = checked_array(got, expected, "a parameter after the step")
        if not np.allclose(got, expected, rtol=1e-5, atol=1e-6):
            raise AssertionError(
                "the parameters after the step differ from one step on the full batch "
                f"(by up to {np.abs(got - expected).max():.3g})"
            )


# catches: no zero_grad at all (gradients left in .grad before the call take part in the step)
@exercise("06.8")
def test_gradients_from_before_the_call_take_no_part(run):
    seed, k = int(run.rng.integers(1000)), 2
    _, params, _, _, _, _ = run(accumulate, seed, k, True)
    _, want, _ = _full_batch_step(seed, k)
    for got, expected in zip(params, want, strict=True):
        got = checked_array(got, expected, "a parameter after the step")
        if not np.allclose(got, expected, rtol=1e-5, atol=1e-6):
            raise AssertionError(
                "with every .grad holding 0.25 before the call (what an earlier backward "
                "leaves), the parameters after the step differ from one step on the full batch "
                f"(by up to {np.abs(got - expected).max():.3g}): nothing in .grad before the "
                "call may take part"
            )


# catches: no no_sync (an all-reduce per micro-batch); no_sync on the last one too; no_sync
# around all but the first (the all-reduce then comes before the last micro-batch)
@exercise("06.8")
def test_only_the_last_backward_all_reduces(run):
    seed = int(run.rng.integers(1000))
    _, _, calls, buckets_, _, _ = run(accumulate, seed, 4)
    assert len(calls) == buckets_, (
        f"{len(calls)} bucket all-reduces for 4 micro-batches; with no_sync() around all but "
        f"the last there is one per bucket ({buckets_})"
    )
    assert all(c == 4 for c in calls), (
        f"the all-reduces came after forward {calls} of 4: only the last micro-batch's "
        "backward (outside no_sync) all-reduces"
    )


# catches: one backward over the summed loss (every micro-batch's graph kept alive at once);
# zero_grad after the step instead of before (the gradients of the step are gone)
@exercise("06.8")
def test_a_backward_per_micro_batch_and_the_gradients_kept(run):
    seed, k = int(run.rng.integers(1000)), int(run.rng.integers(2, 5))
    _, _, _, _, backwards, grads = run(accumulate, seed, k)
    assert backwards == list(range(1, k + 1)), (
        f"the backward passes came after forwards {backwards}; each micro-batch's backward "
        f"follows its own forward ({list(range(1, k + 1))})"
    )
    _, _, want = _full_batch_step(seed, k)
    for got, expected in zip(grads, want, strict=True):
        if got is None or not np.allclose(
            checked_array(got, expected, "a .grad after accumulate_and_step"),
            expected,
            rtol=1e-5,
            atol=1e-6,
        ):
            raise AssertionError(
                "after accumulate_and_step the .grad are not the full batch's gradients "
                "(zero_grad comes first, before the micro-batches)"
            )


# --- 06.9 design: plan the buckets -----------------------------------------------------------
#: The goal: a plan exposes at most this much more communication than the best plan.
PLAN_SLACK = 1.15
#: The grader's tasks (seeds of _plan_task): networks of 5 to 10 layers; in three of them two
#: layers' gradients come in another order than the reverse of their registration.
PLAN_TASKS = (1, 7, 19, 37)


def _plan_task(seed):
    """A network's gradients as a backward pass produces them, and a link: ``sizes`` (bytes),
    ``ready`` (microseconds after backward started), ``latency`` (microseconds per
    all-reduce) and ``bandwidth`` (bytes per microsecond)."""
    rng = np.random.default_rng(seed)
    layers = int(rng.integers(4, 11))
    hidden = int(rng.choice([128, 256, 384, 512]))
    widths = [int(rng.choice([32, 64, 784, 1024]))] + [hidden] * (layers - 1)
    widths.append(int(rng.choice([10, 100, 1000])))
    sizes = []
    for k in range(layers):  # weight, then bias, as nn.Linear registers them
        sizes += [4 * widths[k] * widths[k + 1], 4 * widths[k + 1]]
    speed, t = float(rng.uniform(4000, 12000)), float(rng.uniform(10, 50))
    ready = [0.0] * len(sizes)
    order = list(range(layers))[::-1]
    if rng.random() < 0.4:  # two layers whose backward runs in the other order
        i = int(rng.integers(0, layers - 1))
        order[i], order[i + 1] = order[i + 1], order[i]
    for k in order:
        t += (5 + sizes[2 * k] / speed) * float(rng.uniform(0.8, 1.2))
        ready[2 * k], ready[2 * k + 1] = round(t, 1), round(t + 0.5, 1)
    bandwidth = sum(sizes) / (t * float(rng.uniform(0.3, 0.9)))
    latency = t * float(rng.uniform(0.01, 0.05))
    return sizes, ready, latency, bandwidth


def _exposed(plan, sizes, ready, latency, bandwidth):
    """The cost model of 06.9: how long after the last gradient the last all-reduce ends."""
    link_free = 0.0
    for bucket in plan:
        start = max(link_free, max(ready[i] for i in bucket))
        link_free = start + latency + sum(sizes[i] for i in bucket) / bandwidth
    return link_free - max(ready)


def _best_exposed(sizes, ready, latency, bandwidth):
    """The least exposure any plan reaches: some best plan cuts the gradients, in the order
    they become ready, into runs, and the earliest the link can be free after the first j
    of them is found from those after fewer."""
    order = sorted(range(len(sizes)), key=lambda i: ready[i])
    free = [0.0]
    for j in range(1, len(order) + 1):
        free.append(
            min(
                max(free[i], ready[order[j - 1]])
                + latency
                + sum(sizes[q] for q in order[i:j]) / bandwidth
                for i in range(j)
            )
        )
    return free[-1] - max(ready)


def _describe_task(k, sizes, ready, latency, bandwidth):
    many = "s" if len(sizes) != 1 else ""
    return (
        f"task {k} ({len(sizes)} parameter{many} of {min(sizes)} to {max(sizes)} bytes, "
        f"gradients ready from {min(ready):g} to {max(ready):g} us, latency {latency:.1f} us, "
        f"bandwidth {bandwidth:.0f} bytes/us)"
    )


@probe
def plans(nb, tasks):
    out = []
    for sizes, ready, latency, bandwidth in tasks:
        given_sizes, given_ready = list(sizes), list(ready)
        plan = nb.plan_buckets(given_sizes, given_ready, latency, bandwidth)
        untouched = given_sizes == list(sizes) and given_ready == list(ready)
        try:
            plan = [[int(i) for i in bucket] for bucket in plan]
        except TypeError:
            raise TypeError(
                f"plan_buckets returned {plan!r}: expected a list of buckets, each a list "
                "of parameter indices"
            ) from None
        out.append((plan, untouched))
    return out


def _check_is_a_plan(k, task, plan, untouched):
    """The caller's lists untouched, no empty bucket, every index in exactly one bucket."""
    sizes = task[0]
    what = _describe_task(k, *task)
    assert untouched, f"{what}: plan_buckets changed the caller's sizes or ready"
    assert all(plan), f"{what}: the plan {plan} has an empty bucket"
    found = sorted(i for bucket in plan for i in bucket)
    assert found == list(range(len(sizes))), (
        f"{what}: the plan {plan} holds the indices {found}; every index from 0 to "
        f"{len(sizes) - 1} must be in exactly one bucket"
    )


def _check_plan(k, task, plan, untouched):
    _check_is_a_plan(k, task, plan, untouched)
    sizes = task[0]
    what = _describe_task(k, *task)
    got = _exposed(plan, *task)
    best = _best_exposed(*task)
    one = _exposed([list(range(len(sizes)))], *task)
    assert got <= PLAN_SLACK * best + 1e-6, (
        f"{what}: your plan {plan} exposes {got:.1f} us of communication after backward "
        f"ends; the best plan exposes {best:.1f} us, and the goal is at most "
        f"{PLAN_SLACK:g} x that, {PLAN_SLACK * best:.1f} us (one bucket of everything: "
        f"{one:.1f} us)"
    )


# catches: an index left out or given twice, an empty bucket, the caller's lists sorted in
# place; a plan for one parameter
@exercise("06.9")
def test_plan_is_a_plan(run):
    one = ([4096], [12.5], 3.0, 100.0)
    small = _plan_task(int(run.rng.integers(1000, 2000)))
    for k, (task, (plan, untouched)) in enumerate(
        zip((one, small), run(plans, [one, small]), strict=True)
    ):
        _check_is_a_plan(k, task, plan, untouched)


# catches: one bucket of everything (no overlap), a bucket per parameter (a latency per
# gradient), a fixed cap (DDP's 25 MiB, 1 MiB, a quarter of the model), the buckets in the
# registration order's reverse when backward runs in another order, buckets launched from the
# first layer's, plans that ignore the latency or the bandwidth, a search over one cap alone
@exercise("06.9")
def test_plans_meet_the_goal(run):
    tasks = [_plan_task(seed) for seed in PLAN_TASKS]
    for k, (task, (plan, untouched)) in enumerate(zip(tasks, run(plans, tasks), strict=True)):
        _check_plan(k, task, plan, untouched)
