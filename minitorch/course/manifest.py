"""The course manifest: the one list of chapters and graded exercises.

The grader, the exercise generator, the tests and the docs all read this list,
so adding a chapter or changing an exercise's points happens here and nowhere else.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


def course_root() -> Path:
    """The folder holding the course's notebooks (chapters/, solutions/, exercises/, tests/).

    ``$MINITORCH_COURSE`` when it is set; else the source checkout this package sits in (an
    editable install, as ``make lab`` makes); else the working directory. The chapter list
    below needs no folder at all: only the paths of the notebooks and tests do.
    """
    if os.environ.get("MINITORCH_COURSE"):
        return Path(os.environ["MINITORCH_COURSE"]).resolve()
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "chapters").is_dir():
        return checkout
    return Path.cwd().resolve()


#: The course's folder (see ``course_root``).
ROOT = course_root()


def course_mismatch() -> str | None:
    """Why this manifest is not the course's, or None. The manifest is this package's
    own module: ``$MINITORCH_COURSE`` moves the notebooks and tests, and a course folder
    that carries a different ``minitorch/course/manifest.py`` must be the package imported
    (run from that folder, or ``pip install -e`` it), else its chapters would be graded
    against another manifest."""
    if not os.environ.get("MINITORCH_COURSE"):
        return None
    theirs = ROOT / "minitorch" / "course" / "manifest.py"
    ours = Path(__file__).resolve()
    if not theirs.is_file() or theirs.resolve() == ours:
        return None
    try:
        if theirs.read_bytes() == ours.read_bytes():
            return None
    except OSError:
        return None
    return (
        f"MINITORCH_COURSE={ROOT} has its own manifest ({theirs}), but the grader imported "
        f"{ours}: run it with that course's package (cd {ROOT}, or pip install -e {ROOT})"
    )


@dataclass(frozen=True)
class Exercise:
    """One graded exercise: a stable id such as ``"01.3"``, a title and its points, and the
    package pieces it re-implements (``"minitorch.optim.adam:Adam.step"``: module, then the
    attribute path), which its chapter's lesson must not show."""

    id: str
    title: str
    points: int
    pieces: tuple[str, ...] = ()


@dataclass(frozen=True)
class Chapter:
    """One chapter: a lesson notebook, a solution notebook, its exercises and their tests."""

    id: str
    slug: str
    title: str
    exercises: tuple[Exercise, ...] = ()

    @property
    def stem(self) -> str:
        return f"{self.id}_{self.slug}"

    @property
    def lesson(self) -> Path:
        return ROOT / "chapters" / f"{self.stem}.ipynb"

    # The three notebooks of a chapter have names that tell them apart in a JupyterLab tab.
    @property
    def solution(self) -> Path:
        return ROOT / "solutions" / f"{self.stem}_solutions.ipynb"

    @property
    def exercise_notebook(self) -> Path:
        return ROOT / "exercises" / f"{self.stem}_exercises.ipynb"

    @property
    def tests(self) -> Path:
        return ROOT / "tests" / "exercises" / f"test_{self.stem}.py"

    @property
    def max_score(self) -> int:
        return sum(e.points for e in self.exercises)


