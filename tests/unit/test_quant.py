"""jobs.ptq.quantize: symmetric signed b-bit quantization, with numbers worked by hand."""
from __future__ import annotations

import pytest
import torch

from jobs.ptq.quantize import channel_ranges, kl_divergence, qmax, qmin, quantize, quantize_weight, scale_for, tensor_range
from jobs.ptq.choices import check_bits


def test_the_signed_range_of_b_bits():
    assert (qmin(2), qmax(2)) == (-2, 1)
    assert (qmin(8), qmax(8)) == (-128, 127)
    assert (qmin(16), qmax(16)) == (-32768, 32767)


@pytest.mark.parametrize("bits", [1, 17, 0, 8.0, True, "8", None])
def test_bits_outside_2_to_16_are_refused_naming_the_field(bits):
    with pytest.raises(ValueError, match="weight_bits must be an integer from 2 to 16"):
        check_bits(bits, "weight_bits")


def test_weights_minus_half_and_quarter_at_8_bits():
    """range 0.5, n = 127 / 0.5 = 254; -0.5 * 254 = -127, 0.25 * 254 = 63.5 -> 64 (half to even)."""
    q = quantize_weight(torch.tensor([[-0.5], [0.25]]), bits=8)
    assert q.scale.tolist() == [254.0, 254.0]
    assert q.values.flatten().tolist() == [-127.0, 64.0]
    assert q.dequantized().flatten().tolist() == pytest.approx([-0.5, 64 / 254])


def test_per_channel_scales_each_output_channel_by_its_own_range():
    """rows max 0.5 and 0.1: n = 254 and 1270; -0.25*254 = -63.5 -> -64, 0.05*1270 = 63.5 -> 64."""
    q = quantize_weight(torch.tensor([[0.5, -0.25], [0.1, 0.05]]), bits=8, granularity="channel")
    assert q.scale.tolist() == pytest.approx([254.0, 1270.0])
    assert q.values.tolist() == [[127.0, -64.0], [127.0, 64.0]]
    per_tensor = quantize_weight(torch.tensor([[0.5, -0.25], [0.1, 0.05]]), bits=8)
    assert per_tensor.values.tolist() == [[127.0, -64.0], [25.0, 13.0]]  # 25.4 -> 25, 12.7 -> 13


def test_values_beyond_the_range_clamp_to_the_signed_limits():
    n = scale_for(0.5, 8)  # 254
    assert quantize(torch.tensor([1.0, -1.0, 0.0]), n, 8).tolist() == [127.0, -128.0, 0.0]
    assert quantize(torch.tensor([1.0, -1.0]), scale_for(1.0, 2), 2).tolist() == [1.0, -1.0]  # n = 1 at 2 bits
    assert quantize(torch.tensor([-3.0]), 1.0, 2).tolist() == [-2.0]


def test_an_all_zero_tensor_gets_scale_one_and_zero_integers():
    q = quantize_weight(torch.zeros(3, 4), bits=4)
    assert q.scale.tolist() == [1.0, 1.0, 1.0] and not q.values.any()


def test_max_3sigma_and_percentile_ranges_by_hand():
    x = torch.tensor([0.0, 0.0, 3.0, 3.0])  # mean 1.5, population std 1.5
    assert tensor_range(x, "max", 8) == 3.0
    assert tensor_range(x, "3sigma", 8) == pytest.approx(1.5 + 3 * 1.5)
    ramp = -torch.arange(1, 101, dtype=torch.float32)  # |x| = 1..100
    assert tensor_range(ramp, "percentile", 8, percentile=99) == 99.0  # the ceil(0.99*100) = 99th smallest
    assert tensor_range(ramp, "percentile", 8, percentile=99.99) == 100.0
    assert tensor_range(ramp, "percentile", 8, percentile=50) == 50.0


def test_mse_range_clips_an_outlier_when_that_costs_less():
    """99 ones and one 3 at 2 bits (levels -2..1 times r): the candidates 3i/100 near 1 give
    r=0.99: 99*0.01^2 + 2.01^2 = 4.050; r=1.02: 99*0.02^2 + 1.98^2 = 3.960; r=1.05: 4.050;
    r=3 (max): every 1 rounds to 0: 99. So r = 1.02."""
    x = torch.tensor([1.0] * 99 + [3.0])
    assert tensor_range(x, "mse", 2) == pytest.approx(1.02, abs=1e-6)
    assert tensor_range(x, "max", 2) == 3.0


def test_mse_range_is_the_best_candidate_by_brute_force():
    torch.manual_seed(0)
    x = torch.randn(5000) ** 3  # heavy tails
    r = tensor_range(x, "mse", 4)
    top = float(x.abs().max())

    def error(rng):
        n = scale_for(rng, 4).float()
        return float(((quantize(x, n, 4) / n - x) ** 2).mean())

    assert error(r) <= min(error(top * i / 100) for i in range(1, 101)) + 1e-12
    assert r < 0.75 * top  # the tail is clipped


def test_channel_ranges_take_one_range_per_output_channel():
    w = torch.tensor([[[1.0, -2.0]], [[0.5, 0.25]]])
    assert channel_ranges(w, "max", 8).tolist() == [2.0, 0.5]


def test_unknown_method_or_granularity_is_refused_naming_the_field():
    with pytest.raises(ValueError, match=r"method must be one of \['max', '3sigma', 'percentile', 'mse'\]"):
        tensor_range(torch.ones(3), "minmax", 8)
    with pytest.raises(ValueError, match=r"granularity must be one of \['tensor', 'channel'\]"):
        quantize_weight(torch.ones(2, 2), 8, granularity="row")
    with pytest.raises(ValueError, match="percentile must be a number in"):
        tensor_range(torch.ones(3), "percentile", 8, percentile=0)


def test_kl_divergence_is_zero_for_the_same_weights_and_grows_as_bits_drop():
    torch.manual_seed(0)
    w = torch.randn(64, 64) * 0.1
    assert kl_divergence(w, w) == pytest.approx(0.0, abs=1e-12)
    kl = {b: kl_divergence(w, quantize_weight(w, b).dequantized()) for b in (8, 4, 2)}
    assert 0 < kl[8] < kl[4] < kl[2]


def test_kl_divergence_of_two_histograms_by_hand():
    """Two bins: P = (3/4, 1/4), Q = (1/4, 3/4): 3/4 ln 3 + 1/4 ln(1/3) = ln(3) / 2."""
    p = torch.tensor([0.0, 0.0, 0.0, 1.0])
    q = torch.tensor([0.0, 1.0, 1.0, 1.0])
    assert kl_divergence(p, q, bins=2) == pytest.approx(0.5 * torch.log(torch.tensor(3.0)).item())
