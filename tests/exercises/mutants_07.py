"""Wrong answers to chapter 07's exercises, written the way learners write them.

Each mutant replaces the solution region of one exercise (its text is dedented, then put
at the region's indentation). ``test_07_gpu_mutants.py`` checks that every one of them
loses points while the solution keeps full marks, and that every legitimate alternative
in ``CORRECT`` (same form) keeps them too.
"""

AXPY = {
    "no_bounds_guard": """
        i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
        out[i] = alpha * x[i] + y[i]
    """,
    "guard_off_by_one": """
        i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
        if i <= n:
            out[i] = alpha * x[i] + y[i]
    """,
    "thread_index_only": """
        i = jit.threadIdx.x
        if i < n:
            out[i] = alpha * x[i] + y[i]
    """,
    "block_index_swapped": """
        i = jit.threadIdx.x * jit.blockDim.x + jit.blockIdx.x
        if i < n:
            out[i] = alpha * x[i] + y[i]
    """,
    "forgets_alpha": """
        i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
        if i < n:
            out[i] = x[i] + y[i]
    """,
    "delegates_to_numpy": """
        if jit.blockIdx.x == 0 and jit.threadIdx.x == 0:
            result = alpha * np.asarray(x) + np.asarray(y)
            for j in range(n):
                out[j] = result[j]
    """,
    "one_thread_loops": """
        if jit.blockIdx.x == 0 and jit.threadIdx.x == 0:
            for j in range(n):
                out[j] = alpha * x[j] + y[j]
        if jit.blockIdx.x == 1 and jit.threadIdx.x == 0:
            for j in range(n):
                out[j] = alpha * x[j] + y[j]
    """,
    "grid_dim_for_block_dim": """
        i = jit.blockIdx.x * jit.gridDim.x + jit.threadIdx.x
        if i < n:
            out[i] = alpha * x[i] + y[i]
    """,
    "alpha_times_the_sum": """
        i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
        if i < n:
            out[i] = alpha * (x[i] + y[i])
    """,
    "guard_only_the_reads": """
        i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
        v = 0.0
        if i < n:
            v = alpha * x[i] + y[i]
        if i < n + jit.blockDim.x - 1:
            out[min(i, n - 1)] = v
    """,
}

STRIDED = {
    "first_dim_fastest": """
        i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
        if i < n:
            rest = i
            pa = a_offset
            pb = b_offset
            for d in range(ndim):
                k = rest % shape[d]
                rest = rest // shape[d]
                pa = pa + k * a_strides[d]
                pb = pb + k * b_strides[d]
            out[i] = a[pa] * b[pb]
    """,
    "ignores_offsets": """
        i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
        if i < n:
            rest = i
            pa = 0
            pb = 0
            for d in range(ndim - 1, -1, -1):
                k = rest % shape[d]
                rest = rest // shape[d]
                pa = pa + k * a_strides[d]
                pb = pb + k * b_strides[d]
            out[i] = a[pa] * b[pb]
    """,
    "assumes_contiguous": """
        i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
        if i < n:
            out[i] = a[a_offset + i] * b[b_offset + i]
    """,
    "strides_mixed_up": """
        i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
        if i < n:
            rest = i
            pa = a_offset
            pb = b_offset
            for d in range(ndim - 1, -1, -1):
                k = rest % shape[d]
                rest = rest // shape[d]
                pa = pa + k * a_strides[d]
                pb = pb + k * a_strides[d]
            out[i] = a[pa] * b[pb]
    """,
    "no_bounds_guard": """
        i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
        rest = i
        pa = a_offset
        pb = b_offset
        for d in range(ndim - 1, -1, -1):
            k = rest % shape[d]
            rest = rest // shape[d]
            pa = pa + k * a_strides[d]
            pb = pb + k * b_strides[d]
        out[i] = a[pa] * b[pb]
    """,
    "ignores_b_offset": """
        i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
        if i < n:
            rest = jit.int64(i)
            pa = a_offset
            pb = 0
            for d in range(ndim - 1, -1, -1):
                k = rest % shape[d]
                rest = rest // shape[d]
                pa = pa + k * a_strides[d]
                pb = pb + k * b_strides[d]
            out[i] = a[pa] * b[pb]
    """,
    "skips_dim_zero": """
        i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
        if i < n:
            rest = jit.int64(i)
            pa = a_offset
            pb = b_offset
            for d in range(ndim - 1, 0, -1):
                k = rest % shape[d]
                rest = rest // shape[d]
                pa = pa + k * a_strides[d]
                pb = pb + k * b_strides[d]
            out[i] = a[pa] * b[pb]
    """,
    "divides_before_taking_the_remainder": """
        i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
        if i < n:
            rest = jit.int64(i)
            pa = a_offset
            pb = b_offset
            for d in range(ndim - 1, -1, -1):
                rest2 = rest // shape[d]
                k = rest % shape[d] if d == ndim - 1 else rest2 % shape[d]
                rest = rest2
                pa = pa + k * a_strides[d]
                pb = pb + k * b_strides[d]
            out[i] = a[pa] * b[pb]
    """,
    "writes_out_at_a_position": """
        i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
        if i < n:
            rest = jit.int64(i)
            pa = a_offset
            pb = b_offset
            for d in range(ndim - 1, -1, -1):
                k = rest % shape[d]
                rest = rest // shape[d]
                pa = pa + k * a_strides[d]
                pb = pb + k * b_strides[d]
            out[pa - a_offset] = a[pa] * b[pb]
    """,
}

BLOCK_SUM = {
    "no_zero_padding": """
        buf = jit.shared_memory(jit.float32, BLOCK)
        tid = jit.threadIdx.x
        i = jit.blockIdx.x * BLOCK + tid
        if i < n:
            buf[tid] = x[i]
        jit.syncthreads()
        stride = jit.blockDim.x // 2
        while stride > 0:
            if tid < stride:
                buf[tid] = buf[tid] + buf[tid + stride]
            jit.syncthreads()
            stride = stride // 2
        if tid == 0:
            partial[jit.blockIdx.x] = buf[0]
    """,
    "no_syncthreads_in_tree": """
        buf = jit.shared_memory(jit.float32, BLOCK)
        tid = jit.threadIdx.x
        i = jit.blockIdx.x * BLOCK + tid
        value = 0.0
        if i < n:
            value = x[i]
        buf[tid] = value
        jit.syncthreads()
        stride = jit.blockDim.x // 2
        while stride > 0:
            if tid < stride:
                buf[tid] = buf[tid] + buf[tid + stride]
            stride = stride // 2
        if tid == 0:
            partial[jit.blockIdx.x] = buf[0]
    """,
    "syncthreads_inside_if": """
        buf = jit.shared_memory(jit.float32, BLOCK)
        tid = jit.threadIdx.x
        i = jit.blockIdx.x * BLOCK + tid
        value = 0.0
        if i < n:
            value = x[i]
        buf[tid] = value
        jit.syncthreads()
        stride = jit.blockDim.x // 2
        while stride > 0:
            if tid < stride:
                buf[tid] = buf[tid] + buf[tid + stride]
                jit.syncthreads()
            stride = stride // 2
        if tid == 0:
            partial[jit.blockIdx.x] = buf[0]
    """,
    "thread_zero_sums_alone": """
        buf = jit.shared_memory(jit.float32, BLOCK)
        tid = jit.threadIdx.x
        i = jit.blockIdx.x * BLOCK + tid
        value = 0.0
        if i < n:
            value = x[i]
        buf[tid] = value
        jit.syncthreads()
        if tid == 0:
            total = 0.0
            for j in range(BLOCK):
                total = total + buf[j]
            partial[jit.blockIdx.x] = total
    """,
    "early_return_past_n": """
        buf = jit.shared_memory(jit.float32, BLOCK)
        tid = jit.threadIdx.x
        i = jit.blockIdx.x * BLOCK + tid
        if i >= n:
            return
        buf[tid] = x[i]
        jit.syncthreads()
        stride = jit.blockDim.x // 2
        while stride > 0:
            if tid < stride:
                buf[tid] = buf[tid] + buf[tid + stride]
            jit.syncthreads()
            stride = stride // 2
        if tid == 0:
            partial[jit.blockIdx.x] = buf[0]
    """,
    "loads_without_a_guard": """
        buf = jit.shared_memory(jit.float32, BLOCK)
        tid = jit.threadIdx.x
        i = jit.blockIdx.x * BLOCK + tid
        buf[tid] = x[i]
        jit.syncthreads()
        stride = jit.blockDim.x // 2
        while stride > 0:
            if tid < stride:
                buf[tid] = buf[tid] + buf[tid + stride]
            jit.syncthreads()
            stride = stride // 2
        if tid == 0:
            partial[jit.blockIdx.x] = buf[0]
    """,
    "stride_starts_at_the_block_size": """
        buf = jit.shared_memory(jit.float32, BLOCK)
        tid = jit.threadIdx.x
        i = jit.blockIdx.x * BLOCK + tid
        value = 0.0
        if i < n:
            value = x[i]
        buf[tid] = value
        jit.syncthreads()
        stride = jit.blockDim.x
        while stride > 0:
            if tid < stride:
                buf[tid] = buf[tid] + buf[tid + stride]
            jit.syncthreads()
            stride = stride // 2
        if tid == 0:
            partial[jit.blockIdx.x] = buf[0]
    """,
    "no_sync_after_the_load": """
        buf = jit.shared_memory(jit.float32, BLOCK)
        tid = jit.threadIdx.x
        i = jit.blockIdx.x * BLOCK + tid
        value = 0.0
        if i < n:
            value = x[i]
        buf[tid] = value
        stride = jit.blockDim.x // 2
        while stride > 0:
            if tid < stride:
                buf[tid] = buf[tid] + buf[tid + stride]
            jit.syncthreads()
            stride = stride // 2
        if tid == 0:
            partial[jit.blockIdx.x] = buf[0]
    """,
    "stops_one_step_early": """
        buf = jit.shared_memory(jit.float32, BLOCK)
        tid = jit.threadIdx.x
        i = jit.blockIdx.x * BLOCK + tid
        value = 0.0
        if i < n:
            value = x[i]
        buf[tid] = value
        jit.syncthreads()
        stride = jit.blockDim.x // 2
        while stride > 1:
            if tid < stride:
                buf[tid] = buf[tid] + buf[tid + stride]
            jit.syncthreads()
            stride = stride // 2
        if tid == 0:
            partial[jit.blockIdx.x] = buf[0]
    """,
    "atomic_add_instead_of_a_tree": """
        i = jit.blockIdx.x * BLOCK + jit.threadIdx.x
        if i < n:
            jit.atomic_add(partial, jit.blockIdx.x, x[i])
    """,
}

