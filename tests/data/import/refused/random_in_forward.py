# Refused fixture: forward draws fresh random numbers (torch.rand_like), so its output is not a function of its inputs.
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + 0.1 * torch.rand_like(x)

batch_size = 16
dim = 100

def get_inputs():
    return [torch.randn(batch_size, dim)]

def get_init_inputs():
    return []
