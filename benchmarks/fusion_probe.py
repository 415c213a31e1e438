"""Would cuDNN's fused convolution kernels (the pattern NVIDIA's MLPerf ResNet uses) make the
fast step fast enough? For each stride-1 3x3 convolution shape of ResNet-18 at batch 512 it
times, on one GPU:
- forward, as the fast step runs it (inductor: BatchNorm-apply + ReLU kernel that writes the
  activation, cuDNN convolution, statistics kernel) against one cuDNN graph:
  scale-bias-ReLU -> convolution -> per-channel sum and sum of squares (genstats);
- weight gradient from the stored activation against scale-bias-ReLU -> wgrad from the
  convolution's input (the activation is never written);
- data gradient plus the ReLU and BatchNorm backward reductions (inductor) against
  dgrad -> ReLU backward -> reductions in one cuDNN graph, where cuDNN supports it.
Needs the nvidia-cudnn-frontend wheel.
python benchmarks/fusion_probe.py [BATCH]          the three comparisons per shape
python benchmarks/fusion_probe.py [BATCH] types    which operand types the fused graphs accept"""
import sys

import cudnn
import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

from profile_step import device_us  # this folder is on sys.path when run as a script

BATCH = int(sys.argv[1]) if len(sys.argv) > 1 else 512
SHAPES = ((64, 32, 4), (128, 16, 3), (256, 8, 3), (512, 4, 3))  # channels, side, such convs in the net
BF16 = torch.bfloat16
NHWC = torch.channels_last
HANDLE = cudnn.create_handle()


def cuda_ms(fn, iters=20):
    """GPU kernel time per call (the step is a replayed CUDA graph: the host cost of the
    Python execute path does not count there, and must not here)."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            fn()
        torch.cuda.synchronize()
    us = sum(device_us(e) for e in prof.key_averages())
    return us / iters / 1e3


@torch.compile
def unfused_forward(x, s, b, w):
    a = torch.relu(x.float() * s + b).to(BF16)
    y = F.conv2d(a, w, padding=1)
    yf = y.float()
    return a, y, yf.sum((0, 2, 3)), (yf * yf).sum((0, 2, 3))


def conv_grad(dy, a, w, of):
    """cuDNN's data (of=0) or weight (of=1) gradient of the 3x3 convolution alone."""
    mask = [of == 0, False, of == 1]
    return torch.ops.aten.convolution_backward(dy, a, w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1, mask)[of]


@torch.compile
def bn_relu_backward(da, x, s, b, mean, rstd):
    """The previous layer's ReLU and BatchNorm backward: reductions, then dx."""
    xf = x.float()
    g = da.float() * ((xf * s + b) > 0)
    xhat = (xf - mean) * rstd
    m = xf.numel() / xf.shape[1]
    sg, sgx = g.sum((0, 2, 3), keepdim=True), (g * xhat).sum((0, 2, 3), keepdim=True)
    return ((g - sg / m - xhat * sgx / m) * s).to(BF16), sg, sgx


@torch.compile
def bn_backward_apply(g, x, s, mean, rstd, sg, sgx):
    """What is left after a fused dgrad -> ReLU backward -> sum(g): dx from g."""
    xhat = (x.float() - mean) * rstd
    m = x.numel() / x.shape[1]
    return ((g.float() - sg / m - xhat * sgx / m) * s).to(BF16)


def graph(io=BF16):
    stream = torch.cuda.current_stream().cuda_stream
    cudnn.set_stream(handle=HANDLE, stream=stream)
    io = cudnn.data_type.BFLOAT16 if io == BF16 else cudnn.data_type.HALF
    return cudnn.pygraph(io_data_type=io, intermediate_data_type=cudnn.data_type.FLOAT,
                         compute_data_type=cudnn.data_type.FLOAT, handle=HANDLE)


