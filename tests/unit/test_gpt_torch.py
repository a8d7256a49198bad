"""The GPT against its PyTorch twin (nanoGPT's model, written here in torch): the twin loads
minitorch's initial state_dict, both see the same batches, and the logits, the loss, the
first AdamW steps (warmup-cosine lr, gradient clipping) and the bfloat16 autocast loss agree."""

import math

import numpy as np
import pytest

import minitorch
from minitorch.models import GPT, GPTConfig
from minitorch.optim.schedules import warmup_cosine
from minitorch.text import get_batch

torch = pytest.importorskip("torch", reason="PyTorch (the 'reference' extra) is not installed")
tnn = torch.nn
tF = torch.nn.functional

CONFIG = dict(block_size=16, vocab_size=64, n_layer=2, n_head=2, n_embd=32, dropout=0.0)


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """Tiny matrices: torch's thread pool only waits for its threads (seconds per test on a
    busy 2-core machine); one thread is faster, and the results are the same."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# --- the twin: nanoGPT's model.py, in torch (with a KV cache; benchmarks/bench_gpt.py uses it)
class TorchCausalSelfAttention(tnn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_attn = tnn.Linear(c.n_embd, 3 * c.n_embd, bias=c.bias)
        self.c_proj = tnn.Linear(c.n_embd, c.n_embd, bias=c.bias)
        self.attn_dropout = tnn.Dropout(c.dropout)
        self.resid_dropout = tnn.Dropout(c.dropout)
        self.n_head, self.n_embd = c.n_head, c.n_embd

    def forward(self, x, cache=None):
        B, T, C = x.size()  # noqa: N806
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        if cache is not None:  # [k, v] of the positions before, or []
            if cache:
                k, v = torch.cat([cache[0], k], dim=2), torch.cat([cache[1], v], dim=2)
            cache[:] = [k, v]
        S = k.size(2)  # noqa: N806
        mask = None if S == T else torch.ones(T, S, dtype=torch.bool).tril(S - T)
        y = tF.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=mask is None)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class TorchMLP(tnn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_fc = tnn.Linear(c.n_embd, 4 * c.n_embd, bias=c.bias)
        self.gelu = tnn.GELU()
        self.c_proj = tnn.Linear(4 * c.n_embd, c.n_embd, bias=c.bias)
        self.dropout = tnn.Dropout(c.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class TorchBlock(tnn.Module):
    def __init__(self, c):
        super().__init__()
        self.ln_1 = tnn.LayerNorm(c.n_embd, bias=c.bias)
        self.attn = TorchCausalSelfAttention(c)
        self.ln_2 = tnn.LayerNorm(c.n_embd, bias=c.bias)
        self.mlp = TorchMLP(c)

    def forward(self, x, cache=None):
        x = x + self.attn(self.ln_1(x), cache)
        return x + self.mlp(self.ln_2(x))


class TorchGPT(tnn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        self.transformer = tnn.ModuleDict(
            dict(
                wte=tnn.Embedding(c.vocab_size, c.n_embd),
                wpe=tnn.Embedding(c.block_size, c.n_embd),
                drop=tnn.Dropout(c.dropout),
                h=tnn.ModuleList([TorchBlock(c) for _ in range(c.n_layer)]),
                ln_f=tnn.LayerNorm(c.n_embd, bias=c.bias),
            )
        )
        self.lm_head = tnn.Linear(c.n_embd, c.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight

    def forward(self, idx, targets=None, cache=None):
        past = cache[0][0].size(2) if cache and cache[0] else 0
        pos = torch.arange(past, past + idx.size(1), dtype=torch.long)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for i, block in enumerate(self.transformer.h):
            x = block(x, None if cache is None else cache[i])
        x = self.transformer.ln_f(x)
        if targets is None:
            return self.lm_head(x[:, [-1], :]), None
        logits = self.lm_head(x)
        loss = tF.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas):
        params = [p for p in self.parameters() if p.requires_grad]
        groups = [
            {"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay},
            {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
        ]
        return torch.optim.AdamW(groups, lr=learning_rate, betas=betas)

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None, use_cache=True):
        block_size, cache = self.config.block_size, None
        for _ in range(max_new_tokens):
            if not use_cache:
                logits, _ = self(idx[:, -block_size:])
            elif cache is not None and cache[0][0].size(2) < block_size:
                logits, _ = self(idx[:, -1:], cache=cache)
            else:
                cache = [[] for _ in self.transformer.h]
                logits, _ = self(idx[:, -block_size:], cache=cache)
            logits = logits[:, -1, :]
            if temperature == 0:
                idx_next = logits.argmax(-1, keepdim=True)
            else:
                logits = logits / temperature
                if top_k is not None:
                    v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                    logits[logits < v[:, [-1]]] = -float("Inf")
                idx_next = torch.multinomial(tF.softmax(logits, dim=-1), num_samples=1)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx


# --- helpers ------------------------------------------------------------------------------
def twins(bias=True):
    minitorch.manual_seed(0)
    config = GPTConfig(**CONFIG, bias=bias)
    mine = GPT(config)
    theirs = TorchGPT(config)
    state = {k: torch.tensor(v.numpy()) for k, v in mine.state_dict().items()}
    theirs.load_state_dict(state, strict=True)  # the same names, both tied keys included
    return mine, theirs


def batches(n, batch_size=4):
    data = minitorch.tensor(np.random.default_rng(1).integers(0, 64, 2000))
    gen = minitorch.Generator(7)
    out = []
    for _ in range(n):
        x, y = get_batch(data, batch_size, CONFIG["block_size"], gen)
        out.append((x, y, torch.tensor(x.numpy()), torch.tensor(y.numpy())))
    return out


def test_the_twin_has_the_same_parameter_names_and_tying():
    # catches: a renamed module (the twin's strict load fails), an untied lm_head
    mine, theirs = twins()
    assert list(mine.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in mine.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert mine.lm_head.weight is mine.transformer.wte.weight


@pytest.mark.parametrize("bias", [True, False])
def test_logits_and_loss_of_the_first_batch(bias):
    # catches: a wrong attention scale or mask, a head split in the wrong order, post-LN
    # instead of pre-LN, tanh GELU, a missing position embedding
    mine, theirs = twins(bias)
    x, y, tx, ty = batches(1)[0]
    logits, loss = mine(x, y)
    tlogits, tloss = theirs(tx, ty)
    np.testing.assert_allclose(logits.detach().numpy(), tlogits.detach().numpy(), atol=2e-5)
    assert loss.item() == pytest.approx(tloss.item(), rel=1e-5)
    assert loss.item() == pytest.approx(math.log(64), rel=0.05)  # nanoGPT's init: near uniform
    loss.backward()
    tloss.backward()
    for (name, p), (_, tp) in zip(mine.named_parameters(), theirs.named_parameters(), strict=True):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), atol=1e-5, err_msg=name)


def test_five_adamw_steps_with_clipping_and_schedule():
    # catches: weight decay on the biases/LayerNorms, clipping after the step, a schedule
    # off by one step, the tied weight updated twice
    mine, theirs = twins()
    opt = mine.configure_optimizers(0.1, 3e-3, (0.9, 0.95))
    topt = theirs.configure_optimizers(0.1, 3e-3, (0.9, 0.95))
    losses, tlosses = [], []
    for step, (x, y, tx, ty) in enumerate(batches(5)):
        lr = warmup_cosine(step, warmup_steps=2, max_steps=5, max_lr=3e-3, min_lr=3e-4)
        for group in opt.param_groups + topt.param_groups:
            group["lr"] = lr
        _, loss = mine(x, y)
        opt.zero_grad()
        loss.backward()
        minitorch.nn.utils.clip_grad_norm_(mine.parameters(), 1.0)
        opt.step()
        _, tloss = theirs(tx, ty)
        topt.zero_grad()
        tloss.backward()
        torch.nn.utils.clip_grad_norm_(theirs.parameters(), 1.0)
        topt.step()
        losses.append(loss.item())
        tlosses.append(tloss.item())
    np.testing.assert_allclose(losses, tlosses, rtol=1e-4)
    assert losses[-1] < losses[0]  # it learns
    for (name, p), (_, tp) in zip(mine.named_parameters(), theirs.named_parameters(), strict=True):
        np.testing.assert_allclose(p.detach().numpy(), tp.detach().numpy(), atol=1e-5, err_msg=name)


def test_bfloat16_autocast_loss():
    # catches: autocast leaving the matmuls in float32 (then the loss would match float32
    # to 1e-6), a loss computed in bfloat16, NaN from the masked softmax in low precision
    mine, theirs = twins()
    x, y, tx, ty = batches(1)[0]
    with minitorch.autocast("cpu", dtype=minitorch.bfloat16):
        logits, loss = mine(x, y)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        tlogits, tloss = theirs(tx, ty)
    assert logits.dtype is minitorch.bfloat16 and loss.dtype is minitorch.float32
    assert tlogits.dtype is torch.bfloat16
    assert math.isfinite(loss.item())
    assert loss.item() == pytest.approx(tloss.item(), rel=4e-3)  # a bfloat16 ulp
    _, full = mine(x, y)
    assert loss.item() != full.item()  # it did run in lower precision
    loss.backward()
    assert all(p.grad.dtype is minitorch.float32 for p in mine.parameters())


@pytest.mark.parametrize("use_cache", [True, False])
def test_greedy_generation_gives_the_twin_s_tokens(use_cache):
    # catches: a cache or a sliding window that differs from nanoGPT's recomputation (20
    # new tokens after 4 run past the 16 positions)
    mine, theirs = twins()
    prompt = minitorch.randint(0, 64, (2, 4), generator=minitorch.Generator(3))
    out = mine.generate(prompt, 20, temperature=0.0, use_cache=use_cache)
    tout = theirs.generate(torch.tensor(prompt.numpy()), 20, temperature=0.0, use_cache=use_cache)
    np.testing.assert_array_equal(out.numpy(), tout.numpy())
