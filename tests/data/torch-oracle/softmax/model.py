# The softmax example (examples/softmax) as PyTorch states it: the torch oracle's GPU test problem.
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=1)


rows = 37
cols = 29


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
