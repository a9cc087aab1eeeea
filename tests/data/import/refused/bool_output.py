# Refused fixture: forward returns a bool tensor (x > 0).
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x > 0

batch_size = 16
dim = 100

def get_inputs():
    return [torch.randn(batch_size, dim)]

def get_init_inputs():
    return []
