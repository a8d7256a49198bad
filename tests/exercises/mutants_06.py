"""Wrong answers to chapter 06's exercises, written the way learners write them.

``MUTANTS[exercise_id] = {name: source}``: each source redefines the exercise's function
or class in a copy of the solution notebook's namespace, so it may use ``np``,
``minitorch``, ``dist`` and the other exercises' correct functions (see ``mutants.py``,
the harness every chapter shares); every mutant must lose points. Names starting with
``delegates`` hand the piece to minitorch's own version and must get no points, with the
message "your answer used ...". ``CORRECT`` holds legitimate alternatives (same form),
which must keep full marks.
"""

# --- 06.1 ring reduce-scatter
REDUCE_SCATTER = {
    "replaces_instead_of_adding": """
def ring_reduce_scatter(chunks, rank, world_size, send, recv):
    chunks = list(chunks)
    for step in range(world_size - 1):
        send(chunks[(rank - step) % world_size])
        chunks[(rank - step - 1) % world_size] = recv()
    return chunks
""",
    "rank_plus_step_for_rank_minus_step": """
def ring_reduce_scatter(chunks, rank, world_size, send, recv):
    chunks = list(chunks)
    for step in range(world_size - 1):
        send(chunks[(rank + step) % world_size])
        into = (rank + step - 1) % world_size
        chunks[into] = chunks[into] + recv()
    return chunks
""",
    "n_steps_instead_of_n_minus_1": """
def ring_reduce_scatter(chunks, rank, world_size, send, recv):
    chunks = list(chunks)
    for step in range(world_size):
        send(chunks[(rank - step) % world_size])
        into = (rank - step - 1) % world_size
        chunks[into] = chunks[into] + recv()
    return chunks
""",
    "adds_into_the_chunk_it_sent": """
def ring_reduce_scatter(chunks, rank, world_size, send, recv):
    chunks = list(chunks)
    for step in range(world_size - 1):
        send(chunks[(rank - step) % world_size])
        into = (rank - step) % world_size
        chunks[into] = chunks[into] + recv()
    return chunks
""",
    "sends_every_chunk_every_step": """
def ring_reduce_scatter(chunks, rank, world_size, send, recv):
    chunks = list(chunks)
    for step in range(world_size - 1):
        send(np.concatenate(chunks))
        got = recv()
        into = (rank - step - 1) % world_size
        pieces = np.split(got, np.cumsum([len(c) for c in chunks])[:-1])
        chunks[into] = chunks[into] + pieces[into]
    return chunks
""",
    "delegates_to_minitorch": """
def ring_reduce_scatter(chunks, rank, world_size, send, recv):
    return dist.ring_reduce_scatter(chunks, rank, world_size, send, recv)
""",
    "delegates_by_importing_the_name": """
from minitorch.distributed.ring import ring_reduce_scatter
""",
    "adds_into_the_callers_arrays": """
def ring_reduce_scatter(chunks, rank, world_size, send, recv):
    for step in range(world_size - 1):
        send(chunks[(rank - step) % world_size].copy())
        chunks[(rank - step - 1) % world_size] += recv()
    return chunks
""",
    "receives_before_sending": """
def ring_reduce_scatter(chunks, rank, world_size, send, recv):
    chunks = list(chunks)
    for step in range(world_size - 1):
        got = recv()
        send(chunks[(rank - step) % world_size])
        into = (rank - step - 1) % world_size
        chunks[into] = chunks[into] + got
    return chunks
""",
    "chunk_index_one_ahead": """
def ring_reduce_scatter(chunks, rank, world_size, send, recv):
    chunks = list(chunks)
    for step in range(world_size - 1):
        send(chunks[(rank - step + 1) % world_size])
        into = (rank - step) % world_size
        chunks[into] = chunks[into] + recv()
    return chunks
""",
    "delegates_via_getattr": """
import minitorch.distributed.ring as _r


def ring_reduce_scatter(chunks, rank, world_size, send, recv):
    return getattr(_r, "ring_reduce_" + "scatter")(chunks, rank, world_size, send, recv)
""",
}

# --- 06.2 ring all-gather
ALL_GATHER = {
    "stores_into_the_chunk_it_sent": """
def ring_all_gather(chunks, rank, world_size, send, recv):
    chunks = list(chunks)
    for step in range(world_size - 1):
        send(chunks[(rank + 1 - step) % world_size])
        chunks[(rank + 1 - step) % world_size] = recv()
    return chunks
""",
    "sends_chunk_rank_minus_step": """
def ring_all_gather(chunks, rank, world_size, send, recv):
    chunks = list(chunks)
    for step in range(world_size - 1):
        send(chunks[(rank - step) % world_size])
        chunks[(rank - step - 1) % world_size] = recv()
    return chunks
""",
    "adds_instead_of_storing": """
def ring_all_gather(chunks, rank, world_size, send, recv):
    chunks = list(chunks)
    for step in range(world_size - 1):
        send(chunks[(rank + 1 - step) % world_size])
        into = (rank - step) % world_size
        chunks[into] = chunks[into] + recv()
    return chunks
""",
    "delegates_to_minitorch": """
def ring_all_gather(chunks, rank, world_size, send, recv):
    from minitorch.distributed.ring import ring_all_gather as theirs
    return theirs(chunks, rank, world_size, send, recv)
""",
    "sends_its_own_chunk_every_step": """
def ring_all_gather(chunks, rank, world_size, send, recv):
    chunks = list(chunks)
    for step in range(world_size - 1):
        send(chunks[(rank + 1) % world_size])
        chunks[(rank - step) % world_size] = recv()
    return chunks
""",
    "stores_one_behind": """
def ring_all_gather(chunks, rank, world_size, send, recv):
    chunks = list(chunks)
    for step in range(world_size - 1):
        send(chunks[(rank + 1 - step) % world_size])
        chunks[(rank - step - 1) % world_size] = recv()
    return chunks
""",
}

# --- 06.3 ring all-reduce
ALL_REDUCE = {
    "forgets_the_all_gather": """
def ring_all_reduce(array, rank, world_size, send, recv):
    chunks = np.array_split(array.reshape(-1), world_size)
    chunks = ring_reduce_scatter(chunks, rank, world_size, send, recv)
    return np.concatenate(chunks).reshape(array.shape)
""",
    "does_not_restore_the_shape": """
def ring_all_reduce(array, rank, world_size, send, recv):
    chunks = np.array_split(array.reshape(-1), world_size)
    chunks = ring_reduce_scatter(chunks, rank, world_size, send, recv)
    chunks = ring_all_gather(chunks, rank, world_size, send, recv)
    return np.concatenate(chunks)
""",
    "np_split_needs_sizes_that_divide": """
def ring_all_reduce(array, rank, world_size, send, recv):
    chunks = np.split(array.reshape(-1), world_size)
    chunks = ring_reduce_scatter(chunks, rank, world_size, send, recv)
    chunks = ring_all_gather(chunks, rank, world_size, send, recv)
    return np.concatenate(chunks).reshape(array.shape)
""",
    "a_naive_relay_of_whole_arrays": """
def ring_all_reduce(array, rank, world_size, send, recv):
    total, passing = array.copy(), array
    for _ in range(world_size - 1):
        send(passing)
        passing = recv()
        total = total + passing
    return total
""",
    "delegates_to_minitorch": """
def ring_all_reduce(array, rank, world_size, send, recv):
    return minitorch.distributed.ring_all_reduce(array, rank, world_size, send, recv)
""",
    "delegates_by_importing_the_name": """
from minitorch.distributed import ring_all_reduce
""",
    "averages_instead_of_summing": """
def ring_all_reduce(array, rank, world_size, send, recv):
    chunks = np.array_split(array.reshape(-1), world_size)
    chunks = ring_reduce_scatter(chunks, rank, world_size, send, recv)
    chunks = ring_all_gather(chunks, rank, world_size, send, recv)
    return np.concatenate(chunks).reshape(array.shape) / world_size
""",
    "split_along_the_first_axis": """
def ring_all_reduce(array, rank, world_size, send, recv):
    chunks = np.array_split(array, world_size)
    chunks = ring_reduce_scatter(chunks, rank, world_size, send, recv)
    chunks = ring_all_gather(chunks, rank, world_size, send, recv)
    return np.concatenate(chunks).reshape(array.shape)
""",
    "casts_to_float32": """
def ring_all_reduce(array, rank, world_size, send, recv):
    flat = array.astype(np.float32).reshape(-1)
    chunks = np.array_split(flat, world_size)
    chunks = ring_reduce_scatter(chunks, rank, world_size, send, recv)
    chunks = ring_all_gather(chunks, rank, world_size, send, recv)
    return np.concatenate(chunks).reshape(array.shape)
""",
    "concatenates_from_the_owned_chunk": """
def ring_all_reduce(array, rank, world_size, send, recv):
    chunks = np.array_split(array.reshape(-1), world_size)
    chunks = ring_reduce_scatter(chunks, rank, world_size, send, recv)
    chunks = ring_all_gather(chunks, rank, world_size, send, recv)
    k = (rank + 1) % world_size
    return np.concatenate(chunks[k:] + chunks[:k]).reshape(array.shape)
""",
}

# --- 06.4 the sampler's share
SHARD = {
    "contiguous_blocks": """
def shard(indices, num_replicas, rank, drop_last):
    indices = list(indices)
    n = len(indices)
    if drop_last:
        indices = indices[: n - n % num_replicas]
    else:
        while len(indices) % num_replicas:
            indices.append(indices[len(indices) - n])
    per = len(indices) // num_replicas
    return indices[rank * per : (rank + 1) * per]
""",
    "no_padding": """
def shard(indices, num_replicas, rank, drop_last):
    indices = list(indices)
    if drop_last:
        indices = indices[: len(indices) - len(indices) % num_replicas]
    return indices[rank::num_replicas]
""",
    "pads_with_the_last_index": """
def shard(indices, num_replicas, rank, drop_last):
    indices = list(indices)
    if drop_last:
        indices = indices[: len(indices) - len(indices) % num_replicas]
    while len(indices) % num_replicas:
        indices.append(indices[-1])
    return indices[rank::num_replicas]
""",
    "ignores_drop_last": """
def shard(indices, num_replicas, rank, drop_last):
    indices = list(indices)
    n = len(indices)
    while len(indices) % num_replicas:
        indices.append(indices[len(indices) - n])
    return indices[rank::num_replicas]
""",
    "pads_only_once_from_the_front": """
def shard(indices, num_replicas, rank, drop_last):
    indices = list(indices)
    n = len(indices)
    if drop_last:
        indices = indices[: n - n % num_replicas]
    else:
        pad = (-n) % num_replicas
        indices = indices + indices[:pad]
    return indices[rank::num_replicas]
""",
    "delegates_to_distributed_sampler": """
def shard(indices, num_replicas, rank, drop_last):
    sampler = dist.DistributedSampler(
        indices, num_replicas, rank, shuffle=False, drop_last=drop_last
    )
    return [indices[i] for i in sampler]
""",
    "delegates_to_shard_indices": """
from minitorch.distributed.sampler import shard_indices as shard
""",
    "pads_a_full_round_when_it_divides": """
def shard(indices, num_replicas, rank, drop_last):
    indices = list(indices)
    n = len(indices)
    if drop_last:
        indices = indices[: n - n % num_replicas]
    else:
        pad = num_replicas - n % num_replicas
        for i in range(pad):
            indices.append(indices[i % n])
    return indices[rank::num_replicas]
""",
    "drop_last_cuts_the_front": """
def shard(indices, num_replicas, rank, drop_last):
    indices = list(indices)
    n = len(indices)
    if drop_last:
        indices = indices[n % num_replicas :]
    else:
        while len(indices) % num_replicas:
            indices.append(indices[len(indices) - n])
    return indices[rank::num_replicas]
""",
    "divides_by_the_length": """
import math


def shard(indices, num_replicas, rank, drop_last):
    indices = list(indices)
    n = len(indices)
    if drop_last:
        total = n - n % num_replicas
    else:
        total = math.ceil(n / num_replicas) * num_replicas
    indices = (indices * math.ceil(total / n))[:total]
    return indices[rank::num_replicas]
""",
}

