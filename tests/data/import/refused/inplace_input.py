# Refused fixture: forward mutates its input in place (add_, relu_) and returns the input tensor itself.
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x.add_(1.0)
        x.relu_()
        return x

batch_size = 16
dim = 100

def get_inputs():
    return [torch.randn(batch_size, dim)]

def get_init_inputs():
    return []
