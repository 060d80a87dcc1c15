# category: path_not_found
# stage: evaluation
# venv: torch
import torch


def evaluate(ckpt_path):
    model = torch.nn.Linear(4, 2)
    model.load_state_dict(torch.load(ckpt_path, map_location="cpu"))
    return model


print("training finished, evaluating best checkpoint")
evaluate("output/best_model.pth")
