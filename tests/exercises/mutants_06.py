"""Wrong answers to chapter 06's exercises, written the way learners write them.

Each entry is ``(exercise id, what is wrong, source)``; the source replaces the learner's
definition of that exercise (it runs in the solution notebook's namespace, so it may use
``np``, ``minitorch``, ``dist`` and the other exercises' correct functions). Every mutant
must lose points on its exercise (tests/unit/test_distributed_mutants.py checks it).
Delegating answers, which hand the work to minitorch's own version, are among them.
"""

MUTANTS = [
    # --- 06.1 ring reduce-scatter
    (
        "06.1",
        "replaces instead of adding",
        """
def ring_reduce_scatter(chunks, rank, world_size, send, recv):
    chunks = list(chunks)
    for step in range(world_size - 1):
        send(chunks[(rank - step) % world_size])
        chunks[(rank - step - 1) % world_size] = recv()
    return chunks
""",
    ),
    (
        "06.1",
        "rank + step instead of rank - step",
        """
def ring_reduce_scatter(chunks, rank, world_size, send, recv):
    chunks = list(chunks)
    for step in range(world_size - 1):
        send(chunks[(rank + step) % world_size])
        into = (rank + step - 1) % world_size
        chunks[into] = chunks[into] + recv()
    return chunks
""",
    ),
    (
        "06.1",
        "N steps instead of N - 1",
        """
def ring_reduce_scatter(chunks, rank, world_size, send, recv):
    chunks = list(chunks)
    for step in range(world_size):
        send(chunks[(rank - step) % world_size])
        into = (rank - step - 1) % world_size
        chunks[into] = chunks[into] + recv()
    return chunks
""",
    ),
    (
        "06.1",
        "adds into the chunk it sent",
        """
def ring_reduce_scatter(chunks, rank, world_size, send, recv):
    chunks = list(chunks)
    for step in range(world_size - 1):
        send(chunks[(rank - step) % world_size])
        into = (rank - step) % world_size
        chunks[into] = chunks[into] + recv()
    return chunks
""",
    ),
    (
        "06.1",
        "sends every chunk, every step",
        """
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
    ),
    (
        "06.1",
        "delegates to minitorch",
        """
def ring_reduce_scatter(chunks, rank, world_size, send, recv):
    return dist.ring_reduce_scatter(chunks, rank, world_size, send, recv)
""",
    ),
    # --- 06.2 ring all-gather
    (
        "06.2",
        "stores into the chunk it sent",
        """
def ring_all_gather(chunks, rank, world_size, send, recv):
    chunks = list(chunks)
    for step in range(world_size - 1):
        send(chunks[(rank + 1 - step) % world_size])
        chunks[(rank + 1 - step) % world_size] = recv()
    return chunks
""",
    ),
    (
        "06.2",
        "sends chunk rank - step",
        """
def ring_all_gather(chunks, rank, world_size, send, recv):
    chunks = list(chunks)
    for step in range(world_size - 1):
        send(chunks[(rank - step) % world_size])
        chunks[(rank - step - 1) % world_size] = recv()
    return chunks
""",
    ),
    (
        "06.2",
        "adds instead of storing",
        """
def ring_all_gather(chunks, rank, world_size, send, recv):
    chunks = list(chunks)
    for step in range(world_size - 1):
        send(chunks[(rank + 1 - step) % world_size])
        into = (rank - step) % world_size
        chunks[into] = chunks[into] + recv()
    return chunks
""",
    ),
    (
        "06.2",
        "delegates to minitorch",
        """
def ring_all_gather(chunks, rank, world_size, send, recv):
    from minitorch.distributed.ring import ring_all_gather as theirs
    return theirs(chunks, rank, world_size, send, recv)
""",
    ),
    # --- 06.3 ring all-reduce
    (
        "06.3",
        "forgets the all-gather",
        """
def ring_all_reduce(array, rank, world_size, send, recv):
    chunks = np.array_split(array.reshape(-1), world_size)
    chunks = ring_reduce_scatter(chunks, rank, world_size, send, recv)
    return np.concatenate(chunks).reshape(array.shape)
""",
    ),
    (
        "06.3",
        "does not restore the shape",
        """
def ring_all_reduce(array, rank, world_size, send, recv):
    chunks = np.array_split(array.reshape(-1), world_size)
    chunks = ring_reduce_scatter(chunks, rank, world_size, send, recv)
    chunks = ring_all_gather(chunks, rank, world_size, send, recv)
    return np.concatenate(chunks)
""",
    ),
    (
        "06.3",
        "np.split, which needs sizes that divide",
        """
def ring_all_reduce(array, rank, world_size, send, recv):
    chunks = np.split(array.reshape(-1), world_size)
    chunks = ring_reduce_scatter(chunks, rank, world_size, send, recv)
    chunks = ring_all_gather(chunks, rank, world_size, send, recv)
    return np.concatenate(chunks).reshape(array.shape)
""",
    ),
    (
        "06.3",
        "a naive relay of whole arrays",
        """
def ring_all_reduce(array, rank, world_size, send, recv):
    total, passing = array.copy(), array
    for _ in range(world_size - 1):
        send(passing)
        passing = recv()
        total = total + passing
    return total
""",
    ),
    (
        "06.3",
        "delegates to minitorch",
        """
def ring_all_reduce(array, rank, world_size, send, recv):
    return minitorch.distributed.ring_all_reduce(array, rank, world_size, send, recv)
""",
    ),
    # --- 06.4 the sampler's share
    (
        "06.4",
        "contiguous blocks",
        """
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
    ),
    (
        "06.4",
        "no padding",
        """
def shard(indices, num_replicas, rank, drop_last):
    indices = list(indices)
    if drop_last:
        indices = indices[: len(indices) - len(indices) % num_replicas]
    return indices[rank::num_replicas]
""",
    ),
    (
        "06.4",
        "pads with the last index",
        """
def shard(indices, num_replicas, rank, drop_last):
    indices = list(indices)
    if drop_last:
        indices = indices[: len(indices) - len(indices) % num_replicas]
    while len(indices) % num_replicas:
        indices.append(indices[-1])
    return indices[rank::num_replicas]
""",
    ),
    (
        "06.4",
        "ignores drop_last",
        """
def shard(indices, num_replicas, rank, drop_last):
    indices = list(indices)
    n = len(indices)
    while len(indices) % num_replicas:
        indices.append(indices[len(indices) - n])
    return indices[rank::num_replicas]
""",
    ),
    (
        "06.4",
        "pads only once from the front",
        """
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
    ),
    (
        "06.4",
        "delegates to DistributedSampler",
        """
def shard(indices, num_replicas, rank, drop_last):
    sampler = dist.DistributedSampler(
        indices, num_replicas, rank, shuffle=False, drop_last=drop_last
    )
    return [indices[i] for i in sampler]
""",
    ),
    (
        "06.4",
        "delegates to shard_indices",
        """
from minitorch.distributed.sampler import shard_indices as shard
""",
    ),
    # --- 06.5 bucket assignment
    (
        "06.5",
        "from the first parameter",
        """
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
    ),
    (
        "06.5",
        "closes before adding the one that crosses",
        """
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
    ),
    (
        "06.5",
        "> instead of >=",
        """
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
    ),
    (
        "06.5",
        "an empty bucket at the end",
        """
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
    ),
    (
        "06.5",
        "delegates to minitorch",
        """
def assign_buckets(sizes, cap_bytes):
    return dist.assign_buckets(sizes, cap_bytes)
""",
    ),
    # --- 06.6 the hook-filled bucket
    (
        "06.6",
        "launches at every hook",
        """
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
    ),
    (
        "06.6",
        "never resets its count",
        """
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
    ),
    (
        "06.6",
        "a tensor hook: the incoming gradient",
        """
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
    ),
    (
        "06.6",
        "packs the gradients in arrival order",
        """
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
    ),
    (
        "06.6",
        "launches at the end of backward",
        """
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
    ),
    # --- 06.7 averaging
    (
        "06.7",
        "sums without dividing",
        """
def average_gradients(params, all_reduce, world_size):
    for p in params:
        if p.grad is not None:
            all_reduce(p.grad)
""",
    ),
    (
        "06.7",
        "divides twice",
        """
def average_gradients(params, all_reduce, world_size):
    for p in params:
        if p.grad is not None:
            with minitorch.no_grad():
                p.grad.div_(world_size)
            all_reduce(p.grad)
            with minitorch.no_grad():
                p.grad.div_(world_size)
""",
    ),
    (
        "06.7",
        "does not skip missing gradients",
        """
def average_gradients(params, all_reduce, world_size):
    for p in params:
        all_reduce(p.grad)
        with minitorch.no_grad():
            p.grad.div_(world_size)
""",
    ),
    (
        "06.7",
        "averages the parameters",
        """
def average_gradients(params, all_reduce, world_size):
    for p in params:
        if p.grad is not None:
            with minitorch.no_grad():
                all_reduce(p.data)
                p.data.div_(world_size)
""",
    ),
    (
        "06.7",
        "divides by the number of parameters",
        """
def average_gradients(params, all_reduce, world_size):
    params = list(params)
    for p in params:
        if p.grad is not None:
            all_reduce(p.grad)
            with minitorch.no_grad():
                p.grad.div_(len(params))
""",
    ),
    # --- 06.8 no_sync accumulation
    (
        "06.8",
        "no no_sync",
        """
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
    ),
    (
        "06.8",
        "no_sync around every micro-batch",
        """
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
    ),
    (
        "06.8",
        "losses not scaled",
        """
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
    ),
    (
        "06.8",
        "zero_grad for every micro-batch",
        """
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
    ),
    (
        "06.8",
        "a step per micro-batch",
        """
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
    ),
]
