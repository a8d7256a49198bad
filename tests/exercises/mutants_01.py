"""Wrong answers to chapter 01's exercises, written the way learners write them.

``MUTANTS[exercise_id] = {name: source}``: each source redefines the exercise's function
in a copy of the solution notebook's namespace (see ``mutants.py``); names starting with
``delegates`` hand the piece to a ready-made implementation and must get no points.
``CORRECT`` holds legitimate alternatives, which must keep full marks.
"""

STRIDES = {
    "forward_order": """
        def contiguous_strides(shape):
            strides, step = [], 1
            for size in shape:
                strides.append(step)
                step *= size
            return tuple(strides)
    """,
    "includes_own_size": """
        def contiguous_strides(shape):
            strides, step = [], 1
            for size in reversed(shape):
                step *= size
                strides.append(step)
            return tuple(reversed(strides))
    """,
    "size_zero_multiplies": """
        def contiguous_strides(shape):
            strides, step = [], 1
            for size in reversed(shape):
                strides.append(step)
                step *= size
            return tuple(reversed(strides))
    """,
    "returns_a_list": """
        def contiguous_strides(shape):
            strides, step = [], 1
            for size in reversed(shape):
                strides.append(step)
                step *= max(size, 1)
            return strides[::-1]
    """,
    "math_prod_of_the_rest": """
        import math
        def contiguous_strides(shape):
            return tuple(math.prod(shape[i + 1 :]) for i in range(len(shape)))
    """,
    "np_prod_floats": """
        import numpy as np
        def contiguous_strides(shape):
            return tuple(np.prod([max(s, 1) for s in shape[i + 1 :]]) for i in range(len(shape)))
    """,
    "cumprod_off_by_one": """
        import numpy as np
        def contiguous_strides(shape):
            if not shape:
                return ()
            return tuple(int(s) for s in np.cumprod([max(s, 1) for s in shape[::-1]])[::-1])
    """,
    "scalar_gets_a_stride": """
        def contiguous_strides(shape):
            strides = [1]
            for size in reversed(shape[1:]):
                strides.insert(0, strides[0] * max(size, 1))
            return tuple(strides)
    """,
    "size_one_gets_stride_zero": """
        def contiguous_strides(shape):
            strides, step = [], 1
            for size in reversed(shape):
                strides.append(0 if size == 1 else step)
                step *= max(size, 1)
            return tuple(reversed(strides))
    """,
    "size_zero_gets_stride_zero": """
        def contiguous_strides(shape):
            strides, step = [], 1
            for size in reversed(shape):
                strides.append(0 if size == 0 else step)
                step *= max(size, 1)
            return tuple(reversed(strides))
    """,
    "float_division": """
        def contiguous_strides(shape):
            total = 1
            for size in shape:
                total *= max(size, 1)
            strides = []
            for size in shape:
                total = total / max(size, 1)
                strides.append(total)
            return tuple(strides)
    """,
    "delegates_to_minitorch": """
        import minitorch
        def contiguous_strides(shape):
            return minitorch.shape.contiguous_strides(shape)
    """,
    "delegates_by_alias": """
        from minitorch.shape import contiguous_strides
    """,
    "delegates_through_a_captured_original": """
        import minitorch.shape
        _original = minitorch.shape.contiguous_strides
        def contiguous_strides(shape):
            return tuple(_original(shape))
    """,
    "delegates_after_reload": """
        import importlib
        import minitorch.shape
        def contiguous_strides(shape):
            fresh = importlib.reload(minitorch.shape)
            return fresh.contiguous_strides(shape)
    """,
    "delegates_to_a_tensor": """
        import minitorch
        def contiguous_strides(shape):
            return tuple(minitorch.empty(*shape).stride())
    """,
    "delegates_to_numpy_strides": """
        import numpy as np
        def contiguous_strides(shape):
            a = np.zeros([max(s, 1) for s in shape], dtype=np.int8)
            return tuple(a.strides)
    """,
    "delegates_to_torch": """
        def contiguous_strides(shape):
            import torch
            return tuple(torch.empty(shape).stride())
    """,
}

POSITION = {
    "ignores_offset": """
        def index_to_position(index, strides, offset=0):
            return sum(i * s for i, s in zip(index, strides))
    """,
    "no_default_offset": """
        def index_to_position(index, strides, offset):
            return offset + sum(i * s for i, s in zip(index, strides))
    """,
    "reversed_strides": """
        def index_to_position(index, strides, offset=0):
            return offset + sum(i * s for i, s in zip(index, reversed(strides)))
    """,
    "multiplies_everything": """
        def index_to_position(index, strides, offset=0):
            position = 1
            for i, s in zip(index, strides):
                position *= i * s
            return offset + position
    """,
    "strides_indexed_by_the_index": """
        def index_to_position(index, strides, offset=0):
            position = offset
            for i in index:
                position += i * strides[i]
            return position
    """,
    "enumerate_mixed_up": """
        def index_to_position(index, strides, offset=0):
            position = offset
            for d, i in enumerate(index):
                position += d * strides[d]
            return position
    """,
    "sum_of_index": """
        def index_to_position(index, strides, offset=0):
            return offset + sum(index)
    """,
    "drops_the_last_dim": """
        def index_to_position(index, strides, offset=0):
            return offset + sum(i * s for i, s in zip(index[:-1], strides[:-1]))
    """,
    "offset_scaled": """
        def index_to_position(index, strides, offset=0):
            scale = strides[0] if strides else 1
            return offset * scale + sum(i * s for i, s in zip(index, strides))
    """,
    "float_position": """
        def index_to_position(index, strides, offset=0):
            return float(offset + sum(i * s for i, s in zip(index, strides)))
    """,
    "only_the_first_dim": """
        def index_to_position(index, strides, offset=0):
            return offset + (index[0] * strides[0] if index else 0)
    """,
    "last_stride_assumed_one": """
        def index_to_position(index, strides, offset=0):
            position = offset
            for i, s in zip(index[:-1], strides[:-1]):
                position += i * s
            return position + (index[-1] if index else 0)
    """,
    "delegates_to_minitorch": """
        import minitorch
        def index_to_position(index, strides, offset=0):
            return minitorch.shape.index_to_position(index, strides, offset)
    """,
    "delegates_to_ravel_multi_index": """
        import numpy as np
        def index_to_position(index, strides, offset=0):
            if not index:
                return offset
            dims = [max(index) + 1] * len(index)
            flat = int(np.ravel_multi_index(index, dims))
            digits = []
            for d in reversed(dims):
                digits.append(flat % d)
                flat //= d
            return offset + sum(i * s for i, s in zip(reversed(digits), strides))
    """,
}