# --- 06.5 bucket assignment
ASSIGN_BUCKETS = {
    "from_the_first_parameter": """
def assign_buckets(sizes, cap_bytes):
    buckets, current, filled = [], [], 0
    for i in range(len(sizes)):
        current.append(i)
        filled += sizes[i]
        if filled >= cap_bytes:
            buckets.append(current)
            current, filled = [], 0
    if current:
        buckets.append(current)
    return buckets
""",
    "closes_before_adding_the_one_that_crosses": """
def assign_buckets(sizes, cap_bytes):
    buckets, current, filled = [], [], 0
    for i in reversed(range(len(sizes))):
        if current and filled + sizes[i] > cap_bytes:
            buckets.append(current)
            current, filled = [], 0
        current.append(i)
        filled += sizes[i]
    if current:
        buckets.append(current)
    return buckets
""",
    "instead_of": """
def assign_buckets(sizes, cap_bytes):
    buckets, current, filled = [], [], 0
    for i in reversed(range(len(sizes))):
        current.append(i)
        filled += sizes[i]
        if filled > cap_bytes:
            buckets.append(current)
            current, filled = [], 0
    if current:
        buckets.append(current)
    return buckets
""",
    "an_empty_bucket_at_the_end": """
def assign_buckets(sizes, cap_bytes):
    buckets, current, filled = [], [], 0
    for i in reversed(range(len(sizes))):
        current.append(i)
        filled += sizes[i]
        if filled >= cap_bytes:
            buckets.append(current)
            current, filled = [], 0
    buckets.append(current)
    return buckets
""",
    "delegates_to_minitorch": """
def assign_buckets(sizes, cap_bytes):
    return dist.assign_buckets(sizes, cap_bytes)
""",
    "closes_only_above_the_cap": """
def assign_buckets(sizes, cap_bytes):
    buckets, current, filled = [], [], 0
    for i in reversed(range(len(sizes))):
        current.append(i)
        filled += sizes[i]
        if filled > cap_bytes:
            buckets.append(current)
            current, filled = [], 0
    if current:
        buckets.append(current)
    return buckets
""",
    "indices_ascending_in_each_bucket": """
def assign_buckets(sizes, cap_bytes):
    buckets, current, filled = [], [], 0
    for i in reversed(range(len(sizes))):
        current.append(i)
        filled += sizes[i]
        if filled >= cap_bytes:
            buckets.append(sorted(current))
            current, filled = [], 0
    if current:
        buckets.append(sorted(current))
    return buckets
""",
    "buckets_in_reverse_order": """
def assign_buckets(sizes, cap_bytes):
    buckets, current, filled = [], [], 0
    for i in reversed(range(len(sizes))):
        current.append(i)
        filled += sizes[i]
        if filled >= cap_bytes:
            buckets.append(current)
            current, filled = [], 0
    if current:
        buckets.append(current)
    return buckets[::-1]
""",
    "byte_count_not_reset": """
def assign_buckets(sizes, cap_bytes):
    buckets, current, filled = [], [], 0
    for i in reversed(range(len(sizes))):
        current.append(i)
        filled += sizes[i]
        if filled >= cap_bytes:
            buckets.append(current)
            current = []
    if current:
        buckets.append(current)
    return buckets
""",
    "cap_taken_as_megabytes": """
def assign_buckets(sizes, cap_bytes):
    cap = cap_bytes * 1024 * 1024
    buckets, current, filled = [], [], 0
    for i in reversed(range(len(sizes))):
        current.append(i)
        filled += sizes[i]
        if filled >= cap:
            buckets.append(current)
            current, filled = [], 0
    if current:
        buckets.append(current)
    return buckets
""",
}

# --- 06.6 the hook-filled bucket
GRAD_BUCKET = {
    "launches_at_every_hook": """
class GradBucket:
    def __init__(self, params, launch):
        self.params, self.launch = list(params), launch
        self.offsets = list(np.cumsum([0] + [p.numel() for p in self.params])[:-1])
        self.buffer = np.zeros(sum(p.numel() for p in self.params), dtype=np.float32)
        for p in self.params:
            p.register_post_accumulate_grad_hook(self._grad_ready)

    def _grad_ready(self, param):
        k = next(i for i, p in enumerate(self.params) if p is param)
        start = self.offsets[k]
        self.buffer[start : start + param.numel()] = param.grad.detach().numpy().reshape(-1)
        self.launch(self.buffer)
""",
    "never_resets_its_count": """
class GradBucket:
    def __init__(self, params, launch):
        self.params, self.launch = list(params), launch
        self.offsets = list(np.cumsum([0] + [p.numel() for p in self.params])[:-1])
        self.buffer = np.zeros(sum(p.numel() for p in self.params), dtype=np.float32)
        self.ready = 0
        for p in self.params:
            p.register_post_accumulate_grad_hook(self._grad_ready)

    def _grad_ready(self, param):
        k = next(i for i, p in enumerate(self.params) if p is param)
        start = self.offsets[k]
        self.buffer[start : start + param.numel()] = param.grad.detach().numpy().reshape(-1)
        self.ready += 1
        if self.ready == len(self.params):
            self.launch(self.buffer)
""",
    "a_tensor_hook_the_incoming_gradient": """
class GradBucket:
    def __init__(self, params, launch):
        self.params, self.launch = list(params), launch
        self.offsets = list(np.cumsum([0] + [p.numel() for p in self.params])[:-1])
        self.buffer = np.zeros(sum(p.numel() for p in self.params), dtype=np.float32)
        self.ready = 0
        for k, p in enumerate(self.params):
            p.register_hook(lambda g, k=k: self._grad_ready(k, g))

    def _grad_ready(self, k, grad):
        start = self.offsets[k]
        self.buffer[start : start + grad.numel()] = grad.detach().numpy().reshape(-1)
        self.ready += 1
        if self.ready == len(self.params):
            self.ready = 0
            self.launch(self.buffer)
""",
    "packs_the_gradients_in_arrival_order": """
class GradBucket:
    def __init__(self, params, launch):
        self.params, self.launch = list(params), launch
        self.buffer = np.zeros(sum(p.numel() for p in self.params), dtype=np.float32)
        self.filled = 0
        for p in self.params:
            p.register_post_accumulate_grad_hook(self._grad_ready)

    def _grad_ready(self, param):
        n = param.numel()
        self.buffer[self.filled : self.filled + n] = param.grad.detach().numpy().reshape(-1)
        self.filled += n
        if self.filled == self.buffer.size:
            self.filled = 0
            self.launch(self.buffer)
""",
    "launches_at_the_end_of_backward": """
class GradBucket:
    def __init__(self, params, launch):
        self.params, self.launch = list(params), launch
        self.offsets = list(np.cumsum([0] + [p.numel() for p in self.params])[:-1])
        self.buffer = np.zeros(sum(p.numel() for p in self.params), dtype=np.float32)
        self.ready = 0
        for p in self.params:
            p.register_post_accumulate_grad_hook(self._grad_ready)

    def _grad_ready(self, param):
        k = next(i for i, p in enumerate(self.params) if p is param)
        start = self.offsets[k]
        self.buffer[start : start + param.numel()] = param.grad.detach().numpy().reshape(-1)
        self.ready += 1
        if self.ready == len(self.params):
            self.ready = 0
            minitorch.autograd.queue_callback(lambda: self.launch(self.buffer))
""",
    "delegates_to_ddp_bucket": """
from minitorch.distributed.buckets import Bucket


class GradBucket:
    def __init__(self, params, launch):
        self.inner = Bucket(0, list(params))
        self.launch = launch
        for p in self.inner.params:
            p.register_post_accumulate_grad_hook(self._grad_ready)

    def _grad_ready(self, param):
        k = next(i for i, p in enumerate(self.inner.params) if p is param)
        self.inner.fill(k, param.grad, False)
        if self.inner.pending == 0:
            self.inner.reset()
            self.launch(self.inner.buffer.numpy())
""",
    "delegates_by_subclassing_ddp_bucket": """
class GradBucket(minitorch.distributed.buckets.Bucket):
    def __init__(self, params, launch):
        super().__init__(0, list(params))
        self.launch = launch
        for p in self.params:
            p.register_post_accumulate_grad_hook(self._grad_ready)

    def _grad_ready(self, param):
        k = next(i for i, p in enumerate(self.params) if p is param)
        self.fill(k, param.grad, False)
        if self.pending == 0:
            self.reset()
            self.launch(self.buffer.numpy())
""",
    "float64_buffer": """
class GradBucket:
    def __init__(self, params, launch):
        self.params = list(params)
        self.launch = launch
        self.offsets = []
        total = 0
        for p in self.params:
            self.offsets.append(total)
            total += p.numel()
        self.buffer = np.zeros(total)
        self.ready = 0
        for p in self.params:
            p.register_post_accumulate_grad_hook(self._grad_ready)

    def _grad_ready(self, param):
        k = next(i for i, p in enumerate(self.params) if p is param)
        start = self.offsets[k]
        self.buffer[start : start + param.numel()] = param.grad.detach().numpy().reshape(-1)
        self.ready += 1
        if self.ready == len(self.params):
            self.ready = 0
            self.launch(self.buffer)
""",
    "finds_the_slot_with_index": """
class GradBucket:
    def __init__(self, params, launch):
        self.params = list(params)
        self.launch = launch
        self.offsets = []
        total = 0
        for p in self.params:
            self.offsets.append(total)
            total += p.numel()
        self.buffer = np.zeros(total, dtype=np.float32)
        self.ready = 0
        for p in self.params:
            p.register_post_accumulate_grad_hook(self._grad_ready)

    def _grad_ready(self, param):
        k = self.params.index(param)
        start = self.offsets[k]
        self.buffer[start : start + param.numel()] = param.grad.detach().numpy().reshape(-1)
        self.ready += 1
        if self.ready == len(self.params):
            self.ready = 0
            self.launch(self.buffer)
""",
    "offsets_in_bytes": """
class GradBucket:
    def __init__(self, params, launch):
        self.params = list(params)
        self.launch = launch
        self.offsets = []
        total = 0
        for p in self.params:
            self.offsets.append(total)
            total += p.numel() * p.element_size()
        self.buffer = np.zeros(total, dtype=np.float32)
        self.ready = 0
        for p in self.params:
            p.register_post_accumulate_grad_hook(self._grad_ready)

    def _grad_ready(self, param):
        k = next(i for i, p in enumerate(self.params) if p is param)
        start = self.offsets[k]
        self.buffer[start : start + param.numel()] = param.grad.detach().numpy().reshape(-1)
        self.ready += 1
        if self.ready == len(self.params):
            self.ready = 0
            self.launch(self.buffer)
""",
    "launches_one_early": """
class GradBucket:
    def __init__(self, params, launch):
        self.params = list(params)
        self.launch = launch
        self.offsets = []
        total = 0
        for p in self.params:
            self.offsets.append(total)
            total += p.numel()
        self.buffer = np.zeros(total, dtype=np.float32)
        self.ready = 0
        for p in self.params:
            p.register_post_accumulate_grad_hook(self._grad_ready)

    def _grad_ready(self, param):
        k = next(i for i, p in enumerate(self.params) if p is param)
        self.ready += 1
        if self.ready == len(self.params) - 1:
            self.launch(self.buffer)
        if self.ready == len(self.params):
            self.ready = 0
        start = self.offsets[k]
        self.buffer[start : start + param.numel()] = param.grad.detach().numpy().reshape(-1)
""",
    "launches_before_copying_the_last": """
class GradBucket:
    def __init__(self, params, launch):
        self.params = list(params)
        self.launch = launch
        self.offsets = []
        total = 0
        for p in self.params:
            self.offsets.append(total)
            total += p.numel()
        self.buffer = np.zeros(total, dtype=np.float32)
        self.ready = 0
        for p in self.params:
            p.register_post_accumulate_grad_hook(self._grad_ready)

    def _grad_ready(self, param):
        self.ready += 1
        if self.ready == len(self.params):
            self.ready = 0
            self.launch(self.buffer)
        k = next(i for i, p in enumerate(self.params) if p is param)
        start = self.offsets[k]
        self.buffer[start : start + param.numel()] = param.grad.detach().numpy().reshape(-1)
""",
    "zeroes_the_buffer_after_launch": """
class GradBucket:
    def __init__(self, params, launch):
        self.params = list(params)
        self.launch = launch
        self.offsets = []
        total = 0
        for p in self.params:
            self.offsets.append(total)
            total += p.numel()
        self.buffer = np.zeros(total, dtype=np.float32)
        self.ready = 0
        for p in self.params:
            p.register_post_accumulate_grad_hook(self._grad_ready)

    def _grad_ready(self, param):
        k = next(i for i, p in enumerate(self.params) if p is param)
        start = self.offsets[k]
        self.buffer[start : start + param.numel()] += param.grad.detach().numpy().reshape(-1)
        self.ready += 1
        if self.ready == len(self.params):
            self.ready = 0
            self.launch(self.buffer)
""",
}

