"""Recurrent layers: RNN, LSTM and GRU, their one-step cells, with PyTorch's parameters.

A recurrent layer reads a sequence one step at a time, carrying a state ``h`` from step to
step: ``h_t = cell(x_t, h_{t-1})``. The cells differ in how they mix the input and the
state:

- RNN: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or relu);
- LSTM: four gates ``i, f, g, o`` from the same sum; a cell state ``c' = f c + i g`` that
  gradients can travel along, and ``h' = o tanh(c')`` (projected by ``W_hr`` with
  ``proj_size``);
- GRU: reset and update gates ``r, z``; ``n = tanh(x W_in^T + b_in + r (h W_hn^T + b_hn))``
  and ``h' = (1 - z) n + z h``.

The input half ``x W_ih^T + b_ih`` does not depend on the state, so a layer computes it for
every step in one matrix multiply and loops only over the state half. Layers stack
(``num_layers``: layer k reads layer k-1's outputs) and may also run each sequence backwards
(``bidirectional``: the two directions' outputs are concatenated).

Internally every input is a packed sequence (``nn.utils.rnn``): a padded batch is the case
where every step has all N rows. Step t updates the first ``batch_sizes[t]`` rows of the
state; the rest keep theirs, so each sequence's final state is the one at its last step.

Everything is written with minitorch ops, so autograd, autocast and the tracer see it.
"""

from __future__ import annotations

import math
from typing import Any

from .. import ops
from ..checks import as_number
from ..creation import empty, zeros
from ..shape import as_size
from ..tensor import Tensor
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter
from .utils.rnn import PackedSequence

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


# --- one step of each cell (xw = x W_ih^T + b_ih, computed ahead for all steps) -------------
def _hidden_part(h: Tensor, w_hh: Tensor, b_hh: Tensor | None) -> Tensor:
    return F.linear(h, w_hh, b_hh)


def _rnn_step(mode: str, xw: Tensor, state: Any, w_hh: Tensor, b_hh: Tensor | None) -> Any:
    act = ops.tanh if mode == "RNN_TANH" else ops.relu
    return act(xw + _hidden_part(state, w_hh, b_hh))