UNRAVEL = {
    "peels_the_first_dim": """
        def unravel_index(position, shape):
            index = []
            for size in shape:
                index.append(position % size)
                position //= size
            return tuple(index)
    """,
    "true_division": """
        def unravel_index(position, shape):
            index = []
            for size in reversed(shape):
                index.append(position % size)
                position = (position - position % size) / size
            return tuple(reversed(index))
    """,
    "returns_a_list": """
        def unravel_index(position, shape):
            index = []
            for size in reversed(shape):
                index.append(position % size)
                position //= size
            return index[::-1]
    """,
    "stops_at_zero": """
        def unravel_index(position, shape):
            index = []
            sizes = list(reversed(shape))
            while position > 0:
                size = sizes[len(index)]
                index.append(position % size)
                position //= size
            return tuple(reversed(index))
    """,
    "skips_size_one_dims": """
        def unravel_index(position, shape):
            index = []
            for size in reversed(shape):
                if size == 1:
                    continue
                index.append(position % size)
                position //= size
            return tuple(reversed(index))
    """,
    "div_and_mod_swapped": """
        def unravel_index(position, shape):
            index = []
            for size in reversed(shape):
                index.append(position // size)
                position %= size
            return tuple(reversed(index))
    """,
    "strides_include_own_size": """
        def unravel_index(position, shape):
            strides, step = [], 1
            for size in reversed(shape):
                step *= size
                strides.append(step)
            strides = strides[::-1]
            return tuple(position // s % n for s, n in zip(strides, shape))
    """,
    "two_dims_only": """
        def unravel_index(position, shape):
            if len(shape) == 1:
                return (position,)
            if not shape:
                return ()
            return (position // shape[-1], position % shape[-1])
    """,
    "last_quotient_dropped": """
        def unravel_index(position, shape):
            index = []
            for size in reversed(shape[1:]):
                index.append(position % size)
                position //= size
            return tuple(reversed(index))
    """,
    "wrong_size_per_dim": """
        def unravel_index(position, shape):
            index = []
            for d in range(len(shape) - 1, -1, -1):
                size = shape[d - 1] if d > 0 else shape[0]
                index.append(position % size)
                position //= size
            return tuple(reversed(index))
    """,
    "trailing_size_one_dropped": """
        def unravel_index(position, shape):
            trimmed = list(shape)
            while len(trimmed) > 1 and trimmed[-1] == 1:
                trimmed.pop()
            index = []
            for size in reversed(trimmed):
                index.append(position % size)
                position //= size
            return tuple(reversed(index))
    """,
    "scalar_gets_an_index": """
        def unravel_index(position, shape):
            if not shape:
                return (0,)
            index = []
            for size in reversed(shape):
                index.append(position % size)
                position //= size
            return tuple(reversed(index))
    """,
    "delegates_to_numpy": """
        import numpy as np
        def unravel_index(position, shape):
            return tuple(int(i) for i in np.unravel_index(position, shape))
    """,
    "delegates_to_minitorch": """
        from minitorch import shape as _shape
        def unravel_index(position, shape):
            return _shape.unravel_index(position, shape)
    """,
    "delegates_to_ndindex": """
        import numpy as np
        def unravel_index(position, shape):
            return tuple(list(np.ndindex(*shape))[position])
    """,
    "delegates_to_tensor_strides": """
        import minitorch
        def unravel_index(position, shape):
            strides = minitorch.empty(*shape).stride()
            return tuple(position // s % n for s, n in zip(strides, shape))
    """,
}

BROADCAST = {
    "max_of_the_sizes": """
        def broadcast_shapes(*shapes):
            ndim = max((len(s) for s in shapes), default=0)
            padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
            out = []
            for sizes in zip(*padded):
                big = max(sizes)
                if any(s not in (1, big) for s in sizes):
                    raise ValueError(f"shapes {shapes} cannot be broadcast")
                out.append(big)
            return tuple(out)
    """,
    "padded_on_the_right": """
        def broadcast_shapes(*shapes):
            ndim = max((len(s) for s in shapes), default=0)
            padded = [tuple(s) + (1,) * (ndim - len(s)) for s in shapes]
            out = []
            for sizes in zip(*padded):
                real = {s for s in sizes if s != 1}
                if len(real) > 1:
                    raise ValueError(f"shapes {shapes} cannot be broadcast")
                out.append(real.pop() if real else 1)
            return tuple(out)
    """,
    "two_shapes_only": """
        def broadcast_shapes(a, b):
            ndim = max(len(a), len(b))
            a, b = (1,) * (ndim - len(a)) + tuple(a), (1,) * (ndim - len(b)) + tuple(b)
            out = []
            for x, y in zip(a, b):
                if x != y and x != 1 and y != 1:
                    raise ValueError(f"shapes {a} and {b} cannot be broadcast")
                out.append(y if x == 1 else x)
            return tuple(out)
    """,
    "never_raises": """
        def broadcast_shapes(*shapes):
            ndim = max((len(s) for s in shapes), default=0)
            padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
            return tuple(max(sizes) for sizes in zip(*padded))
    """,
    "raises_runtime_error": """
        def broadcast_shapes(*shapes):
            ndim = max((len(s) for s in shapes), default=0)
            padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
            out = []
            for sizes in zip(*padded):
                real = {s for s in sizes if s != 1}
                if len(real) > 1:
                    raise RuntimeError(f"shapes {shapes} cannot be broadcast")
                out.append(real.pop() if real else 1)
            return tuple(out)
    """,
    "message_without_the_shapes": """
        def broadcast_shapes(*shapes):
            ndim = max((len(s) for s in shapes), default=0)
            padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
            out = []
            for sizes in zip(*padded):
                real = {s for s in sizes if s != 1}
                if len(real) > 1:
                    raise ValueError("incompatible shapes")
                out.append(real.pop() if real else 1)
            return tuple(out)
    """,
    "returns_a_list": """
        def broadcast_shapes(*shapes):
            ndim = max((len(s) for s in shapes), default=0)
            padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
            out = []
            for sizes in zip(*padded):
                real = {s for s in sizes if s != 1}
                if len(real) > 1:
                    raise ValueError(f"shapes {shapes} cannot be broadcast")
                out.append(real.pop() if real else 1)
            return out
    """,
    "no_shapes_crashes": """
        def broadcast_shapes(*shapes):
            ndim = max(len(s) for s in shapes)
            padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
            out = []
            for sizes in zip(*padded):
                real = {s for s in sizes if s != 1}
                if len(real) > 1:
                    raise ValueError(f"shapes {shapes} cannot be broadcast")
                out.append(real.pop() if real else 1)
            return tuple(out)
    """,
    "zero_counts_as_one": """
        def broadcast_shapes(*shapes):
            ndim = max((len(s) for s in shapes), default=0)
            padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
            out = []
            for sizes in zip(*padded):
                real = {s for s in sizes if s not in (0, 1)}
                if len(real) > 1:
                    raise ValueError(f"shapes {shapes} cannot be broadcast")
                out.append(real.pop() if real else max(sizes))
            return tuple(out)
    """,
    "neighbours_only_compared": """
        def broadcast_shapes(*shapes):
            def two(a, b):
                ndim = max(len(a), len(b))
                a, b = (1,) * (ndim - len(a)) + tuple(a), (1,) * (ndim - len(b)) + tuple(b)
                for x, y in zip(a, b):
                    if x != y and x != 1 and y != 1:
                        raise ValueError(f"shapes {a} and {b} cannot be broadcast")
                return tuple(y if x == 1 else x for x, y in zip(a, b))
            for a, b in zip(shapes, shapes[1:]):
                two(a, b)
            ndim = max((len(s) for s in shapes), default=0)
            padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
            return tuple(max(sizes) for sizes in zip(*padded))
    """,
    "zip_without_padding": """
        def broadcast_shapes(*shapes):
            out = []
            for sizes in zip(*[reversed(s) for s in shapes]):
                real = {s for s in sizes if s != 1}
                if len(real) > 1:
                    raise ValueError(f"shapes {shapes} cannot be broadcast")
                out.append(real.pop() if real else 1)
            return tuple(reversed(out))
    """,
    "names_two_shapes_only": """
        def broadcast_shapes(*shapes):
            ndim = max((len(s) for s in shapes), default=0)
            padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
            out = []
            for sizes in zip(*padded):
                real = {s for s in sizes if s != 1}
                if len(real) > 1:
                    raise ValueError(f"shapes {shapes[0]} and {shapes[1]} cannot be broadcast")
                out.append(real.pop() if real else 1)
            return tuple(out)
    """,
    "delegates_to_numpy": """
        import numpy as np
        def broadcast_shapes(*shapes):
            return tuple(np.broadcast_shapes(*shapes))
    """,
    "delegates_to_minitorch": """
        import minitorch
        def broadcast_shapes(*shapes):
            try:
                return minitorch.broadcast_shapes(*shapes)
            except RuntimeError as err:
                raise ValueError(str(err)) from None
    """,
    "delegates_to_numpy_arrays": """
        import numpy as np
        def broadcast_shapes(*shapes):
            total = np.zeros(())
            for s in shapes:
                total = total + np.zeros(s)
            return tuple(total.shape)
    """,
    "delegates_to_tensors": """
        import minitorch
        def broadcast_shapes(*shapes):
            total = minitorch.zeros(())
            for s in shapes:
                total = total + minitorch.zeros(*s)
            return tuple(total.shape)
    """,
}