def fastest(g, pack):
    """Build every plan cuDNN offers, time each, return (ms, index, run)."""
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    g.check_support()
    g.build_plans(cudnn.build_plan_policy.ALL)
    best = None
    for i in range(g.get_execution_plan_count()):
        try:
            ws = torch.empty(max(1, g.get_workspace_size_plan_at_index(i)), device="cuda", dtype=torch.uint8)
            run = (lambda i=i, ws=ws: g.execute_plan_at_index(pack, ws, index=i, handle=HANDLE))
            ms = cuda_ms(run, 20)
        except Exception as exc:  # a plan that does not build or run is skipped, and said so
            print(f"    plan {i}: {type(exc).__name__}: {str(exc).splitlines()[0][:120]}")
            continue
        if best is None or ms < best[0]:
            best = (ms, i, run)
    return best


def sbr(g, X, S, B):
    return g.relu(input=g.bias(input=g.scale(input=X, scale=S), bias=B))


def fused_forward(x, s, b, w, y, sums, squares, io=BF16):
    g = graph(io)
    X, W, S, B = (g.tensor_like(t) for t in (x, w, s, b))
    Y = g.conv_fprop(image=sbr(g, X, S, B), weight=W, padding=[1, 1], stride=[1, 1], dilation=[1, 1])
    Y.set_output(True)
    SUM, SQ = g.genstats(input=Y)
    SUM.set_output(True).set_data_type(cudnn.data_type.FLOAT)
    SQ.set_output(True).set_data_type(cudnn.data_type.FLOAT)
    return fastest(g, {X: x, W: w, S: s, B: b, Y: y, SUM: sums, SQ: squares})


def fused_wgrad(x, s, b, dy, dw, io=BF16):
    g = graph(io)
    X, S, B, DY = (g.tensor_like(t) for t in (x, s, b, dy))
    DW = g.conv_wgrad(image=sbr(g, X, S, B), loss=DY, padding=[1, 1], stride=[1, 1], dilation=[1, 1])
    DW.set_output(True).set_dim(list(dw.shape)).set_stride(list(dw.stride()))
    return fastest(g, {X: x, S: s, B: b, DY: dy, DW: dw})


def fused_dgrad(dy, w, x, s, b, dx, sg):
    g = graph()
    DY, W, X, S, B = (g.tensor_like(t) for t in (dy, w, x, s, b))
    DA = g.conv_dgrad(loss=DY, filter=W, padding=[1, 1], stride=[1, 1], dilation=[1, 1])
    DA.set_dim(list(x.shape)).set_stride(list(x.stride()))
    G = g.relu_backward(loss=DA, input=g.bias(input=g.scale(input=X, scale=S), bias=B))
    G.set_output(True).set_data_type(cudnn.data_type.BFLOAT16)
    SG = g.reduction(input=G, mode=cudnn.reduction_mode.ADD, compute_data_type=cudnn.data_type.FLOAT)
    SG.set_output(True).set_dim(list(sg.shape)).set_stride(list(sg.stride())).set_data_type(cudnn.data_type.FLOAT)
    return fastest(g, {DY: dy, W: w, X: x, S: s, B: b, G: dx, SG: sg})


def rel_err(a, b):
    return ((a.float() - b.float()).abs().max() / b.float().abs().max().clamp_min(1e-12)).item()