# --- 06.7 averaging gradients
AVERAGE = {
    "sums_without_dividing": """
def average_gradients(params, all_reduce, world_size):
    for p in params:
        if p.grad is not None:
            all_reduce(p.grad)
""",
    "divides_twice": """
def average_gradients(params, all_reduce, world_size):
    for p in params:
        if p.grad is not None:
            with minitorch.no_grad():
                p.grad.div_(world_size)
            all_reduce(p.grad)
            with minitorch.no_grad():
                p.grad.div_(world_size)
""",
    "does_not_skip_missing_gradients": """
def average_gradients(params, all_reduce, world_size):
    for p in params:
        all_reduce(p.grad)
        with minitorch.no_grad():
            p.grad.div_(world_size)
""",
    "averages_the_parameters": """
def average_gradients(params, all_reduce, world_size):
    for p in params:
        if p.grad is not None:
            with minitorch.no_grad():
                all_reduce(p.data)
                p.data.div_(world_size)
""",
    "divides_by_the_number_of_parameters": """
def average_gradients(params, all_reduce, world_size):
    params = list(params)
    for p in params:
        if p.grad is not None:
            all_reduce(p.grad)
            with minitorch.no_grad():
                p.grad.div_(len(params))
""",
    "delegates_to_dist_all_reduce": """
def average_gradients(params, all_reduce, world_size):
    for p in params:
        if p.grad is not None:
            dist.all_reduce(p.grad)
            with minitorch.no_grad():
                p.grad.div_(world_size)
""",
    "skips_by_requires_grad": """
def average_gradients(params, all_reduce, world_size):
    for p in params:
        if not p.requires_grad:
            continue
        all_reduce(p.grad)
        with minitorch.no_grad():
            p.grad.div_(world_size)
""",
    "reads_the_generator_twice": """
def average_gradients(params, all_reduce, world_size):
    grads = [p.grad for p in params if p.grad is not None]
    for g in grads:
        all_reduce(g)
    for p in params:
        if p.grad is not None:
            with minitorch.no_grad():
                p.grad.div_(world_size)
""",
    "divides_only_the_first": """
def average_gradients(params, all_reduce, world_size):
    done = False
    for p in params:
        if p.grad is None:
            continue
        all_reduce(p.grad)
        if not done:
            with minitorch.no_grad():
                p.grad.div_(world_size)
            done = True
""",
    "numpy_write_bypasses_the_ops": """
def average_gradients(params, all_reduce, world_size):
    for p in params:
        if p.grad is None:
            continue
        all_reduce(p.grad)
        arr = p.grad.numpy()
        arr /= world_size
""",
}

# --- 06.8 no_sync accumulation
ACCUMULATE = {
    "never_zeroes_the_gradients": """
def accumulate_and_step(model, optimizer, micro_batches, loss_fn):
    k = len(micro_batches)
    total = 0.0
    for i, (x, y) in enumerate(micro_batches):
        if i < k - 1:
            with model.no_sync():
                loss = loss_fn(model(x), y) / k
                loss.backward()
        else:
            loss = loss_fn(model(x), y) / k
            loss.backward()
        total += loss.item()
    optimizer.step()
    return total
""",
    "no_no_sync": """
def accumulate_and_step(model, optimizer, micro_batches, loss_fn):
    optimizer.zero_grad()
    total = 0.0
    for x, y in micro_batches:
        loss = loss_fn(model(x), y) / len(micro_batches)
        loss.backward()
        total += loss.item()
    optimizer.step()
    return total
""",
    "no_sync_around_every_micro_batch": """
def accumulate_and_step(model, optimizer, micro_batches, loss_fn):
    optimizer.zero_grad()
    total = 0.0
    for x, y in micro_batches:
        with model.no_sync():
            loss = loss_fn(model(x), y) / len(micro_batches)
            loss.backward()
        total += loss.item()
    optimizer.step()
    return total
""",
    "losses_not_scaled": """
import contextlib

def accumulate_and_step(model, optimizer, micro_batches, loss_fn):
    optimizer.zero_grad()
    total = 0.0
    for i, (x, y) in enumerate(micro_batches):
        last = i == len(micro_batches) - 1
        with contextlib.nullcontext() if last else model.no_sync():
            loss = loss_fn(model(x), y)
            loss.backward()
        total += loss.item() / len(micro_batches)
    optimizer.step()
    return total
""",
    "zero_grad_for_every_micro_batch": """
def accumulate_and_step(model, optimizer, micro_batches, loss_fn):
    total = 0.0
    k = len(micro_batches)
    for i, (x, y) in enumerate(micro_batches):
        optimizer.zero_grad()
        if i < k - 1:
            with model.no_sync():
                loss = loss_fn(model(x), y) / k
                loss.backward()
        else:
            loss = loss_fn(model(x), y) / k
            loss.backward()
        total += loss.item()
    optimizer.step()
    return total
""",
    "a_step_per_micro_batch": """
def accumulate_and_step(model, optimizer, micro_batches, loss_fn):
    total = 0.0
    k = len(micro_batches)
    optimizer.zero_grad()
    for i, (x, y) in enumerate(micro_batches):
        if i < k - 1:
            with model.no_sync():
                loss = loss_fn(model(x), y) / k
                loss.backward()
        else:
            loss = loss_fn(model(x), y) / k
            loss.backward()
        optimizer.step()
        total += loss.item()
    return total
""",
    "delegates_to_ddp_internals": """
def accumulate_and_step(model, optimizer, micro_batches, loss_fn):
    optimizer.zero_grad()
    total = 0.0
    with model.no_sync():
        for x, y in micro_batches:
            loss = loss_fn(model(x), y) / len(micro_batches)
            loss.backward()
            total += loss.item()
    model._start_backward()
    for p in model.module.parameters():
        model._grad_ready(p)
    optimizer.step()
    return total
""",
    "syncs_the_first_not_the_last": """
def accumulate_and_step(model, optimizer, micro_batches, loss_fn):
    optimizer.zero_grad()
    k = len(micro_batches)
    total = 0.0
    for i, (x, y) in enumerate(micro_batches):
        if i > 0:
            with model.no_sync():
                loss = loss_fn(model(x), y) / k
                loss.backward()
        else:
            loss = loss_fn(model(x), y) / k
            loss.backward()
        total += loss.item()
    optimizer.step()
    return total
""",
    "returns_the_last_loss": """
def accumulate_and_step(model, optimizer, micro_batches, loss_fn):
    optimizer.zero_grad()
    k = len(micro_batches)
    for i, (x, y) in enumerate(micro_batches):
        if i < k - 1:
            with model.no_sync():
                loss = loss_fn(model(x), y) / k
                loss.backward()
        else:
            loss = loss_fn(model(x), y) / k
            loss.backward()
    optimizer.step()
    return loss.item() * k
""",
    "divides_by_the_batch_size": """
def accumulate_and_step(model, optimizer, micro_batches, loss_fn):
    optimizer.zero_grad()
    k = len(micro_batches)
    total = 0.0
    for i, (x, y) in enumerate(micro_batches):
        if i < k - 1:
            with model.no_sync():
                loss = loss_fn(model(x), y) / len(x)
                loss.backward()
        else:
            loss = loss_fn(model(x), y) / len(x)
            loss.backward()
        total += loss.item()
    optimizer.step()
    return total
""",
    "delegates_to_the_ddp_hook": """
def accumulate_and_step(model, optimizer, micro_batches, loss_fn):
    optimizer.zero_grad()
    k = len(micro_batches)
    total = 0.0
    with model.no_sync():
        for x, y in micro_batches:
            loss = loss_fn(model(x), y) / k
            loss.backward()
            total += loss.item()
    for p in model.parameters():
        type(model)._grad_ready(model, p)
    optimizer.step()
    return total
""",
}

