# Refused fixture: the input (and output) tensor is torch.complex64.
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * x

batch_size = 16
dim = 100

def get_inputs():
    return [torch.randn(batch_size, dim, dtype=torch.complex64)]

def get_init_inputs():
    return []
