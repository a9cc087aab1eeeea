# KernelBench-format fixture: mean over the last dim (passed as -1 through get_init_inputs), dim removed (cf. level1/48_Mean_reduction_over_a_dimension.py).
import torch
import torch.nn as nn

class Model(nn.Module):
    """
    Simple model that performs mean reduction over a specific dimension.
    """
    def __init__(self, dim: int):
        super(Model, self).__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.mean(x, dim=self.dim)

batch_size = 24
dim1 = 40
dim2 = 130

def get_inputs():
    x = torch.rand(batch_size, dim1, dim2)
    return [x]

def get_init_inputs():
    return [-1]
