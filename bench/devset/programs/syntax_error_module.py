# category: syntax_error
# stage: initialization
"""The entry point imports a helper module that does not compile (an f-string with a bad expression)."""
import os
import sys

os.makedirs("utils", exist_ok=True)
with open(os.path.join("utils", "__init__.py"), "w") as f:
    f.write("")
with open(os.path.join("utils", "logging_utils.py"), "w") as f:
    f.write("def fmt(step, loss):\n    return f'step {step}: loss={loss:.4f'\n")
sys.path.insert(0, os.getcwd())
from utils.logging_utils import fmt  # noqa: E402

print(fmt(1, 0.5))