BROADCAST_INDEX = {
    "aligned_on_the_left": """
        def broadcast_index(out_index, out_shape, in_shape):
            return tuple(0 if n == 1 else i for i, n in zip(out_index, in_shape))
    """,
    "size_one_not_zeroed": """
        def broadcast_index(out_index, out_shape, in_shape):
            skip = len(out_shape) - len(in_shape)
            return tuple(out_index[skip:])
    """,
    "negative_slice_of_a_scalar": """
        def broadcast_index(out_index, out_shape, in_shape):
            result = list(out_index[-len(in_shape):])
            for k, n in enumerate(in_shape):
                if n == 1:
                    result[k] = 0
            return tuple(result)
    """,
    "tests_the_output_shape": """
        def broadcast_index(out_index, out_shape, in_shape):
            skip = len(out_shape) - len(in_shape)
            return tuple(
                0 if out_shape[skip + k] == 1 else out_index[skip + k]
                for k in range(len(in_shape))
            )
    """,
    "keeps_leading_dims": """
        def broadcast_index(out_index, out_shape, in_shape):
            skip = len(out_shape) - len(in_shape)
            shape = (1,) * skip + tuple(in_shape)
            return tuple(0 if n == 1 else i for i, n in zip(out_index, shape))
    """,
    "skip_off_by_one": """
        def broadcast_index(out_index, out_shape, in_shape):
            skip = max(len(out_shape) - len(in_shape) - 1, 0)
            return tuple(0 if n == 1 else i for i, n in zip(out_index[skip:], in_shape))
    """,
    "reversed_result": """
        def broadcast_index(out_index, out_shape, in_shape):
            out = []
            for i, n in zip(reversed(out_index), reversed(in_shape)):
                out.append(0 if n == 1 else i)
            return tuple(out)
    """,
    "clamped_off_by_one": """
        def broadcast_index(out_index, out_shape, in_shape):
            skip = len(out_shape) - len(in_shape)
            return tuple(min(i, n) for i, n in zip(out_index[skip:], in_shape))
    """,
    "size_one_reads_the_last_element": """
        def broadcast_index(out_index, out_shape, in_shape):
            skip = len(out_shape) - len(in_shape)
            return tuple(
                out_shape[skip + k] - 1 if n == 1 else out_index[skip + k]
                for k, n in enumerate(in_shape)
            )
    """,
    "delegates_to_minitorch": """
        from minitorch.shape import broadcast_index
    """,
    "delegates_to_numpy": """
        import numpy as np
        def broadcast_index(out_index, out_shape, in_shape):
            n = int(np.prod(in_shape))
            positions = np.broadcast_to(np.arange(n).reshape(in_shape), out_shape)
            flat = int(positions[tuple(out_index)])
            index = []
            for size in reversed(in_shape):
                index.append(flat % size)
                flat //= size
            return tuple(reversed(index))
    """,
}

PERMUTE = {
    "inverse_permutation": """
        def permute(t, dims):
            shape, strides = [0] * len(dims), [0] * len(dims)
            for i, d in enumerate(dims):
                shape[d], strides[d] = t.shape[i], t.stride()[i]
            return t.as_strided(tuple(shape), tuple(strides), t.storage_offset())
    """,
    "strides_not_shuffled": """
        def permute(t, dims):
            shape = tuple(t.shape[d] for d in dims)
            return t.as_strided(shape, t.stride(), t.storage_offset())
    """,
    "offset_dropped": """
        def permute(t, dims):
            shape = tuple(t.shape[d] for d in dims)
            strides = tuple(t.stride()[d] for d in dims)
            return t.as_strided(shape, strides, 0)
    """,
    "contiguous_strides_of_the_new_shape": """
        def permute(t, dims):
            shape = tuple(t.shape[d] for d in dims)
            strides, step = [], 1
            for size in reversed(shape):
                strides.append(step)
                step *= size
            return t.as_strided(shape, tuple(reversed(strides)), t.storage_offset())
    """,
    "a_contiguous_copy": """
        def permute(t, dims):
            shape = tuple(t.shape[d] for d in dims)
            strides = tuple(t.stride()[d] for d in dims)
            return t.as_strided(shape, strides, t.storage_offset()).contiguous()
    """,
    "rejects_negative_dims": """
        def permute(t, dims):
            if sorted(dims) != list(range(t.ndim)):
                raise ValueError(f"dims {dims} are not a permutation of range({t.ndim})")
            shape = tuple(t.shape[d] for d in dims)
            strides = tuple(t.stride()[d] for d in dims)
            return t.as_strided(shape, strides, t.storage_offset())
    """,
    "reshaped_not_permuted": """
        def permute(t, dims):
            return t.reshape(tuple(t.shape[d] for d in dims))
    """,
    "size_and_stride_swapped": """
        def permute(t, dims):
            shape = tuple(t.shape[d] for d in dims)
            strides = tuple(t.stride()[d] for d in dims)
            return t.as_strided(strides, shape, t.storage_offset())
    """,
    "delegates_to_tensor_permute": """
        def permute(t, dims):
            return t.permute(*dims)
    """,
    "delegates_to_transpose": """
        def permute(t, dims):
            out = t
            order = list(range(t.ndim))
            for i, d in enumerate(d % t.ndim for d in dims):
                j = order.index(d)
                if i != j:
                    out = out.transpose(i, j)
                    order[i], order[j] = order[j], order[i]
            return out
    """,
    "delegates_to_numpy_transpose": """
        import minitorch
        import numpy as np
        def permute(t, dims):
            return minitorch.tensor(np.transpose(t.numpy(), dims))
    """,
    "delegates_to_numpy_strides": """
        def permute(t, dims):
            a = t.numpy().transpose(dims)
            strides = tuple(s // a.itemsize for s in a.strides)
            return t.as_strided(a.shape, strides, t.storage_offset())
    """,
    "delegates_to_the_view_op": """
        from minitorch.ops.views import Permute
        def permute(t, dims):
            return Permute.apply(t, tuple(dims))
    """,
}

