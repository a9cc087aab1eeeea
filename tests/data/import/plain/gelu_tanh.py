# Plain-form fixture: tanh-approximated GELU over one tensor (module-level size globals, forward + get_inputs).
import math

import torch

ROWS = 64
COLS = 300

def forward(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)))

def get_inputs():
    return [torch.randn(ROWS, COLS)]
