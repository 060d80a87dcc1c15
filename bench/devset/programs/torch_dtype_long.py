# category: type_mismatch
# stage: training
# venv: torch
import torch
import torch.nn.functional as F

logits = torch.randn(8, 5, requires_grad=True)
targets = torch.tensor([0, 1, 2, 3, 4, 0, 1, 2], dtype=torch.float32)  # labels read as floats
loss = F.nll_loss(F.log_softmax(logits, dim=1), targets)