SUM = {
    "always_float32": """
        import minitorch
        def sum_dim(t, dim):
            if dim < 0:
                dim += t.ndim
            storage = t.untyped_storage().tolist()
            out_shape = t.shape[:dim] + t.shape[dim + 1 :]
            n_out = 1
            for size in out_shape:
                n_out *= size
            values = []
            for p in range(n_out):
                out_index = unravel_index(p, out_shape)
                total = 0.0
                for k in range(t.shape[dim]):
                    index = out_index[:dim] + (k,) + out_index[dim:]
                    total += storage[index_to_position(index, t.stride(), t.storage_offset())]
                values.append(total)
            return minitorch.tensor(values).view(out_shape)
    """,
    "dtype_from_the_values": """
        import minitorch
        def sum_dim(t, dim):
            if dim < 0:
                dim += t.ndim
            storage = t.untyped_storage().tolist()
            out_shape = t.shape[:dim] + t.shape[dim + 1 :]
            n_out = 1
            for size in out_shape:
                n_out *= size
            values = []
            for p in range(n_out):
                out_index = unravel_index(p, out_shape)
                total = 0
                for k in range(t.shape[dim]):
                    index = out_index[:dim] + (k,) + out_index[dim:]
                    total += storage[index_to_position(index, t.stride(), t.storage_offset())]
                values.append(total)
            return minitorch.tensor(values).view(out_shape)
    """,
    "negative_dim_unsupported": """
        import minitorch
        def sum_dim(t, dim):
            storage = t.untyped_storage().tolist()
            out_shape = t.shape[:dim] + t.shape[dim + 1 :]
            n_out = 1
            for size in out_shape:
                n_out *= size
            values = []
            for p in range(n_out):
                out_index = unravel_index(p, out_shape)
                total = 0
                for k in range(t.shape[dim]):
                    index = out_index[:dim] + (k,) + out_index[dim:]
                    total += storage[index_to_position(index, t.stride(), t.storage_offset())]
                values.append(total)
            return minitorch.tensor(values, dtype=t.dtype).view(out_shape)
    """,
    "offset_ignored": """
        import minitorch
        def sum_dim(t, dim):
            dim = dim % t.ndim
            storage = t.untyped_storage().tolist()
            out_shape = t.shape[:dim] + t.shape[dim + 1 :]
            n_out = 1
            for size in out_shape:
                n_out *= size
            values = []
            for p in range(n_out):
                out_index = unravel_index(p, out_shape)
                total = 0
                for k in range(t.shape[dim]):
                    index = out_index[:dim] + (k,) + out_index[dim:]
                    total += storage[index_to_position(index, t.stride())]
                values.append(total)
            return minitorch.tensor(values, dtype=t.dtype).view(out_shape)
    """,
    "contiguous_layout_assumed": """
        import minitorch
        def sum_dim(t, dim):
            dim = dim % t.ndim
            storage = t.untyped_storage().tolist()
            out_shape = t.shape[:dim] + t.shape[dim + 1 :]
            strides = contiguous_strides(t.shape)
            n_out = 1
            for size in out_shape:
                n_out *= size
            values = []
            for p in range(n_out):
                out_index = unravel_index(p, out_shape)
                total = 0
                for k in range(t.shape[dim]):
                    index = out_index[:dim] + (k,) + out_index[dim:]
                    total += storage[index_to_position(index, strides, t.storage_offset())]
                values.append(total)
            return minitorch.tensor(values, dtype=t.dtype).view(out_shape)
    """,
    "summed_index_appended_at_the_end": """
        import minitorch
        def sum_dim(t, dim):
            dim = dim % t.ndim
            storage = t.untyped_storage().tolist()
            out_shape = t.shape[:dim] + t.shape[dim + 1 :]
            n_out = 1
            for size in out_shape:
                n_out *= size
            values = []
            for p in range(n_out):
                out_index = unravel_index(p, out_shape)
                total = 0
                for k in range(t.shape[dim]):
                    index = out_index + (k,)
                    total += storage[index_to_position(index, t.stride(), t.storage_offset())]
                values.append(total)
            return minitorch.tensor(values, dtype=t.dtype).view(out_shape)
    """,
    "first_dim_always_removed": """
        import minitorch
        def sum_dim(t, dim):
            dim = dim % t.ndim
            storage = t.untyped_storage().tolist()
            out_shape = t.shape[1:]
            values = []
            for p in range(len(storage) // max(t.shape[dim], 1)):
                out_index = unravel_index(p, out_shape)
                total = 0
                for k in range(t.shape[dim]):
                    index = out_index[:dim] + (k,) + out_index[dim:]
                    if len(index) == t.ndim:
                        total += storage[index_to_position(index, t.stride(), t.storage_offset())]
                values.append(total)
            return minitorch.tensor(values, dtype=t.dtype).view(out_shape)
    """,
    "flat_result": """
        import minitorch
        def sum_dim(t, dim):
            dim = dim % t.ndim
            storage = t.untyped_storage().tolist()
            out_shape = t.shape[:dim] + t.shape[dim + 1 :]
            n_out = 1
            for size in out_shape:
                n_out *= size
            values = []
            for p in range(n_out):
                out_index = unravel_index(p, out_shape)
                total = 0
                for k in range(t.shape[dim]):
                    index = out_index[:dim] + (k,) + out_index[dim:]
                    total += storage[index_to_position(index, t.stride(), t.storage_offset())]
                values.append(total)
            return minitorch.tensor(values, dtype=t.dtype)
    """,
    "keeps_the_dim": """
        import minitorch
        def sum_dim(t, dim):
            dim = dim % t.ndim
            storage = t.untyped_storage().tolist()
            out_shape = t.shape[:dim] + t.shape[dim + 1 :]
            n_out = 1
            for size in out_shape:
                n_out *= size
            values = []
            for p in range(n_out):
                out_index = unravel_index(p, out_shape)
                total = 0
                for k in range(t.shape[dim]):
                    index = out_index[:dim] + (k,) + out_index[dim:]
                    total += storage[index_to_position(index, t.stride(), t.storage_offset())]
                values.append(total)
            kept = t.shape[:dim] + (1,) + t.shape[dim + 1 :]
            return minitorch.tensor(values, dtype=t.dtype).view(kept)
    """,
    "first_element_starts_the_sum": """
        import minitorch
        def sum_dim(t, dim):
            dim = dim % t.ndim
            storage = t.untyped_storage().tolist()
            out_shape = t.shape[:dim] + t.shape[dim + 1 :]
            n_out = 1
            for size in out_shape:
                n_out *= size
            values = []
            for p in range(n_out):
                out_index = unravel_index(p, out_shape)
                first = out_index[:dim] + (0,) + out_index[dim:]
                total = storage[index_to_position(first, t.stride(), t.storage_offset())]
                for k in range(1, t.shape[dim]):
                    index = out_index[:dim] + (k,) + out_index[dim:]
                    total += storage[index_to_position(index, t.stride(), t.storage_offset())]
                values.append(total)
            return minitorch.tensor(values, dtype=t.dtype).view(out_shape)
    """,
    "storage_read_in_order": """
        import minitorch
        def sum_dim(t, dim):
            dim = dim % t.ndim
            storage = t.untyped_storage().tolist()[t.storage_offset():]
            out_shape = t.shape[:dim] + t.shape[dim + 1 :]
            n_out = 1
            for size in out_shape:
                n_out *= size
            values = []
            for p in range(n_out):
                total = 0
                for k in range(t.shape[dim]):
                    total += storage[(p * t.shape[dim] + k) % len(storage)]
                values.append(total)
            return minitorch.tensor(values, dtype=t.dtype).view(out_shape)
    """,
    # the input's dtype kept: a bool sum comes back bool, an int32 sum int32 (and overflows)
    "keeps_the_input_dtype": """
        import minitorch
        def sum_dim(t, dim):
            dim = dim % t.ndim
            storage = t.untyped_storage().tolist()
            out_shape = t.shape[:dim] + t.shape[dim + 1 :]
            n_out = 1
            for size in out_shape:
                n_out *= size
            values = []
            for p in range(n_out):
                out_index = unravel_index(p, out_shape)
                total = 0
                for k in range(t.shape[dim]):
                    index = out_index[:dim] + (k,) + out_index[dim:]
                    total += storage[index_to_position(index, t.stride(), t.storage_offset())]
                values.append(total)
            return minitorch.tensor(values, dtype=t.dtype).view(out_shape)
    """,
    "delegates_to_tensor_sum": """
        def sum_dim(t, dim):
            return t.sum(dim)
    """,
    "delegates_to_numpy": """
        import minitorch
        def sum_dim(t, dim):
            return minitorch.tensor(t.numpy().sum(axis=dim), dtype=t.dtype)
    """,
    "delegates_to_indexing": """
        import itertools
        import minitorch
        def sum_dim(t, dim):
            dim = dim % t.ndim
            out_shape = t.shape[:dim] + t.shape[dim + 1 :]
            values = []
            for out_index in itertools.product(*(range(n) for n in out_shape)):
                total = 0
                for k in range(t.shape[dim]):
                    total += t[out_index[:dim] + (k,) + out_index[dim:]].item()
                values.append(total)
            return minitorch.tensor(values, dtype=t.dtype).view(out_shape)
    """,
    "delegates_to_the_sum_op": """
        from minitorch.ops.reduce import Sum
        def sum_dim(t, dim):
            return Sum.apply(t, dim, False)
    """,
}

MUTANTS = {
    "01.1": STRIDES,
    "01.2": POSITION,
    "01.3": UNRAVEL,
    "01.4": BROADCAST,
    "01.5": BROADCAST_INDEX,
    "01.6": PERMUTE,
    "01.7": SUM,
}

