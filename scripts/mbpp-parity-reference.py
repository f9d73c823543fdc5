#!/usr/bin/env python3
"""The reference side of scripts/mbpp-parity.mjs: bigcode-evaluation-harness' MBPP execution, run as that harness runs
it (its `compute_code_eval`: `check_correctness(generation + "\\n" + "\\n".join(test_list), timeout=3.0)` from
`bigcode_eval/tasks/custom_metrics/execute.py`, a thread pool of workers). The harness file is the user's copy, given
by path; nothing of it is in this repository.

  python3 scripts/mbpp-parity-reference.py EXECUTE_PY PROGRAMS.jsonl WORKERS > LABELS.jsonl

PROGRAMS.jsonl: {"key", "program"} per line; LABELS.jsonl: {"key", "passed", "result"} in the same order.
"""
import importlib.util
import json
import sys
from concurrent.futures import ThreadPoolExecutor


def main() -> None:
    execute_py, programs_path, workers = sys.argv[1], sys.argv[2], int(sys.argv[3])
    spec = importlib.util.spec_from_file_location("bigcode_execute", execute_py)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with open(programs_path, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(module.check_correctness, row["program"], 3.0, row["key"], i) for i, row in enumerate(rows)]
        results = [future.result() for future in futures]
    for row, result in zip(rows, results):
        print(json.dumps({"key": row["key"], "passed": bool(result["passed"]), "result": result["result"]}))


if __name__ == "__main__":
    main()
