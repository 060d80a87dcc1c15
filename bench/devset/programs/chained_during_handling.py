# category: undefined_variable
# stage: training
"""An error inside an except block: 'During handling of the above exception, another exception occurred'."""


def save_metrics(metrics, path="/nonexistent-dir/metrics.json"):
    try:
        with open(path, "w") as f:
            f.write(str(metrics))
    except FileNotFoundError:
        logger.warning("could not write metrics to %s", path)  # logger was never defined


for epoch in range(2):
    print(f"epoch {epoch}: loss={1.0 / (epoch + 1):.4f}")
save_metrics({"loss": 0.5})
