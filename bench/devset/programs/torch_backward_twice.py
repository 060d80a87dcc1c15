# category: framework_api_misuse
# stage: training
# venv: torch
import torch

torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
x = torch.randn(3)
hidden = (w * x).exp()
for step in range(2):
    loss = hidden.sum()
    loss.backward()
    print(f"step {step} loss {loss.item():.4f}")