def probe(c, side, count):
    torch.manual_seed(0)
    x = torch.randn(BATCH, c, side, side, device="cuda", dtype=BF16).contiguous(memory_format=NHWC)
    w = (torch.randn(c, c, 3, 3, device="cuda") / (3 * c ** 0.5)).to(BF16).contiguous(memory_format=NHWC)
    s = (1 + 0.1 * torch.randn(1, c, 1, 1, device="cuda")).contiguous(memory_format=NHWC)
    b = (0.1 * torch.randn(1, c, 1, 1, device="cuda")).contiguous(memory_format=NHWC)
    dy = torch.randn_like(x)
    a, y_ref, sum_ref, sq_ref = unfused_forward(x, s, b, w)
    out = {"fwd": cuda_ms(lambda: unfused_forward(x, s, b, w)), "wgrad": cuda_ms(lambda: conv_grad(dy, a, w, 1))}
    mean, rstd = torch.zeros_like(s), torch.ones_like(s)
    out["dgrad"] = cuda_ms(lambda: bn_relu_backward(conv_grad(dy, a, w, 0), x, s, b, mean, rstd))
    print(f"{c} channels {side}x{side} (x{count} in the net), unfused: "
          + ", ".join(f"{k} {v * 1e3:.0f} us" for k, v in out.items()), flush=True)
    fused = {}
    y, sums, squares = torch.empty_like(x), torch.empty(1, c, 1, 1, device="cuda"), torch.empty(1, c, 1, 1, device="cuda")
    dw = torch.empty_like(w)
    dx, sg = torch.empty_like(x), torch.empty(1, c, 1, 1, device="cuda")
    for name, build, check in (
            ("fwd", lambda: fused_forward(x, s, b, w, y, sums, squares),
             lambda: f"y {rel_err(y, y_ref):.1e}, sum {rel_err(sums.flatten(), sum_ref):.1e}, sumsq {rel_err(squares.flatten(), sq_ref):.1e}"),
            ("wgrad", lambda: fused_wgrad(x, s, b, dy, dw), lambda: f"dw {rel_err(dw, conv_grad(dy, a, w, 1)):.1e}"),
            ("dgrad", lambda: fused_dgrad(dy, w, x, s, b, dx, sg),
             lambda: "(only sum(g) fused; the dx pass added, sum(g*xhat) not: a lower bound)")):
        try:
            best = build()
        except Exception as exc:
            print(f"  fused {name}: not supported: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}", flush=True)
            continue
        if best is None:
            print(f"  fused {name}: no plan ran", flush=True)
            continue
        ms, index, run = best
        if name == "dgrad":  # still to do: sum(g * xhat) and dx (one reduction and one pointwise pass)
            ms += cuda_ms(lambda: bn_backward_apply(dx, x, s, mean, rstd, sg, sg))  # sg for sgx: timing only
        run()
        torch.cuda.synchronize()
        fused[name] = ms
        print(f"  fused {name}: {ms * 1e3:.0f} us (plan {index}); error vs unfused: {check()}", flush=True)
    return {k: v * count for k, v in out.items()}, {k: v * count for k, v in fused.items()}


def supported_types(c=64, side=32):
    """Which operand types the fused forward and weight-gradient graphs accept here."""
    for io, sb in ((BF16, BF16), (torch.float16, torch.float16), (torch.float16, torch.float32)):
        x = torch.randn(BATCH, c, side, side, device="cuda", dtype=io).contiguous(memory_format=NHWC)
        w = torch.randn(c, c, 3, 3, device="cuda", dtype=io).contiguous(memory_format=NHWC) / 24
        s = torch.ones(1, c, 1, 1, device="cuda", dtype=sb).contiguous(memory_format=NHWC)
        b = torch.zeros_like(s)
        y, stats = torch.empty_like(x), [torch.empty(1, c, 1, 1, device="cuda") for _ in range(2)]
        for name, build in (("fwd", lambda: fused_forward(x, s, b, w, y, *stats, io=io)),
                            ("wgrad", lambda: fused_wgrad(x, s, b, x, torch.empty_like(w), io=io))):
            try:
                best = build()
                print(f"{name} io {io} scale/bias {sb}: {best[0] * 1e3:.0f} us" if best else "no plan ran", flush=True)
            except Exception as exc:
                print(f"{name} io {io} scale/bias {sb}: {type(exc).__name__}: {str(exc)[:300]}", flush=True)


if __name__ == "__main__":
    print("cudnn backend", cudnn.backend_version(), "frontend", getattr(cudnn, "__version__", "?"), flush=True)
    if sys.argv[2:] == ["types"]:
        supported_types()
        sys.exit()
    totals_u, totals_f = {}, {}
    for shape in SHAPES:
        u, f = probe(*shape)
        for k, v in u.items():
            totals_u[k] = totals_u.get(k, 0) + v
        for k, v in f.items():
            totals_f[k] = totals_f.get(k, 0) + v
    print("over the 13 stride-1 3x3 convolutions, ms per step: unfused "
          + ", ".join(f"{k} {v:.2f}" for k, v in totals_u.items()) + "; fused "
          + ", ".join(f"{k} {v:.2f}" for k, v in totals_f.items()))

