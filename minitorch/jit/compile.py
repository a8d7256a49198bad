"""``minitorch.compile``: torch.compile in miniature.

The first call for a given kind of input *traces* the function (``tracer.record``),
optimizes the graph (``passes.optimize``) and caches it together with **guards**: every
assumption the trace baked in -- each tensor argument's shape, dtype, device and
``requires_grad``, grad mode, the Python values of non-tensor arguments, the module's
``training`` flags and parameter shapes, the globals, closure variables and attributes
its code reads (and those of the helpers and methods it calls: ``read_guards``), and that
no captured tensor was written to since. A later call runs the cached graph when all
guards hold; when one fails it **recompiles** (up to ``cache_size_limit`` entries, then it
runs eagerly) and records which guard failed, as ``TORCH_LOGS=recompiles`` does.

What a graph can't hold runs **eagerly**, and ``explain()`` says why: code whose Python
statements change what it reads (``self.count += 1``, ``CACHE.append(x)``: a graph
replays ops, not statements), state too large to guard on every call, and results that
are not tensors.

A tensor becoming a Python value (``if x.sum() > 0:``) is a **graph break**: rather than
bake in the branch it saw, the compiled function runs in pieces -- the graph up to the
break, then Python decides (``bool(t)``), then the graph compiled for that outcome.
Outcomes not seen yet are traced when they first happen. Every piece runs through
``Function.apply``, so the compiled function is differentiable like the eager one.
"""

from __future__ import annotations

import functools
import inspect
import logging
import warnings
from typing import Any

import numpy as np

from .. import random
from ..amp.autocast_mode import _state as autocast_state
from ..autograd import is_grad_enabled
from ..checks import as_bool, as_number, describe
from ..tensor import Tensor
from .interpreter import run_graph
from .ir import Graph, Node, Value
from .passes import optimize
from .read_guards import Guard, Unguardable, fingerprint, read_guards
from .tracer import Break, NotTensors, TracerWarning, attr_table, input_names, record

log = logging.getLogger("minitorch.compile")


def tensor_guards(name: str, index: int, t: Tensor) -> list[Guard]:
    """Guards on a tensor argument: shape, dtype, device and requires_grad."""
    shape, dtype, device, grad = tuple(t.shape), t.dtype, t.device, t.requires_grad

    def arg(args: tuple) -> Any:
        return args[index] if index < len(args) else None

    def is_tensor(args, kwargs):
        a = arg(args)
        return None if isinstance(a, Tensor) else f"{name!r} is no longer a tensor"

    def same_shape(args, kwargs):
        got = tuple(arg(args).shape)
        if len(got) != len(shape):
            return f"tensor {name!r} ndim mismatch: expected {len(shape)}, actual {len(got)}"
        for i, (e, a) in enumerate(zip(shape, got, strict=True)):
            if e != a:
                return f"tensor {name!r} size mismatch at index {i}. expected {e}, actual {a}"
        return None

    def same_dtype(args, kwargs):
        got = arg(args).dtype
        return (
            None
            if got == dtype
            else f"tensor {name!r} dtype mismatch. expected {dtype.name}, actual {got.name}"
        )  # noqa: E501

    def same_device(args, kwargs):
        got = arg(args).device
        return (
            None
            if got == device
            else f"tensor {name!r} device mismatch. expected {device}, actual {got}"
        )  # noqa: E501

    def same_grad(args, kwargs):
        got = arg(args).requires_grad
        return (
            None
            if got == grad
            else f"tensor {name!r} requires_grad mismatch. expected {grad}, actual {got}"
        )  # noqa: E501

    return [
        Guard(f"{name} is a Tensor", is_tensor),
        Guard(f"{name}.shape == {shape}", same_shape),
        Guard(f"{name}.dtype == {dtype.name}", same_dtype),
        Guard(f"{name}.device == {device}", same_device),
        Guard(f"{name}.requires_grad == {grad}", same_grad),
    ]