CORRECT = {
    "01.1": {
        "math_prod_of_the_rest_at_least_one": """
            import math
            def contiguous_strides(shape):
                rest = [shape[i + 1 :] for i in range(len(shape))]
                return tuple(math.prod(max(s, 1) for s in r) for r in rest)
        """,
        "filled_from_the_end": """
            def contiguous_strides(shape):
                strides = [1] * len(shape)
                for i in range(len(shape) - 2, -1, -1):
                    strides[i] = strides[i + 1] * max(shape[i + 1], 1)
                return tuple(strides)
        """,
    },
    "01.2": {
        "with_numpy_dot": """
            import numpy as np
            def index_to_position(index, strides, offset=0):
                return offset + int(np.dot(index, strides)) if index else offset
        """,
    },
    "01.3": {
        "with_divmod": """
            def unravel_index(position, shape):
                index = ()
                for size in reversed(shape):
                    position, i = divmod(position, size)
                    index = (i,) + index
                return index
        """,
    },
    "01.4": {
        "pairwise_with_reduce": """
            import functools
            def broadcast_shapes(*shapes):
                def two(a, b):
                    n = max(len(a), len(b))
                    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
                    out = []
                    for x, y in zip(a, b):
                        if x != y and 1 not in (x, y):
                            raise ValueError(f"shapes {shapes} cannot be broadcast together")
                        out.append(y if x == 1 else x)
                    return tuple(out)
                return functools.reduce(two, shapes, ())
        """,
    },
    "01.5": {
        "zero_past_the_size": """
            def broadcast_index(out_index, out_shape, in_shape):
                skip = len(out_shape) - len(in_shape)
                return tuple(0 if i >= n else i for i, n in zip(out_index[skip:], in_shape))
        """,
        "modulo_and_a_list": """
            def broadcast_index(out_index, out_shape, in_shape):
                skip = len(out_shape) - len(in_shape)
                return [i % n for i, n in zip(out_index[skip:], in_shape)]
        """,
    },
    "01.6": {
        "default_offset_and_stride_of_dim": """
            def permute(t, dims):
                return t.as_strided([t.shape[d] for d in dims], [t.stride(d) for d in dims])
        """,
    },
    "01.7": {
        "itertools_product_walk": """
            import itertools
            import minitorch
            def sum_dim(t, dim):
                dim = dim % t.ndim
                storage, strides = t.untyped_storage().tolist(), t.stride()
                out_shape = t.shape[:dim] + t.shape[dim + 1 :]
                values = []
                for out_index in itertools.product(*(range(n) for n in out_shape)):
                    total = 0
                    for k in range(t.shape[dim]):
                        index = out_index[:dim] + (k,) + out_index[dim:]
                        step = sum(i * s for i, s in zip(index, strides))
                        total += storage[t.storage_offset() + step]
                    values.append(total)
                dtype = t.dtype if t.dtype.is_floating_point else minitorch.int64
                return minitorch.tensor(values, dtype=dtype).view(out_shape)
        """,
    },
}


# --- A second round, written fresh from the exercise text (red team) ----------------------
ROUND_2 = {
    "01.1": {
        "zero_size_resets_the_product": """
            def contiguous_strides(shape):
                strides, step = [], 1
                for size in reversed(shape):
                    strides.append(step)
                    step = 1 if size == 0 else step * size
                return tuple(reversed(strides))
        """,
        "inserted_at_the_front": """
            def contiguous_strides(shape):
                if not shape:
                    return ()
                strides = [1]
                for size in reversed(shape[1:]):
                    strides.insert(0, strides[0] * size)
                return tuple(strides)
        """,
        "three_dims_at_most": """
            def contiguous_strides(shape):
                sizes = [max(s, 1) for s in shape]
                if len(shape) == 0:
                    return ()
                if len(shape) == 1:
                    return (1,)
                if len(shape) == 2:
                    return (sizes[1], 1)
                return (sizes[-2] * sizes[-1], sizes[-1], 1)
        """,
        "delegates_to_byte_strides": """
            import numpy as _np

            def contiguous_strides(shape):
                return tuple(int(s) for s in _np.empty(shape, dtype=_np.uint8).strides)
        """,
    },
    "01.2": {
        "offset_added_per_dim": """
            def index_to_position(index, strides, offset=0):
                position = 0
                for i, s in zip(index, strides):
                    position += offset + i * s
                return position
        """,
        "scalar_at_position_zero": """
            def index_to_position(index, strides, offset=0):
                if not index:
                    return 0
                return offset + sum(i * s for i, s in zip(index, strides))
        """,
        "index_reversed": """
            def index_to_position(index, strides, offset=0):
                return offset + sum(i * s for i, s in zip(reversed(index), strides))
        """,
    },
    "01.3": {
        "quotients_without_remainders": """
            def unravel_index(position, shape):
                index = []
                for s in contiguous_strides(shape):
                    index.append(position // s)
                return tuple(index)
        """,
        "scalar_gets_an_empty_list": """
            def unravel_index(position, shape):
                if not shape:
                    return []
                index = []
                for size in reversed(shape):
                    index.append(position % size)
                    position //= size
                return tuple(reversed(index))
        """,
    },
    "01.4": {
        "last_size_wins": """
            def broadcast_shapes(*shapes):
                ndim = max((len(s) for s in shapes), default=0)
                padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
                result = []
                for sizes in zip(*padded):
                    out = sizes[0]
                    for size in sizes[1:]:
                        if size != out and size != 1 and out != 1:
                            raise ValueError(f"shapes {shapes} cannot be broadcast together")
                        out = size
                    result.append(out)
                return tuple(result)
        """,
        "longest_shape_returned": """
            def broadcast_shapes(*shapes):
                ndim = max((len(s) for s in shapes), default=0)
                padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
                for sizes in zip(*padded):
                    if len(set(sizes) - {1}) > 1:
                        listed = " and ".join(str(tuple(s)) for s in shapes)
                        raise ValueError(f"shapes {listed} cannot be broadcast together")
                return max((tuple(s) for s in shapes), key=len, default=())
        """,
        "first_shape_sets_the_length": """
            def broadcast_shapes(*shapes):
                if not shapes:
                    return ()
                ndim = len(shapes[0])
                padded = [(1,) * (ndim - len(s)) + tuple(s)[-ndim:] if ndim else () for s in shapes]
                result = []
                for sizes in zip(*padded):
                    big = {s for s in sizes if s != 1}
                    if len(big) > 1:
                        raise ValueError(f"shapes {shapes} cannot be broadcast together")
                    result.append(big.pop() if big else 1)
                return tuple(result)
        """,
    },
    "01.5": {
        "returns_a_generator": """
            def broadcast_index(out_index, out_shape, in_shape):
                skip = len(out_shape) - len(in_shape)
                return (0 if size == 1 else i for i, size in zip(out_index[skip:], in_shape))
        """,
    },
    "01.6": {
        "made_contiguous_first": """
            def permute(t, dims):
                t = t.contiguous()
                shape = tuple(t.shape[d] for d in dims)
                strides = tuple(t.stride()[d] for d in dims)
                return t.as_strided(shape, strides, t.storage_offset())
        """,
        "abs_of_negative_dims": """
            def permute(t, dims):
                dims = [abs(d) for d in dims]
                shape = tuple(t.shape[d] for d in dims)
                strides = tuple(t.stride()[d] for d in dims)
                return t.as_strided(shape, strides, t.storage_offset())
        """,
    },
    "01.7": {
        "abs_of_negative_dim": """
            def sum_dim(t, dim):
                dim = abs(dim)
                storage = t.untyped_storage().tolist()
                shape, strides = t.shape, t.stride()
                out_shape = shape[:dim] + shape[dim + 1 :]
                n_out = 1
                for size in out_shape:
                    n_out *= size
                values = []
                for out_pos in range(n_out):
                    out_index = unravel_index(out_pos, out_shape)
                    total = 0
                    for k in range(shape[dim]):
                        index = out_index[:dim] + (k,) + out_index[dim:]
                        total += storage[index_to_position(index, strides, t.storage_offset())]
                    values.append(total)
                return minitorch.tensor(values, dtype=t.dtype).view(out_shape)
        """,
        "output_count_by_division": """
            def sum_dim(t, dim):
                dim %= t.ndim
                storage = t.untyped_storage().tolist()
                shape, strides = t.shape, t.stride()
                out_shape = shape[:dim] + shape[dim + 1 :]
                n_out = t.numel() // shape[dim]
                values = []
                for out_pos in range(n_out):
                    out_index = unravel_index(out_pos, out_shape)
                    total = 0
                    for k in range(shape[dim]):
                        index = out_index[:dim] + (k,) + out_index[dim:]
                        total += storage[index_to_position(index, strides, t.storage_offset())]
                    values.append(total)
                return minitorch.tensor(values, dtype=t.dtype).view(out_shape)
        """,
        "empty_dim_gives_an_empty_tensor": """
            def sum_dim(t, dim):
                dim %= t.ndim
                shape, strides = t.shape, t.stride()
                if shape[dim] == 0:
                    return minitorch.tensor([], dtype=t.dtype)
                storage = t.untyped_storage().tolist()
                out_shape = shape[:dim] + shape[dim + 1 :]
                values = []
                n_out = 1
                for size in out_shape:
                    n_out *= size
                for out_pos in range(n_out):
                    out_index = unravel_index(out_pos, out_shape)
                    total = 0
                    for k in range(shape[dim]):
                        index = out_index[:dim] + (k,) + out_index[dim:]
                        total += storage[index_to_position(index, strides, t.storage_offset())]
                    values.append(total)
                return minitorch.tensor(values, dtype=t.dtype).view(out_shape)
        """,
        "storage_of_a_contiguous_copy": """
            def sum_dim(t, dim):
                dim %= t.ndim
                storage = t.contiguous().untyped_storage().tolist()
                out_shape = t.shape[:dim] + t.shape[dim + 1 :]
                values = []
                n_out = 1
                for size in out_shape:
                    n_out *= size
                for out_pos in range(n_out):
                    out_index = unravel_index(out_pos, out_shape)
                    total = 0
                    for k in range(t.shape[dim]):
                        index = out_index[:dim] + (k,) + out_index[dim:]
                        total += storage[index_to_position(index, t.stride(), t.storage_offset())]
                    values.append(total)
                return minitorch.tensor(values, dtype=t.dtype).view(out_shape)
        """,
        "delegates_to_numpy_accumulate": """
            import numpy as _np

            def sum_dim(t, dim):
                dim %= t.ndim
                flat = _np.array(t.untyped_storage().tolist())[t.storage_offset() :]
                view = _np.lib.stride_tricks.as_strided(
                    flat, t.shape, [s * flat.itemsize for s in t.stride()]
                )
                out_shape = t.shape[:dim] + t.shape[dim + 1 :]
                if t.shape[dim] == 0:
                    return minitorch.zeros(out_shape, dtype=t.dtype)
                last = _np.add.accumulate(view, axis=dim).take(-1, axis=dim)
                return minitorch.tensor(last.tolist(), dtype=t.dtype).view(out_shape)
        """,
        "delegates_to_matmul_with_ones": """
            def sum_dim(t, dim):
                dim %= t.ndim
                order = [d for d in range(t.ndim) if d != dim] + [dim]
                moved = t.permute(*order)
                return moved @ minitorch.ones(t.shape[dim], dtype=t.dtype)
        """,
        "delegates_to_adding_strided_views": """
            def sum_dim(t, dim):
                dim %= t.ndim
                out_shape = t.shape[:dim] + t.shape[dim + 1 :]
                out_strides = t.stride()[:dim] + t.stride()[dim + 1 :]
                total = minitorch.zeros(out_shape, dtype=t.dtype)
                for k in range(t.shape[dim]):
                    offset = t.storage_offset() + k * t.stride()[dim]
                    total = total + t.as_strided(out_shape, out_strides, offset)
                return total
        """,
        "delegates_to_mean": """
            def sum_dim(t, dim):
                return (t.mean(dim) * t.shape[dim]).to(t.dtype)
        """,
        "delegates_to_numpy_einsum": """
            import numpy as _np

            def sum_dim(t, dim):
                dim %= t.ndim
                storage = _np.array(t.untyped_storage().tolist(), dtype=str(t.dtype).split(".")[-1])
                size = storage.itemsize
                flat = storage[t.storage_offset() :]
                view = _np.lib.stride_tricks.as_strided(
                    flat, t.shape, [s * size for s in t.stride()]
                )
                out = [d for d in range(t.ndim) if d != dim]
                return minitorch.tensor(_np.einsum(view, list(range(t.ndim)), out).tolist(),
                                        dtype=t.dtype).view(t.shape[:dim] + t.shape[dim + 1 :])
        """,
    },
}

