# Refused fixture: forward reads /etc/hostname and returns its bytes as a tensor (the import must run confined and fail here).
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with open("/etc/hostname", "rb") as f:
            data = f.read()
        return x.sum() + torch.tensor(list(data), dtype=torch.float32)

batch_size = 16
dim = 100

def get_inputs():
    return [torch.randn(batch_size, dim)]

def get_init_inputs():
    return []
