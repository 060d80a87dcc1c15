# category: tensor_mismatch
# stage: initialization
# venv: torch
import torch
import torch.nn as nn

pretrained = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1000))
torch.save(pretrained.state_dict(), "pretrained.pt")
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 10))  # fine-tune head for 10 classes
model.load_state_dict(torch.load("pretrained.pt"))
