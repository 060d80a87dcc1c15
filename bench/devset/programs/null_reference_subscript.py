# category: null_reference
# stage: evaluation
def load_labels(path):
    labels = {}
    # forgot to return labels


def evaluate(preds):
    labels = load_labels("val_labels.txt")
    correct = sum(1 for i, p in enumerate(preds) if labels[i] == p)
    return correct / len(preds)


print("accuracy:", evaluate([0, 1, 1, 0]))
