# category: unexpected_encoding
# stage: evaluation
predictions = ["caf\u00e9", "na\u00efve", "r\u00e9sum\u00e9"]
with open("predictions.txt", "w", encoding="ascii") as f:
    for p in predictions:
        f.write(p + "\n")
