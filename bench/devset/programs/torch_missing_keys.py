# category: tensor_mismatch
# stage: initialization
# venv: torch
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 2))
wrapped = nn.DataParallel(net)
torch.save(wrapped.state_dict(), "ddp_ckpt.pt")  # keys saved with a 'module.' prefix
model = nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 2))
model.load_state_dict(torch.load("ddp_ckpt.pt"))
