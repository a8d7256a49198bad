"""Process groups and collectives: the ring algorithms, every collective on 2-4 ranks, and
what happens when a rank dies or takes a different path (an error, never a hang)."""

from __future__ import annotations

import queue
import threading
import time

import numpy as np
import pytest

import minitorch
import minitorch.distributed as dist
from minitorch.distributed.ring import (
    ring_all_gather,
    ring_all_reduce,
    ring_bytes_per_rank,
    ring_reduce_scatter,
)
from minitorch.distributed.spawn import free_port


# --- the ring algorithms, with threads as ranks --------------------------------------------
def _ring_threads(n, body):
    """Run ``body(rank, send, recv)`` on n threads linked in a ring; their results."""
    links = [queue.Queue() for _ in range(n)]  # links[r]: messages into rank r
    results, errors = [None] * n, []
    sent = [0] * n

    def run(rank):
        def send(a):
            sent[rank] += 1
            links[(rank + 1) % n].put(np.array(a, copy=True))

        def recv():
            return links[rank].get(timeout=5)

        try:
            results[rank] = body(rank, send, recv)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(r,)) for r in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    return results, sent


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_ring_all_reduce_sums_and_sends_2_n_minus_1_chunks(n):
    rng = np.random.default_rng(n)
    data = [rng.standard_normal((3, 7)) for _ in range(n)]
    results, sent = _ring_threads(n, lambda r, s, v: ring_all_reduce(data[r], r, n, s, v))
    for got in results:
        np.testing.assert_allclose(got, sum(data), rtol=1e-12)
    assert sent == [2 * (n - 1)] * n


def test_ring_reduce_scatter_leaves_chunk_r_plus_1_on_rank_r():
    n = 4
    chunks = [[np.full(2, 10.0 * r + j) for j in range(n)] for r in range(n)]
    results, _ = _ring_threads(n, lambda r, s, v: ring_reduce_scatter(chunks[r], r, n, s, v))
    for r, got in enumerate(results):
        owned = (r + 1) % n
        np.testing.assert_array_equal(got[owned], sum(chunks[q][owned] for q in range(n)))


def test_ring_all_gather_spreads_each_owned_chunk():
    n = 3
    start = [
        [np.full(1, float(r)) if j == (r + 1) % n else None for j in range(n)] for r in range(n)
    ]
    results, _ = _ring_threads(n, lambda r, s, v: ring_all_gather(start[r], r, n, s, v))
    for got in results:
        assert [float(c[0]) for c in got] == [2.0, 0.0, 1.0]  # chunk j came from rank j - 1


def test_ring_cost_model():
    assert ring_bytes_per_rank(1000, 1) == 0
    assert ring_bytes_per_rank(1000, 2) == 1000
    assert ring_bytes_per_rank(1000, 4) == 1500


# --- every collective, on real processes ---------------------------------------------------
def _collectives(rank, n):
    dist.init_process_group(timeout=20)
    out = {"rank": dist.get_rank(), "world": dist.get_world_size(), "backend": dist.get_backend()}
    t = minitorch.tensor([[float(rank + 1)] * 3] * 2)
    dist.all_reduce(t)
    out["sum"] = t.tolist()
    for op in ("avg", "max", "min", "product"):
        x = minitorch.tensor([float(rank + 1), -float(rank)])
        dist.all_reduce(x, op=op)
        out[op] = x.tolist()
    i = minitorch.tensor([rank + 1, 7])
    dist.all_reduce(i, op=dist.ReduceOp.SUM)
    out["int"] = (i.tolist(), i.dtype.name)
    b = minitorch.full((5,), float(rank))
    dist.broadcast(b, src=n - 1)
    out["broadcast"] = b.tolist()
    parts = [minitorch.zeros(2) for _ in range(n)]
    dist.all_gather(parts, minitorch.tensor([rank, 10.0 * rank]))
    out["all_gather"] = [p.tolist() for p in parts]
    cat = minitorch.zeros(2 * n)
    dist.all_gather_into_tensor(cat, minitorch.tensor([rank, -1.0]))
    out["all_gather_into_tensor"] = cat.tolist()
    rs = minitorch.zeros(2)
    dist.reduce_scatter(rs, [minitorch.full((2,), 10.0 * rank + j) for j in range(n)])
    out["reduce_scatter"] = rs.tolist()
    works = [dist.all_reduce(minitorch.full((1000,), float(k)), async_op=True) for k in range(3)]
    a = minitorch.full((3,), float(rank))
    w = dist.all_reduce(a, async_op=True)
    w.wait()
    out["async"] = (a.tolist(), all(x.wait() for x in works), w.is_completed())
    if n > 1:  # a ring of sends: each rank to the next, with a tag
        dist.isend(minitorch.tensor([float(rank)]), dst=(rank + 1) % n, tag=3)
        got = minitorch.zeros(1)
        src = dist.recv(got, src=(rank - 1) % n, tag=3)
        out["recv"] = (src, got.tolist())
    view = minitorch.arange(6.0).view(2, 3)[:, :2]
    try:
        dist.all_reduce(view)
    except ValueError as exc:
        out["not_contiguous"] = str(exc)
    dist.barrier()
    return out


