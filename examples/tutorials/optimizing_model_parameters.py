"""Optimizing Model Parameters (PyTorch's "Learn the Basics").

The training and test loops of the tutorial, with CrossEntropyLoss and SGD. FashionMNIST would
need a download; noisy copies of ten random 28x28 prototype images stand in for it. The datasets
are smaller than FashionMNIST, so the loop prints every few batches instead of every hundred.
"""
import hookgrad as torch
from hookgrad import nn
from hookgrad.utils.data import DataLoader, TensorDataset


def synthetic_fashion(size, prototypes):
    """Noisy copies of one prototype image per class."""
    labels = torch.randint(0, 10, (size,))
    images = 0.5 * prototypes[labels] + 0.5 * torch.rand(size, 1, 28, 28)
    return TensorDataset(images, labels)


prototypes = torch.rand(10, 1, 28, 28)
training_data = synthetic_fashion(384, prototypes)
test_data = synthetic_fashion(128, prototypes)

train_dataloader = DataLoader(training_data, batch_size=64)
test_dataloader = DataLoader(test_data, batch_size=64)


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(28 * 28, 512),
            nn.ReLU(),
            nn.Linear(512, 512),
            nn.ReLU(),
            nn.Linear(512, 10),
        )

    def forward(self, x):
        x = self.flatten(x)
        logits = self.linear_relu_stack(x)
        return logits


model = NeuralNetwork()

# Hyperparameters
learning_rate = 1e-1
batch_size = 64
epochs = 3

# Initialize the loss function
loss_fn = nn.CrossEntropyLoss()

# Optimizer
optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)


# Full Implementation
def train_loop(dataloader, model, loss_fn, optimizer):
    size = len(dataloader.dataset)
    # Set the model to training mode - important for batch normalization and dropout layers
    # Unnecessary in this situation but added for best practices
    model.train()
    for batch, (X, y) in enumerate(dataloader):
        # Compute prediction and loss
        pred = model(X)
        loss = loss_fn(pred, y)

        # Backpropagation
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

        if batch % 3 == 0:
            loss, current = loss.item(), batch * batch_size + len(X)
            print(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")


def test_loop(dataloader, model, loss_fn):
    # Set the model to evaluation mode - important for batch normalization and dropout layers
    # Unnecessary in this situation but added for best practices
    model.eval()
    size = len(dataloader.dataset)
    num_batches = len(dataloader)
    test_loss, correct = 0, 0

    # Evaluating the model with torch.no_grad() ensures that no gradients are computed during
    # test mode; also serves to reduce unnecessary gradient computations and memory usage for
    # tensors with requires_grad=True
    with torch.no_grad():
        for X, y in dataloader:
            pred = model(X)
            test_loss += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).type(torch.float).sum().item()

    test_loss /= num_batches
    correct /= size
    print(f"Test Error: \n Accuracy: {(100*correct):>0.1f}%, Avg loss: {test_loss:>8f} \n")


for t in range(epochs):
    print(f"Epoch {t+1}\n-------------------------------")
    train_loop(train_dataloader, model, loss_fn, optimizer)
    test_loop(test_dataloader, model, loss_fn)
print("Done!")
