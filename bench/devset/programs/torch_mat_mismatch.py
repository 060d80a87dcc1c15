# category: tensor_mismatch
# stage: training
# venv: torch
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 30 * 30, 10))
x = torch.randn(4, 3, 28, 28)  # images are 28x28, the head was sized for 32x32
print("forward pass on batch", tuple(x.shape))
out = model(x)
