"""GAN training: the generator's output under no_grad carries no graph, so the
discriminator's loss sends no gradient into the generator.

Source: engineering notes, 2.2.
"""
# compare: exact

import torch
import torch.nn as nn

torch.manual_seed(0)
generator = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 6))
discriminator = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 1))
noise = torch.randn(5, 4)
real_img = torch.randn(5, 6)

# discriminator step (G is not updated)
with torch.no_grad():
    fake_img = generator(noise)
print("fake_img.grad_fn:", fake_img.grad_fn, "requires_grad:", fake_img.requires_grad)
d_real = discriminator(real_img)
d_fake = discriminator(fake_img)
d_loss = d_real.mean() - d_fake.mean()
d_loss.backward()
print("generator grads:", [p.grad for p in generator.parameters()])
print("discriminator grads set:", all(p.grad is not None for p in discriminator.parameters()))

# generator step (only G's gradient matters)
discriminator.zero_grad()
g_loss = -discriminator(generator(noise)).mean()
g_loss.backward()
print("generator grads set:", all(p.grad is not None for p in generator.parameters()))
print("grad shapes:", [tuple(p.grad.shape) for p in generator.parameters()])
