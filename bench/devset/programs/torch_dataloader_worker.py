# category: key_not_found
# stage: data_preprocessing
# venv: torch
"""A KeyError raised in a DataLoader worker process is re-raised in the main process."""
import torch
from torch.utils.data import DataLoader, Dataset


class Samples(Dataset):
    def __init__(self):
        self.rows = [{"image": [0.0] * 4, "label": 1} for _ in range(6)]
        self.rows[5] = {"image": [0.0] * 4, "target": 0}  # one record uses another field name

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        r = self.rows[i]
        return torch.tensor(r["image"]), r["label"]


if __name__ == "__main__":
    loader = DataLoader(Samples(), batch_size=2, num_workers=2)
    for step, (x, y) in enumerate(loader):
        print(f"step {step} batch {tuple(x.shape)}")
