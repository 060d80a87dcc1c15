# category: tensor_mismatch
# stage: data_preprocessing
# venv: torch
import torch
from torch.utils.data import DataLoader, Dataset


class Images(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        h = 224 if i != 3 else 199  # one image was not resized (single-process loading)
        return torch.zeros(3, h, 224)


if __name__ == "__main__":
    for step, batch in enumerate(DataLoader(Images(), batch_size=4, num_workers=0)):
        print("step", step, tuple(batch.shape))
