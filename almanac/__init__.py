"""Almanac: company knowledge and long-term memory for LLM agents."""

import os

# One BLAS thread per process unless the operator says otherwise, set before anything
# imports numpy (OpenBLAS reads it once, when it loads). With more, OpenBLAS's worker
# threads spin after each small matmul of a query embedding and take a core from
# PostgreSQL and the other web threads: recall p99 was 32–40 ms with two threads against
# 23 ms with one. Parallelism here comes from processes (docs/operations.md).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
