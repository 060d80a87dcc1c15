# category: loss_nan
# stage: training
# venv: torch
import torch

torch.autograd.set_detect_anomaly(True)
p = torch.tensor([0.5, 0.0, 0.25], requires_grad=True)
loss = -(p.log() * torch.tensor([1.0, 0.0, 1.0])).sum()
print("loss", loss.item())
loss.backward()
