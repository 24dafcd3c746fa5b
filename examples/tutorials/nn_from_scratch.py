"""What is torch.nn really? (PyTorch's tutorial), "Neural net from scratch (without torch.nn)".

A logistic regression on MNIST-sized data written with tensor operations only: log_softmax, the
negative log-likelihood picked out by indexing with range(), accuracy, and a training loop that
updates the weights by hand. MNIST would need a download: NumPy draws sparse images of ten
prototypes instead (what_is_torch_nn_really.py goes on to refactor this with torch.nn).
"""
import math

import numpy as np

import hookgrad as torch

# MNIST data setup
rng = np.random.default_rng(0)
strokes = rng.random((10, 784)) < 0.2  # which pixels each digit's prototype inks


def make_digits(count):
    """Mostly-zero images in [0, 1], like MNIST's: a prototype's strokes at random intensity plus
    a few stray pixels."""
    labels = rng.integers(0, 10, count)
    ink = strokes[labels] * (0.5 + 0.5 * rng.random((count, 784)))
    stray = (rng.random((count, 784)) < 0.03) * rng.random((count, 784))
    return np.maximum(ink, stray).astype(np.float32), labels


x_train, y_train = make_digits(512)
x_valid, y_valid = make_digits(256)

x_train, y_train, x_valid, y_valid = map(
    torch.tensor, (x_train, y_train, x_valid, y_valid)
)
n, c = x_train.shape
print(x_train, y_train)
print(x_train.shape)
print(y_train.min(), y_train.max())

# Neural net from scratch (without torch.nn)
weights = torch.randn(784, 10) / math.sqrt(784)
weights.requires_grad_()
bias = torch.zeros(10, requires_grad=True)


def log_softmax(x):
    return x - x.exp().sum(-1).log().unsqueeze(-1)


def model(xb):
    return log_softmax(xb @ weights + bias)


bs = 64  # batch size

xb = x_train[0:bs]  # a mini-batch from x
preds = model(xb)  # predictions
print(preds[0], preds.shape)


def nll(input, target):
    return -input[range(target.shape[0]), target].mean()


loss_func = nll

yb = y_train[0:bs]
print(loss_func(preds, yb))


def accuracy(out, yb):
    preds = torch.argmax(out, dim=1)
    return (preds == yb).float().mean()


print(accuracy(preds, yb))

lr = 0.5  # learning rate
epochs = 2  # how many epochs to train for

for epoch in range(epochs):
    for i in range((n - 1) // bs + 1):
        start_i = i * bs
        end_i = start_i + bs
        xb = x_train[start_i:end_i]
        yb = y_train[start_i:end_i]
        pred = model(xb)
        loss = loss_func(pred, yb)

        loss.backward()
        with torch.no_grad():
            weights -= weights.grad * lr
            bias -= bias.grad * lr
            weights.grad.zero_()
            bias.grad.zero_()

print(loss_func(model(xb), yb), accuracy(model(xb), yb))
