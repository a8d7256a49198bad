"""Chapter 08's finale: the lesson's GPT, trained on the learner's pieces, beside the package's.

:func:`train` is lesson 08's recipe at its full size (§5-§7): a 384-token BPE vocabulary
learnt on the first 100,000 characters of the corpus, a 2-layer, 4-head, 96-channel GPT
with a block of 64, and 500 steps of AdamW with warmup, cosine decay and clipping, then a
sample drawn from a fixed seed. Whatever pieces :func:`minitorch.mine.use` installed run
in it: the tokenizer's merges, attention, heads, blocks, the schedule, the sampler and the
cached decoding loop.

The package's own run of the same recipe is recorded in ``gpt_finale.json`` beside this
module, with a digest of the corpus it trained on (the corpus is Python's documentation, so
it changes with the Python version): the finale trains once, on the learner's pieces, and
compares with the record. Where the record is for another corpus, :func:`package_run`
trains the package's pieces instead. ``python -m minitorch.course.finale --record`` writes
the record again (the exercise notebook checks it: with no piece of the learner's finished,
its finale is the package's run, and must match).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

import minitorch as mt
from minitorch import nn
from minitorch.models.gpt import GPT, GPTConfig
from minitorch.optim.schedules import WarmupCosineLR
from minitorch.text import BPETokenizer, get_batch, load_corpus, train_val_split

#: The package's run, recorded (see the module's docstring).
RECORD = Path(__file__).with_name("gpt_finale.json")

#: The lesson's recipe (lesson 08, §5-§7).
STEPS, WARMUP, MAX_LR, MIN_LR, BATCH = 500, 50, 4e-3, 4e-4, 16
VOCAB, TOKENIZER_CHARS = 384, 100_000
MODEL = dict(block_size=64, n_layer=2, n_head=4, n_embd=96)
#: Validation every EVERY steps, on VAL_BATCHES batches of VAL_BATCH sequences.
EVERY, VAL_BATCHES, VAL_BATCH = 50, 4, 32
#: The sample: the prompt, its length and its sampling settings.
PROMPT, NEW_TOKENS, TEMPERATURE, TOP_K, SAMPLE_SEED = "The ", 200, 0.8, 40, 3
#: How far (relative) a right run's losses may sit from the package's: float32 rounding in
#: another order (another BLAS, an equivalent formula) moves them by about 1e-5 after 500
#: steps; a wrong piece by far more.
TOLERANCE = 1e-3


@dataclass
class Run:
    """What one run of the recipe gives: the training losses, the validation losses
    (``(step, loss)``), the sample, the baselines' losses, its seconds and its corpus."""

    losses: list[float]
    validation: list[tuple[int, float]]
    sample: str
    baselines: dict[str, float]
    seconds: float
    corpus: str

    @property
    def final(self) -> float:
        return self.validation[-1][1]


def corpus_digest(text: str) -> str:
    """A short digest of the corpus a run trained on."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def baselines(train: list[int], contexts: np.ndarray, targets: np.ndarray) -> dict[str, float]:
    """The validation loss of two models with no training loop: token frequencies (unigram)
    and next-token frequencies given the current token (bigram), both smoothed."""
    ids = np.asarray(train)
    unigram = np.bincount(ids, minlength=VOCAB) + 1.0
    unigram /= unigram.sum()
    bigram = np.full((VOCAB, VOCAB), 0.1)
    np.add.at(bigram, (ids[:-1], ids[1:]), 1.0)
    bigram /= bigram.sum(axis=1, keepdims=True)
    return {
        "unigram": float(-np.log(unigram[targets]).mean()),
        "bigram": float(-np.log(bigram[contexts, targets]).mean()),
    }


def train(show_progress: bool = True) -> Run:
    """The lesson's recipe on whatever pieces are installed: train, validate, sample."""
    from minitorch.course.notebook import progress

    started = time.perf_counter()
    text = load_corpus()
    tokenizer = BPETokenizer.train(text[:TOKENIZER_CHARS], VOCAB)
    train_ids, val_ids = train_val_split(tokenizer.encode(text), 0.1)
    mt.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=tokenizer.vocab_size, **MODEL))
    block = model.config.block_size
    optimizer = model.configure_optimizers(0.1, MAX_LR, (0.9, 0.95))
    schedule = WarmupCosineLR(optimizer, WARMUP, STEPS, MIN_LR)
    data, held_out = mt.Generator(1), mt.Generator(2)
    val_batches = [get_batch(val_ids, VAL_BATCH, block, held_out) for _ in range(VAL_BATCHES)]

    def validation_loss() -> float:
        model.eval()
        with mt.no_grad():
            loss = float(np.mean([model(x, y)[1].item() for x, y in val_batches]))
        model.train()
        return loss

    losses, validation = [], [(0, validation_loss())]
    steps = range(1, STEPS + 1)
    bar = progress(steps, desc="your GPT") if show_progress else steps
    for step in bar:
        x, y = get_batch(train_ids, BATCH, block, data)
        _, loss = model(x, y)
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # (looked up now: yours, if 03.6 is)
        optimizer.step()
        schedule.step()
        losses.append(loss.item())
        if step % EVERY == 0:
            validation.append((step, validation_loss()))
            if show_progress:
                bar.set_postfix(val=f"{validation[-1][1]:.3f}")
    model.eval()
    prompt = mt.tensor([tokenizer.encode(PROMPT)])
    out = model.generate(
        prompt, NEW_TOKENS, TEMPERATURE, TOP_K, generator=mt.Generator(SAMPLE_SEED)
    )
    contexts = np.concatenate([x.numpy().ravel() for x, _ in val_batches])
    targets = np.concatenate([y.numpy().ravel() for _, y in val_batches])
    return Run(
        losses=losses,
        validation=validation,
        sample=tokenizer.decode(out[0].tolist()),
        baselines=baselines(train_ids, contexts, targets),
        seconds=time.perf_counter() - started,
        corpus=corpus_digest(text),
    )


