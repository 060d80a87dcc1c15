# category: undefined_variable
# stage: training
def train_one_epoch(epoch, steps=3):
    total = 0.0
    for step in range(steps):
        loss = 1.0 / (step + 1)
        total += loss
        print(f"epoch {epoch} step {step} loss {loss:.4f}")
    return total / steps


for epoch in range(2):
    avg = train_one_epoch(epoch)
    print(f"epoch {epoch} avg loss {avg:.4f} lr {learning_rate}")
