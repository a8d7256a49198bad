"""``minitorch.distributions``: probability distributions to sample from and score, as
``torch.distributions`` (the policy-gradient examples' Categorical and Normal).

Each has PyTorch's shapes: ``batch_shape`` (independent distributions side by side, from
the parameters' shape) and ``event_shape`` (one draw's shape; ``()`` for these two);
``sample(sample_shape)`` returns ``sample_shape + batch_shape + event_shape``.
``log_prob`` and ``entropy`` are differentiable in the parameters; ``Normal.rsample`` is
the reparameterised draw (``loc + scale * eps``) that gradients flow through.
"""

from .categorical import Categorical
from .distribution import Distribution
from .normal import Normal

__all__ = ["Categorical", "Distribution", "Normal"]
