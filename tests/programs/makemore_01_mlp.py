"""makemore, part 2: the MLP language model of characters (Bengio et al. 2003).

Source: Andrej Karpathy, "Building makemore Part 2: MLP" (nn-zero-to-hero, makemore_part2_mlp
.ipynb), with nanoGPT's estimate_loss logging (f"{loss:.4f}" of a 0-d tensor) and makemore.py's
InfiniteDataLoader (RandomSampler(replacement=True, num_samples=int(1e10))). Changes: names.txt
replaced by names the program makes itself (no download), fewer and smaller steps, no plots.
"""
# compare: masked

import random

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, RandomSampler, TensorDataset

# --- the data: names made of syllables, instead of downloading names.txt -----------------------
rng = random.Random(0)
syllables = ["an", "na", "el", "li", "ma", "ri", "jo", "ka", "le", "sa", "mi", "ra", "ty", "o"]
words = ["".join(rng.choice(syllables) for _ in range(rng.randint(1, 3))) for _ in range(400)]
print(len(words))
print(words[:8])

# build the vocabulary of characters and mappings to/from integers
chars = sorted(list(set("".join(words))))
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi["."] = 0
itos = {i: s for s, i in stoi.items()}
vocab_size = len(itos)
print(itos)

# build the dataset
block_size = 3  # context length: how many characters do we take to predict the next one?


def build_dataset(words):
    X, Y = [], []
    for w in words:
        context = [0] * block_size
        for ch in w + ".":
            ix = stoi[ch]
            X.append(context)
            Y.append(ix)
            context = context[1:] + [ix]  # crop and append

    X = torch.tensor(X)
    Y = torch.tensor(Y)
    print(X.shape, Y.shape)
    return X, Y


random.seed(42)
random.shuffle(words)
n1 = int(0.8 * len(words))
n2 = int(0.9 * len(words))

Xtr, Ytr = build_dataset(words[:n1])
Xdev, Ydev = build_dataset(words[n1:n2])
Xte, Yte = build_dataset(words[n2:])

g = torch.Generator().manual_seed(2147483647)  # for reproducibility
C = torch.randn((vocab_size, 10), generator=g)
W1 = torch.randn((30, 64), generator=g)
b1 = torch.randn(64, generator=g)
W2 = torch.randn((64, vocab_size), generator=g)
b2 = torch.randn(vocab_size, generator=g)
parameters = [C, W1, b1, W2, b2]
print(sum(p.nelement() for p in parameters))  # number of parameters in total
for p in parameters:
    p.requires_grad = True


# makemore.py's loader: an endless stream of random batches
class InfiniteDataLoader:
    """
    this is really hacky and I'm not proud of it, but there doesn't seem to be
    a better way in PyTorch to just create an infinite dataloader?
    """

    def __init__(self, dataset, **kwargs):
        train_sampler = RandomSampler(dataset, replacement=True, num_samples=int(1e10))
        self.train_loader = DataLoader(dataset, sampler=train_sampler, **kwargs)
        self.data_iter = iter(self.train_loader)

    def next(self):
        try:
            batch = next(self.data_iter)
        except StopIteration:
            # this will technically only happen after 1e10 samples... (i.e. basically never)
            self.data_iter = iter(self.train_loader)
            batch = next(self.data_iter)
        return batch


@torch.no_grad()
def estimate_loss():  # nanoGPT's, on the splits here
    out = {}
    for split, (X, Y) in {"train": (Xtr, Ytr), "val": (Xdev, Ydev)}.items():
        emb = C[X]
        h = torch.tanh(emb.view(-1, 30) @ W1 + b1)
        logits = h @ W2 + b2
        out[split] = F.cross_entropy(logits, Y)
    return out


batch_loader = InfiniteDataLoader(TensorDataset(Xtr, Ytr), batch_size=32)
lossi = []
stepi = []
max_steps = 60
for i in range(max_steps):
    # minibatch construct
    if i % 2 == 0:
        ix = torch.randint(0, Xtr.shape[0], (32,))
        Xb, Yb = Xtr[ix], Ytr[ix]
    else:
        Xb, Yb = batch_loader.next()

    # forward pass
    emb = C[Xb]  # (32, 3, 10)
    h = torch.tanh(emb.view(-1, 30) @ W1 + b1)  # (32, 64)
    logits = h @ W2 + b2  # (32, 27)
    loss = F.cross_entropy(logits, Yb)

    # backward pass
    for p in parameters:
        p.grad = None
    loss.backward()

    # update
    lr = 0.1 if i < 40 else 0.01
    for p in parameters:
        p.data += -lr * p.grad

    # track stats
    stepi.append(i)
    lossi.append(loss.log10().item())
    if i % 20 == 0:
        losses = estimate_loss()
        print(f"step {i}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")

print(len(lossi), f"{loss.item():.4f}")

# sample from the model
g = torch.Generator().manual_seed(2147483647 + 10)
names = []
for _ in range(5):
    out = []
    context = [0] * block_size  # initialize with all ...
    while True:
        emb = C[torch.tensor([context])]  # (1,block_size,d)
        h = torch.tanh(emb.view(1, -1) @ W1 + b1)
        logits = h @ W2 + b2
        probs = F.softmax(logits, dim=1)
        ix = torch.multinomial(probs, num_samples=1, generator=g).item()
        context = context[1:] + [ix]
        out.append(ix)
        if ix == 0:
            break
    names.append("".join(itos[i] for i in out))
print(len(names), all(n.endswith(".") for n in names))
