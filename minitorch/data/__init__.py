"""Datasets and batching, as in ``torch.utils.data``: ``minitorch.data.DataLoader`` etc."""

from . import datasets
from .collate import default_collate, default_convert
from .dataloader import DataLoader
from .dataset import Dataset, Subset, TensorDataset, random_split
from .datasets import from_arrays, load_digits, stratified_split
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler
from .worker import WorkerInfo, get_worker_info

__all__ = [
    "BatchSampler",
    "DataLoader",
    "Dataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "Subset",
    "TensorDataset",
    "WorkerInfo",
    "datasets",
    "default_collate",
    "default_convert",
    "from_arrays",
    "get_worker_info",
    "load_digits",
    "random_split",
    "stratified_split",
]
