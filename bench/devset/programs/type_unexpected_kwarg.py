# category: type_mismatch
# stage: initialization
class Trainer:
    def __init__(self, model, lr=1e-3, max_epochs=10):
        self.model, self.lr, self.max_epochs = model, lr, max_epochs


trainer = Trainer("resnet18", lr=0.1, max_epochs=90, gpus=8)
