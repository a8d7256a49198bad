"""Joining tensors: ``cat`` along an existing dim, ``stack`` along a new one."""

from __future__ import annotations

from typing import Any

from ..device import array_module_of as xp
from ..function import Context, Function


class Cat(Function):
    @staticmethod
    def forward(ctx: Context, *arrays: Any, dim: int) -> Any:
        return xp(*arrays).concatenate(arrays, axis=dim)


class Stack(Function):
    @staticmethod
    def forward(ctx: Context, *arrays: Any, dim: int) -> Any:
        return xp(*arrays).stack(arrays, axis=dim)
