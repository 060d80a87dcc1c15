# category: undefined_variable
# stage: evaluation
def evaluate(scores, threshold=0.99):
    for s in scores:
        if s > threshold:
            best = s
    return best


print("best:", evaluate([0.5, 0.7, 0.9]))