def recorded() -> Run | None:
    """The package's recorded run, or None where there is none."""
    if not RECORD.exists():
        return None
    fields = json.loads(RECORD.read_text(encoding="utf-8"))
    fields["validation"] = [tuple(pair) for pair in fields["validation"]]
    return Run(**fields)


def package_run(corpus: str | None = None) -> tuple[Run, str]:
    """The package's run for ``corpus`` (a digest; this Python's corpus by default), and where
    it came from: the record, or, for another corpus, a run of the package's pieces now."""
    corpus = corpus or corpus_digest(load_corpus())
    record = recorded()
    if record is not None and record.corpus == corpus:
        return record, "recorded"
    from minitorch import mine

    if mine.active():
        raise RuntimeError("package_run: call it outside `with mine.use(...)`")
    print("(the recorded run is for another Python's documentation: training the package's)")
    return train(), "trained now"


def compare(yours: Run, package: Run, tol: float = TOLERANCE) -> None:
    """Raise :class:`minitorch.mine.Mismatch` where your run leaves the package's."""
    from minitorch import mine

    if len(yours.losses) != len(package.losses):
        raise mine.Mismatch(
            f"your run has {len(yours.losses)} losses, the package's {len(package.losses)}"
        )
    pairs = [
        ("training loss", step, a, b)
        for step, (a, b) in enumerate(zip(yours.losses, package.losses, strict=True), start=1)
    ]
    pairs += [
        ("validation loss", step, a, b)
        for (step, a), (_, b) in zip(yours.validation, package.validation, strict=True)
    ]
    for what, step, a, b in pairs:
        if not math.isclose(a, b, rel_tol=tol):
            raise mine.Mismatch(
                f"your GPT's {what} left the package's at step {step}: yours {a:.5f}, the "
                f"package's {b:.5f} (a right piece stays within {tol:g}, relative). The "
                "'Your framework at work' section above names a wrong piece on a shorter run."
            )


def first_difference(a: str, b: str) -> int | None:
    """The index of the first character where two samples differ (None: they are equal)."""
    for i, (x, y) in enumerate(zip(a, b, strict=False)):  # (the shorter one's length)
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def picture(yours: Run | None, package: Run) -> Figure:
    """Validation loss of both runs (the package's alone where ``yours`` is None) against the
    baselines, the training loss faintly behind."""
    from minitorch.course import viz_gpt

    curves = {"the package's pieces": tuple(zip(*package.validation, strict=True))}
    shown = package if yours is None else yours
    if yours is not None:
        curves["your pieces"] = tuple(zip(*yours.validation, strict=True))
    whose = "The package's" if yours is None else "Your"
    return viz_gpt.plot_losses(
        curves,
        shown.baselines,
        title=f"{whose} GPT after {STEPS} steps: validation loss {shown.final:.3f}",
        train=(range(1, len(shown.losses) + 1), shown.losses),
    )


def report(yours: Run, package: Run, source: str) -> str:
    """The numbers and both samples, as text."""
    bigram = yours.baselines["bigram"]
    lines = [
        f"validation loss after {STEPS} steps: yours {yours.final:.4f}, the package's "
        f"{package.final:.4f} ({source})",
        f"baselines: unigram {yours.baselines['unigram']:.4f}, bigram {bigram:.4f}; "
        f"yours is {bigram - yours.final:.3f} below the bigram's",
        f"trained, validated and sampled in {yours.seconds:.0f} s on this machine",
        "",
        f"your GPT, from the prompt {PROMPT!r} (temperature {TEMPERATURE}, top-k {TOP_K}, "
        f"seed {SAMPLE_SEED}):",
        "",
        yours.sample,
        "",
        "the package's GPT, same weights' seed, batches and sampling seed:",
        "",
        package.sample,
        "",
    ]
    differ = first_difference(yours.sample, package.sample)
    if differ is None:
        lines.append("the same text, token for token")
    else:
        lines.append(
            f"the samples part at character {differ}: sampling turns the last digits of the "
            "logits into another token now and then, and the texts then go their own ways"
        )
    return "\n".join(lines)


def show(yours: Run | None, package: Run, source: str) -> None:
    """Show the picture and the report, then stop (:func:`compare`) if the runs part.
    ``yours`` is None where no piece of the learner's is finished: the package's run alone."""
    from minitorch.course.at_work import show_figure

    if yours is None:
        show_figure(picture(None, package))
        base = package.baselines
        print(
            "No piece of yours is finished yet, so nothing was trained here. The package's run "
            f"of this recipe ({source}): validation loss {package.final:.4f} after {STEPS} "
            f"steps (unigram {base['unigram']:.4f}, bigram {base['bigram']:.4f}). Its sample, "
            f"from the prompt {PROMPT!r}:\n\n{package.sample}\n\nFinish your pieces of this "
            "chapter and run this cell again."
        )
        return
    show_figure(picture(yours, package))
    print(report(yours, package, source))
    compare(yours, package)


def record(path: Path = RECORD) -> Run:
    """Train the package's pieces and write the record."""
    run = train(show_progress=False)
    path.write_text(json.dumps(asdict(run), indent=1) + "\n", encoding="utf-8")
    return run


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", action="store_true", help="write the package's run again")
    args = parser.parse_args(argv)
    if args.record:
        run = record()
        print(f"recorded to {RECORD}: validation loss {run.final:.4f} in {run.seconds:.0f} s")
    else:
        parser.print_help()


if __name__ == "__main__":
    main()
