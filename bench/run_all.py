"""Run every benchmark in turn, each on its own database (`make bench`).

    .venv/bin/python bench/run_all.py            # the sizes of the issues (slow: the context corpus takes ~6 min to build on 2 cores)
    .venv/bin/python bench/run_all.py --quick    # small sizes, a few minutes

Each step is a separate process so the numbers of one do not depend on another; the
databases are left in place, so a rerun of a runner alone is cheap (see each script).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable


def steps(quick: bool) -> list[tuple[str, list[str]]]:
    mem = "10000" if quick else "100000"
    return [
        ("almanac_bench", [PY, "bench/memories/generate.py", "--memories", mem]),
        ("almanac_bench", [PY, "bench/memories/run.py", "--queries", "100" if quick else "300"]),
        ("almanac_bench_wiki", [PY, "bench/wiki/run.py", "--events", "2000" if quick else "10000"]),
        # a burst pushed one event per transaction while qcluster runs: drain time, queue size
        ("almanac_bench_burst", [PY, "bench/wiki/burst.py", "--events", "500" if quick else "1500"]),
        (
            "almanac_bench_connectors",
            [PY, "bench/connector_ingest.py", "--events", "2000" if quick else "10000"],
        ),
        (
            "almanac_bench_ctx",
            [PY, "bench/context/generate.py"]
            + (["--sections", "5000", "--memories", "10000"] if quick else []),
        ),
        ("almanac_bench_ctx", [PY, "bench/context/run.py", "--requests", "160" if quick else "800"]),
        ("almanac_bench_ctx", [PY, "bench/memories/touch.py", "--batches", "20" if quick else "60"]),
        # retrieval quality (en + zh dev sets); loads its data once, --quick asks a quarter
        ("almanac_bench_quality", [PY, "bench/quality/run.py"] + (["--quick"] if quick else [])),
        # reliability: kill -9 under writes, access churn, hostile input (exit 1 on any loss/leak/5xx)
        ("almanac_chaos", [PY, "bench/chaos/run.py", "--minutes", "1" if quick else "5"]),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    for db, cmd in steps(args.quick):
        print(f"\n=== ALMANAC_DB_NAME={db} {' '.join(cmd[1:])}", flush=True)
        result = subprocess.run(cmd, cwd=ROOT, env={**os.environ, "ALMANAC_DB_NAME": db})
        if result.returncode != 0:
            print(f"failed: {' '.join(cmd[1:])}", file=sys.stderr)
            return result.returncode
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
