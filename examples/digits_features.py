"""Train a small convolutional network on scikit-learn's 8x8 digits, then use hooks to look inside.

Module hooks do the looking: a forward hook on each convolution keeps its feature maps, and a full
backward hook on the classifier records the gradient arriving at it during training. A tensor hook
on the input images gives a saliency map (which pixels the predicted class depends on most).

The weights start from NumPy's generator, not the library's: hookgrad and PyTorch draw different
random numbers, and starting both from the same network lets them print the same numbers.
Run it as it is, or with the first import changed to ``import torch``.
"""
import numpy as np
from sklearn.datasets import load_digits

import hookgrad as torch
from hookgrad import nn

digits = load_digits()
images = torch.tensor(digits.images[:600] / 16.0, dtype=torch.float32).unsqueeze(1)
labels = torch.tensor(digits.target[:600])
train_images, train_labels = images[:480], labels[:480]
test_images, test_labels = images[480:], labels[480:]


class DigitNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(6, 12, kernel_size=3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.classifier = nn.Linear(12 * 2 * 2, 10)

    def forward(self, x):
        x = self.pool(torch.relu(self.conv1(x)))  # (N, 6, 4, 4)
        x = self.pool(torch.relu(self.conv2(x)))  # (N, 12, 2, 2)
        return self.classifier(x.flatten(1))


model = DigitNet()
start = np.random.default_rng(2024)
with torch.no_grad():
    for param in model.parameters():
        fan_in = param[0].numel() if param.dim() > 1 else 16
        values = start.normal(0.0, fan_in ** -0.5, tuple(param.shape))
        param.copy_(torch.tensor(values, dtype=torch.float32))
print(model)
print("parameters:", sum(p.numel() for p in model.parameters()))

# During training: the gradient that reaches the classifier, one norm per step.
arriving = []
watch = model.classifier.register_full_backward_hook(
    lambda module, grad_input, grad_output: arriving.append(grad_output[0].norm().item()))

optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
loss_fn = nn.CrossEntropyLoss()
batch = 60
for epoch in range(8):
    total = 0.0
    for first in range(0, len(train_images), batch):
        optimizer.zero_grad()
        loss = loss_fn(model(train_images[first:first + batch]), train_labels[first:first + batch])
        loss.backward()
        optimizer.step()
        total += loss.item()
    print(f"epoch {epoch}: mean loss {total / (len(train_images) // batch):.4f}")
watch.remove()
print(f"gradient norm at the classifier: first step {arriving[0]:.4f}, last {arriving[-1]:.4f}, "
      f"{len(arriving)} steps")

# After training: export both convolutions' feature maps for the held-out images.
feature_maps = {}


def keep(name):
    def hook(module, inputs, output):
        feature_maps[name] = output.detach().numpy().copy()
    return hook


handles = [model.conv1.register_forward_hook(keep("conv1")),
           model.conv2.register_forward_hook(keep("conv2"))]
with torch.no_grad():
    predicted = model(test_images).argmax(dim=1)
for handle in handles:
    handle.remove()
correct = int((predicted == test_labels).sum())
print(f"held-out accuracy: {correct}/{len(test_labels)}")
for name, maps in feature_maps.items():
    print(name, maps.shape, maps.dtype, "mean activation per channel:",
          np.round(np.maximum(maps, 0).mean(axis=(0, 2, 3)), 3))

# For each digit, the conv2 channel that answers it most strongly compared with other digits.
strength = np.maximum(feature_maps["conv2"], 0).mean(axis=(2, 3))
targets = test_labels.numpy()
per_digit = np.stack([strength[targets == digit].mean(axis=0) for digit in range(10)])
relative = per_digit / (per_digit.mean(axis=0) + 1e-6)
print("most telling conv2 channel per digit:", relative.argmax(axis=1).tolist())

# A tensor hook on the input: the gradient of the winning score with respect to each pixel.
saliency = []
image = test_images[:1].clone().requires_grad_(True)
image.register_hook(lambda grad: saliency.append(grad.abs()[0, 0]))
scores = model(image)
scores[0, scores.argmax()].backward()
row, column = divmod(int(saliency[0].argmax()), 8)
print(f"digit {int(test_labels[0])}: predicted {int(scores.argmax())}, most sensitive pixel "
      f"(row {row}, column {column})")
print("saliency of the middle row:", np.round(saliency[0][4].numpy(), 3))
