# category: illegal_index
# stage: evaluation
import logging

logging.basicConfig(level=logging.INFO, format="%(asctime)s - %(levelname)s - %(message)s")
class_names = ["cat", "dog", "bird"]


def evaluate(predictions):
    report = {}
    for pred in predictions:
        name = class_names[pred]
        report[name] = report.get(name, 0) + 1
    return report


logging.info("***** Running evaluation *****")
logging.info("  Num examples = %d", 5)
print(evaluate([0, 2, 1, 3, 0]))