_SOFTMAX_TAIL = """
    total = 0.0
    for j in range(tid, ncols, ROW_BLOCK):
        total = total + jit.exp(x[base + j] - m)
    buf[tid] = total
    jit.syncthreads()
    stride = jit.blockDim.x // 2
    while stride > 0:
        if tid < stride:
            buf[tid] = buf[tid] + buf[tid + stride]
        jit.syncthreads()
        stride = stride // 2
    total = buf[0]
    for j in range(tid, ncols, ROW_BLOCK):
        out[base + j] = jit.exp(x[base + j] - m) / total
"""
_SOFTMAX_MAX = """
    buf = jit.shared_memory(jit.float32, ROW_BLOCK)
    tid = jit.threadIdx.x
    base = jit.blockIdx.x * ncols
    m = x[base]
    for j in range(tid, ncols, ROW_BLOCK):
        m = max(m, x[base + j])
    buf[tid] = m
    jit.syncthreads()
    stride = jit.blockDim.x // 2
    while stride > 0:
        if tid < stride:
            buf[tid] = max(buf[tid], buf[tid + stride])
        jit.syncthreads()
        stride = stride // 2
    m = buf[0]
"""
SOFTMAX = {
    "no_sync_after_reading_max": _SOFTMAX_MAX + _SOFTMAX_TAIL,
    "no_max_subtraction": _SOFTMAX_MAX + "    jit.syncthreads()\n    m = 0.0\n" + _SOFTMAX_TAIL,
    "row_offset_by_block_size": _SOFTMAX_MAX.replace(
        "base = jit.blockIdx.x * ncols", "base = jit.blockIdx.x * ROW_BLOCK"
    )
    + "    jit.syncthreads()\n"
    + _SOFTMAX_TAIL,
    "one_thread_per_row": """
    if jit.threadIdx.x == 0:
        base = jit.blockIdx.x * ncols
        m = x[base]
        for j in range(ncols):
            m = max(m, x[base + j])
        total = 0.0
        for j in range(ncols):
            total = total + jit.exp(x[base + j] - m)
        for j in range(ncols):
            out[base + j] = jit.exp(x[base + j] - m) / total
    """,
    "max_of_first_share_only": """
    buf = jit.shared_memory(jit.float32, ROW_BLOCK)
    tid = jit.threadIdx.x
    base = jit.blockIdx.x * ncols
    m = x[base]
    for j in range(tid, ncols, ROW_BLOCK):
        m = max(m, x[base + j])
    """
    + _SOFTMAX_TAIL,
    "max_starts_at_zero": """
        buf = jit.shared_memory(jit.float32, ROW_BLOCK)
        tid = jit.threadIdx.x
        base = jit.blockIdx.x * ncols
        m = 0.0
        for j in range(tid, ncols, ROW_BLOCK):
            m = max(m, x[base + j])
        buf[tid] = m
        jit.syncthreads()
        stride = jit.blockDim.x // 2
        while stride > 0:
            if tid < stride:
                buf[tid] = max(buf[tid], buf[tid + stride])
            jit.syncthreads()
            stride = stride // 2
        m = buf[0]
        jit.syncthreads()
        total = 0.0
        for j in range(tid, ncols, ROW_BLOCK):
            total = total + jit.exp(x[base + j] - m)
        buf[tid] = total
        jit.syncthreads()
        stride = jit.blockDim.x // 2
        while stride > 0:
            if tid < stride:
                buf[tid] = buf[tid] + buf[tid + stride]
            jit.syncthreads()
            stride = stride // 2
        total = buf[0]
        for j in range(tid, ncols, ROW_BLOCK):
            out[base + j] = jit.exp(x[base + j] - m) / total
    """,
    "starts_the_max_at_its_own_column": """
        buf = jit.shared_memory(jit.float32, ROW_BLOCK)
        tid = jit.threadIdx.x
        base = jit.blockIdx.x * ncols
        m = x[base + tid]
        for j in range(tid, ncols, ROW_BLOCK):
            m = max(m, x[base + j])
        buf[tid] = m
        jit.syncthreads()
        stride = jit.blockDim.x // 2
        while stride > 0:
            if tid < stride:
                buf[tid] = max(buf[tid], buf[tid + stride])
            jit.syncthreads()
            stride = stride // 2
        m = buf[0]
        jit.syncthreads()
        total = 0.0
        for j in range(tid, ncols, ROW_BLOCK):
            total = total + jit.exp(x[base + j] - m)
        buf[tid] = total
        jit.syncthreads()
        stride = jit.blockDim.x // 2
        while stride > 0:
            if tid < stride:
                buf[tid] = buf[tid] + buf[tid + stride]
            jit.syncthreads()
            stride = stride // 2
        total = buf[0]
        for j in range(tid, ncols, ROW_BLOCK):
            out[base + j] = jit.exp(x[base + j] - m) / total
    """,
    "sum_tree_takes_the_max": """
        buf = jit.shared_memory(jit.float32, ROW_BLOCK)
        tid = jit.threadIdx.x
        base = jit.blockIdx.x * ncols
        m = x[base]
        for j in range(tid, ncols, ROW_BLOCK):
            m = max(m, x[base + j])
        buf[tid] = m
        jit.syncthreads()
        stride = jit.blockDim.x // 2
        while stride > 0:
            if tid < stride:
                buf[tid] = max(buf[tid], buf[tid + stride])
            jit.syncthreads()
            stride = stride // 2
        m = buf[0]
        jit.syncthreads()
        total = 0.0
        for j in range(tid, ncols, ROW_BLOCK):
            total = total + jit.exp(x[base + j] - m)
        buf[tid] = total
        jit.syncthreads()
        stride = jit.blockDim.x // 2
        while stride > 0:
            if tid < stride:
                buf[tid] = max(buf[tid], buf[tid + stride])
            jit.syncthreads()
            stride = stride // 2
        total = buf[0]
        for j in range(tid, ncols, ROW_BLOCK):
            out[base + j] = jit.exp(x[base + j] - m) / total
    """,
    "every_thread_starts_at_column_zero": """
        buf = jit.shared_memory(jit.float32, ROW_BLOCK)
        tid = jit.threadIdx.x
        base = jit.blockIdx.x * ncols
        m = x[base]
        for j in range(0, ncols, ROW_BLOCK):
            m = max(m, x[base + j])
        buf[tid] = m
        jit.syncthreads()
        stride = jit.blockDim.x // 2
        while stride > 0:
            if tid < stride:
                buf[tid] = max(buf[tid], buf[tid + stride])
            jit.syncthreads()
            stride = stride // 2
        m = buf[0]
        jit.syncthreads()
        total = 0.0
        for j in range(0, ncols, ROW_BLOCK):
            total = total + jit.exp(x[base + j] - m)
        buf[tid] = total
        jit.syncthreads()
        stride = jit.blockDim.x // 2
        while stride > 0:
            if tid < stride:
                buf[tid] = buf[tid] + buf[tid + stride]
            jit.syncthreads()
            stride = stride // 2
        total = buf[0]
        for j in range(tid, ncols, ROW_BLOCK):
            out[base + j] = jit.exp(x[base + j] - m) / total
    """,
    "forgets_m_in_the_last_pass": """
        buf = jit.shared_memory(jit.float32, ROW_BLOCK)
        tid = jit.threadIdx.x
        base = jit.blockIdx.x * ncols
        m = x[base]
        for j in range(tid, ncols, ROW_BLOCK):
            m = max(m, x[base + j])
        buf[tid] = m
        jit.syncthreads()
        stride = jit.blockDim.x // 2
        while stride > 0:
            if tid < stride:
                buf[tid] = max(buf[tid], buf[tid + stride])
            jit.syncthreads()
            stride = stride // 2
        m = buf[0]
        jit.syncthreads()
        total = 0.0
        for j in range(tid, ncols, ROW_BLOCK):
            total = total + jit.exp(x[base + j] - m)
        buf[tid] = total
        jit.syncthreads()
        stride = jit.blockDim.x // 2
        while stride > 0:
            if tid < stride:
                buf[tid] = buf[tid] + buf[tid + stride]
            jit.syncthreads()
            stride = stride // 2
        total = buf[0]
        for j in range(tid, ncols, ROW_BLOCK):
            out[base + j] = jit.exp(x[base + j]) / total
    """,
}

