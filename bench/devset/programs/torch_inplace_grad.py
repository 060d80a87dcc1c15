# category: framework_api_misuse
# stage: training
# venv: torch
import torch

torch.manual_seed(0)
a = torch.randn(4, requires_grad=True)
b = a.sigmoid()
b.mul_(2)  # in-place change of a tensor that sigmoid's backward needs
b.sum().backward()
