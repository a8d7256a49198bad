"""PyTorch's paths and processes (issue 25): DataLoader worker processes seeded as
PyTorch's, multiprocessing.spawn with PyTorch's signature, utils.data / nn.parallel /
multiprocessing by PyTorch's module paths, and the ``minitorch.as_torch`` mapping that
runs ``import torch`` code on minitorch."""

import os
import random
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import minitorch as mt
from minitorch.data import DataLoader, Dataset, get_worker_info


class Probe(Dataset):
    """Each sample says which worker loaded it, with what seeds."""

    def __len__(self):
        return 10

    def __getitem__(self, i):
        info = get_worker_info()
        return {
            "i": i,
            "worker": -1 if info is None else info.id,
            "seed": -1 if info is None else info.seed,
            "initial_seed": mt.initial_seed(),
            "python": random.random(),
            "numpy": float(np.random.random()),
            "torch": mt.rand(1).item(),
        }


def _flat(batches):
    return [{k: v.tolist() if hasattr(v, "tolist") else v for k, v in b.items()} for b in batches]


def test_workers_give_the_batches_of_the_main_process_in_order():
    # catches: batches out of sampler order, lost or duplicated batches
    data = mt.arange(23.0).view(23, 1)
    main = [b.tolist() for b in DataLoader(data, batch_size=4)]
    for workers in (1, 3):
        got = [b.tolist() for b in DataLoader(data, batch_size=4, num_workers=workers)]
        assert got == main
    assert [x.tolist() for x in DataLoader(data, batch_size=None, num_workers=2)] == [
        r.tolist() for r in data
    ]


def test_workers_are_seeded_as_pytorchs_and_told_who_they_are():
    # catches: workers sharing one random stream, a seed not base_seed + worker_id,
    # get_worker_info() wrong in a worker or not None in the main process
    mt.manual_seed(0)
    batches = _flat(DataLoader(Probe(), batch_size=2, num_workers=2))
    assert [b["worker"][0] for b in batches] == [0, 1, 0, 1, 0]  # round-robin
    seeds = {b["worker"][0]: b["seed"][0] for b in batches}
    assert seeds[1] == seeds[0] + 1  # base_seed + worker_id
    assert all(b["initial_seed"] == b["seed"] for b in batches)  # the worker's generator
    for key in ("python", "numpy", "torch"):  # each worker its own streams
        firsts = [batches[0][key][0], batches[1][key][0]]
        assert firsts[0] != firsts[1], key
    assert get_worker_info() is None
    mt.manual_seed(0)
    again = _flat(DataLoader(Probe(), batch_size=2, num_workers=2))
    assert again == batches  # the main generator's seed fixes the workers' seeds
    fresh = _flat(DataLoader(Probe(), batch_size=2, num_workers=2))
    assert fresh[0]["seed"] != batches[0]["seed"]  # a new base seed per epoch


def test_worker_init_fn_runs_in_each_worker_first(tmp_path):
    def init(worker_id):
        (tmp_path / f"w{worker_id}").write_text(str(get_worker_info().num_workers))

    list(DataLoader(list(range(6)), batch_size=2, num_workers=3, worker_init_fn=init))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w0", "w1", "w2"]
    assert (tmp_path / "w2").read_text() == "3"


def test_a_worker_error_is_raised_in_the_main_process_naming_the_worker():
    class Broken(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            if i == 3:
                raise KeyError("no sample 3")
            return i

    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process 1"):
        list(DataLoader(Broken(), batch_size=2, num_workers=2))


def test_persistent_workers_serve_every_epoch():
    loader = DataLoader(list(range(8)), batch_size=3, num_workers=2, persistent_workers=True)
    first = loader._workers
    for _ in range(2):
        assert [b.tolist() for b in loader] == [[0, 1, 2], [3, 4, 5], [6, 7]]
    assert loader._workers is not None and first is None
    for i, _ in enumerate(loader):  # an epoch left early, then a full one
        if i == 0:
            break
    assert [b.tolist() for b in loader] == [[0, 1, 2], [3, 4, 5], [6, 7]]


def test_worker_options_are_checked_as_pytorch_checks_them():
    with pytest.raises(ValueError, match="prefetch_factor option could only be specified"):
        DataLoader([1], prefetch_factor=2)
    with pytest.raises(ValueError, match="persistent_workers option needs num_workers > 0"):
        DataLoader([1], persistent_workers=True)
    with pytest.raises(ValueError, match="timeout option should be non-negative"):
        DataLoader([1], num_workers=1, timeout=-1)


# --- PyTorch's module paths -----------------------------------------------------------------------
def test_pytorch_module_paths_reach_minitorchs_pieces():
    import minitorch.multiprocessing as mp
    import minitorch.utils.data as tud
    from minitorch.utils.data.distributed import DistributedSampler

    assert tud.DataLoader is DataLoader and tud.TensorDataset is mt.data.TensorDataset
    assert tud.get_worker_info is get_worker_info
    assert DistributedSampler is mt.distributed.DistributedSampler
    assert mp.Process is not None and mp.cpu_count() >= 1  # Python's multiprocessing too


def _rank_writes(rank, path, word):
    with open(os.path.join(path, f"rank{rank}"), "w") as f:
        f.write(f"{word}:{os.environ['RANK']}")


def test_spawn_takes_pytorchs_arguments_and_passes_the_rank_first(tmp_path):
    import minitorch.multiprocessing as mp

    assert mp.spawn(_rank_writes, args=(str(tmp_path), "hi"), nprocs=2, join=True) is None
    assert sorted((tmp_path / f"rank{r}").read_text() for r in range(2)) == ["hi:0", "hi:1"]
    with pytest.raises(NotImplementedError, match="join=False"):
        mp.spawn(_rank_writes, args=(str(tmp_path), "x"), nprocs=1, join=False)
    with pytest.raises(TypeError, match="args must be a tuple"):
        mp.spawn(_rank_writes, args=[str(tmp_path)], nprocs=1)


# --- minitorch.as_torch ---------------------------------------------------------------------------
def _as_torch(code, tmp_path):
    program = tmp_path / "prog.py"
    program.write_text(textwrap.dedent(code))
    return subprocess.run(
        [sys.executable, "-m", "minitorch.as_torch", str(program), "an-arg"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )


def test_as_torch_runs_import_torch_code_on_minitorch(tmp_path):
    done = _as_torch(
        """
        import sys
        import torch
        import torch.nn.functional as F
        from torch.utils.data import DataLoader
        from torch.nn.parallel import DistributedDataParallel as DDP
        import torch.multiprocessing as mp
        print(torch.__name__, F.__name__, DataLoader.__module__, DDP.__name__)
        print(torch.float32, torch.ones(2, 3).shape, torch.ones(2, 3).size(), sys.argv[1:])
        print(torch.Size([2, 3]) == (2, 3), torch.ones(4).size(0))
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == (
        "minitorch minitorch.nn.functional minitorch.data.dataloader DistributedDataParallel"
    )
    assert lines[1] == "torch.float32 torch.Size([2, 3]) torch.Size([2, 3]) ['an-arg']"
    assert lines[2] == "True 4"


def test_as_torch_names_what_minitorch_does_not_have(tmp_path):
    done = _as_torch("import torch.export\n", tmp_path)
    assert done.returncode != 0
    assert "No module named 'torch.export'" in done.stderr and "minitorch.jit" in done.stderr
