"""Train a two-layer bidirectional GRU to predict the sign of a noisy sequence's running trend.

An ordinary seeded training script on float inputs: ``random_split``, a shuffling
``DataLoader``, default layer initialisation, dropout between the GRU's layers, gradient
clipping, SGD with momentum and ``ReduceLROnPlateau``. It prints the loss, accuracy and learning
rate of every epoch; run it under torch (change the import) and it prints the same numbers.
"""
import hookgrad as torch
from hookgrad import nn
from hookgrad.utils.data import DataLoader, TensorDataset, random_split

torch.manual_seed(1234)

LENGTH, FEATURES = 12, 3
slopes = torch.rand(240) * 2 - 1
time = torch.linspace(0, 1, LENGTH)
signals = slopes[:, None, None] * time[None, :, None] + 1.5 * torch.randn(240, LENGTH, FEATURES)
targets = (slopes > 0).long()

generator = torch.Generator().manual_seed(42)
train_set, val_set = random_split(TensorDataset(signals, targets), [0.75, 0.25],
                                  generator=generator)
train_loader = DataLoader(train_set, batch_size=20, shuffle=True)
val_loader = DataLoader(val_set, batch_size=30)


class TrendNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(FEATURES, 8, num_layers=2, batch_first=True, bidirectional=True,
                          dropout=0.2)
        self.out = nn.Linear(16, 2)

    def forward(self, x):
        outputs, _ = self.gru(x)
        return self.out(outputs.mean(dim=1))


model = TrendNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", factor=0.5,
                                                       patience=0)
loss_fn = nn.CrossEntropyLoss()

for epoch in range(6):
    model.train()
    total, count = 0.0, 0
    for x, y in train_loader:
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        optimizer.step()
        total += loss.item() * len(x)
        count += len(x)

    model.eval()
    with torch.no_grad():
        val_loss, hits = 0.0, 0
        for x, y in val_loader:
            logits = model(x)
            val_loss += loss_fn(logits, y).item() * len(x)
            hits += (logits.argmax(-1) == y).sum().item()
    val_loss /= len(val_set)
    scheduler.step(val_loss)
    print(f"epoch {epoch}: train {total / count:.4f}  val {val_loss:.4f}  "
          f"acc {hits / len(val_set):.3f}  lr {optimizer.param_groups[0]['lr']:.4f}")