CHAPTERS: tuple[Chapter, ...] = (
    Chapter(
        "01",
        "tensors",
        "Tensors: storage, strides, views and broadcasting",
        (
            Exercise(
                "01.1", "Strides of a contiguous shape", 2, ("minitorch.shape:contiguous_strides",)
            ),
            Exercise(
                "01.2", "Index to storage position", 2, ("minitorch.shape:index_to_position",)
            ),
            Exercise(
                "01.3", "Storage position back to an index", 2, ("minitorch.shape:unravel_index",)
            ),
            Exercise("01.4", "broadcast_shapes", 3, ("minitorch.shape:broadcast_shapes",)),
            Exercise(
                "01.5",
                "Broadcast an output index to an input index",
                3,
                ("minitorch.shape:broadcast_index",),
            ),
            Exercise("01.6", "permute as a stride shuffle", 3, ("minitorch.ops.views:Permute",)),
            Exercise("01.7", "Sum along a dim over raw storage", 5, ("minitorch.ops.reduce:Sum",)),
        ),
    ),
    Chapter(
        "02",
        "autograd",
        "Autograd: a reverse-mode engine",
        (
            Exercise(
                "02.1",
                "Backward of mul and div",
                3,
                (
                    "minitorch.ops.elementwise:Mul.backward",
                    "minitorch.ops.elementwise:Div.backward",
                ),
            ),
            Exercise(
                "02.2",
                "Backward of exp and log",
                2,
                (
                    "minitorch.ops.elementwise:Exp.backward",
                    "minitorch.ops.elementwise:Log.backward",
                ),
            ),
            Exercise(
                "02.3",
                "unbroadcast: sum a gradient back to a shape",
                3,
                ("minitorch.ops.elementwise:unbroadcast",),
            ),
            Exercise(
                "02.4", "Backward of batched matmul", 3, ("minitorch.ops.linalg:MatMul.backward",)
            ),
            Exercise(
                "02.5",
                "Backward of sum with dim and keepdim",
                3,
                ("minitorch.ops.reduce:Sum.backward",),
            ),
            Exercise(
                "02.6",
                "Topological order of the graph",
                4,
                ("minitorch.autograd.engine:_dependencies",),
            ),
            Exercise(
                "02.7",
                "The backward pass: accumulate into leaves",
                5,
                ("minitorch.autograd.engine:_run",),
            ),
            Exercise("02.8", "A custom Function: clipped gradient", 2),
            Exercise(
                "02.9",
                "Central-difference gradcheck",
                3,
                ("minitorch.autograd.gradcheck:gradcheck",),
            ),
        ),
    ),
    Chapter(
        "03",
        "modules",
        "Modules, optimizers, data and a real training run",
        (
            Exercise(
                "03.1",
                "named_parameters: walk the module tree",
                3,
                ("minitorch.nn.module:Module.named_parameters",),
            ),
            Exercise(
                "03.2", "Linear: forward and PyTorch's init", 3, ("minitorch.nn.linear:Linear",)
            ),
            Exercise("03.3", "Stable cross-entropy", 3, ("minitorch.nn.functional:cross_entropy",)),
            Exercise("03.4", "SGD with momentum", 3, ("minitorch.optim.sgd:SGD.step",)),
            Exercise("03.5", "The Adam update", 3, ("minitorch.optim.adam:Adam.step",)),
            Exercise("03.6", "clip_grad_norm_", 3, ("minitorch.nn.utils:clip_grad_norm_",)),
            Exercise(
                "03.7",
                "A shuffling, batching DataLoader",
                3,
                ("minitorch.data.dataloader:DataLoader",),
            ),
            Exercise("03.8", "The training loop", 4),
        ),
    ),
    Chapter(
        "04",
        "amp",
        "Mixed precision: float16, bfloat16, autocast and loss scaling",
        (
            Exercise(
                "04.1",
                "Non-finite gradients across the parameters",
                2,
                ("minitorch.amp.grad_scaler:non_finite_check_and_unscale_",),
            ),
            Exercise(
                "04.2", "The scale update rule", 3, ("minitorch.amp.grad_scaler:update_scale",)
            ),
            Exercise("04.3", "unscale_", 3, ("minitorch.amp.grad_scaler:GradScaler.unscale_",)),
            Exercise(
                "04.4",
                "Choosing an op's dtype under autocast",
                3,
                ("minitorch.amp.autocast_mode:cast_inputs",),
            ),
            Exercise(
                "04.5",
                "A loss scaler that skips bad steps",
                4,
                (
                    "minitorch.amp.grad_scaler:GradScaler.scale",
                    "minitorch.amp.grad_scaler:GradScaler.step",
                    "minitorch.amp.grad_scaler:GradScaler.update",
                ),
            ),
            Exercise(
                "04.6", "A mixed-precision training loop", 4, ("minitorch.course.digits:train",)
            ),
        ),
    ),
    Chapter(
        "05",
        "jit",
        "Tracing and scripting: an IR, passes, save/load and compile",
        (
            Exercise(
                "05.1", "Record an op into the graph", 3, ("minitorch.jit.tracer:Tracer.on_apply",)
            ),
            Exercise("05.2", "The interpreter's loop", 3, ("minitorch.jit.interpreter:run_block",)),
            Exercise(
                "05.3",
                "Dead-code elimination",
                3,
                (
                    "minitorch.jit.passes:eliminate_dead_code",
                    "minitorch.jit.passes:_dce_block",
                ),
            ),
            Exercise(
                "05.4",
                "Constant folding",
                3,
                (
                    "minitorch.jit.passes:fold_constants",
                    "minitorch.jit.passes:_fold_block",
                ),
            ),
            Exercise(
                "05.5",
                "Common-subexpression elimination",
                3,
                (
                    "minitorch.jit.passes:eliminate_common_subexpressions",
                    "minitorch.jit.passes:_cse_block",
                ),
            ),
            Exercise(
                "05.6",
                "Group elementwise chains for fusion",
                4,
                ("minitorch.jit.fusion:group_elementwise",),
            ),
            Exercise("05.7", "The guard check", 3),
            Exercise("05.8", "Ship a model with control flow", 4),
        ),
    ),
    Chapter(
        "06",
        "ddp",
        "Distributed data parallel: collectives by hand, DDP on real engines",
        (
            Exercise(
                "06.1",
                "Ring reduce-scatter over send/recv",
                3,
                ("minitorch.distributed.ring:ring_reduce_scatter",),
            ),
            Exercise("06.2", "Ring all-gather", 2, ("minitorch.distributed.ring:ring_all_gather",)),
            Exercise(
                "06.3",
                "Ring all-reduce and its traffic",
                2,
                ("minitorch.distributed.ring:ring_all_reduce",),
            ),
            Exercise(
                "06.4",
                "DistributedSampler's share of an epoch",
                3,
                ("minitorch.distributed.sampler:shard_indices",),
            ),
            Exercise(
                "06.5",
                "Bucket assignment before the first backward",
                3,
                ("minitorch.distributed.buckets:assign_buckets",),
            ),
            Exercise(
                "06.6",
                "A bucket filled by post-accumulate-grad hooks",
                3,
                (
                    "minitorch.distributed.ddp:DistributedDataParallel._grad_ready",
                    "minitorch.distributed.ddp:DistributedDataParallel._launch_ready_buckets",
                ),
            ),
            Exercise("06.7", "Averaging gradients over ranks", 2),
            Exercise("06.8", "Gradient accumulation with no_sync", 3),
            Exercise("06.9", "Plan the buckets: overlap communication with backward", 4),
        ),
    ),
    Chapter(
        "07",
        "gpu",
        "GPU kernels: the CUDA model, in a simulator and on a GPU",
        (
            Exercise("07.1", "The global thread index and the bounds guard", 2),
            Exercise("07.2", "A strided, broadcasting elementwise kernel", 3),
            Exercise(
                "07.3",
                "A shared-memory reduction tree",
                4,
                (
                    "minitorch.cuda.kernels.reduce:block_sum_kernel",
                    "minitorch.cuda.kernels.reduce:block_sum_warp_kernel",
                ),
            ),
            Exercise(
                "07.4",
                "Softmax along the last dim",
                4,
                ("minitorch.cuda.kernels.softmax:softmax_kernel",),
            ),
            Exercise(
                "07.5",
                "Tiled matrix multiplication",
                5,
                ("minitorch.cuda.kernels.matmul:tiled_kernel",),
            ),
            Exercise(
                "07.6",
                "A fused elementwise kernel from a graph",
                3,
                ("minitorch.cuda.fusion_codegen:fused_lines",),
            ),
            Exercise("07.7", "A convolution within a read budget", 4),
        ),
    ),
    Chapter(
        "08",
        "gpt",
        "The capstone: a GPT trained on your own framework",
        (
            Exercise(
                "08.1",
                "Byte-pair encoding: count, merge, train",
                3,
                (
                    "minitorch.text.bpe:get_pair_counts",
                    "minitorch.text.bpe:merge",
                    "minitorch.text.bpe:train_bpe",
                ),
            ),
            Exercise(
                "08.2",
                "Causal attention, stable and masked",
                4,
                (
                    "minitorch.nn.attention:scaled_dot_product_attention",
                    "minitorch.models.gpt:attend",
                ),
            ),
            Exercise(
                "08.3",
                "Heads as a view and a transpose",
                3,
                ("minitorch.models.gpt:split_heads", "minitorch.models.gpt:merge_heads"),
            ),
            Exercise(
                "08.4",
                "The block's forward: pre-LN and residuals",
                3,
                ("minitorch.models.gpt:Block.forward",),
            ),
            Exercise(
                "08.5",
                "Sampling with temperature and top-k",
                3,
                ("minitorch.models.gpt:sample_next_token",),
            ),
            Exercise(
                "08.6",
                "Decoding with a KV cache",
                4,
                ("minitorch.models.gpt:GPT.generate",),
            ),
            Exercise(
                "08.7",
                "Warmup and cosine decay",
                2,
                ("minitorch.optim.schedules:warmup_cosine",),
            ),
            Exercise("08.8", "Nucleus (top-p) sampling", 4),
        ),
    ),
)