_TILE_LOAD = """
    a_tile = jit.shared_memory(jit.float32, TILE * TILE)
    b_tile = jit.shared_memory(jit.float32, TILE * TILE)
    tx = jit.threadIdx.x
    ty = jit.threadIdx.y
    row = jit.blockIdx.y * TILE + ty
    col = jit.blockIdx.x * TILE + tx
    acc = 0.0
    for start in range(0, k, TILE):
        if row < m and start + tx < k:
            a_tile[ty * TILE + tx] = a[row * k + start + tx]
        else:
            a_tile[ty * TILE + tx] = 0.0
        if start + ty < k and col < n:
            b_tile[ty * TILE + tx] = b[(start + ty) * n + col]
        else:
            b_tile[ty * TILE + tx] = 0.0
        jit.syncthreads()
        for p in range(TILE):
            acc = acc + a_tile[ty * TILE + p] * b_tile[p * TILE + tx]
"""
MATMUL = {
    "naive": """
    row = jit.blockIdx.y * jit.blockDim.y + jit.threadIdx.y
    col = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    if row < m and col < n:
        acc = 0.0
        for p in range(k):
            acc = acc + a[row * k + p] * b[p * n + col]
        out[row * n + col] = acc
    """,
    "no_second_syncthreads": _TILE_LOAD
    + """
    if row < m and col < n:
        out[row * n + col] = acc
    """,
    "no_zero_fill_at_edges": _TILE_LOAD.replace(
        "        else:\n            a_tile[ty * TILE + tx] = 0.0\n", ""
    ).replace("        else:\n            b_tile[ty * TILE + tx] = 0.0\n", "")
    + """
        jit.syncthreads()
    if row < m and col < n:
        out[row * n + col] = acc
    """,
    "no_output_guard": _TILE_LOAD
    + """
        jit.syncthreads()
    out[row * n + col] = acc
    """,
    "tile_index_transposed": _TILE_LOAD.replace(
        "acc + a_tile[ty * TILE + p] * b_tile[p * TILE + tx]",
        "acc + a_tile[p * TILE + ty] * b_tile[tx * TILE + p]",
    )
    + """
        jit.syncthreads()
    if row < m and col < n:
        out[row * n + col] = acc
    """,
    "k_edge_checked_against_m": """
        a_tile = jit.shared_memory(jit.float32, TILE * TILE)
        b_tile = jit.shared_memory(jit.float32, TILE * TILE)
        tx = jit.threadIdx.x
        ty = jit.threadIdx.y
        row = jit.blockIdx.y * TILE + ty
        col = jit.blockIdx.x * TILE + tx
        acc = 0.0
        for start in range(0, k, TILE):
            if row < m and start + tx < m:
                a_tile[ty * TILE + tx] = a[row * k + start + tx]
            else:
                a_tile[ty * TILE + tx] = 0.0
            if start + ty < m and col < n:
                b_tile[ty * TILE + tx] = b[(start + ty) * n + col]
            else:
                b_tile[ty * TILE + tx] = 0.0
            jit.syncthreads()
            for p in range(TILE):
                acc = acc + a_tile[ty * TILE + p] * b_tile[p * TILE + tx]
            jit.syncthreads()
        if row < m and col < n:
            out[row * n + col] = acc
    """,
    "edge_guard_inclusive": """
        a_tile = jit.shared_memory(jit.float32, TILE * TILE)
        b_tile = jit.shared_memory(jit.float32, TILE * TILE)
        tx = jit.threadIdx.x
        ty = jit.threadIdx.y
        row = jit.blockIdx.y * TILE + ty
        col = jit.blockIdx.x * TILE + tx
        acc = 0.0
        for start in range(0, k, TILE):
            if row < m and start + tx <= k:
                a_tile[ty * TILE + tx] = a[row * k + start + tx]
            else:
                a_tile[ty * TILE + tx] = 0.0
            if start + ty <= k and col < n:
                b_tile[ty * TILE + tx] = b[(start + ty) * n + col]
            else:
                b_tile[ty * TILE + tx] = 0.0
            jit.syncthreads()
            for p in range(TILE):
                acc = acc + a_tile[ty * TILE + p] * b_tile[p * TILE + tx]
            jit.syncthreads()
        if row < m and col < n:
            out[row * n + col] = acc
    """,
    "skips_the_last_partial_tile": """
        a_tile = jit.shared_memory(jit.float32, TILE * TILE)
        b_tile = jit.shared_memory(jit.float32, TILE * TILE)
        tx = jit.threadIdx.x
        ty = jit.threadIdx.y
        row = jit.blockIdx.y * TILE + ty
        col = jit.blockIdx.x * TILE + tx
        acc = 0.0
        for start in range(0, k - k % TILE, TILE):
            if row < m and start + tx < k:
                a_tile[ty * TILE + tx] = a[row * k + start + tx]
            else:
                a_tile[ty * TILE + tx] = 0.0
            if start + ty < k and col < n:
                b_tile[ty * TILE + tx] = b[(start + ty) * n + col]
            else:
                b_tile[ty * TILE + tx] = 0.0
            jit.syncthreads()
            for p in range(TILE):
                acc = acc + a_tile[ty * TILE + p] * b_tile[p * TILE + tx]
            jit.syncthreads()
        if row < m and col < n:
            out[row * n + col] = acc
    """,
    "a_column_from_ty": """
        a_tile = jit.shared_memory(jit.float32, TILE * TILE)
        b_tile = jit.shared_memory(jit.float32, TILE * TILE)
        tx = jit.threadIdx.x
        ty = jit.threadIdx.y
        row = jit.blockIdx.y * TILE + ty
        col = jit.blockIdx.x * TILE + tx
        acc = 0.0
        for start in range(0, k, TILE):
            if row < m and start + tx < k:
                a_tile[ty * TILE + tx] = a[row * k + start + ty]
            else:
                a_tile[ty * TILE + tx] = 0.0
            if start + ty < k and col < n:
                b_tile[ty * TILE + tx] = b[(start + ty) * n + col]
            else:
                b_tile[ty * TILE + tx] = 0.0
            jit.syncthreads()
            for p in range(TILE):
                acc = acc + a_tile[ty * TILE + p] * b_tile[p * TILE + tx]
            jit.syncthreads()
        if row < m and col < n:
            out[row * n + col] = acc
    """,
    "no_first_syncthreads": """
        a_tile = jit.shared_memory(jit.float32, TILE * TILE)
        b_tile = jit.shared_memory(jit.float32, TILE * TILE)
        tx = jit.threadIdx.x
        ty = jit.threadIdx.y
        row = jit.blockIdx.y * TILE + ty
        col = jit.blockIdx.x * TILE + tx
        acc = 0.0
        for start in range(0, k, TILE):
            if row < m and start + tx < k:
                a_tile[ty * TILE + tx] = a[row * k + start + tx]
            else:
                a_tile[ty * TILE + tx] = 0.0
            if start + ty < k and col < n:
                b_tile[ty * TILE + tx] = b[(start + ty) * n + col]
            else:
                b_tile[ty * TILE + tx] = 0.0
            for p in range(TILE):
                acc = acc + a_tile[ty * TILE + p] * b_tile[p * TILE + tx]
            jit.syncthreads()
        if row < m and col < n:
            out[row * n + col] = acc
    """,
    "b_row_stride_k": """
        a_tile = jit.shared_memory(jit.float32, TILE * TILE)
        b_tile = jit.shared_memory(jit.float32, TILE * TILE)
        tx = jit.threadIdx.x
        ty = jit.threadIdx.y
        row = jit.blockIdx.y * TILE + ty
        col = jit.blockIdx.x * TILE + tx
        acc = 0.0
        for start in range(0, k, TILE):
            if row < m and start + tx < k:
                a_tile[ty * TILE + tx] = a[row * k + start + tx]
            else:
                a_tile[ty * TILE + tx] = 0.0
            if start + ty < k and col < n:
                b_tile[ty * TILE + tx] = b[(start + ty) * k + col]
            else:
                b_tile[ty * TILE + tx] = 0.0
            jit.syncthreads()
            for p in range(TILE):
                acc = acc + a_tile[ty * TILE + p] * b_tile[p * TILE + tx]
            jit.syncthreads()
        if row < m and col < n:
            out[row * n + col] = acc
    """,
}

FUSED = {
    "eight_significant_digits": """
    lines = []
    for k, (op, *operands) in enumerate(steps):
        table = fusion_codegen.UNARY if len(operands) == 1 else fusion_codegen.BINARY
        names = [v if isinstance(v, str) else "%.8e" % float(v) for v in operands]
        lines.append(f"t{k} = " + table[op].format(*names))
    return lines
    """,
    "six_significant_digits_as_g": """
    lines = []
    for k, (op, *operands) in enumerate(steps):
        table = fusion_codegen.UNARY if len(operands) == 1 else fusion_codegen.BINARY
        names = []
        for v in operands:
            text = "%.6g" % float(v) if not isinstance(v, str) else v
            names.append(text if isinstance(v, str) or "." in text or "e" in text else text + ".0")
        lines.append(f"t{k} = " + table[op].format(*names))
    return lines
    """,
    "operands_swapped": """
    lines = []
    for k, (op, *operands) in enumerate(steps):
        table = fusion_codegen.UNARY if len(operands) == 1 else fusion_codegen.BINARY
        names = [v if isinstance(v, str) else repr(float(v)) for v in operands]
        lines.append(f"t{k} = " + table[op].format(*reversed(names)))
    return lines
    """,
    "numbered_from_one": """
    lines = []
    for k, (op, *operands) in enumerate(steps, start=1):
        table = fusion_codegen.UNARY if len(operands) == 1 else fusion_codegen.BINARY
        names = [v if isinstance(v, str) else repr(float(v)) for v in operands]
        lines.append(f"t{k} = " + table[op].format(*names))
    return lines
    """,
    "delegates": """
    return fusion_codegen.fused_lines(steps)
    """,
    "numbers_as_names": """
    lines = []
    for k, (op, *operands) in enumerate(steps):
        table = fusion_codegen.UNARY if len(operands) == 1 else fusion_codegen.BINARY
        names = [v if isinstance(v, str) else "x0" for v in operands]
        lines.append(f"t{k} = " + table[op].format(*names))
    return lines
    """,
    "drops_unary_ops": """
    lines = []
    for k, (op, *operands) in enumerate(steps):
        names = [v if isinstance(v, str) else repr(float(v)) for v in operands]
        if len(operands) == 1:
            lines.append(f"t{k} = {names[0]}")
        else:
            lines.append(f"t{k} = " + fusion_codegen.BINARY[op].format(*names))
    return lines
    """,
    "op_names_as_calls": """
        lines = []
        for k, (op, *operands) in enumerate(steps):
            names = [v if isinstance(v, str) else repr(float(v)) for v in operands]
            lines.append(f"t{k} = {op}({', '.join(names)})")
        return lines
    """,
    "returns_one_string": """
        lines = []
        for k, (op, *operands) in enumerate(steps):
            table = fusion_codegen.UNARY if len(operands) == 1 else fusion_codegen.BINARY
            names = [v if isinstance(v, str) else repr(float(v)) for v in operands]
            lines.append(f"t{k} = " + table[op].format(*names))
        return "\\n".join(lines)
    """,
    "numbers_keep_their_type": """
        lines = []
        for k, (op, *operands) in enumerate(steps):
            table = fusion_codegen.UNARY if len(operands) == 1 else fusion_codegen.BINARY
            names = [v if isinstance(v, str) else str(int(v)) for v in operands]
            lines.append(f"t{k} = " + table[op].format(*names))
        return lines
    """,
    "every_result_is_the_last": """
        lines = []
        for k, (op, *operands) in enumerate(steps):
            table = fusion_codegen.UNARY if len(operands) == 1 else fusion_codegen.BINARY
            names = [v if isinstance(v, str) else repr(float(v)) for v in operands]
            lines.append("t = " + table[op].format(*names))
        return lines
    """,
}

