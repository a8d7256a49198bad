"""Seedable random numbers: ``minitorch.manual_seed(0)`` makes every run repeat exactly."""

from __future__ import annotations

import numpy as np


class Generator:
    """A random stream (numpy's PCG64) with PyTorch's ``manual_seed`` / ``initial_seed``."""

    def __init__(self, seed: int = 0, *, device: object = "cpu") -> None:
        kind = str(device).split(":")[0]
        if kind == "cuda":
            from .backend import BACKENDS  # (the array backend: not the cuda package)

            if not BACKENDS["cuda"].is_available():
                raise RuntimeError(
                    f"Generator(device={str(device)!r}): no CUDA device is available "
                    "(minitorch.cuda.is_available() is False); use Generator(device='cpu')"
                )
        elif kind != "cpu":
            raise RuntimeError(
                f"Generator: unsupported device {str(device)!r}; use 'cpu' or 'cuda'"
            )
        self.device = str(device)
        self.manual_seed(seed)

    def manual_seed(self, seed: int) -> Generator:
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise TypeError(f"manual_seed: seed must be an int, got {type(seed).__name__} {seed!r}")
        if not -(2**63) <= seed < 2**64:
            raise ValueError(f"manual_seed: seed must be in [-2**63, 2**64), but got {seed}")
        self._seed = int(seed) % 2**64  # a negative seed wraps, as PyTorch's does
        self.rng = np.random.Generator(np.random.PCG64(self._seed))
        return self

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> dict:
        return self.rng.bit_generator.state

    def set_state(self, state: dict) -> None:
        self.rng.bit_generator.state = state


default_generator = Generator(0)


def manual_seed(seed: int) -> Generator:
    """Seed the default generator (used when no ``generator=`` is passed)."""
    return default_generator.manual_seed(seed)


def initial_seed() -> int:
    return default_generator.initial_seed()


def rng_of(generator: Generator | None) -> np.random.Generator:
    if generator is not None and not isinstance(generator, Generator):
        raise TypeError(
            f"generator must be a minitorch.Generator or None, but got "
            f"{type(generator).__name__} {generator!r:.40}"
        )
    return (generator or default_generator).rng