ROUND_2_CORRECT = {
    "01.1": {
        "math_prod_skipping_zeros": """
            import math

            def contiguous_strides(shape):
                return tuple(math.prod(s for s in shape[i + 1 :] if s) for i in range(len(shape)))
        """,
    },
    "01.3": {
        "divided_by_contiguous_strides": """
            def unravel_index(position, shape):
                index = []
                for size, step in zip(shape, contiguous_strides(shape)):
                    index.append(position // step % size)
                return tuple(index)
        """,
    },
    "01.4": {
        "zip_longest_from_the_right": """
            import itertools

            def broadcast_shapes(*shapes):
                result = []
                for sizes in itertools.zip_longest(*(reversed(s) for s in shapes), fillvalue=1):
                    big = set(sizes) - {1}
                    if len(big) > 1:
                        listed = ", ".join(str(tuple(s)) for s in shapes)
                        raise ValueError(f"cannot broadcast {listed}")
                    result.append(big.pop() if big else 1)
                return tuple(reversed(result))
        """,
    },
    "01.5": {
        "clamped_to_the_last_index": """
            def broadcast_index(out_index, out_shape, in_shape):
                skip = len(out_shape) - len(in_shape)
                return tuple(min(i, size - 1) for i, size in zip(out_index[skip:], in_shape))
        """,
        "indexed_from_the_end": """
            def broadcast_index(out_index, out_shape, in_shape):
                n = len(in_shape)
                return tuple(
                    0 if in_shape[-k] == 1 else out_index[-k] for k in range(n, 0, -1)
                )
        """,
    },
    "01.6": {
        "lists_and_modulo_dims": """
            def permute(t, dims):
                dims = [d % t.ndim for d in dims]
                size = [t.shape[d] for d in dims]
                stride = [t.stride()[d] for d in dims]
                return t.as_strided(size, stride, t.storage_offset())
        """,
    },
    "01.7": {
        "scattered_from_every_input_element": """
            def sum_dim(t, dim):
                dim = dim % t.ndim
                storage = t.untyped_storage().tolist()
                out_shape = t.shape[:dim] + t.shape[dim + 1 :]
                out_strides = contiguous_strides(out_shape)
                n_out = 1
                for size in out_shape:
                    n_out *= size
                values = [0] * n_out
                n_in = n_out * t.shape[dim]
                for pos in range(n_in):
                    index = unravel_index(pos, t.shape)
                    out_pos = index_to_position(index[:dim] + index[dim + 1 :], out_strides)
                    values[out_pos] += storage[
                        index_to_position(index, t.stride(), t.storage_offset())
                    ]
                floats = (minitorch.float16, minitorch.bfloat16, minitorch.float32)
                floats += (minitorch.float64,)
                dtype = t.dtype if t.dtype in floats else minitorch.int64
                return minitorch.tensor(values, dtype=dtype).view(out_shape)
        """,
        "float_accumulator": """
            def sum_dim(t, dim):
                dim = dim + t.ndim if dim < 0 else dim
                storage = t.untyped_storage().tolist()
                out_shape = t.shape[:dim] + t.shape[dim + 1 :]
                n_out = 1
                for size in out_shape:
                    n_out *= size
                values = []
                for out_pos in range(n_out):
                    out_index = unravel_index(out_pos, out_shape)
                    total = 0.0
                    for k in range(t.shape[dim]):
                        index = (*out_index[:dim], k, *out_index[dim:])
                        total += storage[index_to_position(index, t.stride(), t.storage_offset())]
                    values.append(total)
                if not t.dtype.is_floating_point:
                    counts = [int(v) for v in values]
                    return minitorch.tensor(counts, dtype=minitorch.int64).view(out_shape)
                return minitorch.tensor(values, dtype=t.dtype).view(out_shape)
        """,
    },
}

for _table, _extra in ((MUTANTS, ROUND_2), (CORRECT, ROUND_2_CORRECT)):
    for _exercise_id, _bodies in _extra.items():
        _clash = _table.setdefault(_exercise_id, {}).keys() & _bodies.keys()
        assert not _clash, f"{_exercise_id}: mutant names used twice: {_clash}"
        _table[_exercise_id] = {**_table[_exercise_id], **_bodies}


