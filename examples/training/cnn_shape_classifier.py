"""Train a small CNN to tell horizontal, vertical and diagonal strokes apart in noisy images.

An ordinary seeded training script: synthetic data, ``random_split``, a shuffling ``DataLoader``,
default layer initialisation, SGD with momentum and ``StepLR``, batch norm, max pooling and
dropout. It prints the loss, accuracy and learning rate of every epoch; run it under torch
(change the import) and it prints the same numbers. (Dropout masks equal torch's where torch uses
its portable kernel, as on AMD CPUs; on Intel CPUs torch draws them from MKL's stream.)
"""
import hookgrad as torch
import hookgrad.nn.functional as F
from hookgrad import nn
from hookgrad.utils.data import DataLoader, TensorDataset, random_split

torch.manual_seed(0)

SIZE, SAMPLES = 12, 600
labels = torch.randint(0, 3, (SAMPLES,))
images = 0.3 * torch.randn(SAMPLES, 1, SIZE, SIZE)
offsets = torch.randint(2, SIZE - 2, (SAMPLES,))
steps = torch.arange(SIZE)
for i in range(SAMPLES):
    k, o = labels[i].item(), offsets[i].item()
    if k == 0:
        images[i, 0, o, :] += 1.0
    elif k == 1:
        images[i, 0, :, o] += 1.0
    else:
        images[i, 0, steps, (steps + o) % SIZE] += 1.0

train_set, val_set = random_split(TensorDataset(images, labels), [480, 120])
train_loader = DataLoader(train_set, batch_size=40, shuffle=True)
val_loader = DataLoader(val_set, batch_size=60)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, kernel_size=3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, kernel_size=3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.dropout = nn.Dropout(0.25)
        self.fc = nn.Linear(16 * 3 * 3, 3)

    def forward(self, x):
        x = self.pool(F.relu(self.bn1(self.conv1(x))))
        x = self.pool(F.relu(self.conv2(x)))
        x = self.dropout(torch.flatten(x, 1))
        return self.fc(x)


model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
criterion = nn.CrossEntropyLoss()

print(f"conv1 weight sum: {model.conv1.weight.sum().item():.6f}")
for epoch in range(6):
    model.train()
    running, total = 0.0, 0
    for x, y in train_loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        running += loss.item() * x.size(0)
        total += x.size(0)
    scheduler.step()

    model.eval()
    correct, val_loss = 0, 0.0
    with torch.no_grad():
        for x, y in val_loader:
            out = model(x)
            val_loss += criterion(out, y).item() * x.size(0)
            correct += (out.argmax(1) == y).sum().item()
    print(f"epoch {epoch + 1}: train loss {running / total:.4f}  val loss "
          f"{val_loss / len(val_set):.4f}  val acc {correct / len(val_set):.3f}  "
          f"lr {optimizer.param_groups[0]['lr']:.4f}")
print(f"running mean of bn1: {model.bn1.running_mean[:3].tolist()}")