MUTANTS = {
    "06.1": REDUCE_SCATTER,
    "06.2": ALL_GATHER,
    "06.3": ALL_REDUCE,
    "06.4": SHARD,
    "06.5": ASSIGN_BUCKETS,
    "06.6": GRAD_BUCKET,
    "06.7": AVERAGE,
    "06.8": ACCUMULATE,
}

#: Legitimate answers written differently from the solution: each keeps full marks (those
#: that import one of minitorch's classes only to look at it are not delegating).
CORRECT = {
    "06.1": {
        "copies_then_adds_in_place": """
def ring_reduce_scatter(chunks, rank, world_size, send, recv):
    chunks = [np.array(c, copy=True) for c in chunks]
    for step in range(world_size - 1):
        send(chunks[(rank - step) % world_size].copy())
        chunks[(rank - step - 1) % world_size] += recv()
    return chunks
""",
    },
    "06.2": {
        "while_loop": """
def ring_all_gather(chunks, rank, world_size, send, recv):
    out = list(chunks)
    step = 0
    while step < world_size - 1:
        send(out[(rank + 1 - step) % world_size])
        out[(rank - step) % world_size] = recv()
        step += 1
    return out
""",
    },
    "06.3": {
        "imports_the_ring_module_to_compare": """
from minitorch.distributed import ring as reference_ring


def ring_all_reduce(array, rank, world_size, send, recv):
    flat = np.ravel(array)
    chunks = ring_reduce_scatter(np.array_split(flat, world_size), rank, world_size, send, recv)
    chunks = ring_all_gather(chunks, rank, world_size, send, recv)
    return np.reshape(np.concatenate(chunks), np.shape(array))
""",
        "ravel_and_split_by_hand": """
def ring_all_reduce(array, rank, world_size, send, recv):
    flat = np.ravel(array)
    base, extra = divmod(flat.size, world_size)
    bounds = [0]
    for i in range(world_size):
        bounds.append(bounds[-1] + base + (1 if i < extra else 0))
    chunks = [flat[bounds[i] : bounds[i + 1]] for i in range(world_size)]
    chunks = ring_reduce_scatter(chunks, rank, world_size, send, recv)
    chunks = ring_all_gather(chunks, rank, world_size, send, recv)
    return np.concatenate(chunks).reshape(np.shape(array))
""",
    },
    "06.4": {
        "imports_distributed_sampler_and_repeats_the_list": """
from minitorch.distributed import DistributedSampler


def shard(indices, num_replicas, rank, drop_last):
    indices = list(indices)
    n = len(indices)
    if drop_last:
        total = n - n % num_replicas
        indices = indices[:total]
    else:
        total = -(-n // num_replicas) * num_replicas
        indices = (indices * (total // n + 1))[:total] if n else []
    return [indices[i] for i in range(rank, total, num_replicas)]
""",
        "floor_then_cycle": """
import itertools


def shard(indices, num_replicas, rank, drop_last):
    indices = list(indices)
    n = len(indices)
    if drop_last:
        total = (n // num_replicas) * num_replicas
        indices = indices[:total]
    else:
        total = -(-n // num_replicas) * num_replicas
        indices = list(itertools.islice(itertools.cycle(indices), total)) if n else []
    return [indices[i] for i in range(rank, len(indices), num_replicas)]
""",
    },
    "06.5": {
        "opens_a_bucket_when_the_last_is_full": """
def assign_buckets(sizes, cap_bytes):
    buckets, filled = [[]], 0
    for i in range(len(sizes) - 1, -1, -1):
        if filled >= cap_bytes:
            buckets.append([])
            filled = 0
        buckets[-1].append(i)
        filled += sizes[i]
    return [b for b in buckets if b]
""",
    },
    "06.6": {
        "imports_ddp_and_keeps_slots_by_id": """
from minitorch.distributed import DistributedDataParallel


class GradBucket:
    def __init__(self, params, launch):
        self.params = list(params)
        self.launch = launch
        self.slots = {}
        start = 0
        for p in self.params:
            self.slots[id(p)] = slice(start, start + p.numel())
            start += p.numel()
        self.buffer = np.zeros(start, dtype=np.float32)
        self.waiting = set(self.slots)
        for p in self.params:
            p.register_post_accumulate_grad_hook(self._grad_ready)

    def _grad_ready(self, param):
        self.buffer[self.slots[id(param)]] = param.grad.numpy().ravel()
        self.waiting.discard(id(param))
        if not self.waiting:
            self.waiting = set(self.slots)
            self.launch(self.buffer)
""",
        "offsets_by_identity_dict": """
class GradBucket:
    def __init__(self, params, launch):
        self.params = list(params)
        self.launch = launch
        sizes = [p.numel() for p in self.params]
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int)
        self.slot = {id(p): (int(s), int(s) + n) for p, s, n in zip(self.params, starts, sizes)}
        self.buffer = np.zeros(sum(sizes), dtype=np.float32)
        self.arrived = set()
        for p in self.params:
            p.register_post_accumulate_grad_hook(self._grad_ready)

    def _grad_ready(self, param):
        lo, hi = self.slot[id(param)]
        np.copyto(self.buffer[lo:hi], param.grad.detach().numpy().ravel())
        self.arrived.add(id(param))
        if len(self.arrived) == len(self.params):
            self.arrived.clear()
            self.launch(self.buffer)
""",
    },
    "06.7": {
        "divides_before_the_sum": """
def average_gradients(params, all_reduce, world_size):
    for p in params:
        if p.grad is not None:
            with minitorch.no_grad():
                p.grad.mul_(1.0 / world_size)
            all_reduce(p.grad)
""",
        "divides_first_then_sums": """
def average_gradients(params, all_reduce, world_size):
    with minitorch.no_grad():
        for p in params:
            if p.grad is not None:
                p.grad.mul_(1.0 / world_size)
                all_reduce(p.grad)
""",
        "replaces_the_gradient": """
def average_gradients(params, all_reduce, world_size):
    for p in params:
        if p.grad is not None:
            all_reduce(p.grad)
            p.grad = p.grad / world_size
""",
    },
    "06.8": {
        "a_null_context_for_the_last": """
import contextlib


def accumulate_and_step(model, optimizer, micro_batches, loss_fn):
    optimizer.zero_grad()
    k = len(micro_batches)
    total = 0.0
    for i, (x, y) in enumerate(micro_batches):
        context = model.no_sync() if i < k - 1 else contextlib.nullcontext()
        with context:
            loss = loss_fn(model(x), y) / k
            loss.backward()
        total += float(loss)
    optimizer.step()
    return total
""",
        "a_context_per_micro_batch": """
import contextlib


def accumulate_and_step(model, optimizer, micro_batches, loss_fn):
    optimizer.zero_grad()
    k = len(micro_batches)
    losses = []
    for i, (x, y) in enumerate(micro_batches):
        last = i == k - 1
        with contextlib.nullcontext() if last else model.no_sync():
            loss = loss_fn(model(x), y) / k
            loss.backward()
        losses.append(float(loss))
    optimizer.step()
    return sum(losses)
""",
        "backward_after_leaving_no_sync": """
def accumulate_and_step(model, optimizer, micro_batches, loss_fn):
    optimizer.zero_grad()
    k = len(micro_batches)
    total = 0.0
    for i, (x, y) in enumerate(micro_batches):
        if i < k - 1:
            with model.no_sync():
                loss = loss_fn(model(x), y) / k
        else:
            loss = loss_fn(model(x), y) / k
        loss.backward()
        total += loss.item()
    optimizer.step()
    return total
""",
    },
}


