"""A custom autograd.Function: the policy-gradient term with a hand-written backward.

Source: engineering notes, 2.2 (class PolicyGradient(torch.autograd.Function)).
"""
# compare: exact

import torch


class PolicyGradient(torch.autograd.Function):
    @staticmethod
    def forward(ctx, log_prob, advantage):
        ctx.save_for_backward(log_prob, advantage)
        return (log_prob * advantage).sum()

    @staticmethod
    def backward(ctx, grad_output):
        log_prob, advantage = ctx.saved_tensors
        # the partial derivatives of sum(log_prob * advantage), times grad_output
        grad_log_prob = advantage * grad_output
        grad_advantage = log_prob * grad_output
        return grad_log_prob, grad_advantage


log_prob = torch.log(torch.tensor([0.2, 0.5, 0.3], dtype=torch.float64)).requires_grad_()
advantage = torch.tensor([1.0, -0.5, 2.0], dtype=torch.float64, requires_grad=True)
loss = PolicyGradient.apply(log_prob, advantage)
print(loss)
print(type(loss.grad_fn).__name__)
loss.backward()
print(log_prob.grad)
print(advantage.grad)
print(torch.autograd.gradcheck(PolicyGradient.apply, (log_prob, advantage)))
