"""Train a small LSTM to tell which of four tokens occurs most often in a sequence.

An ordinary seeded training script: synthetic data, ``random_split``, a shuffling ``DataLoader``,
default layer initialisation, Adam and ``OneCycleLR``. It prints the loss, accuracy and learning
rate of every epoch; run it under torch (change the import) and it prints the same numbers.
"""
import hookgrad as torch
from hookgrad import nn
from hookgrad.utils.data import DataLoader, TensorDataset, random_split

torch.manual_seed(0)

VOCAB, LENGTH, CLASSES = 12, 16, 4
tokens = torch.randint(0, VOCAB, (512, LENGTH))
counts = torch.stack([(tokens == token).sum(dim=1) for token in range(CLASSES)], dim=1)
labels = counts.argmax(dim=1)

dataset = TensorDataset(tokens, labels)
train_set, test_set = random_split(dataset, [384, 128])
train_loader = DataLoader(train_set, batch_size=32, shuffle=True)
test_loader = DataLoader(test_set, batch_size=64)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 16)
        self.lstm = nn.LSTM(16, 32, batch_first=True)
        self.head = nn.Linear(32, CLASSES)

    def forward(self, x):
        output, (hidden, cell) = self.lstm(self.embed(x))
        return self.head(hidden[-1])


model = Classifier()
epochs = 6
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=2e-2, epochs=epochs,
                                                steps_per_epoch=len(train_loader))
loss_fn = nn.CrossEntropyLoss()

print(f"parameters: {sum(p.numel() for p in model.parameters())}")
print(f"first weights: {model.lstm.weight_ih_l0[0, :4].tolist()}")
for epoch in range(epochs):
    model.train()
    total_loss, seen = 0.0, 0
    for x, y in train_loader:
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        scheduler.step()
        total_loss += loss.item() * len(y)
        seen += len(y)

    model.eval()
    correct = 0
    with torch.no_grad():
        for x, y in test_loader:
            correct += (model(x).argmax(dim=1) == y).sum().item()
    print(f"epoch {epoch}: loss {total_loss / seen:.4f}  "
          f"test accuracy {correct / len(test_set):.4f}  lr {scheduler.get_last_lr()[0]:.6f}")
