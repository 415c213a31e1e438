"""One check for a choice among names (jobs.core.cell.check_choice): every kind's cell, a PTQ
spec and a result file name the field, every choice and the value alike, as a CellError."""
from __future__ import annotations

import pytest

from jobs.allreduce.cell import AllreduceCell
from jobs.core.cell import CellError
from jobs.core.kinds import cell_from_dict
from jobs.ptq.config import QuantSpec
from jobs.train.cell import Cell


@pytest.mark.parametrize("build, message", [
    (lambda: Cell(engine="horovod", batch_per_gpu=32), "engine must be one of ['single', 'dp', 'ddp'], got 'horovod'"),
    (lambda: QuantSpec(granularity="row"), "granularity must be one of ['tensor', 'channel'], got 'row'"),
    (lambda: AllreduceCell(backend="mpi"), "backend must be one of ['nccl', 'gloo'], got 'mpi'"),
    (lambda: cell_from_dict({"kind": "qat"}), "kind must be one of ['train', 'ptq', 'allreduce', 'command'], got 'qat'"),
])
def test_a_bad_choice_names_its_field_every_choice_and_the_value(build, message):
    with pytest.raises(CellError) as info:
        build()
    assert str(info.value) == message
