# category: key_not_found
# stage: initialization
"""A nested config dict lacks a key the trainer expects."""
import json

cfg = json.loads('{"model": {"name": "resnet50", "num_classes": 10}, "optimizer": {"name": "sgd", "lr": 0.1}}')


def build_optimizer(cfg):
    opt = cfg["optimizer"]
    return opt["name"], opt["lr"], opt["weight_decay"]


print("model:", cfg["model"]["name"])
print("optimizer:", build_optimizer(cfg))