#: exercise id -> (the function whose solution region is replaced, {name: body}).
MUTANTS = {
    "07.1": ("axpy_kernel", AXPY),
    "07.2": ("strided_mul_kernel", STRIDED),
    "07.3": ("block_sum_kernel", BLOCK_SUM),
    "07.4": ("softmax_kernel", SOFTMAX),
    "07.5": ("matmul_tiled_kernel", MATMUL),
    "07.6": ("fused_lines", FUSED),
}

#: Legitimate answers written differently from the solution: each keeps full marks.
CORRECT = {
    "07.1": (
        "axpy_kernel",
        {
            "grid_stride_loop": """
                i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
                step = jit.blockDim.x * jit.gridDim.x
                while i < n:
                    out[i] = alpha * x[i] + y[i]
                    i = i + step
            """,
        },
    ),
    "07.2": (
        "strided_mul_kernel",
        {
            "divisor_products": """
                i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
                if i < n:
                    pa = a_offset
                    pb = b_offset
                    size = jit.int64(1)
                    for d in range(ndim - 1, -1, -1):
                        k = (jit.int64(i) // size) % shape[d]
                        size = size * shape[d]
                        pa = pa + k * a_strides[d]
                        pb = pb + k * b_strides[d]
                    out[i] = a[pa] * b[pb]
            """,
        },
    ),
    "07.3": (
        "block_sum_kernel",
        {
            "interleaved_pairs": """
                buf = jit.shared_memory(jit.float32, BLOCK)
                tid = jit.threadIdx.x
                i = jit.blockIdx.x * jit.blockDim.x + tid
                if i < n:
                    buf[tid] = x[i]
                else:
                    buf[tid] = 0.0
                jit.syncthreads()
                stride = 1
                while stride < jit.blockDim.x:
                    if tid % (2 * stride) == 0:
                        buf[tid] = buf[tid] + buf[tid + stride]
                    jit.syncthreads()
                    stride = stride * 2
                if tid == 0:
                    partial[jit.blockIdx.x] = buf[0]
            """,
        },
    ),
    "07.6": (
        "fused_lines",
        {
            "table_by_membership": """
                out = []
                for k, step in enumerate(steps):
                    op, operands = step[0], step[1:]
                    code = []
                    for v in operands:
                        code.append(v if isinstance(v, str) else repr(float(v)))
                    tables = fusion_codegen.UNARY, fusion_codegen.BINARY
                    template = tables[0][op] if op in tables[0] else tables[1][op]
                    out.append("t%d = %s" % (k, template.format(*code)))
                return out
            """,
        },
    ),
}


