# category: illegal_index
# stage: training
class Dataset:
    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items) + 1  # off by one

    def __getitem__(self, i):
        return self.items[i]


ds = Dataset([(0.1, 0), (0.2, 1), (0.3, 0)])
for epoch in range(1):
    for i in range(len(ds)):
        x, y = ds[i]
        print(f"epoch {epoch} step {i} x={x} y={y}")
