# category: unexpected_encoding
# stage: data_preprocessing
with open("reviews.csv", "wb") as f:
    f.write("id,text\n1,tr\u00e8s bien\n2,caf\u00e9 cr\u00e8me\n".encode("latin-1"))
with open("reviews.csv", encoding="utf-8") as f:
    rows = [line.rstrip("\n").split(",", 1) for line in f]
print(rows)