def value_guard(name: str, index: int | str, value: Any) -> Guard:
    """A Python argument (or keyword) the trace used as a constant: compared by its
    fingerprint, so a list or dict changed in place since is seen (``read_guards``)."""
    expected = fingerprint(value, f"argument {name!r}")
    shown = repr(value)

    def check(args, kwargs):
        got = kwargs.get(index) if isinstance(index, str) else args[index]
        if type(got) is type(value) and fingerprint(got, f"argument {name!r}") == expected:
            return None
        return f"{name} == {shown} failed: it is now {got!r}"

    return Guard(f"{name} == {shown}", check)


def layout_guard(name: str, index: int, t: Tensor) -> Guard:
    """A tensor argument's strides (``x.is_contiguous()`` and ``x.stride()`` are Python
    values a trace bakes in)."""
    strides = tuple(t.stride())

    def check(args, kwargs):
        got = tuple(args[index].stride())
        if got == strides:
            return None
        return f"tensor {name!r} stride mismatch. expected {strides}, actual {got}"

    return Guard(f"{name}.stride() == {strides}", check)


def autocast_guard() -> Guard:
    """The autocast regions open when it was traced: a graph traced inside one holds the
    casts it made."""
    traced = dict(autocast_state.dtypes)

    def check(args, kwargs):
        now = dict(autocast_state.dtypes)
        if now == traced:
            return None
        return f"autocast state mismatch. expected {_regions(traced)}, actual {_regions(now)}"

    return Guard(f"autocast == {_regions(traced)}", check)


def _regions(dtypes: dict) -> str:
    return "{" + ", ".join(f"{k}: {v.name}" for k, v in dtypes.items()) + "}"


def grad_mode_guard() -> Guard:
    enabled = is_grad_enabled()

    def check(args, kwargs):
        now = is_grad_enabled()
        return None if now == enabled else f"grad mode mismatch. expected {enabled}, actual {now}"

    return Guard(f"is_grad_enabled() == {enabled}", check)


def module_guards(module: Any) -> list[Guard]:
    """The module's training flags, its tree of submodules and their forward hooks, and its
    parameters' shapes and requires_grad."""
    guards = []
    for prefix, m in module.named_modules():
        training = m.training
        where = f"self.{prefix}" if prefix else "self"

        def check_training(args, kwargs, m=m, training=training, where=where):
            if m.training == training:
                return None
            return f"{where}.training == {training} failed: it is now {m.training}"

        guards.append(Guard(f"{where}.training == {training}", check_training))
    guards.append(_tree_guard(module))
    traced = [(n, tuple(p.shape), p.requires_grad) for n, p in module.named_parameters()]

    def check_params(args, kwargs):
        now = [(n, tuple(p.shape), p.requires_grad) for n, p in module.named_parameters()]
        if now == traced:
            return None
        name, shape, grad = next(
            (a for a, b in zip(traced, now, strict=False) if a != b), traced[-1]
        )
        return f"parameter self.{name} changed (shape {shape}, requires_grad {grad})"

    guards.append(Guard("the parameters' names, shapes and requires_grad", check_params))
    return guards


def _tree_guard(module: Any) -> Guard:
    """Which submodules the module holds (``model.act = nn.Tanh()`` after compiling) and
    their forward hooks (registered or removed since)."""

    def tree() -> tuple:
        return tuple(
            (prefix, id(m), tuple(m._forward_pre_hooks), tuple(m._forward_hooks))
            for prefix, m in module.named_modules()
        )

    traced = tree()

    def check(args, kwargs):
        now = tree()
        if now == traced:
            return None
        for before, after in zip(traced, now, strict=False):
            if before[:2] != after[:2]:
                return f"submodule self.{after[0] or before[0]} was replaced, added or removed"
            if before != after:
                return f"the forward hooks of self.{after[0]}".rstrip(".") + " changed"
        return "a submodule was added or removed"

    return Guard("the submodule tree and its forward hooks", check)


def constant_guards(graph: Graph) -> list[Guard]:
    """Captured tensors (constants) must not have been written to since the trace."""
    guards = []
    for node in graph.walk():
        value = node.args[0] if node.op == "constant" and node.args else None
        if isinstance(value, Tensor):
            version = value._version

            def check(args, kwargs, t=value, version=version, name=node.outputs[0].name):
                if t._version == version:
                    return None
                return f"captured tensor %{name} was modified in place (version {version} -> {t._version})"  # noqa: E501

            guards.append(Guard(f"captured %{node.outputs[0].name} unchanged", check))
    return guards


