# category: illegal_index
# stage: training
# venv: torch
import torch
import torch.nn.functional as F

logits = torch.randn(4, 3)
labels = torch.tensor([0, 1, 2, 3])  # 4 classes in the data, 3 outputs in the model
loss = F.cross_entropy(logits, labels)
