"""The report's reference list: the assignment's references, numbered as the assignment numbers them,
so an answer's "[4]" and its "Goyal et al." point at the same entry. `cited` finds which ones a
report's answers cite; the renderers (collect.render.cited_html, cited_markdown) link each citation
to its entry."""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Reference:
    number: int  # the assignment's [n]
    names: tuple[str, ...]  # how an answer names it in words ("Goyal et al.")
    text: str  # the entry as the list prints it
    url: str = ""

    @property
    def anchor(self) -> str:
        return f"ref-{self.number}"


REFERENCES = (
    Reference(1, ("PyTorch Distributed Overview",), "PyTorch, PyTorch Distributed Overview.",
              "https://pytorch.org/tutorials/beginner/dist_overview.html"),
    Reference(2, ("DataParallel source",), "PyTorch, torch.nn.DataParallel (its source).",
              "https://pytorch.org/docs/stable/_modules/torch/nn/parallel/data_parallel.html"),
    Reference(3, ("Patarasuk and Yuan",), "P. Patarasuk and X. Yuan, \"Bandwidth optimal all-reduce algorithms for "
              "clusters of workstations\", J. Parallel Distrib. Comput., vol. 69, pp. 117-124, 2009."),
    Reference(4, ("Goyal et al.",), "P. Goyal, P. Dollar, R. B. Girshick, P. Noordhuis, L. Wesolowski, A. Kyrola, "
              "A. Tulloch, Y. Jia and K. He, \"Accurate, large minibatch SGD: training ImageNet in 1 hour\", "
              "arXiv:1706.02677, 2017.", "https://arxiv.org/abs/1706.02677"),
    Reference(5, ("DDP tutorial",), "PyTorch, Getting started with Distributed Data Parallel.",
              "https://pytorch.org/tutorials/intermediate/ddp_tutorial.html"),
    Reference(6, ("Jacob et al.",), "B. Jacob et al., \"Quantization and training of neural networks for efficient "
              "integer-arithmetic-only inference\", arXiv:1712.05877, 2017.", "https://arxiv.org/abs/1712.05877"),
)
BY_NUMBER = {r.number: r for r in REFERENCES}
MARKER = re.compile(r"\[(\d+)\]")


def citations(text: str) -> list[tuple[int, int, Reference]]:
    """Each citation in `text` as (start, end, reference), in order: a marker "[n]" of a listed
    reference, and a name of one ("Goyal et al.") not already followed by its marker."""
    found = [(m.start(), m.end(), BY_NUMBER[int(m.group(1))]) for m in MARKER.finditer(text)
             if int(m.group(1)) in BY_NUMBER]
    for ref in REFERENCES:
        for name in ref.names:
            for m in re.finditer(re.escape(name), text):
                if not text[m.end():].startswith(f" [{ref.number}]"):
                    found.append((m.start(), m.end(), ref))
    return sorted(found, key=lambda f: f[0])


def cited(texts: Iterable[str]) -> tuple[Reference, ...]:
    """The references the texts cite, in the list's order."""
    numbers = {ref.number for text in texts for _, _, ref in citations(text)}
    return tuple(r for r in REFERENCES if r.number in numbers)
