"""Table 2's plot (collect.train.plots.compute_comm): its x-labels readable with the shared set's 15 setups (TA4 21:
the three "4 GPUs (2x2, 1 host) DDP" labels overlapped)."""
from __future__ import annotations

import pandas as pd

import collect.train.plots as plots


def _row(engine: str, gpus: int, nodes: int, batch: int, hosts: int) -> dict:
    return dict(status="ok", engine=engine, gpus=gpus, nodes=nodes, gpus_per_node=gpus // nodes, batch_per_gpu=batch,
                hosts_seen=hosts, compute_est_s=1.0, comm_est_s=0.5, compute_measured_s=1.1, comm_measured_s=0.3,
                train_s=1.5, train_s_min=1.5, train_s_max=1.5, t1n_breaks=False)


def test_table2_plot_labels_do_not_overlap(monkeypatch):
    figures = []
    monkeypatch.setattr(plots, "png", lambda fig, tight=True: figures.append(fig) or b"png")
    shapes = [("dp", 2, 1, 1), ("ddp", 2, 1, 1), ("dp", 4, 1, 1), ("ddp", 4, 1, 1), ("ddp", 4, 2, 1)]
    t2 = pd.DataFrame([_row(e, g, n, b, h) for e, g, n, h in shapes for b in (32, 128, 512)])
    assert plots.compute_comm(t2) == b"png"
    fig = figures[0]
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    boxes = [t.get_window_extent(renderer) for t in ax.get_xticklabels()]
    assert len(boxes) == 15
    assert any("1 host" in t.get_text() for t in ax.get_xticklabels())
    clashes = [(i, i + 1) for i, (a, b) in enumerate(zip(boxes, boxes[1:], strict=False)) if a.x1 > b.x0]
    assert not clashes, [ax.get_xticklabels()[i].get_text() for i, _ in clashes]


def test_table2_plot_draws_no_comm_estimate_where_t1n_breaks(monkeypatch):
    """TA6 8: where Table 2 prints "T1/N breaks", TN - T1/N is no communication: no such bar, and the plot says why."""
    figures = []
    monkeypatch.setattr(plots, "png", lambda fig, tight=True: figures.append(fig) or b"png")
    t2 = pd.DataFrame([_row("ddp", 2, 1, b, 0) for b in (32, 512)])
    t2.loc[1, "t1n_breaks"] = True
    t2["train_s_max"] = 1.7  # repeats spread: no TN bar floats over the missing estimate either
    assert plots.compute_comm(t2) == b"png"
    ax = figures[0].axes[0]
    comm = next(c for c in ax.containers if c.get_label().startswith("communication, estimate"))
    assert [p.get_height() for p in comm.patches] == [0.5, 0.0]
    assert "T1/N breaks" in comm.get_label()
    assert [t.get_text() for t in ax.texts] == ["T1/N breaks"]
    bars = next(c for c in ax.containers if c.get_label().startswith("TN's"))
    assert len(bars.lines[2][0].get_segments()) == 1


def test_speedup_plot_marks_the_points_q2_sets_apart(monkeypatch):
    """TA8 16: the speedups Q2 sets apart (plot_marks: upper bound, loader-bound T1, T1/N breaks) are ringed by a
    hollow marker per reason with its legend entry; the clean ones are not."""
    figures = []
    monkeypatch.setattr(plots, "png", lambda fig, tight=True: figures.append(fig) or b"png")
    t1 = pd.DataFrame([dict(engine=e, gpus=g, nodes=1, gpus_per_node=g, batch_per_gpu=32, speedup=s, t1_s=10.0,
                            epoch_s=10.0 / s, epoch_s_min=10.0 / s, epoch_s_max=10.0 / s, repeats=1,
                            pipeline="faithful", precision="fp32", gpu_model="NVIDIA H200")
                       for e, g, s in [("single", 1, 1.0), ("ddp", 2, 1.9), ("ddp", 4, 3.1)]])
    assert plots.speedup(t1, {2: "upper bound"}) == b"png"
    ax = figures[0].axes[0]
    ringed = [line for line in ax.get_lines() if line.get_label() == "set apart: upper bound"]
    assert len(ringed) == 1 and list(ringed[0].get_xdata()) == [4] and ringed[0].get_markerfacecolor() == "none"
    assert "set apart: upper bound" in [t.get_text() for t in ax.get_legend().get_texts()]
