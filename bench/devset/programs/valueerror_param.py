# category: illegal_argument
# stage: initialization
"""A ValueError raised while validating a hyper-parameter."""
import logging

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
log = logging.getLogger("trainer")


class WarmupScheduler:
    def __init__(self, base_lr, warmup_steps, total_steps):
        if warmup_steps >= total_steps:
            raise ValueError(f"warmup_steps ({warmup_steps}) must be smaller than total_steps ({total_steps})")
        self.base_lr, self.warmup_steps, self.total_steps = base_lr, warmup_steps, total_steps


config = {"lr": 3e-4, "warmup_steps": 2000, "total_steps": 1000}
log.info("config: %s", config)
scheduler = WarmupScheduler(config["lr"], config["warmup_steps"], config["total_steps"])
