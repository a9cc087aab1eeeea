"""Times the exported op through PyTorch at the run's performance cases, beside the run's own
medians. As the run timed it: each call after an untimed read of twice the L2 cache (a cold
cache with clean lines, as the harness's flush), CUDA events around that one call, the median
over the samples; the Python dispatch of the call overlaps the read, so the time is the GPU's.
Beside it: the op's kernel alone as CUPTI reports it through torch.profiler (the run's own
clock, so a difference there is the kernel's, not the call's), the op back to back (batches of
about 1 ms, warm cache: what a loop of your own sees) and the cold figure through
torch.compile. Written by `cuda-optimizer export --torch`; `export --verify` runs it.
    python bench.py [--json FILE] [--samples N] [--no-compile]"""
import argparse
import glob
import importlib
import json
import os
import statistics
import sys

import torch

ROOT = os.path.dirname(os.path.abspath(__file__))
sys.path.append(ROOT)
PACKAGE = os.path.basename(os.path.dirname(glob.glob(os.path.join(ROOT, "cuopt_*", "export.json"))[0]))


def flush_l2(flush):
    """Reads FLUSH (twice the L2 cache): the lines it leaves are clean, as the harness's flush
    leaves them; a write would leave dirty lines for the timed kernel to write back."""
    torch.sum(flush, dtype=torch.int64)


def cold_ms(call, flush, samples):
    """The median of SAMPLES single calls, each after FLUSH is read."""
    for _ in range(10):
        call()
    times = []
    for _ in range(samples):
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        flush_l2(flush)
        start.record()
        call()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def kernel_ms(call, flush, samples, entry):
    """The median duration of the op's kernel (its name holds ENTRY) over SAMPLES cold calls,
    as CUPTI reports it through torch.profiler; None where the profiler gives none."""
    try:
        from torch.autograd import DeviceType
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(samples):
                flush_l2(flush)
                call()
            torch.cuda.synchronize()
        times = [e.time_range.elapsed_us() / 1000 for e in prof.events()
                 if e.device_type == DeviceType.CUDA and entry in e.name
                 and "at::native" not in e.name]
    except Exception as e:  # a profiler that cannot start here: the figure is left out
        print(f"bench.py: no kernel time from torch.profiler: {e}")
        return None
    return statistics.median(times) if len(times) == samples else None


def warm_ms(call, run_ms, samples):
    """Per call: the median over SAMPLES batches of back-to-back calls, about 1 ms each."""
    for _ in range(10):
        call()
    torch.cuda.synchronize()
    batch = max(1, min(1000, int(1.0 / max(run_ms, 1e-4))))
    times = []
    for _ in range(samples):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(batch):
            call()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / batch)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the figures here too")
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--no-compile", action="store_true")
    options = parser.parse_args()
    if not torch.cuda.is_available():
        print("bench.py: no CUDA device")
        return 2
    pkg = importlib.import_module(PACKAGE)
    runtime = importlib.import_module(PACKAGE + "._runtime")
    l2 = getattr(torch.cuda.get_device_properties(torch.cuda.current_device()), "L2_cache_size", 0)
    flush = torch.empty(max(2 * l2, 1 << 20), dtype=torch.uint8, device="cuda")
    rows = []
    for case in pkg.EXPORT["cases"]:
        run_ms = case.get("run_median_ms")
        if not run_ms:
            continue
        args = runtime.call_args(pkg.EXPORT, case["params"], "cuda", seed=1)
        op_ms = cold_ms(lambda: pkg.op(*args), flush, options.samples)
        row = {"name": case["name"], "run_ms": run_ms, "op_ms": op_ms, "ratio": op_ms / run_ms,
               "warm_ms": warm_ms(lambda: pkg.op(*args), run_ms, max(10, options.samples // 3)),
               "samples": options.samples, "l2_flush_bytes": flush.numel()}
        kernel = kernel_ms(lambda: pkg.op(*args), flush, options.samples, pkg.EXPORT["op"])
        if kernel:
            row["kernel_ms"] = kernel
        if not options.no_compile and hasattr(torch, "compile"):
            compiled = torch.compile(lambda *a: pkg.op(*a), fullgraph=True)
            row["compiled_ms"] = cold_ms(lambda: compiled(*args), flush, options.samples)
        rows.append(row)
        print(f"{case['name']:32} run {run_ms:.4f} ms  op {op_ms:.4f} ms  ({op_ms / run_ms:.3f}x)"
              + (f"  kernel {row['kernel_ms']:.4f} ms" if "kernel_ms" in row else "")
              + f"  back to back {row['warm_ms']:.4f} ms"
              + (f"  compiled {row['compiled_ms']:.4f} ms" if "compiled_ms" in row else ""))
    result = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(), "cases": rows}
    if options.json:
        with open(options.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
