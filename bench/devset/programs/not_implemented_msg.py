# category: not_implemented
# stage: initialization
def build_backbone(name):
    if name == "resnet":
        return "resnet"
    raise NotImplementedError(f"backbone '{name}' is not implemented yet")


print(build_backbone("swin"))
