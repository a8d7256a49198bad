"""Dynamic int8 quantization: state size and forward time, float vs quantized, minitorch vs PyTorch.

Run: ``.venv/bin/python benchmarks/bench_quantization.py``. The models are the chapter 03
lesson's digits MLP (64-256-10 with batch norm and dropout) and, for scale, the
784-1024-1024-10 MLP of ``bench_training.py``; each is quantized with
``quantize_dynamic(model, {nn.Linear}, dtype=qint8)`` per tensor and per channel. Sizes
are the bytes of the saved ``state_dict()`` (``minitorch.save``; ``torch.save`` for
PyTorch's). Times are the best forward pass in eval mode without grad, at batch 1 (one
request, where dynamic quantization is meant to help) and at a full batch, taken in turns
in this process (``timing.best_times``); with PyTorch installed its float and quantized
models run side by side on the same weights and inputs. Ratios only, no assertions.
"""

from __future__ import annotations

import io
import warnings

import numpy as np
from timing import best_times

import minitorch
from minitorch import quantization as Q

try:
    import torch
except ImportError:  # the reference extra is optional
    torch = None

warnings.filterwarnings("ignore", message=".*deprecated.*")  # torch.ao.quantization's notices
warnings.filterwarnings("ignore", message="Please use quant_min and quant_max")


def digits_mlp(lib):
    return lib.nn.Sequential(
        lib.nn.Flatten(), lib.nn.Linear(64, 256), lib.nn.BatchNorm1d(256), lib.nn.ReLU(),
        lib.nn.Dropout(0.3), lib.nn.Linear(256, 10),
    )  # fmt: skip


def wide_mlp(lib):
    return lib.nn.Sequential(
        lib.nn.Linear(784, 1024), lib.nn.ReLU(),
        lib.nn.Linear(1024, 1024), lib.nn.ReLU(),
        lib.nn.Linear(1024, 10),
    )  # fmt: skip


def saved_bytes(save, state) -> int:
    buffer = io.BytesIO()
    save(state, buffer)
    return len(buffer.getvalue())


def forward(lib, model, x):
    def run():
        with lib.no_grad():
            model(x)

    return run


def bench(name: str, build, x_shape: tuple, batches: tuple[int, ...], repeats: int) -> None:
    print(f"\n{name}")
    minitorch.manual_seed(0)
    models = {"float": build(minitorch).eval()}
    models["int8"] = Q.quantize_dynamic(models["float"], {minitorch.nn.Linear})
    models["int8/ch"] = Q.quantize_dynamic(
        models["float"], {minitorch.nn.Linear: Q.per_channel_dynamic_qconfig}
    )
    theirs = {}
    if torch is not None:
        theirs["float"] = build(torch).eval()
        state = {k: torch.tensor(v.numpy()) for k, v in models["float"].state_dict().items()}
        theirs["float"].load_state_dict(state)
        TQ = torch.ao.quantization
        theirs["int8"] = TQ.quantize_dynamic(theirs["float"], {torch.nn.Linear})
        theirs["int8/ch"] = TQ.quantize_dynamic(
            theirs["float"], {torch.nn.Linear: TQ.per_channel_dynamic_qconfig}
        )

    base = saved_bytes(minitorch.save, models["float"].state_dict())
    line = f"  state bytes: float {base:,}"
    for kind in ("int8", "int8/ch"):
        size = saved_bytes(minitorch.save, models[kind].state_dict())
        line += f"   {kind} {size:,} ({base / size:.2f}x smaller)"
    print(line)
    if theirs:
        tbase = saved_bytes(torch.save, theirs["float"].state_dict())
        line = f"  PyTorch's (torch.save): float {tbase:,}"
        for kind in ("int8", "int8/ch"):
            size = saved_bytes(torch.save, theirs[kind].state_dict())
            line += f"   {kind} {size:,} ({tbase / size:.2f}x smaller)"
        print(line)

    rng = np.random.default_rng(0)
    for batch in batches:
        x = rng.standard_normal((batch, *x_shape)).astype(np.float32)
        runs = {f"mt {k}": forward(minitorch, m, minitorch.tensor(x)) for k, m in models.items()}
        runs.update({f"pt {k}": forward(torch, m, torch.tensor(x)) for k, m in theirs.items()})
        best = best_times(runs, repeats)
        print(f"  batch {batch}:")
        for lib, label in (("mt", "minitorch"), ("pt", "PyTorch")):
            if f"{lib} float" not in best:
                continue
            floats = best[f"{lib} float"]
            cells = [f"float {floats * 1e3:7.3f} ms"]
            for kind in ("int8", "int8/ch"):
                t = best[f"{lib} {kind}"]
                cells.append(f"{kind} {t * 1e3:7.3f} ms ({t / floats:4.2f}x float)")
            print(f"    {label:<10} " + "   ".join(cells))
        if theirs:
            ratio = best["mt int8"] / best["pt int8"]
            print(f"    minitorch int8 / PyTorch int8: {ratio:.2f}x")


def main() -> None:
    print("forward pass, eval mode, no grad; best of several runs taken in turns")
    bench("chapter 03 digits MLP 64-256-10", digits_mlp, (1, 8, 8), (1, 360), repeats=60)
    bench("MLP 784-1024-1024-10", wide_mlp, (784,), (1, 256), repeats=16)


if __name__ == "__main__":
    main()
