# category: key_not_found
# stage: training
"""A harmless warning with a traceback-like text is printed first; the job ends on a KeyError later."""
import traceback
import warnings

warnings.warn("The 'verbose' parameter is deprecated. Please use get_last_lr() to access the learning rate.",
              UserWarning)
try:
    import not_a_real_optional_dep  # noqa: F401
except ImportError:
    traceback.print_exc()
    print("optional dependency missing, falling back to the slow path")
metrics = {"train_loss": 0.4}
for epoch in range(2):
    print(f"epoch {epoch} train_loss {metrics['train_loss']:.3f} val_loss {metrics['val_loss']:.3f}")
