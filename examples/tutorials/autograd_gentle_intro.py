"""A Gentle Introduction to torch.autograd.

torchvision's resnet18 would need a download; a small network with the same shape of use (a
convolutional stem and a final fully connected layer called ``fc``) stands in for it.
"""
import hookgrad as torch
from hookgrad import nn


class TinyResNet(nn.Module):
    """resnet18's outline in miniature: conv, batch norm, ReLU, global pooling, ``fc``."""

    def __init__(self, num_classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, kernel_size=3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU(inplace=True)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(8, num_classes)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(x)


# Usage in PyTorch
model = TinyResNet()
data = torch.rand(1, 3, 64, 64)
labels = torch.rand(1, 1000)

prediction = model(data)  # forward pass
print(prediction.shape, prediction.grad_fn.name())

loss = (prediction - labels).sum()
print(loss)
loss.backward()  # backward pass
print(model.fc.bias.grad[:5])

optim = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
optim.step()  # gradient descent
print(model.fc.bias[:5])

# Differentiation in Autograd
a = torch.tensor([2., 3.], requires_grad=True)
b = torch.tensor([6., 4.], requires_grad=True)
Q = 3 * a**3 - b**2
print(Q)

external_grad = torch.tensor([1., 1.])
Q.backward(gradient=external_grad)

# check if collected gradients are correct
print(9 * a**2 == a.grad)
print(-2 * b == b.grad)

# Computational graph: walk it from Q back to the leaves
node = Q.grad_fn
print(node.name(), [fn.name() if fn is not None else None for fn, _ in node.next_functions])

# Exclusion from the DAG
x = torch.rand(5, 5)
y = torch.rand(5, 5)
z = torch.rand((5, 5), requires_grad=True)

a = x + y
print(f"Does `a` require gradients?: {a.requires_grad}")
b = x + z
print(f"Does `b` require gradients?: {b.requires_grad}")

with torch.no_grad():
    c = x + z
print(f"Does `c` (computed under no_grad) require gradients?: {c.requires_grad}")

# Freezing parameters to finetune only the classifier
from hookgrad import nn, optim  # noqa: E402  (the tutorial imports these here)

model = TinyResNet()

# Freeze all the parameters in the network
for param in model.parameters():
    param.requires_grad = False

model.fc = nn.Linear(8, 10)

# Optimize only the classifier
optimizer = optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)

for name, param in model.named_parameters():
    print(name, param.requires_grad)

prediction = model(data)
prediction.sum().backward()
print(model.conv1.weight.grad, model.fc.weight.grad.shape)
optimizer.step()