# --- pieces: a trace cut at its graph breaks -------------------------------------------------


class Piece:
    """One compiled segment: reads ``inputs`` (value names) from the values computed so
    far, writes ``outputs``; then, if it ends at a graph break, Python converts the value
    ``break_.value`` and the piece for that outcome (``children``) continues."""

    def __init__(self, graph: Graph, ops: list[str], inputs: list[str], outputs: list[str]):
        self.graph, self.ops, self.inputs, self.outputs = graph, ops, inputs, outputs
        self.break_: Break | None = None
        self.children: dict[Any, Piece] = {}
        self.final: list[str] = []  # the program's outputs (last piece only)


def split_at_breaks(graph: Graph, breaks: list[Break], do_optimize: bool) -> Piece:
    """Cut a traced graph into a chain of pieces, one per segment between breaks."""
    cuts = [b.position for b in breaks] + [len(graph.nodes)]
    needed_later: list[set[str]] = []
    later: set[str] = {v.name for v in graph.outputs}
    for k in range(len(cuts) - 1, -1, -1):  # what each segment must hand on
        needed_later.insert(0, set(later))
        start = cuts[k - 1] if k else 0
        for node in graph.nodes[start : cuts[k]]:
            later.update(v.name for v in node.inputs)
        if k:
            later.add(breaks[k - 1].value.name)
    first: Piece | None = None
    previous: Piece | None = None
    start = 0
    for k, end in enumerate(cuts):
        nodes = graph.nodes[start:end]
        hand_on = set(needed_later[k]) | ({breaks[k].value.name} if k < len(breaks) else set())
        piece = _piece(nodes, hand_on, do_optimize)
        if k < len(breaks):
            piece.break_ = breaks[k]
        else:
            piece.final = [v.name for v in graph.outputs]
        if previous is None:
            first = piece
        else:
            previous.children[_key(previous.break_.result)] = piece
        previous, start = piece, end
    assert first is not None
    return first


def _piece(nodes: list[Node], hand_on: set[str], do_optimize: bool) -> Piece:
    defined = {v.name for n in nodes for v in n.outputs}
    inputs: dict[str, Value] = {}
    for n in nodes:
        for v in n.inputs:
            if v.name not in defined:
                inputs.setdefault(v.name, v)
    sub = Graph(list(inputs.values()))
    sub.nodes = list(nodes)
    sub.outputs = [v for n in nodes for v in n.outputs if v.name in hand_on]
    sub._names = set(inputs) | defined
    sub.tuple_output = True
    graph = optimize(sub) if do_optimize else sub.copy()
    return Piece(graph, [n.op for n in nodes], list(inputs), [v.name for v in sub.outputs])


def _key(result: Any) -> Any:
    """A break outcome as a dict key: arrays and lists by their contents."""
    if isinstance(result, np.ndarray):
        return ("ndarray", str(result.dtype), repr(result.tolist()))
    return repr(result) if isinstance(result, (list, dict)) else (type(result).__name__, result)


def _convert(value: Any, kind: str) -> Any:
    """Redo the conversion the break was: ``bool(t)``, ``t.item()``, ..."""
    if kind == "bool":
        return bool(value)
    if kind == "int":
        return int(value)
    if kind == "float":
        return float(value)
    if kind == "tolist":
        return value.tolist()
    if kind == "numpy":
        return value.detach().numpy()
    return value.item()


# --- the compiled function -----------------------------------------------------------------


class _Entry:
    def __init__(self, guards: list[Guard], root: Piece, tuple_output: bool) -> None:
        self.guards, self.root, self.tuple_output = guards, root, tuple_output
        self.break_count = 0

    def failed_guard(self, args: tuple, kwargs: dict) -> str | None:
        found = self.first_failure(args, kwargs)
        return None if found is None else found[1]

    def first_failure(self, args: tuple, kwargs: dict) -> tuple[int, str] | None:
        """(position, message) of the first guard that fails, or None when all hold."""
        for i, guard in enumerate(self.guards):
            try:
                problem = guard.check(args, kwargs)
            except Exception as err:  # an argument of another kind entirely
                problem = f"{guard.description} could not be checked ({err})"
            if problem is not None:
                return i, problem
        return None


