# category: not_implemented
# stage: initialization
class BaseModel:
    def forward(self, x):
        raise NotImplementedError

    def __call__(self, x):
        return self.forward(x)


class MyModel(BaseModel):
    def foward(self, x):  # typo: never overrides forward
        return x * 2


print(MyModel()(3))
