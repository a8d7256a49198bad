"""The Forward-Forward algorithm (Hinton, 2022): each layer trained on its own "goodness".

Source: pytorch/examples, mnist_forward_forward/main.py (overlay_y_on_x, Net, Layer as
there). Changes: MNIST replaced by scikit-learn's 8x8 digits (no download, 64 inputs), a
few epochs on 600 digits, no tqdm, args as constants.
"""
# compare: masked

import torch
import torch.nn as nn
from sklearn.datasets import load_digits
from torch.optim import Adam


def get_y_neg(y):
    y_neg = y.clone()
    for idx, y_samp in enumerate(y):
        allowed_indices = list(range(10))
        allowed_indices.remove(y_samp.item())
        y_neg[idx] = torch.tensor(allowed_indices)[
            torch.randint(len(allowed_indices), size=(1,))
        ].item()
    return y_neg


def overlay_y_on_x(x, y, classes=10):
    """Replace the first 10 pixels of data [x] with one-hot-encoded label [y]"""
    x_ = x.clone()
    x_[:, :classes] *= 0.0
    x_[range(x.shape[0]), y] = x.max()
    return x_


class Net(torch.nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.layers = []
        for d in range(len(dims) - 1):
            self.layers = self.layers + [Layer(dims[d], dims[d + 1])]

    def predict(self, x):
        goodness_per_label = []
        for label in range(10):
            h = overlay_y_on_x(x, label)
            goodness = []
            for layer in self.layers:
                h = layer(h)
                goodness = goodness + [h.pow(2).mean(1)]
            goodness_per_label += [sum(goodness).unsqueeze(1)]
        goodness_per_label = torch.cat(goodness_per_label, 1)
        return goodness_per_label.argmax(1)

    def train(self, x_pos, x_neg):
        h_pos, h_neg = x_pos, x_neg
        for i, layer in enumerate(self.layers):
            print("training layer: ", i)
            h_pos, h_neg = layer.train(h_pos, h_neg)


class Layer(nn.Linear):
    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__(in_features, out_features, bias, device, dtype)
        self.relu = torch.nn.ReLU()
        self.opt = Adam(self.parameters(), lr=args.lr)
        self.threshold = args.threshold
        self.num_epochs = args.epochs

    def forward(self, x):
        x_direction = x / (x.norm(2, 1, keepdim=True) + 1e-4)
        return self.relu(torch.mm(x_direction, self.weight.T) + self.bias.unsqueeze(0))

    def train(self, x_pos, x_neg):
        for i in range(self.num_epochs):  # (tqdm(range(...)) in the example)
            g_pos = self.forward(x_pos).pow(2).mean(1)
            g_neg = self.forward(x_neg).pow(2).mean(1)
            # The following loss pushes pos (neg) samples to
            # values larger (smaller) than the self.threshold.
            loss = torch.log(
                1 + torch.exp(torch.cat([-g_pos + self.threshold, g_neg - self.threshold]))
            ).mean()
            self.opt.zero_grad()
            # this backward just compute the derivative and hence
            # is not considered backpropagation.
            loss.backward()
            self.opt.step()
            if i % args.log_interval == 0:
                print("Loss: ", loss.item())
        return self.forward(x_pos).detach(), self.forward(x_neg).detach()


class Args:
    epochs = 10
    lr = 0.03
    seed = 1
    log_interval = 5
    threshold = 2
    train_size = 600


if __name__ == "__main__":
    args = Args()
    torch.manual_seed(args.seed)
    device = torch.device("cpu")

    digits = load_digits()
    data = torch.tensor(digits.data, dtype=torch.float32) / 16.0
    data = (data - 0.1307) / 0.3081  # (the example's MNIST normalisation)
    labels = torch.tensor(digits.target)
    x, y = data[: args.train_size].to(device), labels[: args.train_size].to(device)
    x_te, y_te = data[args.train_size :].to(device), labels[args.train_size :].to(device)

    net = Net([64, 100, 100])
    x_pos = overlay_y_on_x(x, y)
    y_neg = get_y_neg(y)
    x_neg = overlay_y_on_x(x, y_neg)
    print(x_pos.shape, x_neg.shape, bool((x_pos[range(3), y[:3]] == x.max()).all()))

    net.train(x_pos, x_neg)
    print("train error:", 1.0 - net.predict(x).eq(y).float().mean().item())
    print("test error:", 1.0 - net.predict(x_te).eq(y_te).float().mean().item())
