"""Writes tests/data/torch_checkpoint.pt with torch.save (run with torch installed; the file is committed, so the
tests that read it need no torch): every dtype strided reads, views sharing one storage, tied weights, a
Parameter, a transposed tensor, 0-dim and empty tensors, a model's and an optimizer's state dicts, and the plain
values a checkpoint holds. Values are aranges, so the tests know them without torch."""

from __future__ import annotations

import sys

import torch


def make(path: str) -> None:
    torch.manual_seed(0)
    base = torch.arange(10.0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.LayerNorm(2))
    with torch.no_grad():
        model[0].weight.copy_(torch.arange(6.0).view(2, 3) / 10)
        model[0].bias.copy_(torch.tensor([0.5, -0.5]))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model(torch.ones(4, 3)).sum().backward()
    opt.step()
    tied = torch.arange(4.0).view(2, 2)
    obj = {
        "model": model.state_dict(),
        "optimizer": opt.state_dict(),
        "dtypes": {str(d).split(".")[1]: torch.arange(5).to(d) for d in (
            torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.int16,
            torch.int8, torch.uint8, torch.bool, torch.complex64, torch.complex128)},
        "base": base, "view": base[2:9:3], "tail": base[7:],
        "tied": [tied, tied],
        "param": torch.nn.Parameter(torch.arange(3.0)),
        "transposed": torch.arange(6.0).view(2, 3).t(),
        "scalar": torch.tensor(2.5), "empty": torch.zeros(0, 3),
        "size": torch.Size([2, 3]), "device": torch.device("cpu"), "dtype": torch.float16,
        "plain": {"iter": 5, "lr": 1e-3, "name": "run", "flags": (True, None), "ids": {1, 2}, "blob": b"\x00\x01"},
    }
    torch.save(obj, path)


if __name__ == "__main__":
    make(sys.argv[1] if len(sys.argv) > 1 else "tests/data/torch_checkpoint.pt")