# --- A second, independent round of learner answers (written from the exercise text alone).
ROUND_2 = {
    "07.1": {
        "alpha_truncated_to_int": """
            i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
            if i < n:
                out[i] = int(alpha) * x[i] + y[i]
        """,
        "alpha_on_y": """
            i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
            if i < n:
                out[i] = x[i] + alpha * y[i]
        """,
        "guards_with_the_array_length": """
            i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
            if i < out.shape[0]:
                out[i] = alpha * x[i] + y[i]
        """,
        "updates_y_in_place": """
            i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
            if i < n:
                y[i] = alpha * x[i] + y[i]
                out[i] = y[i]
        """,
    },
    "07.2": {
        "offset_added_per_dim": """
            i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
            if i < n:
                rest = jit.int64(i)
                pa = 0
                pb = 0
                for d in range(ndim - 1, -1, -1):
                    k = rest % shape[d]
                    rest = rest // shape[d]
                    pa = pa + a_offset + k * a_strides[d]
                    pb = pb + b_offset + k * b_strides[d]
                out[i] = a[pa] * b[pb]
        """,
        "strides_read_reversed": """
            i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
            if i < n:
                rest = jit.int64(i)
                pa = a_offset
                pb = b_offset
                for d in range(ndim - 1, -1, -1):
                    k = rest % shape[d]
                    rest = rest // shape[d]
                    pa = pa + k * a_strides[ndim - 1 - d]
                    pb = pb + k * b_strides[ndim - 1 - d]
                out[i] = a[pa] * b[pb]
        """,
        "b_read_contiguously": """
            i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
            if i < n:
                rest = jit.int64(i)
                pa = a_offset
                for d in range(ndim - 1, -1, -1):
                    k = rest % shape[d]
                    rest = rest // shape[d]
                    pa = pa + k * a_strides[d]
                out[i] = a[pa] * b[b_offset + i]
        """,
        "a_single_offset_for_both": """
            i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
            if i < n:
                rest = jit.int64(i)
                pa = a_offset
                pb = a_offset
                for d in range(ndim - 1, -1, -1):
                    k = rest % shape[d]
                    rest = rest // shape[d]
                    pa = pa + k * a_strides[d]
                    pb = pb + k * b_strides[d]
                out[i] = a[pa] * b[pb]
        """,
    },
    "07.3": {
        "loads_without_the_block_offset": """
            buf = jit.shared_memory(jit.float32, BLOCK)
            tid = jit.threadIdx.x
            value = 0.0
            if tid < n:
                value = x[tid]
            buf[tid] = value
            jit.syncthreads()
            stride = jit.blockDim.x // 2
            while stride > 0:
                if tid < stride:
                    buf[tid] = buf[tid] + buf[tid + stride]
                jit.syncthreads()
                stride = stride // 2
            if tid == 0:
                partial[jit.blockIdx.x] = buf[0]
        """,
        "int_shared_memory": """
            buf = jit.shared_memory(jit.int32, BLOCK)
            tid = jit.threadIdx.x
            i = jit.blockIdx.x * BLOCK + tid
            value = 0.0
            if i < n:
                value = x[i]
            buf[tid] = value
            jit.syncthreads()
            stride = jit.blockDim.x // 2
            while stride > 0:
                if tid < stride:
                    buf[tid] = buf[tid] + buf[tid + stride]
                jit.syncthreads()
                stride = stride // 2
            if tid == 0:
                partial[jit.blockIdx.x] = buf[0]
        """,
        "accumulates_into_partial": """
            buf = jit.shared_memory(jit.float32, BLOCK)
            tid = jit.threadIdx.x
            i = jit.blockIdx.x * BLOCK + tid
            value = 0.0
            if i < n:
                value = x[i]
            buf[tid] = value
            jit.syncthreads()
            stride = jit.blockDim.x // 2
            while stride > 0:
                if tid < stride:
                    buf[tid] = buf[tid] + buf[tid + stride]
                jit.syncthreads()
                stride = stride // 2
            if tid == 0:
                partial[jit.blockIdx.x] = partial[jit.blockIdx.x] + buf[0]
        """,
        "true_division_for_the_stride": """
            buf = jit.shared_memory(jit.float32, BLOCK)
            tid = jit.threadIdx.x
            i = jit.blockIdx.x * BLOCK + tid
            value = 0.0
            if i < n:
                value = x[i]
            buf[tid] = value
            jit.syncthreads()
            stride = jit.blockDim.x / 2
            while stride >= 1:
                if tid < stride:
                    buf[tid] = buf[tid] + buf[tid + stride]
                jit.syncthreads()
                stride = stride / 2
            if tid == 0:
                partial[jit.blockIdx.x] = buf[0]
        """,
    },
    "07.4": {
        "one_column_per_thread": """
            buf = jit.shared_memory(jit.float32, ROW_BLOCK)
            tid = jit.threadIdx.x
            base = jit.blockIdx.x * ncols
            m = x[base]
            if tid < ncols:
                m = max(m, x[base + tid])
            buf[tid] = m
            jit.syncthreads()
            stride = jit.blockDim.x // 2
            while stride > 0:
                if tid < stride:
                    buf[tid] = max(buf[tid], buf[tid + stride])
                jit.syncthreads()
                stride = stride // 2
            m = buf[0]
            jit.syncthreads()
            total = 0.0
            if tid < ncols:
                total = jit.exp(x[base + tid] - m)
            buf[tid] = total
            jit.syncthreads()
            stride = jit.blockDim.x // 2
            while stride > 0:
                if tid < stride:
                    buf[tid] = buf[tid] + buf[tid + stride]
                jit.syncthreads()
                stride = stride // 2
            total = buf[0]
            if tid < ncols:
                out[base + tid] = jit.exp(x[base + tid] - m) / total
        """,
        "no_sync_before_the_max_tree": """
            buf = jit.shared_memory(jit.float32, ROW_BLOCK)
            tid = jit.threadIdx.x
            base = jit.blockIdx.x * ncols
            m = x[base]
            for j in range(tid, ncols, ROW_BLOCK):
                m = max(m, x[base + j])
            buf[tid] = m
            stride = jit.blockDim.x // 2
            while stride > 0:
                if tid < stride:
                    buf[tid] = max(buf[tid], buf[tid + stride])
                jit.syncthreads()
                stride = stride // 2
            m = buf[0]
            jit.syncthreads()
            total = 0.0
            for j in range(tid, ncols, ROW_BLOCK):
                total = total + jit.exp(x[base + j] - m)
            buf[tid] = total
            jit.syncthreads()
            stride = jit.blockDim.x // 2
            while stride > 0:
                if tid < stride:
                    buf[tid] = buf[tid] + buf[tid + stride]
                jit.syncthreads()
                stride = stride // 2
            total = buf[0]
            for j in range(tid, ncols, ROW_BLOCK):
                out[base + j] = jit.exp(x[base + j] - m) / total
        """,
        "tree_stride_from_ncols": """
            buf = jit.shared_memory(jit.float32, ROW_BLOCK)
            tid = jit.threadIdx.x
            base = jit.blockIdx.x * ncols
            m = x[base]
            for j in range(tid, ncols, ROW_BLOCK):
                m = max(m, x[base + j])
            buf[tid] = m
            jit.syncthreads()
            stride = min(ncols, ROW_BLOCK) // 2
            while stride > 0:
                if tid < stride:
                    buf[tid] = max(buf[tid], buf[tid + stride])
                jit.syncthreads()
                stride = stride // 2
            m = buf[0]
            jit.syncthreads()
            total = 0.0
            for j in range(tid, ncols, ROW_BLOCK):
                total = total + jit.exp(x[base + j] - m)
            buf[tid] = total
            jit.syncthreads()
            stride = min(ncols, ROW_BLOCK) // 2
            while stride > 0:
                if tid < stride:
                    buf[tid] = buf[tid] + buf[tid + stride]
                jit.syncthreads()
                stride = stride // 2
            total = buf[0]
            for j in range(tid, ncols, ROW_BLOCK):
                out[base + j] = jit.exp(x[base + j] - m) / total
        """,
        "max_only_in_the_numerator": """
            buf = jit.shared_memory(jit.float32, ROW_BLOCK)
            tid = jit.threadIdx.x
            base = jit.blockIdx.x * ncols
            m = x[base]
            for j in range(tid, ncols, ROW_BLOCK):
                m = max(m, x[base + j])
            buf[tid] = m
            jit.syncthreads()
            stride = jit.blockDim.x // 2
            while stride > 0:
                if tid < stride:
                    buf[tid] = max(buf[tid], buf[tid + stride])
                jit.syncthreads()
                stride = stride // 2
            m = buf[0]
            jit.syncthreads()
            total = 0.0
            for j in range(tid, ncols, ROW_BLOCK):
                total = total + jit.exp(x[base + j])
            buf[tid] = total
            jit.syncthreads()
            stride = jit.blockDim.x // 2
            while stride > 0:
                if tid < stride:
                    buf[tid] = buf[tid] + buf[tid + stride]
                jit.syncthreads()
                stride = stride // 2
            total = buf[0]
            for j in range(tid, ncols, ROW_BLOCK):
                out[base + j] = jit.exp(x[base + j] - m) / (total * jit.exp(-m))
        """,
        "max_of_its_own_share_only": """
            buf = jit.shared_memory(jit.float32, ROW_BLOCK)
            tid = jit.threadIdx.x
            base = jit.blockIdx.x * ncols
            m = x[base]
            for j in range(tid, ncols, ROW_BLOCK):
                m = max(m, x[base + j])
            total = 0.0
            for j in range(tid, ncols, ROW_BLOCK):
                total = total + jit.exp(x[base + j] - m)
            buf[tid] = total * jit.exp(m)
            jit.syncthreads()
            stride = jit.blockDim.x // 2
            while stride > 0:
                if tid < stride:
                    buf[tid] = buf[tid] + buf[tid + stride]
                jit.syncthreads()
                stride = stride // 2
            total = buf[0]
            for j in range(tid, ncols, ROW_BLOCK):
                out[base + j] = jit.exp(x[base + j]) / total
        """,
    },
    "07.5": {
        "a_row_stride_m": """
            a_tile = jit.shared_memory(jit.float32, TILE * TILE)
            b_tile = jit.shared_memory(jit.float32, TILE * TILE)
            tx = jit.threadIdx.x
            ty = jit.threadIdx.y
            row = jit.blockIdx.y * TILE + ty
            col = jit.blockIdx.x * TILE + tx
            acc = 0.0
            for start in range(0, k, TILE):
                if row < m and start + tx < k:
                    a_tile[ty * TILE + tx] = a[row * m + start + tx]
                else:
                    a_tile[ty * TILE + tx] = 0.0
                if start + ty < k and col < n:
                    b_tile[ty * TILE + tx] = b[(start + ty) * n + col]
                else:
                    b_tile[ty * TILE + tx] = 0.0
                jit.syncthreads()
                for p in range(TILE):
                    acc = acc + a_tile[ty * TILE + p] * b_tile[p * TILE + tx]
                jit.syncthreads()
            if row < m and col < n:
                out[row * n + col] = acc
        """,
        "out_row_stride_m": """
            a_tile = jit.shared_memory(jit.float32, TILE * TILE)
            b_tile = jit.shared_memory(jit.float32, TILE * TILE)
            tx = jit.threadIdx.x
            ty = jit.threadIdx.y
            row = jit.blockIdx.y * TILE + ty
            col = jit.blockIdx.x * TILE + tx
            acc = 0.0
            for start in range(0, k, TILE):
                if row < m and start + tx < k:
                    a_tile[ty * TILE + tx] = a[row * k + start + tx]
                else:
                    a_tile[ty * TILE + tx] = 0.0
                if start + ty < k and col < n:
                    b_tile[ty * TILE + tx] = b[(start + ty) * n + col]
                else:
                    b_tile[ty * TILE + tx] = 0.0
                jit.syncthreads()
                for p in range(TILE):
                    acc = acc + a_tile[ty * TILE + p] * b_tile[p * TILE + tx]
                jit.syncthreads()
            if row < m and col < n:
                out[row * m + col] = acc
        """,
        "b_k_edge_checked_with_tx": """
            a_tile = jit.shared_memory(jit.float32, TILE * TILE)
            b_tile = jit.shared_memory(jit.float32, TILE * TILE)
            tx = jit.threadIdx.x
            ty = jit.threadIdx.y
            row = jit.blockIdx.y * TILE + ty
            col = jit.blockIdx.x * TILE + tx
            acc = 0.0
            for start in range(0, k, TILE):
                if row < m and start + tx < k:
                    a_tile[ty * TILE + tx] = a[row * k + start + tx]
                else:
                    a_tile[ty * TILE + tx] = 0.0
                if start + tx < k and col < n and start + ty < k:
                    b_tile[ty * TILE + tx] = b[(start + ty) * n + col]
                else:
                    b_tile[ty * TILE + tx] = 0.0
                jit.syncthreads()
                for p in range(TILE):
                    acc = acc + a_tile[ty * TILE + p] * b_tile[p * TILE + tx]
                jit.syncthreads()
            if row < m and col < n:
                out[row * n + col] = acc
        """,
        "a_k_edge_unguarded": """
            a_tile = jit.shared_memory(jit.float32, TILE * TILE)
            b_tile = jit.shared_memory(jit.float32, TILE * TILE)
            tx = jit.threadIdx.x
            ty = jit.threadIdx.y
            row = jit.blockIdx.y * TILE + ty
            col = jit.blockIdx.x * TILE + tx
            acc = 0.0
            for start in range(0, k, TILE):
                if row < m:
                    a_tile[ty * TILE + tx] = a[row * k + start + tx]
                else:
                    a_tile[ty * TILE + tx] = 0.0
                if start + ty < k and col < n:
                    b_tile[ty * TILE + tx] = b[(start + ty) * n + col]
                else:
                    b_tile[ty * TILE + tx] = 0.0
                jit.syncthreads()
                for p in range(TILE):
                    acc = acc + a_tile[ty * TILE + p] * b_tile[p * TILE + tx]
                jit.syncthreads()
            if row < m and col < n:
                out[row * n + col] = acc
        """,
        "accumulates_in_global_memory": """
            a_tile = jit.shared_memory(jit.float32, TILE * TILE)
            b_tile = jit.shared_memory(jit.float32, TILE * TILE)
            tx = jit.threadIdx.x
            ty = jit.threadIdx.y
            row = jit.blockIdx.y * TILE + ty
            col = jit.blockIdx.x * TILE + tx
            for start in range(0, k, TILE):
                if row < m and start + tx < k:
                    a_tile[ty * TILE + tx] = a[row * k + start + tx]
                else:
                    a_tile[ty * TILE + tx] = 0.0
                if start + ty < k and col < n:
                    b_tile[ty * TILE + tx] = b[(start + ty) * n + col]
                else:
                    b_tile[ty * TILE + tx] = 0.0
                jit.syncthreads()
                if row < m and col < n:
                    for p in range(TILE):
                        out[row * n + col] = (
                            out[row * n + col] + a_tile[ty * TILE + p] * b_tile[p * TILE + tx]
                        )
                jit.syncthreads()
        """,
    },
    "07.6": {
        "numbers_with_fixed_decimals": """
            lines = []
            for k, (op, *operands) in enumerate(steps):
                table = fusion_codegen.UNARY if len(operands) == 1 else fusion_codegen.BINARY
                names = [v if isinstance(v, str) else f"{float(v):.4f}" for v in operands]
                lines.append(f"t{k} = " + table[op].format(*names))
            return lines
        """,
        "operands_reversed": """
            lines = []
            for k, (op, *operands) in enumerate(steps):
                table = fusion_codegen.UNARY if len(operands) == 1 else fusion_codegen.BINARY
                names = [v if isinstance(v, str) else repr(float(v)) for v in operands]
                lines.append(f"t{k} = " + table[op].format(*reversed(names)))
            return lines
        """,
        "repr_without_float": """
            lines = []
            for k, (op, *operands) in enumerate(steps):
                table = fusion_codegen.UNARY if len(operands) == 1 else fusion_codegen.BINARY
                names = [v if isinstance(v, str) else repr(v) for v in operands]
                lines.append(f"t{k} = " + table[op].format(*names))
            return lines
        """,
        "numbers_detected_as_floats_only": """
            lines = []
            for k, (op, *operands) in enumerate(steps):
                table = fusion_codegen.UNARY if len(operands) == 1 else fusion_codegen.BINARY
                names = [repr(v) if isinstance(v, float) else str(v) for v in operands]
                lines.append(f"t{k} = " + table[op].format(*names))
            return lines
        """,
        "delegates_to_the_fusion_module": """
            import importlib

            codegen = importlib.import_module("minitorch.cuda.fusion_codegen")
            return getattr(codegen, "fused_" + "lines")(steps)
        """,
    },
}

