"""induction (chapter 12) against PyTorch, one training step at a time. For each case,
`induction --steps 0 --dump INIT` writes the weights its seed draws and `induction
--steps 20 --dump AFTER` (the same seed and flags) trains them and writes the 20 batches
it trained on (tokens.npy, counted.npy), each step's loss (losses.npy) and the final
weights. PyTorch loads INIT into the chapter's AttentionOnly (nn.Embedding twice, L of
gqa.py's GroupedQueryAttention with G = H under a causal mask filled with -inf, each
added to the residual stream, an nn.Linear unembedding), replays the same 20 batches
with the chapter's loss and torch.optim.Adam, and must give every step's loss within
1e-4 and every final weight within 1e-4 of max(1, its largest entry). The one exception
is each layer's k_proj.bias, which attention cannot train (see replay_case): it must
only stay nearly where it started, on both sides.

No cases(): pytorch_check.py calls replay(), which runs the program twice per case.
"""
import glob
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gqa import GroupedQueryAttention  # noqa: E402

PROGRAM = "induction"
STEPS = 20
TOL = 1e-4
CASES = [   # (description, flags): sizes and lr not given are induction's defaults
    ("the defaults: B = 16, T = 32, D = 32, H = 2, L = 2, lr 0.01", []),
    ("one layer from seed 7, lr 0.003", ["--layers", "1", "--seed", "7", "--lr", "0.003"]),
    ("D = 16, H = 4, T = 16, B = 4, three layers, --fixed-copy",
     ["--dim", "16", "--heads", "4", "--seq", "16", "--batch", "4", "--layers", "3", "--fixed-copy"]),
]


class AttentionOnly(nn.Module):
    """Chapter 12's model, as its text writes it in PyTorch."""
    def __init__(self, V, T, D, H, L):
        super().__init__()
        self.tok_emb = nn.Embedding(V, D)
        self.pos_emb = nn.Embedding(T, D)
        self.layers = nn.ModuleList(GroupedQueryAttention(D, H, H, causal=True) for _ in range(L))
        self.unembed = nn.Linear(D, V)

    def forward(self, tokens):                      # (B, T) -> logits (B, T, V)
        x = self.tok_emb(tokens) + self.pos_emb(torch.arange(tokens.shape[1]))
        for layer in self.layers:
            x = x + layer(x)[0]                     # the residual stream
        return self.unembed(x)


def flag(flags, name, default):
    return type(default)(flags[flags.index(name) + 1]) if name in flags else default


def shape(got, want):
    return "" if got.shape == want.shape else f"got shape {got.shape}, want {want.shape}"


def load_model(directory, H):
    """An AttentionOnly holding DIR's weights, its sizes read from their shapes."""
    L = len(glob.glob(os.path.join(directory, "layers.*.q_proj.weight.npy")))
    V, D = np.load(os.path.join(directory, "tok_emb.weight.npy")).shape
    T = np.load(os.path.join(directory, "pos_emb.weight.npy")).shape[0]
    model = AttentionOnly(V, T, D, H, L)
    model.load_state_dict({key: torch.from_numpy(np.load(os.path.join(directory, key + ".npy")))
                           for key in model.state_dict()})
    return model


def train(model, tokens, counted, lr):
    """The chapter's training loop on the given batches: each step's loss, and each
    weight's largest gradient over the steps."""
    V = model.unembed.out_features
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.999), eps=1e-8)
    losses, grads = [], {key: 0.0 for key, _ in model.named_parameters()}
    for step in range(tokens.shape[0]):
        x, y, c = tokens[step, :, :-1], tokens[step, :, 1:], counted[step]
        logits = model(x)
        loss = (F.cross_entropy(logits.reshape(-1, V), y.reshape(-1), reduction="none")
                * c.reshape(-1)).sum() / c.sum()
        loss.backward()
        for key, p in model.named_parameters():
            grads[key] = max(grads[key], float(p.grad.abs().max()))
        optimizer.step()
        optimizer.zero_grad()
        losses.append(loss.item())
    return np.array(losses, dtype=np.float32), grads