@pytest.mark.parametrize("n", [2, 3])
def test_collectives_on_processes(n):
    results = dist.spawn(_collectives, n, (n,), timeout=60)
    ranks = range(n)
    for r, out in enumerate(results):
        assert (out["rank"], out["world"], out["backend"]) == (r, n, "local")
        assert out["sum"] == [[float(sum(q + 1 for q in ranks))] * 3] * 2
        assert out["avg"] == pytest.approx([sum(q + 1 for q in ranks) / n, -sum(ranks) / n])
        assert out["max"] == [float(n), 0.0]
        assert out["min"] == [1.0, -float(n - 1)]
        assert out["product"] == [float(np.prod([q + 1 for q in ranks])), 0.0]
        assert out["int"] == ([sum(q + 1 for q in ranks), 7 * n], "int64")
        assert out["broadcast"] == [float(n - 1)] * 5
        assert out["all_gather"] == [[float(q), 10.0 * q] for q in ranks]
        assert out["all_gather_into_tensor"] == [v for q in ranks for v in (float(q), -1.0)]
        assert out["reduce_scatter"] == [float(sum(10 * q + r for q in ranks))] * 2
        assert out["async"] == ([float(sum(ranks))] * 3, True, True)
        assert out["recv"] == ((r - 1) % n, [float((r - 1) % n)])
        assert "not contiguous" in out["not_contiguous"]


# --- bad input: clear errors ---------------------------------------------------------------
@pytest.fixture
def solo_group():
    """A group of one process (rank 0 of 1): no peers, so no sockets."""
    dist.init_process_group(init_method="tcp://127.0.0.1:1", rank=0, world_size=1)
    yield
    dist.destroy_process_group()


def test_world_of_one_is_the_identity(solo_group):
    t = minitorch.tensor([1.0, 2.0])
    dist.all_reduce(t, op="avg")
    assert t.tolist() == [1.0, 2.0]
    out = [minitorch.zeros(2)]
    dist.all_gather(out, t)
    assert out[0].tolist() == [1.0, 2.0]


def test_bad_input_names_the_collective(solo_group):
    with pytest.raises(ValueError, match=r"all_reduce: unknown op 'mean'"):
        dist.all_reduce(minitorch.ones(2), op="mean")
    with pytest.raises(TypeError, match=r"broadcast: tensor must be a Tensor, got list"):
        dist.broadcast([1.0], src=0)
    with pytest.raises(ValueError, match=r"broadcast: src=3 is not a rank of this group \(0..0\)"):
        dist.broadcast(minitorch.ones(2), src=3)
    with pytest.raises(ValueError, match=r"all_gather: tensor_list must be a list of world_size=1"):
        dist.all_gather([minitorch.zeros(2)] * 2, minitorch.ones(2))
    with pytest.raises(
        ValueError, match=r"tensor_list\[0\] has shape \(3,\).*expected shape \(2,\)"
    ):
        dist.all_gather([minitorch.zeros(3)], minitorch.ones(2))
    with pytest.raises(ValueError, match=r"send: dst=0 is this rank itself"):
        dist.send(minitorch.ones(1), dst=0)
    with pytest.raises(RuntimeError, match="twice"):
        dist.init_process_group(init_method="tcp://127.0.0.1:1", rank=0, world_size=1)


def test_no_group_and_bad_setup_are_clear_errors(monkeypatch):
    with pytest.raises(RuntimeError, match=r"all_reduce: the default process group has not been"):
        dist.all_reduce(minitorch.ones(1))
    with pytest.raises(ValueError, match="unknown backend 'tpu'"):
        dist.init_process_group("tpu")
    monkeypatch.delenv("MASTER_PORT", raising=False)
    with pytest.raises(ValueError, match="MASTER_PORT is not set"):
        dist.init_process_group()
    with pytest.raises(ValueError, match="rank 2 is outside the world of size 2"):
        dist.init_process_group(init_method="tcp://127.0.0.1:1", rank=2, world_size=2)
    assert not dist.is_initialized()