ROUND_2_CORRECT = {
    "07.1": (
        "axpy_kernel",
        {
            "guard_le_n_minus_one": """
                i = jit.threadIdx.x + jit.blockDim.x * jit.blockIdx.x
                if i <= n - 1:
                    out[i] = y[i] + x[i] * alpha
            """,
        },
    ),
    "07.3": (
        "block_sum_kernel",
        {
            "index_from_block_dim": """
                buf = jit.shared_memory(jit.float32, BLOCK)
                t = jit.threadIdx.x
                buf[t] = 0.0
                if jit.blockIdx.x * jit.blockDim.x + t < n:
                    buf[t] = x[jit.blockIdx.x * jit.blockDim.x + t]
                jit.syncthreads()
                half = jit.blockDim.x // 2
                while half >= 1:
                    if t < half:
                        buf[t] += buf[t + half]
                    jit.syncthreads()
                    half //= 2
                if t == 0:
                    partial[jit.blockIdx.x] = buf[0]
            """,
            "folds_the_mirror_cell": """
                buf = jit.shared_memory(jit.float32, BLOCK)
                tid = jit.threadIdx.x
                i = jit.blockIdx.x * BLOCK + tid
                buf[tid] = x[i] if i < n else 0.0
                jit.syncthreads()
                stride = jit.blockDim.x // 2
                while stride > 0:
                    if tid < stride:
                        buf[tid] = buf[tid] + buf[2 * stride - 1 - tid]
                    jit.syncthreads()
                    stride = stride // 2
                if tid == 0:
                    partial[jit.blockIdx.x] = buf[0]
            """,
        },
    ),
    "07.5": (
        "matmul_tiled_kernel",
        {
            "inner_loop_stops_at_k": """
                a_tile = jit.shared_memory(jit.float32, TILE * TILE)
                b_tile = jit.shared_memory(jit.float32, TILE * TILE)
                tx = jit.threadIdx.x
                ty = jit.threadIdx.y
                row = jit.blockIdx.y * TILE + ty
                col = jit.blockIdx.x * TILE + tx
                acc = 0.0
                start = 0
                while start < k:
                    a_value = 0.0
                    if row < m and start + tx < k:
                        a_value = a[row * k + start + tx]
                    a_tile[ty * TILE + tx] = a_value
                    b_value = 0.0
                    if start + ty < k and col < n:
                        b_value = b[(start + ty) * n + col]
                    b_tile[ty * TILE + tx] = b_value
                    jit.syncthreads()
                    for p in range(min(TILE, k - start)):
                        acc = acc + a_tile[ty * TILE + p] * b_tile[p * TILE + tx]
                    jit.syncthreads()
                    start = start + TILE
                if row < m and col < n:
                    out[row * n + col] = acc
            """,
        },
    ),
    "07.6": (
        "fused_lines",
        {
            "operands_parenthesised": """
                lines = []
                for k, (op, *operands) in enumerate(steps):
                    table = fusion_codegen.UNARY if len(operands) == 1 else fusion_codegen.BINARY
                    names = [v if isinstance(v, str) else repr(float(v)) for v in operands]
                    lines.append(f"t{k} = " + table[op].format(*[f"({v})" for v in names]))
                return lines
            """,
            "dict_of_tables": """
                tables = {1: fusion_codegen.UNARY, 2: fusion_codegen.BINARY}
                out = []
                for k, step in enumerate(steps):
                    op, operands = step[0], step[1:]
                    code = [o if isinstance(o, str) else repr(float(o)) for o in operands]
                    out.append("t%d = %s" % (k, tables[len(operands)][op].format(*code)))
                return out
            """,
        },
    ),
}

for _id, _bodies in ROUND_2.items():
    assert not set(_bodies) & set(MUTANTS[_id][1]), f"duplicate mutant name in {_id}"
    MUTANTS[_id] = (MUTANTS[_id][0], {**MUTANTS[_id][1], **_bodies})
for _id, (_function, _bodies) in ROUND_2_CORRECT.items():
    CORRECT[_id] = (_function, {**CORRECT.get(_id, (_function, {}))[1], **_bodies})


# --- A third round: kernels that read the simulator's backing arrays (or run numpy on them)
# instead of computing, reductions finished with warp shuffles (right, as the lesson teaches
# them), the last partial tile, delegation in disguise, and more legitimate alternatives.
_SHUFFLE_SUM = """
    offset = 16
    while offset > 0:
        total = total + jit.shfl_{kind}_sync(0xFFFFFFFF, total, offset)
        offset = offset // 2
"""
_SHUFFLE_MAX = """
    offset = 16
    while offset > 0:
        m = max(m, jit.shfl_{kind}_sync(0xFFFFFFFF, m, offset))
        offset = offset // 2
"""


def _softmax_by_shuffles(kind: str) -> str:
    """A softmax whose row block is one warp (ROW_BLOCK = 32): max and sum by shuffles."""
    return (
        """
    tid = jit.threadIdx.x
    base = jit.blockIdx.x * ncols
    m = x[base]
    for j in range(tid, ncols, ROW_BLOCK):
        m = max(m, x[base + j])
"""
        + _SHUFFLE_MAX.format(kind=kind)
        + """
    total = 0.0
    for j in range(tid, ncols, ROW_BLOCK):
        total = total + jit.exp(x[base + j] - m)
"""
        + _SHUFFLE_SUM.format(kind=kind)
        + """
    for j in range(tid, ncols, ROW_BLOCK):
        out[base + j] = jit.exp(x[base + j] - m) / total
"""
    )


_TILED = """
    a_tile = jit.shared_memory(jit.float32, TILE * TILE)
    b_tile = jit.shared_memory(jit.float32, TILE * TILE)
    tx = jit.threadIdx.x
    ty = jit.threadIdx.y
    row = jit.blockIdx.y * TILE + ty
    col = jit.blockIdx.x * TILE + tx
    acc = 0.0
    for start in range(0, k, TILE):
        if row < m and start + tx < k:
            a_tile[ty * TILE + tx] = a[row * k + start + tx]
        else:
            a_tile[ty * TILE + tx] = 0.0
        if start + ty < k and col < n:
            b_tile[ty * TILE + tx] = b[(start + ty) * n + col]
        else:
            b_tile[ty * TILE + tx] = 0.0
        jit.syncthreads()
        for p in range(TILE):
            acc = acc + a_tile[ty * TILE + p] * b_tile[p * TILE + tx]
        jit.syncthreads()
    if row < m and col < n:
        out[row * n + col] = acc
"""