# --- A second, independent round of learner answers (written from the exercise text alone).
ROUND_2 = {
    "06.1": {
        "modifies_the_callers_list": """
def ring_reduce_scatter(chunks, rank, world_size, send, recv):
    for step in range(world_size - 1):
        send(chunks[(rank - step) % world_size])
        into = (rank - step - 1) % world_size
        chunks[into] = chunks[into] + recv()
    return chunks
""",
        "accumulates_in_float32": """
def ring_reduce_scatter(chunks, rank, world_size, send, recv):
    chunks = [np.asarray(c, dtype=np.float32) for c in chunks]
    for step in range(world_size - 1):
        send(chunks[(rank - step) % world_size])
        into = (rank - step - 1) % world_size
        chunks[into] = chunks[into] + recv()
    return chunks
""",
        "delegates_via_importlib": """
import importlib


def ring_reduce_scatter(chunks, rank, world_size, send, recv):
    ring = importlib.import_module("minitorch.distributed.ring")
    return ring.ring_reduce_scatter(list(chunks), rank, world_size, send, recv)
""",
    },
    "06.2": {
        "modifies_the_callers_list": """
def ring_all_gather(chunks, rank, world_size, send, recv):
    for step in range(world_size - 1):
        send(chunks[(rank + 1 - step) % world_size])
        chunks[(rank - step) % world_size] = recv()
    return chunks
""",
        "copies_into_the_old_chunk": """
def ring_all_gather(chunks, rank, world_size, send, recv):
    chunks = list(chunks)
    for step in range(world_size - 1):
        send(chunks[(rank + 1 - step) % world_size])
        chunks[(rank - step) % world_size][...] = recv()
    return chunks
""",
        "sends_the_chunk_of_the_step_before": """
def ring_all_gather(chunks, rank, world_size, send, recv):
    chunks = list(chunks)
    for step in range(world_size - 1):
        send(chunks[(rank + 1 - max(step - 1, 0)) % world_size])
        chunks[(rank - step) % world_size] = recv()
    return chunks
""",
    },
    "06.3": {
        "writes_the_sum_into_the_callers_array": """
def ring_all_reduce(array, rank, world_size, send, recv):
    flat = array.reshape(-1)
    chunks = np.array_split(flat, world_size)
    chunks = ring_reduce_scatter(chunks, rank, world_size, send, recv)
    chunks = ring_all_gather(chunks, rank, world_size, send, recv)
    flat[...] = np.concatenate(chunks)
    return array
""",
        "returns_a_list_of_chunks_reshaped_with_np_array": """
def ring_all_reduce(array, rank, world_size, send, recv):
    chunks = np.array_split(array.reshape(-1), world_size)
    chunks = ring_reduce_scatter(chunks, rank, world_size, send, recv)
    chunks = ring_all_gather(chunks, rank, world_size, send, recv)
    return np.concatenate(chunks).reshape(-1, *array.shape[1:])
""",
        "flattens_by_len": """
def ring_all_reduce(array, rank, world_size, send, recv):
    chunks = np.array_split(array.reshape(len(array) * array[0].size), world_size)
    chunks = ring_reduce_scatter(chunks, rank, world_size, send, recv)
    chunks = ring_all_gather(chunks, rank, world_size, send, recv)
    return np.concatenate(chunks).reshape(array.shape)
""",
    },
    "06.4": {
        "pads_with_the_first_index_repeated": """
def shard(indices, num_replicas, rank, drop_last):
    indices = list(indices)
    n = len(indices)
    if drop_last:
        indices = indices[: n - n % num_replicas]
    elif n % num_replicas:
        indices += [indices[0]] * (num_replicas - n % num_replicas)
    return indices[rank::num_replicas]
""",
        "pads_the_callers_list": """
def shard(indices, num_replicas, rank, drop_last):
    n = len(indices)
    if drop_last:
        indices = indices[: n - n % num_replicas]
    else:
        while len(indices) % num_replicas:
            indices.append(indices[len(indices) - n])
    return indices[rank::num_replicas]
""",
        "repeats_the_list_divides_by_zero_when_empty": """
import math


def shard(indices, num_replicas, rank, drop_last):
    indices = list(indices)
    n = len(indices)
    if drop_last:
        indices = indices[: n - n % num_replicas]
    else:
        total = math.ceil(n / num_replicas) * num_replicas
        indices = (indices * (total // n + 1))[:total]
    return indices[rank::num_replicas]
""",
        "drop_last_skipped_when_shorter_than_replicas": """
def shard(indices, num_replicas, rank, drop_last):
    indices = list(indices)
    n = len(indices)
    if drop_last and n >= num_replicas:
        indices = indices[: n - n % num_replicas]
    elif not drop_last:
        while len(indices) % num_replicas:
            indices.append(indices[len(indices) - n])
    return indices[rank::num_replicas]
""",
        "pads_from_the_end_of_the_list": """
def shard(indices, num_replicas, rank, drop_last):
    indices = list(indices)
    n = len(indices)
    if drop_last:
        indices = indices[: n - n % num_replicas]
    else:
        pad = (-n) % num_replicas
        indices += (indices[::-1] * num_replicas)[:pad]
    return indices[rank::num_replicas]
""",
    },
    "06.5": {
        "carries_the_excess_into_the_next_bucket": """
def assign_buckets(sizes, cap_bytes):
    buckets, current, filled = [], [], 0
    for i in reversed(range(len(sizes))):
        current.append(i)
        filled += sizes[i]
        if filled >= cap_bytes:
            buckets.append(current)
            current, filled = [], filled - cap_bytes
    if current:
        buckets.append(current)
    return buckets
""",
        "walks_by_size": """
def assign_buckets(sizes, cap_bytes):
    buckets, current, filled = [], [], 0
    for i in sorted(range(len(sizes)), key=lambda i: -sizes[i]):
        current.append(i)
        filled += sizes[i]
        if filled >= cap_bytes:
            buckets.append(current)
            current, filled = [], 0
    if current:
        buckets.append(current)
    return buckets
""",
        "counts_parameters_not_bytes": """
def assign_buckets(sizes, cap_bytes):
    per_bucket = max(1, cap_bytes // max(sizes)) if sizes else 1
    order = list(reversed(range(len(sizes))))
    return [order[i : i + per_bucket] for i in range(0, len(order), per_bucket)]
""",
        "mutates_the_sizes": """
def assign_buckets(sizes, cap_bytes):
    buckets, current = [], []
    sizes.reverse()
    for j, size in enumerate(sizes):
        current.append(len(sizes) - 1 - j)
        if sum(sizes[j - len(current) + 1 : j + 1]) >= cap_bytes:
            buckets.append(current)
            current = []
    if current:
        buckets.append(current)
    return buckets
""",
    },
    "06.6": {
        "late_binding_lambda": """
class GradBucket:
    def __init__(self, params, launch):
        self.params = list(params)
        self.launch = launch
        self.offsets = []
        total = 0
        for p in self.params:
            self.offsets.append(total)
            total += p.numel()
        self.buffer = np.zeros(total, dtype=np.float32)
        self.ready = 0
        for p in self.params:
            p.register_post_accumulate_grad_hook(lambda _: self._grad_ready(p))

    def _grad_ready(self, param):
        k = next(i for i, p in enumerate(self.params) if p is param)
        start = self.offsets[k]
        self.buffer[start : start + param.numel()] = param.grad.detach().numpy().reshape(-1)
        self.ready += 1
        if self.ready == len(self.params):
            self.ready = 0
            self.launch(self.buffer)
""",
        "offsets_by_the_first_dim": """
class GradBucket:
    def __init__(self, params, launch):
        self.params = list(params)
        self.launch = launch
        self.offsets = []
        total = 0
        for p in self.params:
            self.offsets.append(total)
            total += p.shape[0] if p.dim() else 1
        self.buffer = np.zeros(sum(p.numel() for p in self.params), dtype=np.float32)
        self.ready = 0
        for p in self.params:
            p.register_post_accumulate_grad_hook(self._grad_ready)

    def _grad_ready(self, param):
        k = next(i for i, p in enumerate(self.params) if p is param)
        start = self.offsets[k]
        self.buffer[start : start + param.numel()] = param.grad.detach().numpy().reshape(-1)
        self.ready += 1
        if self.ready == len(self.params):
            self.ready = 0
            self.launch(self.buffer)
""",
        "flattens_column_major": """
class GradBucket:
    def __init__(self, params, launch):
        self.params = list(params)
        self.launch = launch
        self.offsets = []
        total = 0
        for p in self.params:
            self.offsets.append(total)
            total += p.numel()
        self.buffer = np.zeros(total, dtype=np.float32)
        self.ready = 0
        for p in self.params:
            p.register_post_accumulate_grad_hook(self._grad_ready)

    def _grad_ready(self, param):
        k = next(i for i, p in enumerate(self.params) if p is param)
        start = self.offsets[k]
        grad = param.grad.detach().numpy()
        self.buffer[start : start + param.numel()] = grad.ravel(order="F")
        self.ready += 1
        if self.ready == len(self.params):
            self.ready = 0
            self.launch(self.buffer)
""",
        "counter_on_the_class": """
class GradBucket:
    ready = 0

    def __init__(self, params, launch):
        self.params = list(params)
        self.launch = launch
        self.offsets = []
        total = 0
        for p in self.params:
            self.offsets.append(total)
            total += p.numel()
        self.buffer = np.zeros(total, dtype=np.float32)
        for p in self.params:
            p.register_post_accumulate_grad_hook(self._grad_ready)

    def _grad_ready(self, param):
        k = next(i for i, p in enumerate(self.params) if p is param)
        start = self.offsets[k]
        self.buffer[start : start + param.numel()] = param.grad.detach().numpy().reshape(-1)
        GradBucket.ready += 1
        if GradBucket.ready == len(self.params):
            GradBucket.ready = 0
            self.launch(self.buffer)
""",
        "counts_distinct_shapes": """
class GradBucket:
    def __init__(self, params, launch):
        self.params = list(params)
        self.launch = launch
        self.offsets = {}
        total = 0
        for p in self.params:
            self.offsets[tuple(p.shape)] = total
            total += p.numel()
        self.buffer = np.zeros(total, dtype=np.float32)
        self.ready = 0
        for p in self.params:
            p.register_post_accumulate_grad_hook(self._grad_ready)

    def _grad_ready(self, param):
        start = self.offsets[tuple(param.shape)]
        self.buffer[start : start + param.numel()] = param.grad.detach().numpy().reshape(-1)
        self.ready += 1
        if self.ready == len(self.params):
            self.ready = 0
            self.launch(self.buffer)
""",
    },
    "06.7": {
        "skips_all_zero_gradients": """
def average_gradients(params, all_reduce, world_size):
    for p in params:
        if p.grad is None or not p.grad.detach().numpy().any():
            continue
        all_reduce(p.grad)
        with minitorch.no_grad():
            p.grad.div_(world_size)
""",
        "all_reduces_a_copy": """
def average_gradients(params, all_reduce, world_size):
    for p in params:
        if p.grad is None:
            continue
        g = p.grad.detach().clone()
        all_reduce(g)
        with minitorch.no_grad():
            p.grad.div_(world_size)
""",
    },
    "06.8": {
        "one_backward_over_the_summed_loss": """
def accumulate_and_step(model, optimizer, micro_batches, loss_fn):
    optimizer.zero_grad()
    k = len(micro_batches)
    total = 0
    for x, y in micro_batches:
        total = total + loss_fn(model(x), y) / k
    total.backward()
    optimizer.step()
    return total.item()
""",
        "returns_a_tensor": """
def accumulate_and_step(model, optimizer, micro_batches, loss_fn):
    optimizer.zero_grad()
    k = len(micro_batches)
    total = 0.0
    for i, (x, y) in enumerate(micro_batches):
        if i < k - 1:
            with model.no_sync():
                loss = loss_fn(model(x), y) / k
                loss.backward()
        else:
            loss = loss_fn(model(x), y) / k
            loss.backward()
        total = total + loss.detach()
    optimizer.step()
    return total
""",
        "zero_grad_after_the_step": """
def accumulate_and_step(model, optimizer, micro_batches, loss_fn):
    k = len(micro_batches)
    total = 0.0
    for i, (x, y) in enumerate(micro_batches):
        if i < k - 1:
            with model.no_sync():
                loss = loss_fn(model(x), y) / k
                loss.backward()
        else:
            loss = loss_fn(model(x), y) / k
            loss.backward()
        total += loss.item()
    optimizer.step()
    optimizer.zero_grad()
    return total
""",
        "forward_outside_no_sync": """
def accumulate_and_step(model, optimizer, micro_batches, loss_fn):
    optimizer.zero_grad()
    k = len(micro_batches)
    total = 0.0
    for i, (x, y) in enumerate(micro_batches):
        loss = loss_fn(model(x), y) / k
        if i < k - 1:
            with model.no_sync():
                loss.backward()
        else:
            loss.backward()
        total += loss.item()
    optimizer.step()
    return total
""",
    },
}