def replay_case(check, index, description, flags, root):
    H, lr = flag(flags, "--heads", 2), flag(flags, "--lr", 0.01)
    B, T = flag(flags, "--batch", 16), flag(flags, "--seq", 32)
    program = os.path.join(check.BIN, PROGRAM)
    init = os.path.join(root, f"induction-{index}-init")
    after = os.path.join(root, f"induction-{index}-after")
    what = " ".join([PROGRAM, *flags]) + ": " + description
    if not check.run_program([program, "--steps", "0", "--dump", init, "--quiet", *flags], what):
        return
    if not check.run_program([program, "--steps", str(STEPS), "--every", "5", "--dump", after,
                              "--quiet", *flags], what):
        return
    tokens = np.load(os.path.join(after, "tokens.npy"))
    counted = np.load(os.path.join(after, "counted.npy"))
    shapes = tokens.shape == (STEPS, B, T + 1) and counted.shape == (STEPS, B, T)
    check.ok(shapes, f"{what}: tokens.npy and counted.npy hold the {STEPS} batches trained on",
             f"got {tokens.shape} and {counted.shape}, want {(STEPS, B, T + 1)} and {(STEPS, B, T)}")
    if not shapes:
        return
    model = load_model(init, H)
    start = {key: t.clone() for key, t in model.state_dict().items()}
    losses, grads = train(model, torch.from_numpy(tokens).long(), torch.from_numpy(counted), lr)

    got = np.load(os.path.join(after, "losses.npy"))
    err = np.abs(got - losses) if got.shape == losses.shape else np.full(1, np.inf)
    worst = int(np.argmax(err))
    check.ok(bool(err.max() <= TOL), f"{what}: each step's loss agrees with PyTorch's within {TOL}",
             shape(got, losses))
    check.diag(f"worst loss difference {err.max():.3g}, at step {worst + 1} "
               f"(C {got.flat[worst]:.6f}, PyTorch {losses[worst]:.6f})")

    least_moved = np.inf
    for key, want in model.state_dict().items():
        want, before = want.numpy(), start[key].numpy()
        got = np.load(os.path.join(after, key + ".npy"))
        err = check.max_error(got, want)
        if key.endswith("k_proj.bias"):
            # A key bias adds q . b to every score of a row, which softmax ignores: its
            # gradient is zero but for rounding (about 1e-10 here), and Adam turns that noise
            # into steps of about lr * |g| / eps, which no two programs take alike. So it must
            # move, on both sides, by much less than training moves a weight, and no more.
            bound = 0.1 * lr * STEPS
            moved = (check.max_error(got, before), float(np.abs(want - before).max()))
            check.ok(max(moved) <= bound, f"{what}: {key}, whose gradient is zero but for rounding, "
                     f"moved by at most {bound:.3g} (a tenth of lr per step)", shape(got, want))
            check.diag(f"{key}: C moved it by {moved[0]:.3g}, PyTorch by {moved[1]:.3g}, "
                       f"largest |.grad| {grads[key]:.2g}; they differ by {err:.3g}")
            continue
        tol = TOL * max(1.0, float(np.abs(want).max()))
        check.ok(err <= tol, f"{what}: {key} after {STEPS} steps agrees with PyTorch's within {tol:.3g}",
                 shape(got, want))
        check.diag(f"{key}: worst difference {err:.3g}")
        least_moved = min(least_moved, float(np.abs(want - before).max()))
    # a check with teeth: training moved every other weight far beyond the tolerance
    check.ok(least_moved > 100 * TOL, f"{what}: {STEPS} steps moved every other weight by more than "
             f"{100 * TOL:g}", f"one weight moved by at most {least_moved:.3g}")
    check.diag(f"the weight that moved least moved by {least_moved:.3g}")


def replay(check, root):
    for index, (description, flags) in enumerate(CASES):
        try:
            replay_case(check, index, description, flags, root)
        except Exception as e:      # a missing or unreadable file: one failure, not a crash
            check.ok(False, " ".join([PROGRAM, *flags]) + f": {description}: the replay runs",
                     f"{type(e).__name__}: {e}")
