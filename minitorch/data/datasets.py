"""Real data that works offline, loaded the way your own data would be.

``from_arrays(images, labels)`` turns numpy arrays into a ``TensorDataset`` of float32
images ``(N, C, H, W)`` and int64 labels; ``stratified_split`` makes a reproducible
train/test split that keeps class proportions. ``load_digits`` is nothing more than
those two applied to scikit-learn's bundled 8x8 handwritten digits (1797 images,
classes 0-9, pixel values 0-16), which ship inside scikit-learn: no download.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np

from ..creation import from_numpy
from .dataset import TensorDataset


def from_arrays(images: Any, labels: Any, *, max_value: float | None = None) -> TensorDataset:
    """A dataset of ``(image, label)`` pairs from array-likes of images and integer labels.

    ``images`` has shape ``(N, H, W)`` (a channel dim is added) or ``(N, C, H, W)``;
    pixels are divided by ``max_value`` (default: 255 for uint8 images, else 1, i.e.
    unchanged) and stored as float32. ``labels`` are ``N`` non-negative integers (int64).
    """
    x = np.asarray(images)
    y = np.asarray(labels)
    if x.dtype.kind not in "biuf":
        raise TypeError(f"from_arrays: images must be numeric, got dtype {x.dtype}")
    if x.ndim == 3:
        x = x[:, None]
    if x.ndim != 4:
        raise ValueError(
            f"from_arrays: images must have shape (N, H, W) or (N, C, H, W), got shape {x.shape}"
        )
    if y.ndim != 1 or y.shape[0] != x.shape[0]:
        raise ValueError(
            f"from_arrays: expected one label per image, i.e. labels of shape ({x.shape[0]},), "
            f"but got images of shape {np.shape(images)} and labels of shape {y.shape}"
        )
    if max_value is None:
        max_value = 255.0 if x.dtype == np.uint8 else 1.0
    x = np.ascontiguousarray(x / np.float64(max_value), dtype=np.float32)
    if not np.isfinite(x).all():
        raise ValueError(
            f"from_arrays: images hold {int((~np.isfinite(x)).sum())} NaN or infinite values"
        )
    return TensorDataset(from_numpy(x), from_numpy(_class_labels(y)))


def _class_labels(y: np.ndarray) -> np.ndarray:
    """Labels as int64, refusing fractions and negatives rather than rounding them away."""
    if y.dtype.kind not in "iuf" or (y.dtype.kind == "f" and not np.all(y == np.round(y))):
        raise TypeError(f"from_arrays: labels must be integers, got dtype {y.dtype}")
    if y.size and y.min() < 0:
        raise ValueError(f"from_arrays: labels must be non-negative, got {y.min()}")
    return np.ascontiguousarray(y, dtype=np.int64)


def stratified_split(
    labels: Any, test_fraction: float = 0.2, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Sorted ``(train_indices, test_indices)``, each class split in the same proportion.

    The test part has ``ceil(test_fraction * N)`` samples (as in scikit-learn), shared out
    over the classes in proportion to their sizes; which samples go where is drawn from
    ``seed``, so the same labels and seed give the same split on every machine.
    """
    if not 0 < test_fraction < 1:
        raise ValueError(f"stratified_split: test_fraction must be in (0, 1), got {test_fraction}")
    y = np.asarray(labels)
    classes, counts = np.unique(y, return_counts=True)
    quotas = _share(counts, math.ceil(test_fraction * len(y)))
    rng = np.random.default_rng(seed)
    test = [
        rng.permutation(np.flatnonzero(y == c))[:k] for c, k in zip(classes, quotas, strict=True)
    ]
    test_idx = np.sort(np.concatenate(test)) if test else np.zeros(0, dtype=np.int64)
    return np.setdiff1d(np.arange(len(y)), test_idx), test_idx


def _share(counts: np.ndarray, total: int) -> np.ndarray:
    """Split ``total`` over groups in proportion to ``counts`` (largest remainders round up)."""
    exact = counts * total / max(counts.sum(), 1)
    quotas = np.floor(exact).astype(np.int64)
    by_remainder = np.argsort(-(exact - quotas), kind="stable")
    quotas[by_remainder[: total - quotas.sum()]] += 1
    return quotas


def load_digits(
    split: str = "train", *, test_fraction: float = 0.2, seed: int = 0
) -> TensorDataset:
    """scikit-learn's 8x8 digits as ``(image (1, 8, 8) float32 in [0, 1], label int64)``.

    ``split`` is ``"train"`` (80%: 1437 images) or ``"test"`` (20%: 360 images); the
    split is stratified by class and fixed by ``seed``.
    """
    if split not in ("train", "test"):
        raise ValueError(f"load_digits: split must be 'train' or 'test', got {split!r}")
    images, labels = _digits_arrays()
    train_idx, test_idx = stratified_split(labels, test_fraction, seed)
    idx = train_idx if split == "train" else test_idx
    return from_arrays(images[idx], labels[idx], max_value=16.0)


@lru_cache(maxsize=1)
def _digits_arrays() -> tuple[np.ndarray, np.ndarray]:
    """The raw images (1797, 8, 8) with values 0-16, and their labels."""
    try:
        from sklearn.datasets import load_digits as sklearn_digits
    except ImportError as err:
        raise ImportError(
            "load_digits needs scikit-learn (its bundled digits data set): "
            "pip install 'scikit-learn>=1.3'"
        ) from err
    bunch = sklearn_digits()
    return bunch.images, bunch.target
