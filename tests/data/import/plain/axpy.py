# Plain-form fixture: axpy, a * x + y over two 1-D tensors with a fixed scalar a.
import torch

N = 1003
A = 2.5

def forward(x, y):
    return A * x + y

def get_inputs():
    return [torch.randn(N), torch.randn(N)]
