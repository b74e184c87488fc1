"""Seed 003's MultiHeadSelfAttention, written for this book: projections in
nn.Sequential (hence the keys wq.0.weight ...), no 1/sqrt(d) scale, a ReLU after
the output projection, and with masked=True (the program's --causal) -10000
added to the scores of later keys.

The ReLU MHSA notebook's bug is fixed: its forward builds the mask from t before it sets t
(n, t, _, _ = v.shape comes later), so masked=True raised UnboundLocalError;
here t = x.shape[1] first.
"""
import torch
import torch.nn as nn

PROGRAM = "mhsa_relu"


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, hidden_size, num_header, masked=False):
        super().__init__()
        assert hidden_size % num_header == 0
        self.num_header, self.masked = num_header, masked
        self.wq = nn.Sequential(nn.Linear(hidden_size, hidden_size))
        self.wk = nn.Sequential(nn.Linear(hidden_size, hidden_size))
        self.wv = nn.Sequential(nn.Linear(hidden_size, hidden_size))
        self.wo = nn.Sequential(nn.Linear(hidden_size, hidden_size), nn.ReLU())

    def split(self, vs):
        n, t, e = vs.shape
        return torch.permute(vs.reshape(n, t, self.num_header, e // self.num_header), (0, 2, 1, 3))

    def forward(self, x):
        q, k, v = self.split(self.wq(x)), self.split(self.wk(x)), self.split(self.wv(x))
        scores = q @ torch.permute(k, (0, 1, 3, 2))
        if self.masked:
            t = x.shape[1]                        # the source sets t only below
            scores = scores + (torch.triu(torch.ones(t, t), diagonal=1) * -10000)[None][None]
        alpha = torch.softmax(scores, dim=-1)
        v = torch.permute(alpha @ v, (0, 2, 1, 3))
        n, t, _, _ = v.shape
        return self.wo(v.reshape(n, t, -1)), alpha


def cases():
    """(description, module, inputs by file name, extra flags) for each check."""
    emb = nn.Embedding(10, 8)
    tokens = torch.tensor([[1, 3, 5], [1, 6, 3], [2, 3, 1], [5, 1, 2], [6, 1, 2]])
    with torch.no_grad():
        x = emb(tokens)                           # the source's input: (5, 3, 8)
    yield "the source's example: embedded tokens (5, 3, 8), two heads", MultiHeadSelfAttention(8, 2), \
        {"x": x}, ["--heads", "2"]
    yield "masked=True, the source's example", MultiHeadSelfAttention(8, 2, masked=True), \
        {"x": x}, ["--heads", "2", "--causal"]
    yield "U(0, 1) input, four heads", MultiHeadSelfAttention(16, 4), {"x": torch.rand(2, 7, 16)}, ["--heads", "4"]
    yield "masked=True, D = 64, two heads of 32", MultiHeadSelfAttention(64, 2, masked=True), \
        {"x": torch.rand(1, 6, 64)}, ["--heads", "2", "--causal"]


def examples():
    """(name, module maker, forward argument names, extra flags) for each --example:
    masked=True modules with one head of 16, as the program sets them."""
    for name in ("recent-words", "recent-words-scaled"):
        yield name, lambda: MultiHeadSelfAttention(16, 1, masked=True), ["x"], []