ROUND_2_CORRECT = {
    "06.4": {
        "cycles_with_itertools": """
import itertools


def shard(indices, num_replicas, rank, drop_last):
    n = len(indices)
    size = n // num_replicas if drop_last else -(-n // num_replicas)
    total = size * num_replicas
    padded = list(itertools.islice(itertools.cycle(indices), total)) if n else []
    return [padded[i] for i in range(rank, total, num_replicas)]
""",
    },
    "06.5": {
        "sums_the_current_bucket": """
def assign_buckets(sizes, cap_bytes):
    buckets = [[]]
    for i in range(len(sizes) - 1, -1, -1):
        if buckets[-1] and sum(sizes[j] for j in buckets[-1]) >= cap_bytes:
            buckets.append([])
        buckets[-1].append(i)
    return [b for b in buckets if b]
""",
    },
    "06.7": {
        "multiplies_by_the_inverse": """
def average_gradients(params, all_reduce, world_size):
    grads = [p.grad for p in params if p.grad is not None]
    for g in grads:
        all_reduce(g)
    with minitorch.no_grad():
        for g in grads:
            g.mul_(1.0 / world_size)
""",
    },
    "06.8": {
        "one_no_sync_around_all_but_the_last": """
def accumulate_and_step(model, optimizer, micro_batches, loss_fn):
    optimizer.zero_grad()
    *early, (x_last, y_last) = micro_batches
    k = len(micro_batches)
    total = 0.0
    with model.no_sync():
        for x, y in early:
            loss = loss_fn(model(x), y) / k
            loss.backward()
            total += loss.item()
    loss = loss_fn(model(x_last), y_last) / k
    loss.backward()
    optimizer.step()
    return total + loss.item()
""",
        "raw_losses_divided_at_the_end": """
import contextlib


def accumulate_and_step(model, optimizer, micro_batches, loss_fn):
    optimizer.zero_grad()
    k = len(micro_batches)
    raw = []
    for i, (x, y) in enumerate(micro_batches):
        ctx = model.no_sync() if i < k - 1 else contextlib.nullcontext()
        with ctx:
            loss = loss_fn(model(x), y)
            (loss / k).backward()
        raw.append(loss.item())
    optimizer.step()
    return sum(raw) / k
""",
    },
}

for _id, _sources in ROUND_2.items():
    assert not set(_sources) & set(MUTANTS[_id]), f"duplicate mutant name in {_id}"
    MUTANTS[_id] = {**MUTANTS[_id], **_sources}
for _id, _sources in ROUND_2_CORRECT.items():
    CORRECT[_id] = {**CORRECT[_id], **_sources}


# --- A third round: state kept on a class or in a module global, the caller's list changed
# in place, world size 1, delegation in disguise, and more legitimate alternatives.
_LOCAL_BACKEND = """
from minitorch.distributed.backends.local import LocalBackend
from minitorch.distributed.reduce_op import ReduceOp


def _backend(rank, world_size, send, recv):
    # the embedded backend's collectives, on the simulator's links instead of sockets
    backend = object.__new__(LocalBackend)
    backend.rank, backend.world_size = rank, world_size
    backend._neighbours = lambda deadline: (send, recv)
    return backend
"""

ROUND_3 = {
    "06.1": {
        "step_counter_in_a_module_global": """
step = 0


def ring_reduce_scatter(chunks, rank, world_size, send, recv):
    global step
    chunks = list(chunks)
    while step < world_size - 1:
        send(chunks[(rank - step) % world_size])
        into = (rank - step - 1) % world_size
        chunks[into] = chunks[into] + recv()
        step += 1
    return chunks
""",
        "a_do_while_loop_sends_even_with_one_rank": """
def ring_reduce_scatter(chunks, rank, world_size, send, recv):
    chunks = list(chunks)
    step = 0
    while True:
        send(chunks[(rank - step) % world_size])
        into = (rank - step - 1) % world_size
        chunks[into] = chunks[into] + recv()
        step += 1
        if step >= world_size - 1:
            break
    return chunks
""",
        "delegates_through_the_local_backend": _LOCAL_BACKEND
        + """

def ring_reduce_scatter(chunks, rank, world_size, send, recv):
    backend = _backend(rank, world_size, send, recv)
    # the backend hands chunk j of its argument to the ring as chunk j + 1
    shifted = [chunks[(j + 1) % world_size] for j in range(world_size)]
    out = list(chunks)
    out[(rank + 1) % world_size] = backend.reduce_scatter(shifted, ReduceOp.SUM, None)
    return out
""",
    },
    "06.2": {
        "a_do_while_loop_sends_even_with_one_rank": """
def ring_all_gather(chunks, rank, world_size, send, recv):
    chunks = list(chunks)
    step = 0
    while True:
        send(chunks[(rank + 1 - step) % world_size])
        chunks[(rank - step) % world_size] = recv()
        step += 1
        if step >= world_size - 1:
            break
    return chunks
""",
        "delegates_through_the_local_backend": _LOCAL_BACKEND
        + """

def ring_all_gather(chunks, rank, world_size, send, recv):
    backend = _backend(rank, world_size, send, recv)
    by_rank = backend.all_gather(chunks[(rank + 1) % world_size], None)
    return [by_rank[(j - 1) % world_size] for j in range(world_size)]
""",
    },
    "06.3": {
        "one_rank_returns_the_flat_input": """
def ring_all_reduce(array, rank, world_size, send, recv):
    flat = array.reshape(-1)
    if world_size == 1:
        return flat
    chunks = np.array_split(flat, world_size)
    chunks = ring_reduce_scatter(chunks, rank, world_size, send, recv)
    chunks = ring_all_gather(chunks, rank, world_size, send, recv)
    return np.concatenate(chunks).reshape(array.shape)
""",
        "one_rank_returns_the_callers_array": """
def ring_all_reduce(array, rank, world_size, send, recv):
    if world_size == 1:
        return array
    chunks = np.array_split(array.reshape(-1), world_size)
    chunks = ring_reduce_scatter(chunks, rank, world_size, send, recv)
    chunks = ring_all_gather(chunks, rank, world_size, send, recv)
    return np.concatenate(chunks).reshape(array.shape)
""",
        "flattens_the_callers_array_in_place": """
def ring_all_reduce(array, rank, world_size, send, recv):
    shape = array.shape
    array.shape = (-1,)  # flatten
    chunks = np.array_split(array, world_size)
    chunks = ring_reduce_scatter(chunks, rank, world_size, send, recv)
    chunks = ring_all_gather(chunks, rank, world_size, send, recv)
    return np.concatenate(chunks).reshape(shape)
""",
        "flattens_column_major_reshapes_row_major": """
def ring_all_reduce(array, rank, world_size, send, recv):
    chunks = np.array_split(array.flatten(order="F"), world_size)
    chunks = ring_reduce_scatter(chunks, rank, world_size, send, recv)
    chunks = ring_all_gather(chunks, rank, world_size, send, recv)
    return np.concatenate(chunks).reshape(array.shape)
""",
        "delegates_through_the_local_backend": _LOCAL_BACKEND
        + """

def ring_all_reduce(array, rank, world_size, send, recv):
    return _backend(rank, world_size, send, recv).all_reduce(array, ReduceOp.SUM, None)
""",
    },
    "06.4": {
        "pads_once_in_a_module_global": """
padded = None


def shard(indices, num_replicas, rank, drop_last):
    global padded
    if padded is None:  # every rank draws the same epoch: pad it once
        padded = list(indices)
        n = len(padded)
        if drop_last:
            padded = padded[: n - n % num_replicas]
        else:
            while len(padded) % num_replicas:
                padded.append(padded[len(padded) - n])
    return padded[rank::num_replicas]
""",
        "drop_last_with_a_negative_slice": """
def shard(indices, num_replicas, rank, drop_last):
    indices = list(indices)
    n = len(indices)
    if drop_last:
        indices = indices[: -(n % num_replicas)]
    else:
        while len(indices) % num_replicas:
            indices.append(indices[len(indices) - n])
    return indices[rank::num_replicas]
""",
        "delegates_to_a_sampler_made_without_its_init": """
from minitorch.data.sampler import BatchSampler


def shard(indices, num_replicas, rank, drop_last):
    fake = object.__new__(dist.DistributedSampler)  # no __init__ call for the grader to see
    vars(fake).update(dataset=list(indices), num_replicas=num_replicas, rank=rank)
    vars(fake).update(shuffle=False, seed=0, drop_last=drop_last, epoch=0)
    positions = next(iter(BatchSampler(fake, len(indices) + 1, False)), [])
    return [indices[p] for p in positions]
""",
        "sorts_the_epoch_first": """
def shard(indices, num_replicas, rank, drop_last):
    indices = sorted(indices)
    n = len(indices)
    if drop_last:
        indices = indices[: n - n % num_replicas]
    else:
        while len(indices) % num_replicas:
            indices.append(indices[len(indices) - n])
    return indices[rank::num_replicas]
""",
    },
    "06.5": {
        "buckets_list_in_a_module_global": """
buckets = []


def assign_buckets(sizes, cap_bytes):
    current, filled = [], 0
    for i in reversed(range(len(sizes))):
        current.append(i)
        filled += sizes[i]
        if filled >= cap_bytes:
            buckets.append(current)
            current, filled = [], 0
    if current:
        buckets.append(current)
    return buckets
""",
        "no_parameters_gives_one_empty_bucket": """
def assign_buckets(sizes, cap_bytes):
    buckets, filled = [[]], 0
    for i in reversed(range(len(sizes))):
        buckets[-1].append(i)
        filled += sizes[i]
        if filled >= cap_bytes:
            buckets.append([])
            filled = 0
    if len(buckets) > 1 and not buckets[-1]:
        buckets.pop()
    return buckets
""",
        "stops_before_parameter_zero": """
def assign_buckets(sizes, cap_bytes):
    buckets, current, filled = [], [], 0
    for i in range(len(sizes) - 1, 0, -1):
        current.append(i)
        filled += sizes[i]
        if filled >= cap_bytes:
            buckets.append(current)
            current, filled = [], 0
    if current:
        buckets.append(current)
    return buckets
""",
    },
    "06.6": {
        "counter_in_a_module_global": """
ready = 0


class GradBucket:
    def __init__(self, params, launch):
        self.params = list(params)
        self.launch = launch
        self.offsets = []
        total = 0
        for p in self.params:
            self.offsets.append(total)
            total += p.numel()
        self.buffer = np.zeros(total, dtype=np.float32)
        for p in self.params:
            p.register_post_accumulate_grad_hook(self._grad_ready)

    def _grad_ready(self, param):
        global ready
        k = next(i for i, p in enumerate(self.params) if p is param)
        start = self.offsets[k]
        self.buffer[start : start + param.numel()] = param.grad.detach().numpy().reshape(-1)
        ready += 1
        if ready == len(self.params):
            ready = 0
            self.launch(self.buffer)
""",
        "offsets_list_on_the_class": """
class GradBucket:
    offsets = []

    def __init__(self, params, launch):
        self.params = list(params)
        self.launch = launch
        total = 0
        for p in self.params:
            self.offsets.append(total)
            total += p.numel()
        self.buffer = np.zeros(total, dtype=np.float32)
        self.ready = 0
        for p in self.params:
            p.register_post_accumulate_grad_hook(self._grad_ready)

    def _grad_ready(self, param):
        k = next(i for i, p in enumerate(self.params) if p is param)
        start = self.offsets[k]
        self.buffer[start : start + param.numel()] = param.grad.detach().numpy().reshape(-1)
        self.ready += 1
        if self.ready == len(self.params):
            self.ready = 0
            self.launch(self.buffer)
""",
        "waits_for_the_first_listed_parameter": """
class GradBucket:
    def __init__(self, params, launch):
        self.params = list(params)
        self.launch = launch
        self.offsets = []
        total = 0
        for p in self.params:
            self.offsets.append(total)
            total += p.numel()
        self.buffer = np.zeros(total, dtype=np.float32)
        for p in self.params:
            p.register_post_accumulate_grad_hook(self._grad_ready)

    def _grad_ready(self, param):
        k = next(i for i, p in enumerate(self.params) if p is param)
        start = self.offsets[k]
        self.buffer[start : start + param.numel()] = param.grad.detach().numpy().reshape(-1)
        if param is self.params[0]:  # the first parameter is the last to get its gradient
            self.launch(self.buffer)
""",
    },
    "06.7": {
        "all_reduces_a_temporary_quotient": """
def average_gradients(params, all_reduce, world_size):
    for p in params:
        if p.grad is not None:
            all_reduce(p.grad / world_size)
""",
        "world_size_from_the_process_group": """
def average_gradients(params, all_reduce, world_size):
    for p in params:
        if p.grad is None:
            continue
        all_reduce(p.grad)
        with minitorch.no_grad():
            p.grad.div_(dist.get_world_size())
""",
    },
    "06.8": {
        "sync_flag_turned_off_and_never_restored": """
def accumulate_and_step(model, optimizer, micro_batches, loss_fn):
    optimizer.zero_grad()
    k = len(micro_batches)
    total = 0.0
    model.require_backward_grad_sync = False
    for i, (x, y) in enumerate(micro_batches):
        loss = loss_fn(model(x), y) / k
        loss.backward()
        total += loss.item()
    optimizer.step()
    return total
""",
        "forward_through_the_inner_module": """
def accumulate_and_step(model, optimizer, micro_batches, loss_fn):
    optimizer.zero_grad()
    k = len(micro_batches)
    total = 0.0
    for i, (x, y) in enumerate(micro_batches):
        if i < k - 1:
            with model.no_sync():
                loss = loss_fn(model.module(x), y) / k
                loss.backward()
        else:
            loss = loss_fn(model(x), y) / k
            loss.backward()
        total += loss.item()
    optimizer.step()
    return total
""",
    },
}

