"""Indexing and in-place methods the tutorials use: boolean masks, index lists, None,
negative steps avoided, masked_fill_, index_select, gather, scatter_, fill_, clamp_,
mul_, zero_, copy_, squeeze/unsqueeze, permute, expand, repeat, chunk, split, topk, sort.

Source: the Blitz's tensor operations and the examples' idioms.
"""
# compare: exact

import torch

x = torch.arange(12.0).view(3, 4)
print(x[1], x[:, -1], x[..., 1:3], x[x > 5], x[[0, 2]], x[None].shape, x[:, None, :].shape)
print(x[0, 1], x[0][1].item(), x[1:, ::2])
x[x > 9] = -1
print(x)
x[0, :] = torch.tensor([9.0, 8.0, 7.0, 6.0])
print(x)
x[:, 0] += 100
print(x)
y = torch.zeros(3, 4)
y.fill_(2).mul_(3).add_(1).sub_(0.5).div_(2)
print(y)
y.clamp_(max=3.0)
y.zero_()
print(y)
y.copy_(x)
print(torch.equal(x, y))
print(x.masked_fill(x < 0, 0.0))
print(torch.index_select(x, 1, torch.tensor([0, 3])))
print(torch.gather(x, 1, torch.tensor([[0], [1], [2]])))
z = torch.zeros(3, 5)
z.scatter_(1, torch.tensor([[0], [2], [4]]), 1.0)
print(z)
print(x.unsqueeze(0).shape, x.unsqueeze(0).squeeze().shape, x.permute(1, 0).shape)
print(torch.tensor([1.0, 2.0]).expand(3, 2), torch.tensor([1, 2]).repeat(2, 2))
print(torch.arange(6).chunk(3), torch.arange(5).split(2))
values, indices = torch.topk(torch.tensor([3.0, 1.0, 4.0, 1.5]), 2)
print(values, indices)
print(torch.sort(torch.tensor([3.0, 1.0, 2.0]), descending=True))
print(torch.argmax(x), x.argmax(dim=1), x.max(), x.max(dim=0))
print(x.min(dim=1).values, x.mean(dim=0), x.std(), x.var(dim=1), x.sum(dim=(0, 1)))
print(x.t().contiguous().is_contiguous(), x.t().is_contiguous(), x.stride(), x.dim(), x.ndim)
print(torch.stack([x, x]).shape, torch.cat((x, x), 0).shape, torch.hstack([x, x]).shape)
print(torch.where(x > 0, x, torch.zeros_like(x)))
print(x.reshape(-1)[:5], x.flatten().shape, x.numel(), x.nelement(), len(x))
print(torch.eq(x, y).all(), (x == y).any(), torch.allclose(x, y), x.ne(y).sum())
print(x.abs().sqrt().exp().log().round(decimals=2))
