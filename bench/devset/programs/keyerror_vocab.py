# category: key_not_found
# stage: data_preprocessing
vocab = {"<pad>": 0, "<unk>": 1, "the": 2, "cat": 3, "sat": 4}


def encode(sentence):
    return [vocab[tok] for tok in sentence.split()]


corpus = ["the cat sat", "the dog sat"]
for i, s in enumerate(corpus):
    print(i, encode(s))