ROUND_3_CORRECT = {
    "06.2": {
        "relays_what_it_received": """
def ring_all_gather(chunks, rank, world_size, send, recv):
    out = list(chunks)
    if world_size > 1:
        send(out[(rank + 1) % world_size])
    for step in range(world_size - 1):
        got = recv()
        out[(rank - step) % world_size] = got
        if step < world_size - 2:
            send(got)
    return out
""",
    },
    "06.3": {
        "ceil_sized_chunks": """
import math


def ring_all_reduce(array, rank, world_size, send, recv):
    flat = np.asarray(array).reshape(-1)
    size = math.ceil(flat.size / world_size)
    chunks = [flat[i * size : (i + 1) * size] for i in range(world_size)]
    chunks = ring_reduce_scatter(chunks, rank, world_size, send, recv)
    chunks = ring_all_gather(chunks, rank, world_size, send, recv)
    return np.concatenate(chunks).reshape(np.shape(array))
""",
        "column_major_both_ways": """
def ring_all_reduce(array, rank, world_size, send, recv):
    chunks = np.array_split(np.ravel(array, order="F"), world_size)
    chunks = ring_reduce_scatter(chunks, rank, world_size, send, recv)
    chunks = ring_all_gather(chunks, rank, world_size, send, recv)
    return np.reshape(np.concatenate(chunks), np.shape(array), order="F")
""",
    },
    "06.4": {
        "modulo_positions": """
def shard(indices, num_replicas, rank, drop_last):
    n = len(indices)
    if n == 0:
        return []
    per_rank = n // num_replicas if drop_last else (n + num_replicas - 1) // num_replicas
    return [indices[(rank + j * num_replicas) % n] for j in range(per_rank)]
""",
    },
    "06.5": {
        "imports_the_package_bucket_class": """
from minitorch.distributed.buckets import Bucket


def assign_buckets(sizes, cap_bytes):
    buckets, current, filled = [], [], 0
    for i in range(len(sizes) - 1, -1, -1):
        current, filled = current + [i], filled + sizes[i]
        if filled >= cap_bytes:
            buckets, current, filled = buckets + [current], [], 0
    return buckets + [current] if current else buckets
""",
    },
    "06.6": {
        "imports_the_package_bucket_class": """
from minitorch.distributed.buckets import Bucket


class GradBucket:
    def __init__(self, params, launch):
        self.params = list(params)
        self.launch = launch
        self.offsets = []
        total = 0
        for p in self.params:
            self.offsets.append(total)
            total += p.numel()
        self.buffer = np.zeros(total, dtype=np.float32)
        self.ready = 0
        for p in self.params:
            p.register_post_accumulate_grad_hook(self._grad_ready)

    def _grad_ready(self, param):
        k = next(i for i, p in enumerate(self.params) if p is param)
        start = self.offsets[k]
        self.buffer[start : start + param.numel()] = param.grad.detach().numpy().reshape(-1)
        self.ready += 1
        if self.ready == len(self.params):
            self.ready = 0
            self.launch(self.buffer)
""",
        "concatenates_at_the_last_arrival": """
class GradBucket:
    def __init__(self, params, launch):
        self.params = list(params)
        self.launch = launch
        self.buffer = np.zeros(sum(p.numel() for p in self.params), dtype=np.float32)
        self.arrived = 0
        for p in self.params:
            p.register_post_accumulate_grad_hook(self._grad_ready)

    def _grad_ready(self, param):
        self.arrived += 1
        if self.arrived < len(self.params):
            return
        self.arrived = 0
        grads = [p.grad.detach().numpy().reshape(-1) for p in self.params]
        self.buffer = np.concatenate(grads).astype(np.float32)
        self.launch(self.buffer)
""",
    },
    "06.7": {
        "imports_the_package_bucket_class": """
from minitorch.distributed.buckets import Bucket


def average_gradients(params, all_reduce, world_size):
    for p in params:
        if p.grad is None:
            continue
        all_reduce(p.grad)
        with minitorch.no_grad():
            p.grad.div_(world_size)
""",
        "in_place_true_division": """
def average_gradients(params, all_reduce, world_size):
    for p in params:
        if p.grad is not None:
            all_reduce(p.grad)
            with minitorch.no_grad():
                p.grad /= world_size
""",
    },
    "06.8": {
        "sets_the_sync_flag_by_hand": """
def accumulate_and_step(model, optimizer, micro_batches, loss_fn):
    optimizer.zero_grad()
    k = len(micro_batches)
    total = 0.0
    for i, (x, y) in enumerate(micro_batches):
        model.require_backward_grad_sync = i == k - 1
        try:
            loss = loss_fn(model(x), y) / k
            loss.backward()
        finally:
            model.require_backward_grad_sync = True
        total += loss.item()
    optimizer.step()
    return total
""",
        "zero_grad_on_the_model": """
def accumulate_and_step(model, optimizer, micro_batches, loss_fn):
    model.zero_grad()
    k = len(micro_batches)
    losses = []
    with model.no_sync():
        for x, y in micro_batches[:-1]:
            loss = loss_fn(model(x), y) / k
            loss.backward()
            losses.append(loss.item())
    x, y = micro_batches[-1]
    loss = loss_fn(model(x), y) / k
    loss.backward()
    losses.append(loss.item())
    optimizer.step()
    return float(sum(losses))
""",
    },
}

for _id, _sources in ROUND_3.items():
    assert not set(_sources) & set(MUTANTS[_id]), f"duplicate mutant name in {_id}"
    MUTANTS[_id] = {**MUTANTS[_id], **_sources}
for _id, _sources in ROUND_3_CORRECT.items():
    assert not set(_sources) & set(CORRECT.get(_id, {})), f"duplicate alternative in {_id}"
    CORRECT[_id] = {**CORRECT.get(_id, {}), **_sources}


# --- Honest answers with an unused import of the package's class (issue 21) ---------------
UNUSED_IMPORTS = {
    "06.5": {
        "imports_bucket_and_never_uses_it": """
from minitorch.distributed.buckets import Bucket  # noqa: F401 (a scratch import)


def assign_buckets(sizes, cap_bytes):
    buckets, filled = [[]], 0
    for i in range(len(sizes) - 1, -1, -1):
        if filled >= cap_bytes:
            buckets.append([])
            filled = 0
        buckets[-1].append(i)
        filled += sizes[i]
    return [b for b in buckets if b]
""",
    },
}

for _exercise_id, _bodies in UNUSED_IMPORTS.items():
    _clash = CORRECT.setdefault(_exercise_id, {}).keys() & _bodies.keys()
    assert not _clash, f"{_exercise_id}: names used twice: {_clash}"
    CORRECT[_exercise_id] = {**CORRECT[_exercise_id], **_bodies}


# --- Issue 35: buffers written while their all-reduce is in flight; the hook under another
# name; the bucket plan of the design task 06.9 ----------------------------------------------
_BUCKET_INIT = """
class GradBucket:
    def __init__(self, params, launch):
        self.params = list(params)
        self.launch = launch
        self.offsets = []
        total = 0
        for p in self.params:
            self.offsets.append(total)
            total += p.numel()
        self.buffer = np.zeros(total, dtype=np.float32)
        self.ready = 0
        for p in self.params:
            p.register_post_accumulate_grad_hook(self._grad_ready)
"""

_SLOT = """
    def _grad_ready(self, param):
        k = next(i for i, p in enumerate(self.params) if p is param)
        start = self.offsets[k]
        self.buffer[start : start + param.numel()] = param.grad.detach().numpy().reshape(-1)
        self.ready += 1
        if self.ready == len(self.params):
            self.ready = 0
"""