class CompiledFunction:
    """What ``minitorch.compile`` returns: call it like the original."""

    def __init__(
        self,
        fn: Any,
        cache_size_limit: int,
        fullgraph: bool,
        do_optimize: bool,
        settings: dict | None = None,
    ):
        from ..nn import Module

        self.fn = fn
        self.module = fn if isinstance(fn, Module) else None
        self.forward = self.module.forward if self.module is not None else fn
        self.cache_size_limit = cache_size_limit
        self.fullgraph = fullgraph
        self.do_optimize = do_optimize
        self.settings = dict(settings or {})  # backend, mode, dynamic (as given)
        self.entries: list[_Entry] = []
        self.recompile_reasons: list[str] = []
        self.graph_breaks: list[str] = []  # "file:line (kind)" of each break seen
        self.frame_count = 0  # how many times it traced
        self.eager_reason: str | None = None  # set: runs eagerly from now on, and why
        functools.update_wrapper(self, self.forward, updated=())

    def __getattr__(self, name: str) -> Any:
        """Everything else (``parameters()``, ``zero_grad()``, ``eval()``) is the original's,
        as for the module ``torch.compile`` returns."""
        fn = self.__dict__.get("fn")
        if fn is None:
            raise AttributeError(name)
        return getattr(fn, name)

    def __repr__(self) -> str:
        return f"<compiled {getattr(self.forward, '__qualname__', self.forward)!r}>"

    @property
    def name(self) -> str:
        return getattr(self.forward, "__qualname__", type(self.fn).__name__)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.eager_reason is not None:
            return self.fn(*args, **kwargs)
        args, kwargs = self._bind(args, kwargs)
        for entry in self.entries:
            if entry.failed_guard(args, kwargs) is None:
                return self._run(entry, args, kwargs)
        if self.entries:
            # the entry that got furthest through its guards is the nearest miss
            _, reason = max(e.first_failure(args, kwargs) for e in self.entries)
            if len(self.entries) >= self.cache_size_limit:
                message = (
                    f"minitorch.compile: {self.name} hit the recompile limit "
                    f"(cache_size_limit={self.cache_size_limit}); the last guard that failed: "
                    f"{reason}. Running it eagerly from now on for new inputs."
                )
                if message not in self.recompile_reasons:
                    warnings.warn(message, RuntimeWarning, stacklevel=2)
                    self.recompile_reasons.append(message)
                return self.fn(*args, **kwargs)
            message = f"Recompiling function {self.name}: triggered by the guard failure: {reason}"
            self.recompile_reasons.append(message)
            log.info(message)
        return self._compile(args, kwargs)

    def _bind(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """The call with every argument that can be positional made positional, and the
        defaults filled in: ``f(x, y=t)`` is ``f(x, t)``, and a default is guarded as any
        argument is. (A call that does not fit the signature is left as it is: running it
        gives Python's own error.)"""
        signature = self.__dict__.get("_signature")
        if signature is None:
            try:
                signature = inspect.signature(self.forward)
            except (TypeError, ValueError):
                signature = False
            self._signature = signature
        if signature is False:
            return args, kwargs
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            return args, kwargs
        bound.apply_defaults()
        return bound.args, bound.kwargs

    def _input_names(self, count: int) -> list[str]:
        """The graph's input names for ``count`` arguments (the signature, read once)."""
        cache = self.__dict__.setdefault("_names", {})
        if count not in cache:
            cache[count] = input_names(self.forward, count)
        return cache[count]

    # --- tracing ------------------------------------------------------------------------
    def _trace(self, args: tuple, kwargs: dict) -> tuple[Graph, Any, list[Break]]:
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        for k, v in kwargs.items():
            if isinstance(v, Tensor):
                raise TypeError(
                    f"minitorch.compile: pass tensors positionally (keyword {k!r} is a tensor)"
                )

        def program(*tensors: Tensor) -> Any:
            full = list(args)
            for i, t in zip(positions, tensors, strict=True):
                full[i] = t
            return self.fn(*full, **kwargs)

        names = self._input_names(len(args))
        attrs = attr_table(self.module)
        self.frame_count += 1
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TracerWarning)
            graph, out, breaks = record(
                program, [args[i] for i in positions], [names[i] for i in positions], attrs
            )
        return graph, out, breaks

    def _guards(
        self, args: tuple, kwargs: dict, graph: Graph, reads: list[Guard] | None = None
    ) -> list[Guard]:
        """Every guard of a new cache entry; ``reads`` (the globals, closure cells and
        attributes the code reads) were taken before the trace ran."""
        names = self._input_names(len(args))
        guards = [grad_mode_guard(), autocast_guard()]
        for i, a in enumerate(args):
            if isinstance(a, Tensor):
                guards += tensor_guards(names[i], i, a)
                guards.append(layout_guard(names[i], i, a))
            else:
                guards.append(value_guard(names[i], i, a))
        for k, v in kwargs.items():
            guards.append(value_guard(k, k, v))
        keywords = sorted(kwargs)

        def same_keywords(args: tuple, kwargs: dict) -> str | None:
            now = sorted(kwargs)
            return None if now == keywords else f"keywords {keywords} changed: now {now}"

        guards.append(Guard(f"keywords == {keywords}", same_keywords))
        if self.module is not None:
            guards += module_guards(self.module)
        guards += read_guards(self.forward, self.module) if reads is None else reads
        guards += constant_guards(graph)
        return guards

    def _compile(self, args: tuple, kwargs: dict) -> Any:
        try:
            reads = read_guards(self.forward, self.module)
        except Unguardable as err:
            return self._go_eager(str(err), args, kwargs)
        rng = random.default_generator.rng
        try:
            graph, out, breaks = self._trace(args, kwargs)
        except NotTensors as err:
            self._note_eager(
                f"{self.name} returns {err.what}: a compiled graph returns tensors (or a "
                "tuple or list of them)"
            )
            return err.out
        problem = self._unrecordable(graph, reads, rng, args, kwargs)
        if problem is None:
            try:
                guards = self._guards(args, kwargs, graph, reads)
            except Unguardable as err:
                problem = str(err)
        if problem is not None:
            self._note_eager(problem)
            return out  # (the trace ran the function eagerly: this is eager's answer)
        if breaks and self.fullgraph:
            b = breaks[0]
            raise RuntimeError(
                f"minitorch.compile(fullgraph=True): graph break at {b.line}: a tensor was "
                f"converted to a Python value ({b.kind}), so the function can't be one graph"
            )
        self._note_breaks(breaks)
        root = split_at_breaks(graph, breaks, self.do_optimize)
        self.entries.append(_Entry(guards, root, graph.tuple_output))
        return out

    def _unrecordable(
        self, graph: Graph, reads: list[Guard], rng: Any, args: tuple, kwargs: dict
    ) -> str | None:
        """Why the traced run did something its graph can't replay (None if it did not):
        Python statements that changed what the code reads (a side effect), switching
        autograd off or on inside, re-seeding the random generator."""
        changed = [r for r in (g.check(args, kwargs) for g in reads) if r is not None]
        if changed:
            return (
                f"{changed[0]} while {self.name} ran: a compiled graph replays the ops, not "
                "the Python statements that change state"
            )
        if len(graph.grad_modes) > 1:
            return (
                f"{self.name} switches autograd off or on inside (no_grad, enable_grad): a "
                "graph records the ops, not the grad mode they ran in"
            )
        if random.default_generator.rng is not rng:
            return (
                f"{self.name} re-seeds the random generator (manual_seed): a graph's random "
                "ops draw on from the generator, they do not re-seed it"
            )
        return None

    def _go_eager(self, reason: str, args: tuple, kwargs: dict) -> Any:
        self._note_eager(reason)
        return self.fn(*args, **kwargs)

    def _note_eager(self, reason: str) -> None:
        """From now on every call runs the original function; ``explain()`` says why."""
        if self.fullgraph:
            raise RuntimeError(f"minitorch.compile(fullgraph=True): can't compile: {reason}")
        self.eager_reason = reason
        message = f"minitorch.compile: {reason}; running {self.name} eagerly"
        warnings.warn(message, RuntimeWarning, stacklevel=4)
        log.info(message)

    def _note_breaks(self, breaks: list[Break]) -> None:
        for b in breaks:
            where = f"{b.line} ({b.kind})"
            if where not in self.graph_breaks:
                self.graph_breaks.append(where)
                log.info("Graph break at %s: a tensor became a Python value", where)

    def _extend(self, entry: _Entry, args: tuple, kwargs: dict) -> Any:
        """A break outcome not seen before: trace again and graft the new path on."""
        graph, out, breaks = self._trace(args, kwargs)
        self._note_breaks(breaks)
        new = split_at_breaks(graph, breaks, self.do_optimize)
        old = entry.root
        while True:
            if new.ops != old.ops or new.break_ is None or old.break_ is None:
                break  # the program changed in a way guards did not see: keep eager's answer
            key = _key(new.break_.result)
            nxt_new = new.children[key]
            if key not in old.children:
                old.children[key] = nxt_new
                break
            old, new = old.children[key], nxt_new
        return out

    # --- running ------------------------------------------------------------------------
    def _run(self, entry: _Entry, args: tuple, kwargs: dict) -> Any:
        attrs = self._attrs()
        env: dict[str, Any] = {}
        names = self._input_names(len(args))
        for name, a in zip(names, args, strict=True):
            if isinstance(a, Tensor):
                env[name] = a
        piece = entry.root
        while True:
            outs = run_graph(piece.graph, [env[n] for n in piece.inputs], attrs)
            env.update(zip(piece.outputs, outs, strict=True))
            if piece.break_ is None:
                results = [env[n] for n in piece.final]
                return tuple(results) if entry.tuple_output else results[0]
            b = piece.break_
            outcome = _convert(env[b.value.name], b.kind)
            child = piece.children.get(_key(outcome))
            if child is None:
                return self._extend(entry, args, kwargs)
            piece = child

    def _attrs(self) -> dict[str, Tensor]:
        if self.module is None:
            return {}
        values = dict(self.module.named_parameters())
        values.update((k, v) for k, v in self.module.named_buffers() if v is not None)
        return values

    # --- reporting ----------------------------------------------------------------------
    def explain(self) -> str:
        """How many graphs were compiled, where the graph breaks are, why it recompiled
        (and, if it runs eagerly, why)."""
        lines = [
            f"compiled {self.name}: {len(self.entries)} cache entr"
            f"{'y' if len(self.entries) == 1 else 'ies'}, traced {self.frame_count} times",
        ]
        if self.settings:
            lines.append("settings: " + ", ".join(f"{k}={v!r}" for k, v in self.settings.items()))
        if self.eager_reason is not None:
            lines.append(f"runs eagerly: {self.eager_reason}")
        lines.append(f"graph breaks: {len(self.graph_breaks)}")
        lines += [f"  - {b}" for b in self.graph_breaks]
        lines += [f"recompiles: {len(self.recompile_reasons)}"]
        lines += [f"  - {r}" for r in self.recompile_reasons]
        return "\n".join(lines)

    def graphs(self) -> list[Graph]:
        """The optimized graph of every piece of every cache entry."""
        out: list[Graph] = []

        def walk(p: Piece) -> None:
            out.append(p.graph)
            for c in p.children.values():
                walk(c)

        for e in self.entries:
            walk(e.root)
        return out


