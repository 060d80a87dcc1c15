# category: framework_api_misuse
# stage: evaluation
# venv: torch
import torch


def evaluate(model, x):
    preds = model(x)
    return preds.numpy()


model = torch.nn.Linear(4, 1)
print(evaluate(model, torch.randn(2, 4)))
