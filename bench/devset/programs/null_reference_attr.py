# category: null_reference
# stage: data_preprocessing
import re


def parse_size(name):
    m = re.match(r"img_(\d+)x(\d+)\.png", name)
    return int(m.group(1)), int(m.group(2))


for name in ["img_224x224.png", "img_320x240.png", "thumb.jpg"]:
    print(name, parse_size(name))