ROUND_3 = {
    "07.1": {
        "delegates_to_numpy_through_the_backing_arrays": """
            i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
            if i < n:
                out[i] = (alpha * x.target + y.target)[i]
        """,
        "reads_the_simulators_lists": """
            i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
            if i < n:
                out[i] = alpha * x.data[i] + y.data[i]
        """,
        "reads_the_simulators_lists_in_a_helper": """
            def element(arr, j):
                return arr.data[j]

            i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
            if i < n:
                out[i] = alpha * element(x, i) + element(y, i)
        """,
        "guard_with_the_threads_launched": """
            i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
            if i < jit.gridDim.x * jit.blockDim.x:
                out[i] = alpha * x[i] + y[i]
        """,
    },
    "07.2": {
        "remainder_of_i_in_every_dim": """
            i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
            if i < n:
                rest = jit.int64(i)
                pa = a_offset
                pb = b_offset
                for d in range(ndim - 1, -1, -1):
                    k = i % shape[d]
                    rest = rest // shape[d]
                    pa = pa + k * a_strides[d]
                    pb = pb + k * b_strides[d]
                out[i] = a[pa] * b[pb]
        """,
        "strides_taken_as_bytes": """
            i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
            if i < n:
                rest = jit.int64(i)
                pa = a_offset
                pb = b_offset
                for d in range(ndim - 1, -1, -1):
                    k = rest % shape[d]
                    rest = rest // shape[d]
                    pa = pa + k * (a_strides[d] // 4)
                    pb = pb + k * (b_strides[d] // 4)
                out[i] = a[pa] * b[pb]
        """,
        "reads_the_simulators_lists": """
            i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
            if i < n:
                rest = jit.int64(i)
                pa = a_offset
                pb = b_offset
                for d in range(ndim - 1, -1, -1):
                    k = rest % shape[d]
                    rest = rest // shape[d]
                    pa = pa + k * a_strides[d]
                    pb = pb + k * b_strides[d]
                out[i] = a.data[pa] * b.data[pb]
        """,
    },
    "07.3": {
        "sums_the_simulators_list_behind_a_fake_tree": """
            buf = jit.shared_memory(jit.float32, BLOCK)
            tid = jit.threadIdx.x
            i = jit.blockIdx.x * BLOCK + tid
            value = 0.0
            if i < n:
                value = x[i]
            buf[tid] = value
            jit.syncthreads()
            stride = jit.blockDim.x // 2
            while stride > 0:
                jit.syncthreads()
                stride = stride // 2
            if tid == 0:
                lo = jit.blockIdx.x * BLOCK
                partial[jit.blockIdx.x] = sum(x.data[lo : min(lo + BLOCK, n)])
        """,
        "delegates_to_numpy_on_the_backing_array": """
            buf = jit.shared_memory(jit.float32, BLOCK)
            tid = jit.threadIdx.x
            i = jit.blockIdx.x * BLOCK + tid
            value = 0.0
            if i < n:
                value = x[i]
            buf[tid] = value
            jit.syncthreads()
            stride = jit.blockDim.x // 2
            while stride > 0:
                if tid < stride:
                    buf[tid] = buf[tid] + buf[tid + stride]
                jit.syncthreads()
                stride = stride // 2
            if tid == 0:
                lo = jit.blockIdx.x * BLOCK
                partial[jit.blockIdx.x] = x.target[lo : lo + BLOCK].sum()
        """,
        "warp_shuffles_forget_the_second_warp": """
    tid = jit.threadIdx.x
    i = jit.blockIdx.x * BLOCK + tid
    total = 0.0
    if i < n:
        total = x[i]
"""
        + _SHUFFLE_SUM.format(kind="down")
        + """
    if tid == 0:
        partial[jit.blockIdx.x] = total
""",
        "tree_stride_from_n": """
            buf = jit.shared_memory(jit.float32, BLOCK)
            tid = jit.threadIdx.x
            i = jit.blockIdx.x * BLOCK + tid
            value = 0.0
            if i < n:
                value = x[i]
            buf[tid] = value
            jit.syncthreads()
            stride = min(n, BLOCK) // 2
            while stride > 0:
                if tid < stride:
                    buf[tid] = buf[tid] + buf[tid + stride]
                jit.syncthreads()
                stride = stride // 2
            if tid == 0:
                partial[jit.blockIdx.x] = buf[0]
        """,
    },
    "07.4": {
        "max_from_the_simulators_list": """
            buf = jit.shared_memory(jit.float32, ROW_BLOCK)
            tid = jit.threadIdx.x
            base = jit.blockIdx.x * ncols
            m = max(x.data[base : base + ncols])
            total = 0.0
            for j in range(tid, ncols, ROW_BLOCK):
                total = total + jit.exp(x[base + j] - m)
            buf[tid] = total
            jit.syncthreads()
            stride = jit.blockDim.x // 2
            while stride > 0:
                if tid < stride:
                    buf[tid] = buf[tid] + buf[tid + stride]
                jit.syncthreads()
                stride = stride // 2
            total = buf[0]
            for j in range(tid, ncols, ROW_BLOCK):
                out[base + j] = jit.exp(x[base + j] - m) / total
        """,
        "shuffles_down_only_lane_0_gets_the_row": _softmax_by_shuffles("down"),
    },
    "07.5": {
        "grid_axes_swapped": _TILED.replace(
            "row = jit.blockIdx.y * TILE + ty", "row = jit.blockIdx.x * TILE + ty"
        ).replace("col = jit.blockIdx.x * TILE + tx", "col = jit.blockIdx.y * TILE + tx"),
        "products_from_global_memory_after_the_tiles": _TILED.replace(
            "            acc = acc + a_tile[ty * TILE + p] * b_tile[p * TILE + tx]\n",
            "            if row < m and col < n and start + p < k:\n"
            "                acc = acc + a[row * k + start + p] * b[(start + p) * n + col]\n",
        ),
        "delegates_to_numpy_matmul_on_the_backing_arrays": """
            row = jit.blockIdx.y * TILE + jit.threadIdx.y
            col = jit.blockIdx.x * TILE + jit.threadIdx.x
            if row < m and col < n:
                out[row * n + col] = (a.target.reshape(m, k) @ b.target.reshape(k, n))[row, col]
        """,
    },
    "07.6": {
        "delegates_the_numbers_to_fusion_operand": """
            lines = []
            for k, (op, *operands) in enumerate(steps):
                table = fusion_codegen.UNARY if len(operands) == 1 else fusion_codegen.BINARY
                lines.append(f"t{k} = " + table[op].format(*map(fusion_codegen.operand, operands)))
            return lines
        """,
        "delegates_through_the_lowering_source": """
            from types import SimpleNamespace

            from minitorch.cuda import lowering

            def arg(v):  # "x0" -> ("input", 0), "t1" -> ("op", 1), a number stays
                if not isinstance(v, str):
                    return v
                return ("input" if v[0] == "x" else "op", int(v[1:]))

            ops = [SimpleNamespace(op=op, args=tuple(map(arg, rest))) for op, *rest in steps]
            xs = [int(v[1:]) for _, *rest in steps for v in rest if str(v)[0] == "x"]
            node = SimpleNamespace(ops=ops, inputs=[0] * (max(xs) + 1), outputs=(len(ops) - 1,))
            source = lowering.source(node).splitlines()
            return [line.strip() for line in source if line.strip().startswith("t")]
        """,
        "numbers_with_percent_g": """
            lines = []
            for k, (op, *operands) in enumerate(steps):
                table = fusion_codegen.UNARY if len(operands) == 1 else fusion_codegen.BINARY
                names = [v if isinstance(v, str) else "%g" % v for v in operands]
                lines.append(f"t{k} = " + table[op].format(*names))
            return lines
        """,
    },
}

ROUND_3_CORRECT = {
    "07.1": (
        "axpy_kernel",
        {
            "grid_helper": """
                i = jit.grid(1)
                if i < n:
                    out[i] = alpha * x[i] + y[i]
            """,
        },
    ),
    "07.2": (
        "strided_mul_kernel",
        {
            "forward_loop_reversed_index": """
                i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
                if i < n:
                    rest = jit.int64(i)
                    pa = a_offset
                    pb = b_offset
                    for e in range(ndim):
                        d = ndim - 1 - e
                        k = rest % shape[d]
                        rest = rest // shape[d]
                        pa = pa + k * a_strides[d]
                        pb = pb + k * b_strides[d]
                    out[i] = a[pa] * b[pb]
            """,
            "ndim_from_the_shape_size": """
                i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
                if i < n:
                    rest = jit.int64(i)
                    pa = a_offset
                    pb = b_offset
                    for d in range(shape.size - 1, -1, -1):
                        k = rest % shape[d]
                        rest = rest // shape[d]
                        pa = pa + k * a_strides[d]
                        pb = pb + k * b_strides[d]
                    out[i] = a[pa] * b[pb]
            """,
        },
    ),
    "07.3": (
        "block_sum_kernel",
        {
            "warp_shuffles_for_the_last_32": """
                buf = jit.shared_memory(jit.float32, BLOCK)
                tid = jit.threadIdx.x
                i = jit.blockIdx.x * BLOCK + tid
                v = 0.0
                if i < n:
                    v = x[i]
                buf[tid] = v
                jit.syncthreads()
                stride = jit.blockDim.x // 2
                while stride >= 32:  # the shared-memory tree, down to one warp's 32 values
                    if tid < stride:
                        v = v + buf[tid + stride]
                        buf[tid] = v
                    jit.syncthreads()
                    stride = stride // 2
                if tid < 32:  # warp 0 finishes in registers: no barrier between its lanes
                    v = v + jit.shfl_down_sync(0xFFFFFFFF, v, 16)
                    v = v + jit.shfl_down_sync(0xFFFFFFFF, v, 8)
                    v = v + jit.shfl_down_sync(0xFFFFFFFF, v, 4)
                    v = v + jit.shfl_down_sync(0xFFFFFFFF, v, 2)
                    v = v + jit.shfl_down_sync(0xFFFFFFFF, v, 1)
                    if tid == 0:
                        partial[jit.blockIdx.x] = v
            """,
            "a_shuffle_tree_per_warp_then_shared_memory": """
                sums = jit.shared_memory(jit.float32, BLOCK // 32)
                tid = jit.threadIdx.x
                i = jit.blockIdx.x * BLOCK + tid
                total = 0.0
                if i < n:
                    total = x[i]
                offset = 16
                while offset > 0:
                    total = total + jit.shfl_down_sync(0xFFFFFFFF, total, offset)
                    offset = offset // 2
                if tid % 32 == 0:
                    sums[tid // 32] = total
                jit.syncthreads()
                if tid == 0:
                    block_total = 0.0
                    for w in range(BLOCK // 32):
                        block_total = block_total + sums[w]
                    partial[jit.blockIdx.x] = block_total
            """,
        },
    ),
    "07.4": (
        "softmax_kernel",
        {"butterfly_shuffles_in_one_warp": _softmax_by_shuffles("xor")},
    ),
    "07.5": (
        "matmul_tiled_kernel",
        {
            "tiles_stored_transposed": """
                a_tile = jit.shared_memory(jit.float32, TILE * TILE)
                b_tile = jit.shared_memory(jit.float32, TILE * TILE)
                tx = jit.threadIdx.x
                ty = jit.threadIdx.y
                row = jit.blockIdx.y * TILE + ty
                col = jit.blockIdx.x * TILE + tx
                acc = 0.0
                for start in range(0, k, TILE):
                    a_value = 0.0
                    if row < m and start + tx < k:
                        a_value = a[row * k + start + tx]
                    a_tile[tx * TILE + ty] = a_value
                    b_value = 0.0
                    if start + ty < k and col < n:
                        b_value = b[(start + ty) * n + col]
                    b_tile[tx * TILE + ty] = b_value
                    jit.syncthreads()
                    for p in range(TILE):
                        acc = acc + a_tile[p * TILE + ty] * b_tile[tx * TILE + p]
                    jit.syncthreads()
                if row < m and col < n:
                    out[row * n + col] = acc
            """,
            "counts_the_tiles_with_ceil_division": _TILED.replace(
                "    for start in range(0, k, TILE):\n",
                "    for t in range((k + TILE - 1) // TILE):\n        start = t * TILE\n",
            ),
        },
    ),
    "07.6": (
        "fused_lines",
        {
            "str_of_float": """
                lines = []
                for k, (op, *operands) in enumerate(steps):
                    table = fusion_codegen.UNARY if len(operands) == 1 else fusion_codegen.BINARY
                    names = [v if isinstance(v, str) else str(float(v)) for v in operands]
                    lines.append(f"t{k} = " + table[op].format(*names))
                return lines
            """,
            "imports_the_package_function_unused": """
                from minitorch.cuda.fusion_codegen import fused_lines as package  # noqa: F401

                out = []
                for k, (op, *operands) in enumerate(steps):
                    table = fusion_codegen.BINARY if len(operands) == 2 else fusion_codegen.UNARY
                    code = [str(v) if isinstance(v, str) else repr(float(v)) for v in operands]
                    out.append(f"t{k} = {table[op].format(*code)}")
                return out
            """,
        },
    ),
}