_SCRATCH = """
import numpy as _np

_SCRATCH = _np.zeros(4096, dtype=_np.float32)  # one scratch array for every bucket


class GradBucket:
    def __init__(self, params, launch):
        self.params = list(params)
        self.launch = launch
        self.offsets = []
        total = 0
        for p in self.params:
            self.offsets.append(total)
            total += p.numel()
        self.buffer = _SCRATCH[:total]
        self.ready = 0
        for p in self.params:
            p.register_post_accumulate_grad_hook(self._grad_ready)
"""

IN_FLIGHT = {
    "zeroes_the_buffer_right_after_its_launch": _BUCKET_INIT
    + _SLOT
    + """            self.launch(self.buffer)
            self.buffer[:] = 0  # ready for the next pass
""",
    "accumulates_then_fills_zeros_after_the_launch": _BUCKET_INIT
    + """
    def _grad_ready(self, param):
        k = next(i for i, p in enumerate(self.params) if p is param)
        start = self.offsets[k]
        self.buffer[start : start + param.numel()] += param.grad.detach().numpy().reshape(-1)
        self.ready += 1
        if self.ready == len(self.params):
            self.ready = 0
            self.launch(self.buffer)
            self.buffer.fill(0.0)
""",
    "launches_a_view_then_clears_it": _BUCKET_INIT
    + _SLOT
    + """            self.launch(self.buffer[:])
            self.buffer *= 0
""",
    "marks_the_sent_buffer_stale_with_nan": _BUCKET_INIT
    + _SLOT
    + """            self.launch(self.buffer)
            self.buffer[:] = np.nan  # a slot never refilled would show
""",
    "one_scratch_array_for_every_bucket": _SCRATCH
    + _SLOT
    + "            self.launch(self.buffer)\n",
    "hook_method_under_another_name": """
class GradBucket:
    def __init__(self, params, launch):
        self.params = list(params)
        self.launch = launch
        self.offsets = []
        total = 0
        for p in self.params:
            self.offsets.append(total)
            total += p.numel()
        self.buffer = np.zeros(total, dtype=np.float32)
        self.ready = 0
        for p in self.params:
            p.register_post_accumulate_grad_hook(self.on_grad)

    def on_grad(self, param):
        k = next(i for i, p in enumerate(self.params) if p is param)
        start = self.offsets[k]
        self.buffer[start : start + param.numel()] = param.grad.detach().numpy().reshape(-1)
        self.ready += 1
        if self.ready == len(self.params):
            self.ready = 0
            self.launch(self.buffer)

    def _grad_ready(self, param):
        pass
""",
    "hooks_in_a_closure_not_the_method": """
class GradBucket:
    def __init__(self, params, launch):
        self.params = list(params)
        self.launch = launch
        self.offsets = []
        total = 0
        for p in self.params:
            self.offsets.append(total)
            total += p.numel()
        self.buffer = np.zeros(total, dtype=np.float32)
        self.ready = 0

        def hook(param):
            k = next(i for i, p in enumerate(self.params) if p is param)
            start = self.offsets[k]
            self.buffer[start : start + param.numel()] = param.grad.detach().numpy().ravel()
            self.ready += 1
            if self.ready == len(self.params):
                self.ready = 0
                self.launch(self.buffer)

        for p in self.params:
            p.register_post_accumulate_grad_hook(hook)
""",
}

IN_FLIGHT_CORRECT = {
    "a_fresh_buffer_after_each_launch": _BUCKET_INIT
    + _SLOT
    + """            self.launch(self.buffer)
            self.buffer = np.zeros_like(self.buffer)  # the launched one is left alone
""",
    "launches_a_copy_and_clears_its_own": _BUCKET_INIT
    + _SLOT
    + """            self.launch(self.buffer.copy())
            self.buffer[:] = 0
""",
}

_PLAN_BY_CAP = """
def _by_cap(order, sizes, cap):
    buckets, current, filled = [], [], 0
    for i in order:
        current.append(i)
        filled += sizes[i]
        if filled >= cap:
            buckets.append(current)
            current, filled = [], 0
    return buckets + [current] if current else buckets
"""

_PLAN_DP = """
def _dp(sizes, ready, latency, bandwidth, order):
    n = len(order)
    free, cut = [0.0] + [float("inf")] * n, [0] * (n + 1)
    for j in range(1, n + 1):
        nbytes, last = 0, 0.0
        for i in range(j - 1, -1, -1):
            nbytes += sizes[order[i]]
            last = max(last, ready[order[i]])
            end = max(free[i], last) + latency + nbytes / bandwidth
            if end < free[j]:
                free[j], cut[j] = end, i
    plan, j = [], n
    while j > 0:
        plan.append(order[cut[j] : j])
        j = cut[j]
    return plan[::-1]
"""

PLAN = {
    "one_bucket_of_everything": """
def plan_buckets(sizes, ready, latency, bandwidth):
    return [sorted(range(len(sizes)), key=lambda i: ready[i])]
""",
    "a_bucket_per_gradient": """
def plan_buckets(sizes, ready, latency, bandwidth):
    return [[i] for i in sorted(range(len(sizes)), key=lambda i: ready[i])]
""",
    "ddp_default_cap_of_25_mib": _PLAN_BY_CAP
    + """
def plan_buckets(sizes, ready, latency, bandwidth):
    return _by_cap(list(reversed(range(len(sizes)))), sizes, 25 * 2**20)
""",
    "a_fixed_cap_of_1_mib_in_arrival_order": _PLAN_BY_CAP
    + """
def plan_buckets(sizes, ready, latency, bandwidth):
    return _by_cap(sorted(range(len(sizes)), key=lambda i: ready[i]), sizes, 2**20)
""",
    "a_quarter_of_the_model_per_bucket": _PLAN_BY_CAP
    + """
def plan_buckets(sizes, ready, latency, bandwidth):
    order = sorted(range(len(sizes)), key=lambda i: ready[i])
    return _by_cap(order, sizes, sum(sizes) / 4)
""",
    "best_cut_of_the_reversed_registration_order": _PLAN_DP
    + """
def plan_buckets(sizes, ready, latency, bandwidth):
    return _dp(sizes, ready, latency, bandwidth, list(reversed(range(len(sizes)))))
""",
    "best_plan_launched_from_the_first_layer": _PLAN_DP
    + """
def plan_buckets(sizes, ready, latency, bandwidth):
    order = sorted(range(len(sizes)), key=lambda i: ready[i])
    return _dp(sizes, ready, latency, bandwidth, order)[::-1]
""",
    "ignores_the_latency": _PLAN_DP
    + """
def plan_buckets(sizes, ready, latency, bandwidth):
    order = sorted(range(len(sizes)), key=lambda i: ready[i])
    return _dp(sizes, ready, 0.0, bandwidth, order)
""",
    "ignores_the_bandwidth": _PLAN_DP
    + """
def plan_buckets(sizes, ready, latency, bandwidth):
    order = sorted(range(len(sizes)), key=lambda i: ready[i])
    return _dp(sizes, ready, latency, float("inf"), order)
""",
    "the_best_single_cap": _PLAN_BY_CAP
    + """
def plan_buckets(sizes, ready, latency, bandwidth):
    order = sorted(range(len(sizes)), key=lambda i: ready[i])
    caps, total = set(sizes), 0
    for i in order:
        total += sizes[i]
        caps.add(total)
    plans = [_by_cap(order, sizes, cap) for cap in sorted(caps)]
    return min(plans, key=lambda p: exposed_time(p, sizes, ready, latency, bandwidth))
""",
    "cuts_where_the_gradients_pause": """
def plan_buckets(sizes, ready, latency, bandwidth):
    order = sorted(range(len(sizes)), key=lambda i: ready[i])
    plan, current = [], []
    for k, i in enumerate(order):
        current.append(i)
        if k + 1 == len(order) or ready[order[k + 1]] - ready[i] > latency:
            plan.append(current)
            current = []
    return plan
""",
    "sorts_the_callers_ready_in_place": _PLAN_DP
    + """
def plan_buckets(sizes, ready, latency, bandwidth):
    order = sorted(range(len(sizes)), key=lambda i: ready[i])
    ready.sort()
    return _dp(sizes, sorted(ready), latency, bandwidth, order)
""",
    "drops_the_last_run": _PLAN_DP
    + """
def plan_buckets(sizes, ready, latency, bandwidth):
    order = sorted(range(len(sizes)), key=lambda i: ready[i])
    return _dp(sizes, ready, latency, bandwidth, order)[:-1] or [[]]
""",
    "an_empty_bucket_first": _PLAN_DP
    + """
def plan_buckets(sizes, ready, latency, bandwidth):
    order = sorted(range(len(sizes)), key=lambda i: ready[i])
    return [[]] + _dp(sizes, ready, latency, bandwidth, order)
""",
}

PLAN_CORRECT = {
    "merges_neighbours_while_it_helps": """
def plan_buckets(sizes, ready, latency, bandwidth):
    plan = [[i] for i in sorted(range(len(sizes)), key=lambda i: ready[i])]
    cost = exposed_time(plan, sizes, ready, latency, bandwidth)
    better = True
    while better:
        better = False
        for k in range(len(plan) - 1):
            merged = plan[:k] + [plan[k] + plan[k + 1]] + plan[k + 2 :]
            c = exposed_time(merged, sizes, ready, latency, bandwidth)
            if c < cost:
                plan, cost, better = merged, c, True
                break
    return plan
""",
    "memoised_recursion_over_the_last_bucket": """
import functools


def plan_buckets(sizes, ready, latency, bandwidth):
    order = sorted(range(len(sizes)), key=lambda i: ready[i])

    @functools.lru_cache(maxsize=None)
    def best(j):  # (link free at, plan) for the first j gradients to arrive
        if j == 0:
            return 0.0, ()
        options = []
        for i in range(j):
            free, plan = best(i)
            run = tuple(order[i:j])
            end = max(free, ready[order[j - 1]]) + latency + sum(sizes[q] for q in run) / bandwidth
            options.append((end, plan + (run,)))
        return min(options, key=lambda o: o[0])

    return [list(run) for run in best(len(order))[1]]
""",
}

for _id, _sources in (("06.6", IN_FLIGHT), ("06.9", PLAN)):
    assert not set(_sources) & set(MUTANTS.get(_id, {})), f"duplicate mutant name in {_id}"
    MUTANTS[_id] = {**MUTANTS.get(_id, {}), **_sources}
for _id, _sources in (("06.6", IN_FLIGHT_CORRECT), ("06.9", PLAN_CORRECT)):
    assert not set(_sources) & set(CORRECT.get(_id, {})), f"duplicate alternative in {_id}"
    CORRECT[_id] = {**CORRECT.get(_id, {}), **_sources}
