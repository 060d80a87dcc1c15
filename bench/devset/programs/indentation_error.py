# category: syntax_error
# stage: initialization
import os
import sys

with open("model_def.py", "w") as f:
    f.write("def build():\n    layers = []\n\tlayers.append('conv')\n    return layers\n")
sys.path.insert(0, os.getcwd())
import model_def  # noqa: E402
