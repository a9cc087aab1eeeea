# KernelBench-format fixture: RMS norm written out in torch ops, with an nn.Parameter weight (randomly initialised).
import torch
import torch.nn as nn

class Model(nn.Module):
    """
    Simple model that performs RMS Normalization over the last dimension with a learned scale.
    """
    def __init__(self, num_features: int, eps: float = 1e-5):
        super(Model, self).__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.randn(num_features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rms = torch.sqrt(torch.mean(x ** 2, dim=-1, keepdim=True) + self.eps)
        return x / rms * self.weight

batch_size = 77
features = 320

def get_inputs():
    x = torch.randn(batch_size, features)
    return [x]

def get_init_inputs():
    return [features]
