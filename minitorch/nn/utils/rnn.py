"""Packed sequences (``nn.utils.rnn``): a batch of sequences of different lengths.

A padded batch (T, N, *) wastes work on the padding and lets it leak into a recurrent
layer's final state. Packing sorts the sequences longest first and stores them time step by
time step, each step holding only the sequences still running: ``data`` is (sum of lengths,
*) and ``batch_sizes[t]`` says how many rows step t has. A recurrent layer then runs step t
on the first ``batch_sizes[t]`` rows of its state, so each sequence's state stops at its
own last step. ``sorted_indices`` says which input sequence became row i
(``unsorted_indices`` undoes it); both are None when the input was sorted already.

Everything here is built from differentiable ops (index_select, cat, stack, slicing), so
gradients flow back through packing and unpacking.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from ...checks import as_tensor
from ...creation import tensor, zeros
from ...dtypes import int64
from ...ops import cat, stack
from ...ops.compose import argsort
from ...tensor import Tensor


class PackedSequence(NamedTuple):
    """Sequences packed time step by time step (see the module's docstring)."""

    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None = None
    unsorted_indices: Tensor | None = None

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """``data`` moved or cast as ``Tensor.to`` does; the indices follow its device."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self

        def move(t: Tensor | None) -> Tensor | None:
            return None if t is None else t.to(device=data.device)

        return PackedSequence(
            data, self.batch_sizes, move(self.sorted_indices), move(self.unsorted_indices)
        )

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda


def _lengths_list(lengths: Any, op: str) -> list[int]:
    if isinstance(lengths, Tensor):
        if lengths.ndim != 1 or lengths.dtype.is_floating_point:
            raise RuntimeError(
                f"{op}: lengths must be a 1-D integer tensor or a list of ints, got a "
                f"{lengths.dtype.name} tensor of shape {lengths.shape}"
            )
        return [int(v) for v in lengths.tolist()]
    if not isinstance(lengths, Sequence) or not all(isinstance(v, int) for v in lengths):
        raise TypeError(f"{op}: lengths must be a 1-D tensor or a list of ints, got {lengths!r}")
    return [int(v) for v in lengths]


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The permutation that undoes ``permutation`` (None stays None)."""
    if permutation is None:
        return None
    inverse = [0] * permutation.shape[0]
    for i, p in enumerate(permutation.tolist()):
        inverse[p] = i
    return tensor(inverse, dtype=int64, device=permutation.device)


def pack_padded_sequence(
    input: Tensor,  # noqa: A002 - PyTorch's name
    lengths: Tensor | list[int],
    batch_first: bool = False,
    enforce_sorted: bool = True,
) -> PackedSequence:
    """Pack a padded (T, N, *) batch (``batch_first``: (N, T, *)) whose sequence i has
    ``lengths[i]`` steps. ``enforce_sorted`` requires the lengths to decrease; without it,
    the sequences are sorted here and ``sorted_indices`` records how."""
    op = "pack_padded_sequence"
    as_tensor(input, op, "input")
    lengths = _lengths_list(lengths, op)
    batch_dim = 0 if batch_first else 1
    if input.ndim < 2 or input.shape[batch_dim] != len(lengths):
        raise RuntimeError(
            f"{op}: Expected `len(lengths)` to be equal to batch_size, but got {len(lengths)} "
            f"(batch_size={input.shape[batch_dim] if input.ndim >= 2 else None}, input shape "
            f"{input.shape})"
        )
    if enforce_sorted:
        if any(a < b for a, b in zip(lengths, lengths[1:], strict=False)):
            raise RuntimeError(
                f"{op}: `lengths` array must be sorted in decreasing order when "
                "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                "pack_padded_sequence and/or pack_sequence to sidestep this requirement if "
                "you do not need ONNX exportability."
            )
        sorted_indices = None
    else:
        sorted_indices = argsort(tensor(lengths, dtype=int64), descending=True, stable=True)
        lengths = [lengths[i] for i in sorted_indices.tolist()]
        input = input.index_select(batch_dim, sorted_indices.to(device=input.device))
    if lengths and lengths[-1] <= 0:
        raise RuntimeError(
            f"{op}: Length of all samples has to be greater than 0, but found an element in "
            "'lengths' that is <= 0"
        )
    if lengths and lengths[0] > input.shape[1 - batch_dim]:
        raise RuntimeError(
            f"{op}: the longest length {lengths[0]} exceeds the input's "
            f"{input.shape[1 - batch_dim]} time steps (input shape {input.shape}, "
            f"batch_first={batch_first})"
        )
    if batch_first:
        input = input.transpose(0, 1)
    steps = lengths[0] if lengths else 0
    batch_sizes = [sum(1 for n in lengths if n > t) for t in range(steps)]
    data = cat([input[t, :size] for t, size in enumerate(batch_sizes)])
    return PackedSequence(
        data,
        tensor(batch_sizes, dtype=int64),
        sorted_indices,
        invert_permutation(sorted_indices),
    )


def pad_packed_sequence(
    sequence: PackedSequence,
    batch_first: bool = False,
    padding_value: float = 0.0,
    total_length: int | None = None,
) -> tuple[Tensor, Tensor]:
    """Undo ``pack_padded_sequence``: the padded (T, N, *) batch (``batch_first``: (N, T,
    *)) in the original order, padded to ``total_length`` steps if given, and the lengths."""
    op = "pad_packed_sequence"
    if not isinstance(sequence, PackedSequence):
        raise TypeError(f"{op}: expected a PackedSequence, got {type(sequence).__name__}")
    data, sizes = sequence.data, [int(s) for s in sequence.batch_sizes.tolist()]
    steps, batch = len(sizes), (sizes[0] if sizes else 0)
    if total_length is not None:
        if total_length < steps:
            raise ValueError(
                f"{op}: Expected total_length to be at least the length of the longest "
                f"sequence in input, but got total_length={total_length} and max sequence "
                f"length being {steps}"
            )
        steps_out = total_length
    else:
        steps_out = steps
    rows, start = [], 0
    for size in sizes:
        step = data[start : start + size]
        start += size
        if size < batch:
            fill = zeros(batch - size, *data.shape[1:], dtype=data.dtype, device=data.device)
            step = cat([step, fill + padding_value])
        rows.append(step)
    for _ in range(steps_out - steps):
        fill = zeros(batch, *data.shape[1:], dtype=data.dtype, device=data.device)
        rows.append(fill + padding_value)
    padded = stack(rows)  # (T, N, *)
    lengths = [sum(1 for s in sizes if s > i) for i in range(batch)]
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices.to(device=data.device))
        lengths = [lengths[i] for i in sequence.unsorted_indices.tolist()]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, tensor(lengths, dtype=int64)


