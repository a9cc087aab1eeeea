# The pilot's fp32 matmul (examples/matmul) as PyTorch states it: the torch oracle's test problem.
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)


m = 31
n = 37
k = 29


def get_inputs():
    return [torch.randn(m, k), torch.randn(k, n)]


def get_init_inputs():
    return []
