import torch
import torch.nn as nn

BATCH = 4096
IN = 4096
OUT = 4096


class Model(nn.Module):
    """relu(x @ W.T + b) with an nn.Linear's weights."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.randn(BATCH, IN, dtype=torch.float32)]


def get_init_inputs():
    return [IN, OUT]
