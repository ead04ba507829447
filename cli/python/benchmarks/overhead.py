"""Per-call overhead of the Python binding: `clustersim.run` on a small scenario, N calls,
against the same command timed inside C++ (_clustersim.time_run_inside: parse the
scenario JSON and flags, resolve, simulate, print the JSON). The difference is what the
binding adds: the worker thread, the GIL hand-offs, building the call, json.loads.

Usage: PYTHONPATH=build/python /usr/bin/python3 cli/python/benchmarks/overhead.py [CALLS]
"""

import json
import sys
import time

import clustersim
from clustersim import _clustersim

# One GPU, two layers: the simulation itself takes well under a millisecond.
SMALL = {
    "model": {"num_layers": 2, "hidden_size": 1024, "num_attention_heads": 16,
              "seq_length": 1024, "vocab_size": 32000},
    "cluster": {"gpu": "h100-sxm5-80gb", "num_gpus": 1},
    "training": {"micro_batch_size": 1, "global_batch_size": 1},
}


def timed(fn, calls):
    """(wall, CPU) seconds per call; CPU is the process's, every thread included, so it
    holds on a shared machine where wall time does not."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn(calls)
    return (time.perf_counter() - wall) / calls, (time.process_time() - cpu) / calls


def main():
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    scenario_json = json.dumps(SMALL)
    clustersim.run(SMALL)  # warm: catalogs parsed once per process

    def inside(n):
        _clustersim.time_run_inside(scenario_json, n)

    def binding(n):
        for _ in range(n):
            clustersim.run(SMALL)

    rounds = [(timed(inside, calls), timed(binding, calls)) for _ in range(5)]
    # Best of five, alternated: other processes share the cores.
    in_wall = min(r[0][0] for r in rounds)
    in_cpu = min(r[0][1] for r in rounds)
    py_wall = min(r[1][0] for r in rounds)
    py_cpu = min(r[1][1] for r in rounds)
    print(f"{calls} calls, best of 5 rounds     wall ms/call   CPU ms/call")
    print(f"  C++ command inside            {in_wall * 1e3:10.3f}  {in_cpu * 1e3:12.3f}")
    print(f"  clustersim.run()              {py_wall * 1e3:10.3f}  {py_cpu * 1e3:12.3f}")
    print(f"  binding overhead              {(py_wall - in_wall) * 1e3:10.3f}  "
          f"{(py_cpu - in_cpu) * 1e3:12.3f}")


if __name__ == "__main__":
    main()
