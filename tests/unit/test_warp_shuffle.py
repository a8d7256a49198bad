"""Warp shuffles in the kernel language: the simulator exchanges values between the 32 lanes
of a warp in lockstep, as ``__shfl_down_sync``/``__shfl_xor_sync``, and reports lanes named
in a mask that never call the shuffle; the block reduction finished by shuffles matches
numpy on ragged sizes; and (marked gpu) on the device."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch as mt
from minitorch.cuda import WarpDivergenceError, jit, kernels, simulator

FULL = 0xFFFFFFFF


@jit.rawkernel()
def shuffle_down_lanes(out, delta):
    t = jit.threadIdx.x
    out[t] = jit.shfl_down_sync(0xFFFFFFFF, t * 1.0, delta)


@jit.rawkernel()
def shuffle_down_in_groups_of_8(out):
    t = jit.threadIdx.x
    out[t] = jit.shfl_down_sync(0xFFFFFFFF, t * 1.0, 3, width=8)


@jit.rawkernel()
def butterfly_sum(x, out):
    t = jit.threadIdx.x
    v = x[t]
    v = v + jit.shfl_xor_sync(0xFFFFFFFF, v, 16)
    v = v + jit.shfl_xor_sync(0xFFFFFFFF, v, 8)
    v = v + jit.shfl_xor_sync(0xFFFFFFFF, v, 4)
    v = v + jit.shfl_xor_sync(0xFFFFFFFF, v, 2)
    v = v + jit.shfl_xor_sync(0xFFFFFFFF, v, 1)
    out[t] = v


@jit.rawkernel()
def warp_sum_lane_5_skips(x, out):
    t = jit.threadIdx.x
    v = x[t]
    offset = 16
    while offset > 0:
        if t % 32 != 5 or offset != 16:  # the planted bug: lane 5 skips the first shuffle
            v = v + jit.shfl_down_sync(0xFFFFFFFF, v, offset)
        offset = offset // 2
    if t % 32 == 0:
        out[t // 32] = v


@jit.rawkernel()
def half_warp_shuffles(out):
    t = jit.threadIdx.x
    v = t * 1.0
    if t < 16:  # lanes 16..31 take no part, and the mask says so; width 16 keeps lane 15
        v = jit.shfl_down_sync(0x0000FFFF, v, 1, width=16)  # from reading lane 16
    out[t] = v


@jit.rawkernel()
def reads_a_lane_outside_the_mask(out):
    t = jit.threadIdx.x
    v = t * 1.0
    if t < 16:
        v = jit.shfl_down_sync(0x0000FFFF, v, 8)  # lane 8 reads lane 16: not in the mask
    out[t] = v


@jit.rawkernel()
def leaves_itself_out(out):
    t = jit.threadIdx.x
    out[t] = jit.shfl_down_sync(0x1, t * 1.0, 1)


def test_shfl_down_reads_delta_lanes_up_and_keeps_its_own_past_the_end():
    out = np.zeros(64)
    shuffle_down_lanes[1, 64](out, 3)
    lanes = np.arange(64) % 32
    want = np.where(lanes + 3 < 32, np.arange(64) + 3, np.arange(64))  # each warp on its own
    np.testing.assert_array_equal(out, want)
    assert shuffle_down_lanes.stats.shuffles == 64


def test_shfl_down_width_splits_the_warp_into_groups():
    out = np.zeros(32)
    shuffle_down_in_groups_of_8[1, 32](out)
    t = np.arange(32)
    np.testing.assert_array_equal(out, np.where(t % 8 + 3 < 8, t + 3, t))


def test_xor_butterfly_gives_every_lane_the_warp_total():
    x = np.random.default_rng(0).standard_normal(96)
    out = np.zeros(96)
    butterfly_sum[1, 96](x, out)
    want = np.repeat(x.reshape(3, 32).sum(1), 32)
    np.testing.assert_allclose(out, want, rtol=1e-12)


def test_a_mask_may_leave_lanes_out():
    out = np.zeros(32)
    half_warp_shuffles[1, 32](out)
    t = np.arange(32)
    np.testing.assert_array_equal(out, np.where(t < 15, t + 1, t))


def test_a_lane_that_skips_a_shuffle_is_reported_with_kernel_block_and_lanes():
    x = np.ones(64)
    with pytest.raises(WarpDivergenceError) as err:
        warp_sum_lane_5_skips[2, 64](x, np.zeros(4))
    message = str(err.value)
    assert "warp_sum_lane_5_skips" in message and "block 0" in message
    assert "lanes 0-4, 6-31 wait" in message
    assert "lane 5 named in the mask did not call it (lane 5: finished)" in message


def test_reading_a_lane_outside_the_mask_or_leaving_oneself_out_is_reported():
    with pytest.raises(WarpDivergenceError, match="lane 8 of warp 0 reads lane 16"):
        reads_a_lane_outside_the_mask[1, 32](np.zeros(32))
    with pytest.raises(WarpDivergenceError, match="leaves out its own lane"):
        leaves_itself_out[1, 2](np.zeros(2))


@pytest.mark.parametrize("n", [1, 31, 32, 33, 127, 1000, 4097])
@pytest.mark.parametrize("block", [32, 64, 256])
def test_warp_shuffle_block_sum_matches_numpy_on_ragged_sizes(n, block):
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    got = kernels.sum_all(x, block=block, warp_shuffle=True)
    np.testing.assert_allclose(got, x.astype(np.float64).sum(), rtol=1e-5, atol=1e-5)


def test_shuffles_replace_the_last_five_barriers_and_shared_memory_rounds():
    x = np.random.default_rng(1).standard_normal(1000).astype(np.float32)
    runs = {}
    for warp in (False, True):
        with simulator.recording() as launches:
            kernels.sum_all(x, block=256, warp_shuffle=warp)
        runs[warp] = launches[0]
    tree, warp = runs[False], runs[True]
    assert tree.barriers == 9 and warp.barriers == 4  # log2(256) + 1 vs log2(256 / 32) + 1
    assert warp.shared_reads < tree.shared_reads and warp.shuffles == 2 * 32 * 5
    assert tree.global_reads == warp.global_reads == 1000


# --- on the device ------------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.skipif(not mt.cuda.is_available(), reason="needs cupy and a CUDA GPU")
def test_warp_shuffles_on_the_gpu():
    import cupy as cp

    x = np.random.default_rng(2).standard_normal(100_003).astype(np.float32)
    got = float(kernels.sum_all(cp.asarray(x), warp_shuffle=True))
    np.testing.assert_allclose(got, x.astype(np.float64).sum(), rtol=1e-4)
    out = cp.zeros(96, dtype=cp.float64)
    butterfly_sum[1, 96](cp.asarray(x[:96], dtype=cp.float64), out)
    want = np.repeat(x[:96].astype(np.float64).reshape(3, 32).sum(1), 32)
    np.testing.assert_allclose(cp.asnumpy(out), want, rtol=1e-6)
    lanes = cp.zeros(64, dtype=cp.float64)
    shuffle_down_lanes[1, 64](lanes, 3)
    t = np.arange(64)
    np.testing.assert_array_equal(cp.asnumpy(lanes), np.where(t % 32 + 3 < 32, t + 3, t))