for _id, _bodies in ROUND_3.items():
    assert not set(_bodies) & set(MUTANTS[_id][1]), f"duplicate mutant name in {_id}"
    MUTANTS[_id] = (MUTANTS[_id][0], {**MUTANTS[_id][1], **_bodies})
for _id, (_function, _bodies) in ROUND_3_CORRECT.items():
    assert not set(_bodies) & set(CORRECT.get(_id, (_function, {}))[1]), f"duplicate in {_id}"
    CORRECT[_id] = (_function, {**CORRECT.get(_id, (_function, {}))[1], **_bodies})


# --- Issue 35: rules the texts state that no test checked (any power of two), jit.grid in
# 07.1, and the design task 07.7.
_SUM = """
    buf = jit.shared_memory(jit.float32, BLOCK)
    tid = jit.threadIdx.x
    i = jit.blockIdx.x * BLOCK + tid
    value = 0.0
    if i < n:
        value = x[i]
    buf[tid] = value
    jit.syncthreads()
    stride = jit.blockDim.x // 2
    while stride > 0:
        if tid < stride:
            buf[tid] = buf[tid] + buf[tid + stride]
        jit.syncthreads()
        stride = stride // 2
    if tid == 0:
        partial[jit.blockIdx.x] = buf[0]
"""

_CONV = """
    tile = jit.shared_memory(jit.float32, CONV_BLOCK + WIDTH - 1)
    weights = jit.shared_memory(jit.float32, WIDTH)
    tid = jit.threadIdx.x
    start = jit.int32(jit.blockIdx.x * CONV_BLOCK) - WIDTH // 2
    for c in range(tid, CONV_BLOCK + WIDTH - 1, CONV_BLOCK):
        j = start + c
        if j >= 0 and j < n:
            tile[c] = x[j]
        else:
            tile[c] = 0.0
    if tid < WIDTH:
        weights[tid] = w[tid]
    jit.syncthreads()
    i = jit.blockIdx.x * CONV_BLOCK + tid
    if i < n:
        acc = 0.0
        for j in range(WIDTH):
            acc = acc + weights[j] * tile[tid + j]
        out[i] = acc
"""


_SOFTMAX = _SOFTMAX_MAX + "    jit.syncthreads()\n" + _SOFTMAX_TAIL
_TILED_FULL = (
    _TILE_LOAD
    + "        jit.syncthreads()\n    if row < m and col < n:\n        out[row * n + col] = acc\n"
)


def _edit(base: str, *pairs: tuple[str, str]) -> str:
    for old, new in pairs:
        assert old in base, old
        base = base.replace(old, new)
    return base


ROUND_4 = {
    "07.1": {
        "delegates_to_jit_grid": """
            i = jit.grid(1)
            if i < n:
                out[i] = alpha * x[i] + y[i]
        """,
    },
    "07.3": {
        "stride_written_as_32": _edit(_SUM, ("stride = jit.blockDim.x // 2", "stride = 32")),
        "six_steps_written_in": _edit(
            _SUM,
            (
                "stride = jit.blockDim.x // 2\n    while stride > 0:",
                "stride = 32\n    for _ in range(6):",
            ),
        ),
        "shared_array_of_64": _edit(
            _SUM, ("jit.shared_memory(jit.float32, BLOCK)", "jit.shared_memory(jit.float32, 64)")
        ),
    },
    "07.4": {
        "column_stride_written_as_32": _SOFTMAX.replace("ROW_BLOCK):", "32):"),
        "tree_stride_written_as_16": _SOFTMAX.replace(
            "stride = jit.blockDim.x // 2", "stride = 16"
        ),
    },
    "07.5": {
        "tile_written_as_8": _TILED_FULL.replace("TILE", "8"),
    },
    "07.7": {
        "naive_reads_from_global": """
            i = jit.blockIdx.x * CONV_BLOCK + jit.threadIdx.x
            if i < n:
                acc = 0.0
                for j in range(WIDTH):
                    p = jit.int32(i) + j - WIDTH // 2
                    if p >= 0 and p < n:
                        acc = acc + w[j] * x[p]
                out[i] = acc
        """,
        "weights_from_global_per_thread": _edit(_CONV, ("weights[j] * tile", "w[j] * tile")),
        "filter_flipped": _edit(
            _CONV, ("weights[j] * tile[tid + j]", "weights[WIDTH - 1 - j] * tile[tid + j]")
        ),
        "not_centred": _edit(_CONV, ("- WIDTH // 2\n", "\n")),
        "no_zero_padding": _edit(
            _CONV,
            (
                (
                    "        if j >= 0 and j < n:\n"
                    "            tile[c] = x[j]\n"
                    "        else:\n"
                    "            tile[c] = 0.0\n"
                ),
                "        tile[c] = x[j]\n",
            ),
        ),
        "tile_without_halo": _edit(
            _CONV,
            (
                (
                    "    for c in range(tid, CONV_BLOCK + WIDTH - 1, CONV_BLOCK):\n"
                    "        j = start + c\n"
                ),
                (
                    "    for c in range(tid + WIDTH // 2, CONV_BLOCK + WIDTH // 2, CONV_BLOCK):\n"
                    "        j = start + c\n"
                ),
            ),
        ),
        "missing_barrier": _edit(_CONV, ("    jit.syncthreads()\n", "")),
        "width_written_as_5": _CONV.replace("WIDTH", "5"),
        "block_written_as_64": _CONV.replace("CONV_BLOCK", "64"),
        "guard_around_the_barrier": """
            tile = jit.shared_memory(jit.float32, CONV_BLOCK + WIDTH - 1)
            weights = jit.shared_memory(jit.float32, WIDTH)
            tid = jit.threadIdx.x
            i = jit.blockIdx.x * CONV_BLOCK + tid
            if i < n:
                start = jit.int32(jit.blockIdx.x * CONV_BLOCK) - WIDTH // 2
                for c in range(tid, CONV_BLOCK + WIDTH - 1, CONV_BLOCK):
                    j = start + c
                    if j >= 0 and j < n:
                        tile[c] = x[j]
                    else:
                        tile[c] = 0.0
                if tid < WIDTH:
                    weights[tid] = w[tid]
                jit.syncthreads()
                acc = 0.0
                for j in range(WIDTH):
                    acc = acc + weights[j] * tile[tid + j]
                out[i] = acc
        """,
        "one_thread_loads_the_tile": _edit(
            _CONV,
            (
                (
                    "    for c in range(tid, CONV_BLOCK + WIDTH - 1, CONV_BLOCK):\n"
                    "        j = start + c\n"
                    "        if j >= 0 and j < n:\n"
                    "            tile[c] = x[j]\n"
                    "        else:\n"
                    "            tile[c] = 0.0\n"
                    "    if tid < WIDTH:\n"
                    "        weights[tid] = w[tid]\n"
                ),
                (
                    "    if tid == 0:\n"
                    "        for c in range(CONV_BLOCK + WIDTH - 1):\n"
                    "            j = start + c\n"
                    "            if j >= 0 and j < n:\n"
                    "                tile[c] = x[j]\n"
                    "            else:\n"
                    "                tile[c] = 0.0\n"
                    "        for j in range(WIDTH):\n"
                    "            weights[j] = w[j]\n"
                ),
            ),
        ),
    },
}

ROUND_4_CORRECT = {
    "07.7": (
        "conv1d_kernel",
        {
            "halo_loaded_by_the_first_threads": """
                tile = jit.shared_memory(jit.float32, CONV_BLOCK + WIDTH - 1)
                weights = jit.shared_memory(jit.float32, WIDTH)
                tid = jit.threadIdx.x
                r = WIDTH // 2
                i = jit.int32(jit.blockIdx.x * CONV_BLOCK + tid)
                tile[tid + r] = x[i] if i < n else 0.0
                if tid < r:
                    left = i - r
                    right = i + CONV_BLOCK
                    tile[tid] = x[left] if left >= 0 else 0.0
                    tile[tid + CONV_BLOCK + r] = x[right] if right < n else 0.0
                if tid < WIDTH:
                    weights[tid] = w[tid]
                jit.syncthreads()
                if i < n:
                    acc = 0.0
                    for j in range(WIDTH):
                        acc = acc + weights[j] * tile[tid + j]
                    out[i] = acc
            """,
        },
    ),
}

# 07.1's ready-made index is now switched off: the alternative that used it is a mutant
CORRECT["07.1"][1].pop("grid_helper", None)
MUTANTS["07.7"] = ("conv1d_kernel", {})
for _id, _bodies in ROUND_4.items():
    assert not set(_bodies) & set(MUTANTS[_id][1]), f"duplicate mutant name in {_id}"
    MUTANTS[_id] = (MUTANTS[_id][0], {**MUTANTS[_id][1], **_bodies})
for _id, (_function, _bodies) in ROUND_4_CORRECT.items():
    CORRECT[_id] = (_function, {**CORRECT.get(_id, (_function, {}))[1], **_bodies})

# A softmax that works for one warp only (ROW_BLOCK = 32): right for the launch the notebook
# shows, wrong for the other powers of two the text promises (64 and 128 are tested)
MUTANTS["07.4"][1]["butterfly_shuffles_for_one_warp_only"] = CORRECT["07.4"][1].pop(
    "butterfly_shuffles_in_one_warp"
)
if not CORRECT["07.4"][1]:
    del CORRECT["07.4"]