# --- A third round (red team): state kept between calls, the caller's tensor changed in
# place, delegation in disguise, an unused import of a package class ---------------------
ROUND_3 = {
    "01.1": {
        "cached_by_rank": """
            _cache = {}

            def contiguous_strides(shape):
                if len(shape) not in _cache:
                    strides, step = [], 1
                    for size in reversed(shape):
                        strides.append(step)
                        step *= max(size, 1)
                    _cache[len(shape)] = tuple(reversed(strides))
                return _cache[len(shape)]
        """,
        "delegates_to_a_random_tensors_layout": """
            def contiguous_strides(shape):
                return tuple(minitorch.randn(*shape).layout.strides)
        """,
        "delegates_to_numpy_empty_like": """
            import numpy as np

            def contiguous_strides(shape):
                a = np.empty_like(np.int8(0), shape=[max(s, 1) for s in shape])
                return tuple(int(s) for s in a.strides)
        """,
    },
    "01.2": {
        "memo_keyed_by_the_index": """
            _memo = {}

            def index_to_position(index, strides, offset=0):
                key = tuple(index)
                if key not in _memo:
                    _memo[key] = offset + sum(i * s for i, s in zip(index, strides))
                return _memo[key]
        """,
        "offset_kept_in_a_global": """
            _offset = None

            def index_to_position(index, strides, offset=0):
                global _offset
                if _offset is None:
                    _offset = offset
                return _offset + sum(i * s for i, s in zip(index, strides))
        """,
    },
    "01.3": {
        "strides_cached_from_the_first_shape": """
            _strides = {}

            def unravel_index(position, shape):
                if "s" not in _strides:
                    _strides["s"] = contiguous_strides(shape)
                return tuple(position // s % n for s, n in zip(_strides["s"], shape))
        """,
        "delegates_to_numpy_indices": """
            import numpy as np

            def unravel_index(position, shape):
                return tuple(int(grid.flat[position]) for grid in np.indices(shape))
        """,
    },
    "01.4": {
        "result_kept_between_calls": """
            _result = []

            def broadcast_shapes(*shapes):
                ndim = max((len(s) for s in shapes), default=0)
                padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
                for k, sizes in enumerate(zip(*padded)):
                    big = set(sizes) - {1}
                    if len(big) > 1:
                        listed = " and ".join(str(tuple(s)) for s in shapes)
                        raise ValueError(f"shapes {listed} cannot be broadcast together")
                    size = big.pop() if big else 1
                    if k < len(_result):
                        _result[k] = size
                    else:
                        _result.append(size)
                return tuple(_result)
        """,
        "delegates_to_adding_random_tensors": """
            def broadcast_shapes(*shapes):
                total = minitorch.randn(())
                try:
                    for s in shapes:
                        total = total + minitorch.randn(*s)
                except RuntimeError:
                    listed = " and ".join(str(tuple(s)) for s in shapes)
                    raise ValueError(f"shapes {listed} cannot be broadcast together") from None
                return tuple(total.shape)
        """,
        "delegates_to_numpy_empty_like": """
            import numpy as np

            def broadcast_shapes(*shapes):
                arrays = [np.empty_like(np.int8(0), shape=s) for s in shapes]
                try:
                    return tuple(np.broadcast(*arrays).shape) if arrays else ()
                except ValueError:
                    listed = " and ".join(str(tuple(s)) for s in shapes)
                    raise ValueError(f"shapes {listed} cannot be broadcast together") from None
        """,
    },
    "01.5": {
        "skip_cached_on_the_function": """
            def broadcast_index(out_index, out_shape, in_shape):
                if not hasattr(broadcast_index, "skip"):
                    broadcast_index.skip = len(out_shape) - len(in_shape)
                skip = broadcast_index.skip
                return tuple(0 if n == 1 else i for i, n in zip(out_index[skip:], in_shape))
        """,
        "delegates_to_broadcast_to_of_arange": """
            def broadcast_index(out_index, out_shape, in_shape):
                n = 1
                for size in in_shape:
                    n *= size
                numbers = minitorch.arange(n).view(*in_shape)
                positions = minitorch.broadcast_to(numbers, tuple(out_shape))
                return unravel_index(positions[tuple(out_index)].item(), in_shape)
        """,
    },
    "01.6": {
        "permutes_the_callers_tensor_in_place": """
            def permute(t, dims):
                shape = tuple(t.shape[d] for d in dims)
                strides = tuple(t.stride()[d] for d in dims)
                return t.set_(t.as_strided(shape, strides, t.storage_offset()))
        """,
        "layouts_cached_by_dims": """
            _layouts = {}

            def permute(t, dims):
                key = tuple(dims)
                if key not in _layouts:
                    shape = tuple(t.shape[d] for d in dims)
                    _layouts[key] = (shape, tuple(t.stride()[d] for d in dims))
                shape, strides = _layouts[key]
                return t.as_strided(shape, strides, t.storage_offset())
        """,
        "delegates_to_numpy_einsum": """
            import numpy as np

            def permute(t, dims):
                letters = "abcdefgh"[: t.ndim]
                target = "".join(letters[d] for d in dims)
                a = np.einsum(f"{letters}->{target}", t.numpy())
                strides = tuple(s // a.itemsize for s in a.strides)
                return t.as_strided(a.shape, strides, t.storage_offset())
        """,
    },
    "01.7": {
        "sums_into_the_callers_storage": """
            def sum_dim(t, dim):
                dim %= t.ndim
                storage = t.untyped_storage().array
                shape, strides, offset = t.shape, t.stride(), t.storage_offset()
                out_shape = shape[:dim] + shape[dim + 1 :]
                if shape[dim] == 0:
                    return minitorch.zeros(out_shape, dtype=t.dtype)
                n_out = 1
                for size in out_shape:
                    n_out *= size
                values = []
                for out_pos in range(n_out):
                    i = unravel_index(out_pos, out_shape)
                    first = index_to_position(i[:dim] + (0,) + i[dim:], strides, offset)
                    for k in range(1, shape[dim]):
                        index = i[:dim] + (k,) + i[dim:]
                        storage[first] += storage[index_to_position(index, strides, offset)]
                    values.append(storage[first].item())
                return minitorch.tensor(values, dtype=t.dtype).view(out_shape)
        """,
        "ndim_remembered_from_the_first_call": """
            _ndim = []

            def sum_dim(t, dim):
                if not _ndim:
                    _ndim.append(t.ndim)
                if dim < 0:
                    dim += _ndim[0]
                storage = t.untyped_storage().tolist()
                shape, strides, offset = t.shape, t.stride(), t.storage_offset()
                out_shape = shape[:dim] + shape[dim + 1 :]
                n_out = 1
                for size in out_shape:
                    n_out *= size
                values = []
                for out_pos in range(n_out):
                    i = unravel_index(out_pos, out_shape)
                    total = 0
                    for k in range(shape[dim]):
                        index = i[:dim] + (k,) + i[dim:]
                        total += storage[index_to_position(index, strides, offset)]
                    values.append(total)
                return minitorch.tensor(values, dtype=t.dtype).view(out_shape)
        """,
        "delegates_to_in_place_adds_of_strided_views": """
            def sum_dim(t, dim):
                dim %= t.ndim
                out_shape = t.shape[:dim] + t.shape[dim + 1 :]
                out_strides = t.stride()[:dim] + t.stride()[dim + 1 :]
                total = minitorch.zeros(out_shape, dtype=t.dtype)
                for k in range(t.shape[dim]):
                    offset = t.storage_offset() + k * t.stride()[dim]
                    total += t.as_strided(out_shape, out_strides, offset)
                return total
        """,
        "delegates_to_tensor_add_method": """
            def sum_dim(t, dim):
                dim %= t.ndim
                out_shape = t.shape[:dim] + t.shape[dim + 1 :]
                out_strides = t.stride()[:dim] + t.stride()[dim + 1 :]
                total = minitorch.zeros(out_shape, dtype=t.dtype)
                for k in range(t.shape[dim]):
                    offset = t.storage_offset() + k * t.stride()[dim]
                    total = total.add(t.as_strided(out_shape, out_strides, offset))
                return total
        """,
        "delegates_to_ndarray_cumsum_method": """
            import numpy as np

            def sum_dim(t, dim):
                dim %= t.ndim
                storage = t.untyped_storage().tolist()
                strides, offset = t.stride(), t.storage_offset()
                values = [
                    storage[index_to_position(unravel_index(p, t.shape), strides, offset)]
                    for p in range(t.numel())
                ]
                a = np.array(values).reshape(t.shape)
                out_shape = t.shape[:dim] + t.shape[dim + 1 :]
                if t.shape[dim] == 0:
                    return minitorch.zeros(out_shape, dtype=t.dtype)
                last = a.cumsum(axis=dim).take(-1, axis=dim)
                return minitorch.tensor(last.tolist(), dtype=t.dtype).view(out_shape)
        """,
        "delegates_to_matmul_operator_on_arrays": """
            import numpy as np

            def sum_dim(t, dim):
                dim %= t.ndim
                storage = t.untyped_storage().tolist()
                strides, offset = t.stride(), t.storage_offset()
                values = [
                    storage[index_to_position(unravel_index(p, t.shape), strides, offset)]
                    for p in range(t.numel())
                ]
                a = np.array(values).reshape(t.shape)
                moved = a.transpose([d for d in range(t.ndim) if d != dim] + [dim])
                out = moved @ np.ones(t.shape[dim], dtype=a.dtype)
                out_shape = t.shape[:dim] + t.shape[dim + 1 :]
                return minitorch.tensor(np.asarray(out).tolist(), dtype=t.dtype).view(out_shape)
        """,
    },
}

