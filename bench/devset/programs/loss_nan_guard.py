# category: loss_nan
# stage: training
# venv: torch
"""Too high a learning rate: the loss diverges and the DETR/DeiT-style guard stops training."""
import math
import sys

import torch

torch.manual_seed(0)
x = torch.randn(256, 8) * 10
y = x @ torch.randn(8, 1)
model = torch.nn.Linear(8, 1)
opt = torch.optim.SGD(model.parameters(), lr=5.0)
for step in range(200):
    loss = ((model(x) - y) ** 2).mean()
    loss_value = loss.item()
    if not math.isfinite(loss_value):
        print("Loss is {}, stopping training".format(loss_value))
        sys.exit(1)
    print(f"step {step} loss {loss_value:.4e}")
    opt.zero_grad()
    loss.backward()
    opt.step()
