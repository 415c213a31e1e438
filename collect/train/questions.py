"""The training kind's questions, in the order a hand-in answers them: Part A Q1-Q7 (the scaling
study) and the multi-GPU lab's. Each: its id, title, tables and plots, the pure function that
answers it (collect.train.answers_*) and the renderer that words it; its details come from the same
record (collect.details). A new question: its id below, its entry in QUESTIONS, and its answer and
renderer (here, or in an answers_* module); nothing else changes."""
from __future__ import annotations

from enum import StrEnum

from collect.questions import Question
import collect.train.answers_bandwidth as bandwidth
import collect.train.answers_comm as comm
import collect.train.answers_comm_text as comm_text
import collect.train.answers_ddp as ddp
import collect.train.answers_lab as lab
import collect.train.answers_large as large
import collect.train.answers_q7 as q7
import collect.train.answers_speedup as speedup
import collect.train.answers_timing as timing


class PartA(StrEnum):
    """Part A's questions (the assignment's numbering)."""

    Q1 = "A.Q1"
    Q2 = "A.Q2"
    Q3_1 = "A.Q3.1"
    Q3_2 = "A.Q3.2"
    Q4_1 = "A.Q4.1"
    Q4_2 = "A.Q4.2"
    Q5 = "A.Q5"
    Q6 = "A.Q6"
    Q7 = "A.Q7"


class Lab(StrEnum):
    """The multi-GPU lab's questions."""

    UTILIZATION = "lab.utilization"
    FULL_RUN = "lab.full_run"
    SCALING = "lab.scaling"
    WORKERS = "lab.workers"
    BEST = "lab.best"


QUESTIONS = (
    Question(PartA.Q1, "Computational efficiency w.r.t. batch size", ("q1",), ("q1",), timing.q1_answer,
             timing.q1_text),
    Question(PartA.Q2, "Speedup measurement", ("table1", "strong"), ("table1",), speedup.q2_answer, speedup.q2_text),
    Question(PartA.Q3_1, "Time spent in computation and communication", ("table2",), ("table2",), comm.q31_answer,
             comm_text.q31_text),
    Question(PartA.Q3_2, "Communication bandwidth utilization", ("table3",), (), bandwidth.q32_answer, bandwidth.q32_text),
    Question(PartA.Q4_1, "Accuracy when using large batch", ("q4",), ("q4", "q4_test"), large.q41_answer, large.q41_text),
    Question(PartA.Q4_2, "How to improve training accuracy when batch size is large", ("q4",), (), large.q42_answer,
             large.q42_text),
    Question(PartA.Q5, "Distributed Data Parallel: why set the epoch", ("test",), (), ddp.ddp_answer, ddp.q5_text),
    Question(PartA.Q6, "What is passed on the network", ("test",), (), ddp.ddp_answer, ddp.q6_text),
    Question(PartA.Q7, "What if we only communicate gradients", ("q4", "test"), (), q7.q7_answer, q7.q7_text),
    Question(Lab.UTILIZATION, "GPU utilization and how to raise it", ("test", "lab_epoch"), (), lab.util_answer, lab.util_text),
    Question(Lab.FULL_RUN, "The time of a full training run", ("test",), (), lab.full_run_answer, lab.full_run_text),
    Question(Lab.SCALING, "Test accuracy and time on 1, 2, 4 GPUs and 2 nodes", ("test", "lab_epoch"), (),
             lab.scaling_answer,
             lab.scaling_text),
    Question(Lab.WORKERS, "Batch size and learning rate with more workers", ("test",), (), lab.workers_answer,
             lab.workers_text),
    Question(Lab.BEST, "The best test accuracy with 2 workers", ("sweep",), (), lab.best_answer, lab.best_text),
)
