"""Chapter 03's pieces in the framework: the module tree, Linear, the loss, the optimizers,
clipping and the DataLoader."""

from __future__ import annotations

from typing import Any

from .. import optim
from ..amp import autocast_mode
from ..data import dataloader, sampler
from ..data.collate import default_collate
from ..nn import functional, linear, module, utils
from ..tensor import Tensor
from .patching import transplant
from .pieces import piece


@piece("03.1", "named_parameters", site="Module.named_parameters and .parameters()")
def _named_parameters(mine: Any, named_parameters: Any) -> None:
    learner = mine.wrap("03.1", "named_parameters", named_parameters)
    package = module.Module.named_parameters

    def walk(self: Any, prefix: str = "", recurse: bool = True) -> Any:
        if not recurse:
            mine.package_ran("03.1", "recurse=False")
            return package(self, prefix, recurse)
        return learner(self, prefix)

    mine.patches.replace(module.Module, "named_parameters", walk)


@piece("03.2", "Linear.__init__", "Linear.forward", site="every nn.Linear: its init and forward")
def _linear(mine: Any, init: Any, forward: Any) -> None:
    cls = linear.Linear
    learner_init = mine.wrap("03.2", "Linear.__init__", transplant(init, cls))
    package_init = cls.__init__

    def make(
        self: Any, in_features: int, out_features: int, bias: bool = True, **kwargs: Any
    ) -> None:
        if kwargs:  # dtype=, device=: beyond the exercise
            mine.package_ran("03.2", "Linear(dtype=/device=)")
            return package_init(self, in_features, out_features, bias, **kwargs)
        learner_init(self, in_features, out_features, bias)

    mine.patches.replace(cls, "__init__", make)
    mine.patches.replace(
        cls, "forward", mine.wrap("03.2", "Linear.forward", transplant(forward, cls))
    )


@piece("03.3", "cross_entropy", site="F.cross_entropy and nn.CrossEntropyLoss on class indices")
def _cross_entropy(mine: Any, cross_entropy: Any) -> None:
    learner = mine.wrap("03.3", "cross_entropy", cross_entropy)
    package = functional.cross_entropy

    def loss(
        input: Any,
        target: Any,
        weight: Any = None,
        ignore_index: int = -100,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ) -> Any:
        plain = (
            weight is None
            and reduction == "mean"
            and not label_smoothing
            and isinstance(input, Tensor)
            and isinstance(target, Tensor)
            and input.ndim == 2
            and target.ndim == 1
            and not target.is_floating_point()
        )
        if not plain:
            mine.package_ran("03.3", "weights, reductions, smoothing or probabilities")
            return package(input, target, weight, ignore_index, reduction, label_smoothing)
        if autocast_mode._state.dtypes:  # autocast runs the loss in float32, as for the package's
            (input,) = autocast_mode.cast_inputs("cross_entropy", (input,))
        return learner(input, target)

    mine.patches.replace(functional, "cross_entropy", loss)


def _groups_only_use(optimizer: Any, defaults: dict) -> bool:
    return all(
        group.get(k, v) == v for group in optimizer.param_groups for k, v in defaults.items()
    )


def _install_step(mine: Any, exercise: str, cls: type, step: Any, defaults: dict) -> None:
    learner = mine.wrap(exercise, f"{cls.__name__}.step", transplant(step, cls))
    package = cls.step

    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        if type(self) is cls and not args and not kwargs and _groups_only_use(self, defaults):
            return learner(self)
        mine.package_ran(exercise, "options beyond the exercise, a closure or a subclass")
        return package(self, *args, **kwargs)

    mine.patches.replace(cls, "step", run)


@piece("03.4", "SGD.step", site="optim.SGD.step (lr and momentum)")
def _sgd(mine: Any, step: Any) -> None:
    plain = dict(dampening=0, nesterov=False, weight_decay=0, maximize=False)
    _install_step(mine, "03.4", optim.SGD, step, plain)


@piece("03.5", "Adam.step", site="optim.Adam.step (lr, betas and eps)")
def _adam(mine: Any, step: Any) -> None:
    plain = dict(weight_decay=0, amsgrad=False, maximize=False)
    _install_step(mine, "03.5", optim.Adam, step, plain)


@piece("03.6", "clip_grad_norm_", site="nn.utils.clip_grad_norm_ (the 2-norm)")
def _clip(mine: Any, clip_grad_norm_: Any) -> None:
    learner = mine.wrap("03.6", "clip_grad_norm_", clip_grad_norm_)
    package = utils.clip_grad_norm_

    def clip(
        parameters: Any, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False
    ) -> Any:
        if norm_type != 2.0 or error_if_nonfinite:
            mine.package_ran("03.6", "another norm_type or error_if_nonfinite")
            return package(parameters, max_norm, norm_type, error_if_nonfinite)
        params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
        return learner(params, max_norm)

    mine.patches.replace(utils, "clip_grad_norm_", clip)


@piece("03.7", "DataLoader", site="data.DataLoader: shuffling and batching")
def _loader(mine: Any, learner_cls: Any) -> None:
    cls = dataloader.DataLoader
    package_iter, package_len = cls.__iter__, cls.__len__

    def yours(self: Any) -> Any:
        """The learner's loader with the same settings, or None when it can't stand in."""
        kind = type(self.sampler)
        plain_shuffle = kind is not sampler.RandomSampler or (
            not self.sampler.replacement and self.sampler._num_samples is None
        )
        if (
            not plain_shuffle
            or kind not in (sampler.RandomSampler, sampler.SequentialSampler)
            or type(self.batch_sampler) is not sampler.BatchSampler
            or self.collate_fn is not default_collate
        ):
            return None
        shuffle = kind is sampler.RandomSampler
        settings = (id(self.dataset), self.batch_size, shuffle, id(self.generator), self.drop_last)
        made = self.__dict__.get("_yours")
        if made is None or made[0] != settings:  # one loader of theirs per loader, kept
            made = self._yours = (
                settings,
                learner_cls(self.dataset, self.batch_size, shuffle, self.generator, self.drop_last),
            )
        return made[1]

    iterate = mine.wrap("03.7", "DataLoader.__iter__", lambda loader: iter(loader))
    count = mine.wrap("03.7", "DataLoader.__len__", lambda loader: len(loader))

    def __iter__(self: Any) -> Any:
        theirs = yours(self)
        if theirs is None:
            mine.package_ran("03.7", "a sampler, batch_sampler or collate_fn")
            return package_iter(self)
        return _in_step(iterate(theirs), self)

    def __len__(self: Any) -> int:
        theirs = yours(self)
        return package_len(self) if theirs is None else count(theirs)

    mine.patches.replace(cls, "__iter__", __iter__)
    mine.patches.replace(cls, "__len__", __len__)


def _in_step(batches: Any, loader: Any) -> Any:
    """The learner's batches; at the end of a shuffled epoch, the one more permutation that
    PyTorch's RandomSampler draws (its second ``randperm``, cut to the epoch's remainder),
    so that the generator, and with it the next epoch's order, stays the package's."""
    yield from batches
    if type(loader.sampler) is sampler.RandomSampler:
        from ..creation import randperm

        randperm(len(loader.dataset), generator=loader.generator)