#: ``backend=``: what runs the captured graph. minitorch has one compiler, its passes
#: (``jit.optimize``: folding, dead code, CSE, fusion); ``"eager"`` and ``"aot_eager"``
#: run the captured graph as it was recorded, as PyTorch's debugging backends do.
BACKENDS = {"inductor": True, "eager": False, "aot_eager": False}
#: ``mode=``: PyTorch's modes. On minitorch they compile the same graph (there are no CUDA
#: graphs to capture or kernels to autotune), so each is accepted and means the default.
MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")


def _check_settings(backend: Any, mode: Any, options: Any, dynamic: Any, disable: Any) -> bool:
    """torch.compile's options, checked at ``compile(...)``; returns whether to optimize."""
    if backend is None:
        backend = "inductor"
    if not isinstance(backend, str) or backend not in BACKENDS:
        kind = (
            "a callable (a custom backend gets a torch.fx GraphModule of the captured graph; "
            "minitorch.compile captures chapter 05's IR and hands it to no callable: "
            "minitorch.fx.symbolic_trace gives a GraphModule)"
            if callable(backend)
            else describe(backend)
        )
        raise ValueError(
            f"minitorch.compile: backend must be one of {', '.join(map(repr, BACKENDS))}, but "
            f"got {kind}"
        )
    if mode is not None and (not isinstance(mode, str) or mode not in MODES):
        raise RuntimeError(
            f"minitorch.compile: Unrecognized mode={mode!r}, should be one of: {', '.join(MODES)}"
        )
    if options is not None:
        if mode is not None:
            raise RuntimeError(
                "minitorch.compile: Either mode or options can be specified, but both can't be "
                "specified at the same time."
            )
        if not isinstance(options, dict):
            raise TypeError(
                f"minitorch.compile: options must be a dict of inductor settings, but got "
                f"{describe(options)}"
            )
        if options:
            raise RuntimeError(
                f"minitorch.compile: unexpected optimization option(s) {sorted(options)}: "
                "options are TorchInductor's settings, and minitorch's compiler has none"
            )
    if dynamic is not None:
        as_bool(dynamic, "minitorch.compile", "dynamic")
    as_bool(disable, "minitorch.compile", "disable")
    return BACKENDS[backend]