def _lstm_step(
    xw: Tensor, state: Any, w_hh: Tensor, b_hh: Tensor | None, w_hr: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    h, c = state
    i, f, g, o = (xw + _hidden_part(h, w_hh, b_hh)).chunk(4, dim=-1)
    c = ops.sigmoid(f) * c + ops.sigmoid(i) * ops.tanh(g)
    h = ops.sigmoid(o) * ops.tanh(c)
    return (h if w_hr is None else F.linear(h, w_hr)), c


def _gru_step(xw: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None) -> Tensor:
    x_r, x_z, x_n = xw.chunk(3, dim=-1)
    h_r, h_z, h_n = _hidden_part(h, w_hh, b_hh).chunk(3, dim=-1)
    r, z = ops.sigmoid(x_r + h_r), ops.sigmoid(x_z + h_z)
    n = ops.tanh(x_n + r * h_n)
    return n + z * (h - n)  # = (1 - z) n + z h


def _step(mode: str, xw: Tensor, state: Any, weights: list) -> Any:
    w_hh, b_hh = weights[1], weights[3] if len(weights) > 3 else None
    if mode == "LSTM":
        return _lstm_step(xw, state, w_hh, b_hh, weights[4] if len(weights) > 4 else None)
    if mode == "GRU":
        return _gru_step(xw, state, w_hh, b_hh)
    return _rnn_step(mode, xw, state, w_hh, b_hh)


# --- the state of the rows still running at a step ------------------------------------------
def _rows(state: Any, n: int) -> Any:
    return tuple(s[:n] for s in state) if isinstance(state, tuple) else state[:n]


def _merge(new: Any, state: Any, n: int) -> Any:
    """``new`` for the first n rows, ``state`` for the rest (sequences already finished)."""
    if isinstance(state, tuple):
        return tuple(_merge(a, b, n) for a, b in zip(new, state, strict=True))
    return new if n == state.shape[0] else ops.cat([new, state[n:]])


def _output_of(state: Any) -> Tensor:
    return state[0] if isinstance(state, tuple) else state


def _run_direction(
    mode: str, xw: list[Tensor], sizes: list[int], state: Any, weights: list, reverse: bool
) -> tuple[list[Tensor], Any]:
    """One layer in one direction over steps ``xw`` (rows ``sizes[t]``): outputs, last state."""
    outputs: list[Tensor] = [None] * len(xw)  # type: ignore[list-item]
    order = range(len(xw) - 1, -1, -1) if reverse else range(len(xw))
    for t in order:
        new = _step(mode, xw[t], _rows(state, sizes[t]), weights)
        state = _merge(new, state, sizes[t])
        outputs[t] = _output_of(new)
    return outputs, state


class RNNBase(Module):
    """What RNN, LSTM and GRU share: parameters, their names, init, and the forward loop."""

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        name = type(self).__name__
        self.mode = mode
        self.input_size = as_size(input_size, name, "input_size")
        self.hidden_size = as_size(hidden_size, name, "hidden_size")
        self.num_layers = as_size(num_layers, name, "num_layers")
        if self.hidden_size <= 0 or self.num_layers <= 0:
            raise ValueError(
                f"{name}: hidden_size and num_layers must be greater than 0, got "
                f"hidden_size={hidden_size} and num_layers={num_layers}"
            )
        as_number(dropout, name, "dropout", low=0.0, high=1.0)
        self.proj_size = as_size(proj_size, name, "proj_size")
        if proj_size and mode != "LSTM":
            raise ValueError(
                f"{name}: proj_size argument is only supported for LSTM, not RNN or GRU"
            )
        if proj_size >= hidden_size and proj_size:
            raise ValueError(f"{name}: proj_size has to be smaller than hidden_size")
        self.bias, self.batch_first = bias, batch_first
        self.dropout, self.bidirectional = float(dropout), bidirectional
        directions = 2 if bidirectional else 1
        out_size = proj_size or hidden_size
        gate_size = _GATES[mode] * hidden_size
        self._flat_weights_names: list[str] = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else out_size * directions
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                shapes = [
                    ("weight_ih", (gate_size, layer_input)),
                    ("weight_hh", (gate_size, out_size)),
                ]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                for kind, shape in shapes:
                    param = Parameter(empty(*shape, dtype=dtype, device=device))
                    setattr(self, kind + suffix, param)
                    self._flat_weights_names.append(kind + suffix)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's init: every weight and bias uniform in ±1/sqrt(hidden_size)."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        for param in self.parameters():
            init.uniform_(param, -bound, bound)

    def flatten_parameters(self) -> None:
        """PyTorch packs the weights into one buffer for cuDNN here; minitorch's layers read
        each parameter as it is, so there is nothing to do."""

    def _layer_weights(self, layer: int, direction: int) -> list:
        suffix = f"_l{layer}" + ("_reverse" if direction else "")
        kinds = ["weight_ih", "weight_hh"]
        if self.bias:
            kinds += ["bias_ih", "bias_hh"]
        weights = [getattr(self, k + suffix) for k in kinds]
        if not self.bias:
            weights += [None, None]
        if self.proj_size:
            weights.append(getattr(self, "weight_hr" + suffix))
        return weights

    def _initial_state(self, hx: Any, batch: int, x: Tensor, batched: bool) -> Any:
        """Check ``hx`` (or make zeros): (layers * directions, N, H), N omitted if unbatched."""
        name = type(self).__name__
        directions = 2 if self.bidirectional else 1
        out_size = self.proj_size or self.hidden_size
        shapes = [(self.num_layers * directions, batch, out_size)]
        if self.mode == "LSTM":
            shapes.append((self.num_layers * directions, batch, self.hidden_size))
        if hx is None:
            states = [zeros(*s, dtype=x.dtype, device=x.device) for s in shapes]
            return tuple(states) if self.mode == "LSTM" else states[0]
        given = hx if self.mode == "LSTM" else (hx,)
        if self.mode == "LSTM" and not (isinstance(hx, tuple) and len(hx) == 2):
            raise TypeError(f"{name}: hx must be a tuple (h_0, c_0), got {type(hx).__name__}")
        checked = []
        for what, state, shape in zip(("hidden", "cell"), given, shapes, strict=False):
            if not isinstance(state, Tensor):
                raise TypeError(f"{name}: hx must be a Tensor, got {type(state).__name__}")
            if not batched:
                if state.ndim != 2:
                    raise RuntimeError(
                        f"{name}: For unbatched 2-D input, hx should also be 2-D but got "
                        f"{state.ndim}-D tensor"
                    )
                state = state.unsqueeze(1)
            if tuple(state.shape) != shape:
                raise RuntimeError(f"{name}: Expected {what} size {shape}, got {list(state.shape)}")
            if state.dtype is not x.dtype:
                raise RuntimeError(
                    f"{name}: input and {what} state must have the same dtype, got "
                    f"{x.dtype.name} and {state.dtype.name}"
                )
            checked.append(state)
        return tuple(checked) if self.mode == "LSTM" else checked[0]

    def forward(self, input: Tensor | PackedSequence, hx: Any = None) -> tuple[Any, Any]:  # noqa: A002
        name = type(self).__name__
        packed = isinstance(input, PackedSequence)
        if packed:
            data, sizes = input.data, [int(s) for s in input.batch_sizes.tolist()]
            batch, batched = sizes[0], True
            if hx is not None and input.sorted_indices is not None:
                hx = _permute_state(hx, input.sorted_indices)
        else:
            if not isinstance(input, Tensor):
                raise TypeError(f"{name}: input must be a Tensor or a PackedSequence")
            if input.ndim not in (2, 3):
                raise ValueError(
                    f"{name}: Expected input to be 2D or 3D, got {input.ndim}D tensor instead"
                )
            batched = input.ndim == 3
            x = input if batched else input.unsqueeze(1)
            if batched and self.batch_first:
                x = x.transpose(0, 1)
            steps, batch = x.shape[0], x.shape[1]
            data, sizes = x.reshape(steps * batch, x.shape[2]), [batch] * steps
        if data.shape[-1] != self.input_size:
            raise RuntimeError(
                f"{name}: input.size(-1) must be equal to input_size. Expected "
                f"{self.input_size}, got {data.shape[-1]}"
            )
        if not data.dtype.is_floating_point:
            raise RuntimeError(f"{name}: expected a floating point input, got {data.dtype.name}")
        state = self._initial_state(hx, batch, data, batched)
        data, finals = self._run(data, sizes, state)
        if packed:
            output = PackedSequence(
                data, input.batch_sizes, input.sorted_indices, input.unsorted_indices
            )
            if input.unsorted_indices is not None:
                finals = _permute_state(finals, input.unsorted_indices)
            return output, finals
        output = data.reshape(len(sizes), batch, data.shape[-1])
        if not batched:
            return output.squeeze(1), _map_state(finals, lambda s: s.squeeze(1))
        if self.batch_first:
            output = output.transpose(0, 1)
        return output, finals

    def _run(self, data: Tensor, sizes: list[int], state: Any) -> tuple[Tensor, Any]:
        """All layers and directions over packed ``data``: the last layer's outputs and
        the stacked final states (layers * directions, N, H)."""
        directions = 2 if self.bidirectional else 1
        finals = []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                weights = self._layer_weights(layer, direction)
                xw = F.linear(data, weights[0], weights[2]).split(sizes)
                index = layer * directions + direction
                start = _map_state(state, lambda s, i=index: s[i])
                out, last = _run_direction(
                    self.mode, list(xw), sizes, start, weights, direction == 1
                )
                outputs.append(ops.cat(out))
                finals.append(last)
            data = outputs[0] if directions == 1 else ops.cat(outputs, dim=-1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                data = F.dropout(data, self.dropout, training=True)
        if self.mode == "LSTM":
            return data, (ops.stack([f[0] for f in finals]), ops.stack([f[1] for f in finals]))
        return data, ops.stack(finals)

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size:
            text += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        if not self.bias:
            text += ", bias=False"
        if self.batch_first:
            text += ", batch_first=True"
        if self.dropout:
            text += f", dropout={self.dropout}"
        if self.bidirectional:
            text += ", bidirectional=True"
        return text


def _map_state(state: Any, fn: Any) -> Any:
    return tuple(fn(s) for s in state) if isinstance(state, tuple) else fn(state)


def _permute_state(state: Any, indices: Tensor) -> Any:
    return _map_state(state, lambda s: s.index_select(1, indices.to(device=s.device)))


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or relu)."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        nonlinearity: str = "tanh",
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(
                f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        super().__init__(
            "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU",
            input_size,
            hidden_size,
            num_layers,
            bias,
            batch_first,
            dropout,
            bidirectional,
            device=device,
            dtype=dtype,
        )
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """Long short-term memory: gated cell state ``c`` beside ``h``; returns
    ``output, (h_n, c_n)``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    """Gated recurrent unit: reset and update gates, no separate cell state."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise TypeError("GRU: unexpected keyword argument 'proj_size'")
        super().__init__("GRU", *args, **kwargs)


# --- cells: one step, the state handed in and out by the caller -----------------------------
class RNNCellBase(Module):
    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool,
        gates: int,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        name = type(self).__name__
        self.input_size = as_size(input_size, name, "input_size")
        self.hidden_size = as_size(hidden_size, name, "hidden_size")
        self.bias = bias
        self.weight_ih = Parameter(
            empty(gates * hidden_size, input_size, dtype=dtype, device=device)
        )
        self.weight_hh = Parameter(
            empty(gates * hidden_size, hidden_size, dtype=dtype, device=device)
        )
        if bias:
            self.bias_ih = Parameter(empty(gates * hidden_size, dtype=dtype, device=device))
            self.bias_hh = Parameter(empty(gates * hidden_size, dtype=dtype, device=device))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    reset_parameters = RNNBase.reset_parameters

    def _prepare(self, x: Tensor, hx: Any) -> tuple[Tensor, Any, bool]:
        """``x`` as (N, input_size) and ``hx`` (zeros if None) as (N, H); batched or not."""
        name = type(self).__name__
        if not isinstance(x, Tensor) or x.ndim not in (1, 2):
            shape = x.shape if isinstance(x, Tensor) else type(x).__name__
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {shape} instead")
        batched = x.ndim == 2
        x = x if batched else x.unsqueeze(0)
        if x.shape[1] != self.input_size:
            raise RuntimeError(
                f"{name}: input has inconsistent input_size: got {x.shape[1]} expected "
                f"{self.input_size}"
            )
        states = hx if isinstance(hx, tuple) else (hx,)
        shaped = []
        for state in states:
            if state is None:
                state = zeros(x.shape[0], self.hidden_size, dtype=x.dtype, device=x.device)
            elif not batched:
                state = state.unsqueeze(0)
            if tuple(state.shape) != (x.shape[0], self.hidden_size):
                raise RuntimeError(
                    f"{name}: Expected hidden size {(x.shape[0], self.hidden_size)}, got "
                    f"{list(state.shape)}"
                )
            shaped.append(state)
        return x, tuple(shaped) if isinstance(hx, tuple) else shaped[0], batched

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if not self.bias:
            text += ", bias=False"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            text += f", nonlinearity={self.nonlinearity}"
        return text


class RNNCell(RNNCellBase):
    """One step of an Elman RNN: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)``."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {nonlinearity}")
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:  # noqa: A002
        x, h, batched = self._prepare(input, hx)
        mode = "RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU"
        h = _rnn_step(
            mode, F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh
        )
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: ``(h', c')`` from ``x`` and ``(h, c)``."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(
        self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:  # noqa: A002
        x, state, batched = self._prepare(input, (None, None) if hx is None else tuple(hx))
        xw = F.linear(x, self.weight_ih, self.bias_ih)
        h, c = _lstm_step(xw, state, self.weight_hh, self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step: ``h'`` from ``x`` and ``h``."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:  # noqa: A002
        x, h, batched = self._prepare(input, hx)
        h = _gru_step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh)
        return h if batched else h.squeeze(0)