def test_rendezvous_times_out_naming_the_missing_ranks():
    port = free_port()
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match=r"timed out after 0.5 s waiting for rank\(s\) \[1, 2\]"):
        dist.init_process_group(
            init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=3, timeout=0.5
        )
    assert time.monotonic() - t0 < 5
    assert not dist.is_initialized()


# --- a dead or diverged rank is an error that names it ----------------------------------------
def _one_rank_leaves(rank, n):
    dist.init_process_group(timeout=20)
    dist.all_reduce(minitorch.ones(4))
    if rank == 1:
        return "left"  # spawn closes its connections: as if it had exited
    t0 = time.monotonic()
    try:
        for _ in range(3):
            dist.all_reduce(minitorch.ones(4))
        return "no error"
    except dist.DistBackendError as exc:
        message = str(exc)
    try:
        dist.barrier()
    except dist.DistBackendError as exc:
        again = str(exc)
    return message, again, time.monotonic() - t0


def test_a_rank_that_left_is_named_at_once():
    results = dist.spawn(_one_rank_leaves, 2, (2,), timeout=60)
    message, again, seconds = results[0]
    assert message.startswith("all_reduce on rank 0: rank 1 is gone")
    assert "barrier" in again and "unusable after an earlier failure" in again
    assert seconds < 5  # not the 20 s timeout


def _divergent(rank, n):
    dist.init_process_group(timeout=1.0)
    if rank == n - 1:
        time.sleep(2.5)  # takes "another code path": never joins the all_reduce in time
        return None
    t0 = time.monotonic()
    try:
        dist.all_reduce(minitorch.ones(3))
    except dist.DistTimeoutError as exc:
        return str(exc), time.monotonic() - t0
    except dist.DistBackendError as exc:  # rank 1 may see rank 0 leave before its own timeout
        return str(exc), time.monotonic() - t0
    return "no error"


def test_a_diverged_rank_turns_into_a_timeout_error():
    results = dist.spawn(_divergent, 3, (3,), timeout=60)
    message, seconds = results[0]
    assert message.startswith("all_reduce on rank 0 timed out after 1 s waiting for rank 2")
    assert "same collectives in the same order" in message
    assert 0.9 < seconds < 4
    assert isinstance(dist.DistTimeoutError("x"), TimeoutError)


def _raises(rank):
    if rank == 1:
        raise ValueError("boom on purpose")
    time.sleep(10)


def test_spawn_names_the_failing_rank_and_stops_the_others():
    t0 = time.monotonic()
    with pytest.raises(
        dist.WorkerFailed, match=r"rank 1 failed: ValueError: boom on purpose"
    ) as info:
        dist.spawn(_raises, 2)
    assert info.value.rank == 1
    assert time.monotonic() - t0 < 5
    assert "traceback of rank 1" in str(info.value)


def _prints(rank):
    print(f"hello from {rank}")
    return rank * 10


def test_spawn_returns_results_and_prefixes_output(capsys):
    assert dist.spawn(_prints, 2) == [0, 10]
    assert capsys.readouterr().out == "[rank0]: hello from 0\n[rank1]: hello from 1\n"


def _mismatched(rank, n, case):
    dist.init_process_group(timeout=10.0)
    if case == "dtype":
        t = minitorch.ones(4) if rank == 0 else minitorch.ones(4, dtype=minitorch.float64)
        call = lambda: dist.all_reduce(t)  # noqa: E731
    elif case == "shape":
        t = minitorch.ones(4) if rank == 0 else minitorch.ones(5)
        call = lambda: dist.all_reduce(t)  # noqa: E731
    elif case == "op":
        call = lambda: dist.all_reduce(minitorch.ones(3), op="max" if rank else "sum")  # noqa: E731
    elif case == "barrier":  # (a barrier is a small all-reduce underneath)
        if rank == 0:
            call = lambda: dist.all_reduce(minitorch.ones(3))  # noqa: E731
        else:
            call = dist.barrier
    else:  # which collective
        if rank == 0:
            call = lambda: dist.all_reduce(minitorch.ones(3))  # noqa: E731
        else:
            call = lambda: dist.broadcast(minitorch.ones(3), 0)  # noqa: E731
    try:
        call()
    except dist.DistBackendError as exc:
        ok = minitorch.ones(2)
        dist.all_reduce(ok)  # the group still works for the next (matching) collective
        return str(exc), ok.tolist()
    return "no error", None


