"""The all-reduce study: the link's bandwidth as nccl-tests measures it (algbw, busbw per message size).

cell.py and result.py are torch-free (plan, submit, status and collect import them); run.py is the job.
"""
from jobs.allreduce.cell import AllreduceCell
from jobs.allreduce.result import AllreduceFindings
from jobs.core.kinds import Kind

KIND = Kind("allreduce", AllreduceCell, AllreduceFindings, "jobs.allreduce.run:run")
