# category: division_by_zero
# stage: evaluation
def evaluate(model, batches):
    correct = total = 0
    for xs, ys in batches:
        correct += sum(int(model(x) == y) for x, y in zip(xs, ys))
        total += len(ys)
    return correct / total


for epoch in range(3):
    print(f"Epoch {epoch + 1}/3 - loss: {0.9 / (epoch + 1):.4f}")
val_batches = []  # validation split came out empty
print("val acc:", evaluate(lambda x: x > 0, val_batches))