def compile(  # noqa: A001 - PyTorch's name
    model: Any = None,
    *,
    fullgraph: bool = False,
    dynamic: bool | None = None,
    backend: Any = "inductor",
    mode: str | None = None,
    options: dict | None = None,
    disable: bool = False,
    recompile_limit: int | None = None,
    cache_size_limit: int = 8,
    optimize: bool = True,
) -> Any:
    """Compile a function or Module: trace, optimize and cache a graph per input signature,
    guarded; graph breaks at data-dependent control flow. Usable as ``@minitorch.compile``
    or ``@minitorch.compile(fullgraph=True)``.

    PyTorch's options: ``backend`` (``"inductor"``: the optimizing passes; ``"eager"`` /
    ``"aot_eager"``: the graph as recorded), ``mode`` (each of PyTorch's modes compiles the
    same graph here), ``dynamic`` (accepted; graphs are specialized to shapes either way, a
    new shape compiles its own), ``disable=True`` (returns the function itself),
    ``recompile_limit`` (``cache_size_limit``: how many graphs before it runs eagerly).
    """
    limit = cache_size_limit if recompile_limit is None else recompile_limit
    name = "cache_size_limit" if recompile_limit is None else "recompile_limit"
    as_number(limit, "minitorch.compile", name, low=1, integer=True)
    as_bool(fullgraph, "minitorch.compile", "fullgraph")
    as_bool(optimize, "minitorch.compile", "optimize")
    passes = _check_settings(backend, mode, options, dynamic, disable) and optimize
    settings = {
        k: v
        for k, v in {"backend": backend, "mode": mode, "dynamic": dynamic}.items()
        if v is not None and not (k == "backend" and v == "inductor")
    }
    if model is None:
        return lambda f: compile(
            f,
            fullgraph=fullgraph,
            dynamic=dynamic,
            backend=backend,
            mode=mode,
            options=options,
            disable=disable,
            cache_size_limit=limit,
            optimize=optimize,
        )
    if not callable(model):
        raise TypeError(
            f"minitorch.compile: expected a function or Module, but got {describe(model)}"
        )
    if inspect.isclass(model):
        raise TypeError(
            "minitorch.compile: pass a Module instance or a function, not the class "
            f"{model.__name__}"
        )
    if disable:
        return model
    return CompiledFunction(model, limit, fullgraph, passes, settings)