# catches: a float32 buffer all-reduced with a float64 one, or buffers of different shapes
# or ops, giving a result (or a numpy reshape / broken-pipe message) instead of an error that
# names the ranks and what differs, on every rank (issue 19)
@pytest.mark.parametrize(
    "case, differs",
    [
        ("dtype", "rank 0: all_reduce(dtype=float32, op=SUM, shape=[4]); rank 1: "
                  "all_reduce(dtype=float64"),
        ("shape", "shape=[4]); rank 1: all_reduce(dtype=float32, op=SUM, shape=[5])"),
        ("op", "op=SUM, shape=[3]); rank 1: all_reduce(dtype=float32, op=MAX"),
        ("collective", "rank 1: broadcast(dtype=float32, shape=[3], src=0)"),
        ("barrier", "rank 0: all_reduce(dtype=float32, op=SUM, shape=[3]); rank 1: barrier()"),
    ],
)  # fmt: skip
def test_ranks_that_disagree_on_a_collective_all_get_the_same_clear_error(case, differs):
    results = dist.spawn(_mismatched, 2, (2, case), timeout=60)
    for rank, (message, after) in enumerate(results):
        assert "the ranks disagree on the collective they call" in message, message
        assert differs in message
        assert after == [2.0, 2.0], f"rank {rank}: the group broke after the mismatch"


# catches: int("abc") raised from deep inside the rendezvous for a launcher variable that is
# no number (issue 19's vague messages)
@pytest.mark.parametrize("name", ["MASTER_PORT", "RANK", "WORLD_SIZE"])
def test_launcher_variables_that_are_no_numbers_are_named(monkeypatch, name):
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", "29500")
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "1")
    monkeypatch.setenv(name, "abc")
    with pytest.raises(ValueError, match=f"environment variable {name} must be a whole number"):
        dist.init_process_group()
    assert not dist.is_initialized()


# catches: a MASTER_PORT outside 1..65535 accepted (and failing later in the socket layer),
# a tcp:// port that is no number reported by urllib without naming init_process_group
def test_ports_out_of_range_or_no_number_are_named(monkeypatch):
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "1")
    for port in ("0", "-1", "70000"):
        monkeypatch.setenv("MASTER_PORT", port)
        with pytest.raises(ValueError, match=f"MASTER_PORT must be a port number .* {port}"):
            dist.init_process_group()
    with pytest.raises(ValueError, match="init_process_group: init_method .*notaport.* no valid"):
        dist.init_process_group(init_method="tcp://127.0.0.1:notaport", rank=0, world_size=1)
    assert not dist.is_initialized()


# catches: async_op="x" taken as true, a process group that is no group failing with an
# AttributeError, DDP's flags "yes"/"no"/2 taken as true, device_ids on a CPU module ignored
def test_flags_and_groups_of_the_wrong_kind_are_named(solo_group):
    with pytest.raises(TypeError, match="barrier: async_op must be a bool, but got str 'x'"):
        dist.barrier(async_op="x")
    with pytest.raises(TypeError, match="all_reduce: async_op must be a bool"):
        dist.all_reduce(minitorch.ones(1), async_op=1)
    with pytest.raises(TypeError, match="all_reduce: group must be a ProcessGroup .* int 3"):
        dist.all_reduce(minitorch.ones(1), group=3)
    model = minitorch.nn.Linear(2, 1)
    DDP = dist.DistributedDataParallel
    for flag, value in [
        ("find_unused_parameters", "yes"),
        ("broadcast_buffers", "no"),
        ("gradient_as_bucket_view", 2),
    ]:
        with pytest.raises(TypeError, match=f"DistributedDataParallel: {flag} must be a bool"):
            DDP(model, **{flag: value})
    with pytest.raises(TypeError, match="process_group must be a ProcessGroup .* int 3"):
        DDP(model, process_group=3)
    with pytest.raises(TypeError, match="device_ids must be None or a list of one device"):
        DDP(model, device_ids="cuda")
    with pytest.raises(ValueError, match="device_ids can only be None or contain a single"):
        DDP(model, device_ids=[0, 1])
    with pytest.raises(ValueError, match="device_ids and output_device arguments only work"):
        DDP(model, device_ids=[0])
    assert DDP(model).world_size == 1