def pad_sequence(
    sequences: Sequence[Tensor] | Tensor,
    batch_first: bool = False,
    padding_value: float = 0.0,
    padding_side: str = "right",
) -> Tensor:
    """Stack sequences (L_i, *) of different lengths into a padded (T, N, *) tensor
    (``batch_first``: (N, T, *)), padding on ``padding_side`` ('right' or 'left')."""
    op = "pad_sequence"
    if padding_side not in ("right", "left"):
        raise ValueError(
            f"{op}: Expected padding_side to be one of left or right, but got {padding_side}."
        )
    if isinstance(sequences, Tensor):
        sequences = list(sequences.unbind(0))
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError(f"{op}: received an empty list of sequences")
    for i, s in enumerate(sequences):
        as_tensor(s, op, f"sequences[{i}]")
        if s.ndim < 1 or s.shape[1:] != sequences[0].shape[1:]:
            raise RuntimeError(
                f"{op}: every sequence must be (L, *) with the same trailing dims, but "
                f"sequences[0] is {sequences[0].shape} and sequences[{i}] is {s.shape}"
            )
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        missing = longest - s.shape[0]
        if missing:
            fill = zeros(missing, *s.shape[1:], dtype=s.dtype, device=s.device) + padding_value
            s = cat([s, fill] if padding_side == "right" else [fill, s])
        padded.append(s)
    return stack(padded, dim=0 if batch_first else 1)


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of (L_i, *) sequences (longest first, unless ``enforce_sorted=False``)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpad_sequence(
    padded_sequences: Tensor, lengths: Tensor | list[int], batch_first: bool = False
) -> list[Tensor]:
    """Split a padded batch back into its sequences, each cut to its length."""
    lengths = _lengths_list(lengths, "unpad_sequence")
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[i, :n] for i, n in enumerate(lengths)]


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences a PackedSequence holds, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
