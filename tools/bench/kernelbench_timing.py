# A KernelBench-style measurement of a problem's Model on the GPU, to hold cuda-optimizer's
# PyTorch-eager figure against (issue 45): KernelBench's own recipe (src/kernelbench/timing.py,
# time_execution_with_cuda_event at HEAD 423217d): seed 42, the model and inputs on the GPU,
# 3 warm-up calls each followed by a synchronize, then 100 (+1 discarded) trials, each a
# synchronize, a 256 MB L2 clearing fill, torch.cuda.Event around the call, a synchronize.
# Prints one JSON line: the file, mean, median, std, min, max in ms.
#   python3 tools/bench/kernelbench_timing.py PROBLEM.py [TRIALS]
import json
import statistics
import sys

import torch


def main():
    path = sys.argv[1]
    trials = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    ns = {"__name__": "kernelbench_problem"}
    exec(compile(open(path).read(), path, "exec"), ns)
    torch.manual_seed(42)
    init = ns["get_init_inputs"]() if "get_init_inputs" in ns else []
    torch.manual_seed(42)
    model = ns["Model"](*init).cuda()
    torch.manual_seed(42)
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in ns["get_inputs"]()]
    l2 = torch.empty((32, 1024, 1024), dtype=torch.int64, device="cuda")
    with torch.no_grad():
        for _ in range(3):
            model(*inputs)
            torch.cuda.synchronize()
        times = []
        for i in range(trials + 1):
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            l2.fill_(42)
            start.record()
            model(*inputs)
            end.record()
            torch.cuda.synchronize()
            if i > 0:  # discard_first=1
                times.append(start.elapsed_time(end))
    print(json.dumps({"file": path, "mean_ms": statistics.mean(times),
                      "median_ms": statistics.median(times), "std_ms": statistics.stdev(times),
                      "min_ms": min(times), "max_ms": max(times), "trials": trials}))


if __name__ == "__main__":
    main()
