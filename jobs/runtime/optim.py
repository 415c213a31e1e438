"""The optimizer step both trainers on a device share: SGD with momentum, fused (the fast ResNet-18
pipeline and the PTQ kind's LeNet training)."""
from __future__ import annotations

import torch


def sgd_step(params, grads, bufs, lr: torch.Tensor, momentum: float, weight_decay: float) -> None:
    """torch.optim.SGD's update (no dampening, no Nesterov) as one fused kernel, with lr a
    device tensor so a captured graph follows the schedule: d = g + wd p; buf = m buf + d;
    p -= lr buf. The buffers start at zero, so the first step's buf = d, as SGD's."""
    torch._fused_sgd_(params, grads, bufs, weight_decay=weight_decay, momentum=momentum, lr=lr,
                      dampening=0.0, nesterov=False, maximize=False, is_first_step=False)
