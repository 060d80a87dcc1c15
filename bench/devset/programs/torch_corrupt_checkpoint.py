# category: corrupt_data
# stage: initialization
# venv: torch
import torch

torch.save({"w": torch.zeros(64, 64)}, "model.pt")
raw = open("model.pt", "rb").read()
with open("model.pt", "wb") as f:
    f.write(raw[:2000])  # partial copy (the copy to the shared file system was interrupted)
print("loading model.pt")
state = torch.load("model.pt")