def chapter(key: str) -> Chapter:
    """Find a chapter by id (``"01"``), slug (``"tensors"``) or stem (``"01_tensors"``)."""
    for ch in CHAPTERS:
        if key in (ch.id, ch.slug, ch.stem):
            return ch
    known = ", ".join(ch.stem for ch in CHAPTERS)
    raise KeyError(f"no chapter {key!r}; the chapters are: {known}")


def chapter_for_notebook(path: str | Path) -> Chapter:
    """The chapter a notebook belongs to, from its file name (``01_tensors_exercises.ipynb``,
    ``01_tensors.ipynb``, ...)."""
    name = Path(path).name
    for ch in CHAPTERS:
        if name.startswith(ch.stem) or name.startswith(ch.id + "_"):
            return ch
    known = ", ".join(f"{ch.stem}.ipynb" for ch in CHAPTERS)
    raise KeyError(f"cannot tell the chapter of {name!r}: name it like one of {known}")


def exercise(exercise_id: str) -> Exercise:
    """Find an exercise by id across all chapters."""
    for ch in CHAPTERS:
        for ex in ch.exercises:
            if ex.id == exercise_id:
                return ex
    raise KeyError(f"no exercise {exercise_id!r} in the manifest")


def locate(exercise_id: str) -> tuple[Chapter, Exercise]:
    """The chapter and exercise of ``exercise_id``; a ValueError naming every id if unknown."""
    for ch in CHAPTERS:
        for ex in ch.exercises:
            if ex.id == exercise_id:
                return ch, ex
    known = ", ".join(ex.id for ch in CHAPTERS for ex in ch.exercises)
    raise ValueError(f"no exercise {exercise_id!r} in the course; the exercises are: {known}")
