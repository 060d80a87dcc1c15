# category: loss_nan
# stage: training
# venv: torch
import torch

torch.manual_seed(1)
w = torch.tensor([1e20], requires_grad=True)
for step in range(3):
    loss = (w * w * w).sum() - (w * w * w).sum() * 1.0 + torch.tensor(float("inf")) * 0
    print(f"step {step}: loss={loss.item()}")
    assert not torch.isnan(loss), "Loss is NaN"
