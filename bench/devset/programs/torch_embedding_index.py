# category: illegal_index
# stage: training
# venv: torch
import torch
import torch.nn as nn

emb = nn.Embedding(100, 16)  # vocabulary of 100 tokens
tokens = torch.tensor([[1, 5, 99, 100]])  # tokenizer produced id 100
print("batch", tokens.tolist())
out = emb(tokens)
