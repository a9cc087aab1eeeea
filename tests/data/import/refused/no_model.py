# Refused fixture: the module defines no class named Model (the network is called Net).
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)

batch_size = 16
dim = 100

def get_inputs():
    return [torch.randn(batch_size, dim)]

def get_init_inputs():
    return []
