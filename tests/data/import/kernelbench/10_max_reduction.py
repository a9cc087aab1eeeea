# KernelBench-format fixture: max over dim 1, values only via torch.max(...)[0] (cf. level1/49_Max_reduction_over_a_dimension.py, shrunk).
import torch
import torch.nn as nn

class Model(nn.Module):
    """
    Simple model that performs Max reduction over a specific dimension.
    """
    def __init__(self, dim: int):
        super(Model, self).__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.max(x, dim=self.dim)[0]

batch_size = 16
dim1 = 50
dim2 = 70

def get_inputs():
    x = torch.rand(batch_size, dim1, dim2)
    return [x]

def get_init_inputs():
    return [1]