ROUND_3_CORRECT = {
    "01.1": {
        "unused_import_of_the_package_version": """
            from minitorch.shape import contiguous_strides as reference_strides  # noqa: F401

            def contiguous_strides(shape):
                strides, step = [], 1
                for size in reversed(shape):
                    strides.append(step)
                    step *= max(size, 1)
                return tuple(reversed(strides))
        """,
    },
    "01.2": {
        "map_of_operator_mul": """
            import operator

            def index_to_position(index, strides, offset=0):
                return offset + sum(map(operator.mul, index, strides))
        """,
    },
    "01.3": {
        "recursive_on_the_leading_dims": """
            def unravel_index(position, shape):
                if not shape:
                    return ()
                rest, last = divmod(position, shape[-1])
                return unravel_index(rest, shape[:-1]) + (last,)
        """,
    },
    "01.6": {
        "unused_import_of_the_permute_op": """
            from minitorch.ops.views import Permute  # noqa: F401

            def permute(t, dims):
                shape = tuple(t.shape[d] for d in dims)
                strides = tuple(t.stride()[d] for d in dims)
                return t.as_strided(shape, strides, t.storage_offset())
        """,
        "unpacked_layout": """
            def permute(t, dims):
                size, stride, offset = t.layout
                return t.as_strided([size[d] for d in dims], [stride[d] for d in dims], offset)
        """,
    },
    "01.7": {
        "builtin_sum_per_output": """
            def sum_dim(t, dim):
                dim = dim if dim >= 0 else dim + t.ndim
                storage = t.untyped_storage().tolist()
                strides, offset = t.stride(), t.storage_offset()
                out_shape = t.shape[:dim] + t.shape[dim + 1 :]
                n_out = 1
                for size in out_shape:
                    n_out *= size
                values = []
                for p in range(n_out):
                    i = unravel_index(p, out_shape)
                    positions = (
                        index_to_position((*i[:dim], k, *i[dim:]), strides, offset)
                        for k in range(t.shape[dim])
                    )
                    values.append(sum(storage[q] for q in positions))
                wide = t.dtype if t.dtype.is_floating_point else minitorch.int64
                out = minitorch.tensor(values, dtype=wide)
                return out.reshape(out_shape)
        """,
        "unused_import_of_the_sum_op": """
            from minitorch.ops.reduce import Sum  # noqa: F401

            def sum_dim(t, dim):
                dim = dim if dim >= 0 else dim + t.ndim
                storage = t.untyped_storage().tolist()
                strides, offset = t.stride(), t.storage_offset()
                out_shape = t.shape[:dim] + t.shape[dim + 1 :]
                n_out = 1
                for size in out_shape:
                    n_out *= size
                values = []
                for p in range(n_out):
                    i = unravel_index(p, out_shape)
                    total = 0
                    for k in range(t.shape[dim]):
                        index = (*i[:dim], k, *i[dim:])
                        total += storage[index_to_position(index, strides, offset)]
                    values.append(total)
                exact = t.dtype == minitorch.bool or not t.dtype.is_floating_point
                dtype = minitorch.int64 if exact else t.dtype
                return minitorch.tensor(values, dtype=dtype, device=t.device).view(out_shape)
        """,
    },
}

for _table, _extra in ((MUTANTS, ROUND_3), (CORRECT, ROUND_3_CORRECT)):
    for _exercise_id, _bodies in _extra.items():
        _clash = _table.setdefault(_exercise_id, {}).keys() & _bodies.keys()
        assert not _clash, f"{_exercise_id}: mutant names used twice: {_clash}"
        _table[_exercise_id] = {**_table[_exercise_id], **_bodies}


# --- Honest answers that fill numpy buffers in their own loops (issue 21) -----------------
# Calling np.ones or np.zeros is no delegation: these keep full marks.
HONEST_BUFFERS = {
    "01.1": {
        "fills_an_np_ones_buffer_from_the_end": """
            import numpy as np
            def contiguous_strides(shape):
                strides = np.ones(len(shape), dtype=np.int64)
                for i in range(len(shape) - 2, -1, -1):
                    strides[i] = strides[i + 1] * max(shape[i + 1], 1)
                return tuple(int(s) for s in strides)
        """,
        "fills_np_zeros_then_python_ints": """
            import numpy as np
            def contiguous_strides(shape):
                out = np.zeros(len(shape), dtype=object)
                step = 1
                for i in reversed(range(len(shape))):
                    out[i] = step
                    step *= max(shape[i], 1)
                return tuple(out.tolist())
        """,
    },
    "01.3": {
        "fills_an_np_zeros_index": """
            import numpy as np
            def unravel_index(position, shape):
                index = np.zeros(len(shape), dtype=object)
                for d in range(len(shape) - 1, -1, -1):
                    index[d] = position % shape[d]
                    position //= shape[d]
                return tuple(int(i) for i in index)
        """,
    },
    "01.4": {
        "fills_an_np_ones_shape": """
            import numpy as np
            def broadcast_shapes(*shapes):
                n = max((len(s) for s in shapes), default=0)
                out = np.ones(n, dtype=object)
                for s in shapes:
                    for k, size in enumerate(s[::-1]):
                        d = n - 1 - k
                        if out[d] == 1:
                            out[d] = size
                        elif size != 1 and size != out[d]:
                            raise ValueError(f"shapes {shapes} cannot be broadcast together")
                return tuple(int(v) for v in out)
        """,
    },
    "01.7": {
        "fills_an_np_zeros_output": """
            import itertools
            import numpy as np
            import minitorch
            from minitorch.ops.elementwise import Mul as LibraryMul  # noqa: F401 (unused)
            def sum_dim(t, dim):
                dim = dim % t.ndim
                storage, strides = t.untyped_storage().tolist(), t.stride()
                out_shape = t.shape[:dim] + t.shape[dim + 1 :]
                out = np.zeros(out_shape, dtype=object)
                for out_index in itertools.product(*(range(n) for n in out_shape)):
                    for k in range(t.shape[dim]):
                        index = out_index[:dim] + (k,) + out_index[dim:]
                        step = sum(i * s for i, s in zip(index, strides))
                        out[out_index] += storage[t.storage_offset() + step]
                dtype = t.dtype if t.dtype.is_floating_point else minitorch.int64
                return minitorch.tensor(out.tolist(), dtype=dtype).view(out_shape)
        """,
    },
}

for _exercise_id, _bodies in HONEST_BUFFERS.items():
    _clash = CORRECT.setdefault(_exercise_id, {}).keys() & _bodies.keys()
    assert not _clash, f"{_exercise_id}: names used twice: {_clash}"
    CORRECT[_exercise_id] = {**CORRECT[_exercise_id], **_bodies}
