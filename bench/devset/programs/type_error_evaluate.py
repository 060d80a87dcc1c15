# category: type_mismatch
# stage: evaluation
def evaluate(outputs):
    losses = [o["loss"] for o in outputs]
    return sum(losses) / len(losses)


outputs = [{"loss": 0.31}, {"loss": 0.29}, {"loss": "0.30"}]  # one value came back as a string
print(f"val_loss={evaluate(outputs):.4f}")
