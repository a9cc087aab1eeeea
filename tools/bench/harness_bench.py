#!/usr/bin/env python3
"""cuda-harness benchmark, run on the GPU machine (stdlib only).

Measures, and writes as one JSON:
  * empty_kernel: the median reported for an empty kernel (target <= 3.0 us), 5 runs;
  * ncu_agreement: harness median vs ncu's gpu__time_duration for 20-500 us kernels (target within 3%);
  * run_to_run_spread: spread of medians over 5 separate harness runs (target < 1% for >= 20 us);
  * wall_time: process start to response for the 3-case example request, cold cache and cache hit
    (targets 0.45 s and 0.35 s), 5 runs each, with the harness's own phase breakdown.
Every figure is a median over repeated runs; the individual runs are kept beside it.
"""
import argparse, csv, io, json, os, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

KERNELS = r'''
extern "C" __global__ void empty_kernel() {}
extern "C" __global__ void copy_f32(const float* __restrict__ x, float* __restrict__ y, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) y[i] = x[i]; }
extern "C" __global__ void matmul_f32(const float* a, const float* b, float* c, int m, int n, int k) {
  int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < m && col < n) { float acc = 0.f; for (int p = 0; p < k; ++p) acc += a[row * k + p] * b[p * n + col];
    c[row * n + col] = acc; } }
'''


def request(entry, launch, args, warmup=10, iterations=100, flush=True):
    return {"schema_version": 1, "kernel": {"source_file": "k.cu", "entry": entry},
            "timing": {"warmup": warmup, "iterations": iterations, "flush_l2": flush},
            "cases": [{"name": entry, "launch": launch, "args": args}]}


def gen(name, count, seed):
    return {"name": name, "dtype": "f32", "count": count, "generator": {"kind": "uniform", "low": -1, "high": 1, "seed": seed}}


def copy_request(n=64 * 1024 * 1024):
    return request("copy_f32", {"grid": [132 * 8], "block": [256]},
                   [gen("x", n, 1), {"name": "y", "dtype": "f32", "count": n, "output_file": "y.bin"},
                    {"name": "n", "dtype": "i64", "value": n}])


def matmul_request(m, n, k):
    return request("matmul_f32", {"grid": [(n + 15) // 16, (m + 15) // 16], "block": [16, 16]},
                   [gen("a", m * k, 1), gen("b", k * n, 2),
                    {"name": "c", "dtype": "f32", "count": m * n, "output_file": "c.bin"},
                    {"name": "m", "dtype": "i32", "value": m}, {"name": "n", "dtype": "i32", "value": n},
                    {"name": "k", "dtype": "i32", "value": k}])


class Bench:
    def __init__(self, harness, work):
        self.harness, self.work = harness, work
        with open(os.path.join(work, "k.cu"), "w") as f:
            f.write(KERNELS)
        self.cache = os.path.join(work, "cache")

    def run(self, req, name, extra=(), env=None, cache=None):
        path = os.path.join(self.work, name + ".json")
        with open(path, "w") as f:
            json.dump(req, f)
        cmd = [self.harness, path, "--quiet", "--cache-dir", cache or self.cache, *extra]
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)
        wall = time.perf_counter() - t0
        resp_path = os.path.join(self.work, "response.json")
        resp = json.load(open(resp_path)) if os.path.exists(resp_path) else None
        if p.returncode != 0:
            raise RuntimeError(f"{name}: harness exit {p.returncode}: {p.stderr}")
        return resp, wall, p

    def medians(self, req, name, runs=5):
        out = []
        for _ in range(runs):
            resp, _, _ = self.run(req, name)
            out.append(resp["cases"][0]["timing"]["median_ms"])
        return out


def spread(values):
    return (max(values) - min(values)) / statistics.median(values)


def ncu_durations_ms(bench, req, name, kernel, skip, count):
    path = os.path.join(bench.work, name + ".json")
    with open(path, "w") as f:
        json.dump(req, f)
    cmd = ["ncu", "--clock-control", "none", "--cache-control", "all", "--metrics", "gpu__time_duration.sum",
           "-k", f"regex:^{kernel}$", "--launch-skip", str(skip), "--launch-count", str(count), "--csv",
           bench.harness, path, "--quiet", "--cache-dir", bench.cache]
    p = subprocess.run(cmd, capture_output=True, text=True)
    rows = [r for r in csv.DictReader(io.StringIO(p.stdout[p.stdout.find('"ID"'):]))
            if r.get("Metric Name") == "gpu__time_duration.sum"]
    scale = {"nsecond": 1e-6, "ns": 1e-6, "usecond": 1e-3, "us": 1e-3, "msecond": 1.0, "ms": 1.0}
    values = [float(r["Metric Value"].replace(",", "")) * scale[r["Metric Unit"]] for r in rows]
    if not values:
        raise RuntimeError(f"ncu produced no rows for {kernel}: {p.stderr[-2000:]} {p.stdout[-2000:]}")
    return values


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "results", "bench", "harness-bench.json"))
    ap.add_argument("--harness", default=os.path.join(ROOT, "build", "cuda-harness"))
    ap.add_argument("--skip-ncu", action="store_true")
    a = ap.parse_args()
    if not os.path.exists(a.harness):
        subprocess.run([os.path.join(ROOT, "tools", "setup.sh")], check=True)
    work = tempfile.mkdtemp(prefix="harness-bench-")
    b = Bench(a.harness, work)
    result = {"schema_version": 1, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    info = subprocess.run([a.harness, "--device-info"], capture_output=True, text=True)
    result["device"] = json.loads(info.stdout) if info.returncode == 0 else info.stderr

    # 1. Empty kernel: what the harness reports for a launch that does nothing.
    empty = request("empty_kernel", {"grid": [1], "block": [32]}, [], warmup=100, iterations=1000)
    empty_us = [m * 1000 for m in b.medians(empty, "empty")]
    empty["timing"]["flush_l2"] = False
    empty_noflush_us = [m * 1000 for m in b.medians(empty, "empty-noflush")]
    result["empty_kernel"] = {"median_us": statistics.median(empty_us), "runs_us": empty_us,
                              "median_us_without_l2_flush": statistics.median(empty_noflush_us),
                              "runs_us_without_l2_flush": empty_noflush_us, "target_us": 3.0,
                              "meets_target": statistics.median(empty_us) <= 3.0}
    print(f"empty kernel: median {statistics.median(empty_us):.2f} us (no flush {statistics.median(empty_noflush_us):.2f})", flush=True)

    # 2 + 3. Real kernels: run-to-run spread, and agreement with ncu.
    kernels = {"copy_256MiB": (copy_request(), "copy_f32"), "matmul_512": (matmul_request(512, 512, 512), "matmul_f32"),
               "matmul_256": (matmul_request(256, 256, 256), "matmul_f32")}
    result["run_to_run_spread"] = {}
    result["ncu_agreement"] = {}
    for name, (req, kernel) in kernels.items():
        meds = b.medians(req, name)
        med = statistics.median(meds)
        result["run_to_run_spread"][name] = {"medians_ms": meds, "median_ms": med, "spread": spread(meds),
                                             "target": 0.01, "meets_target": med < 0.020 or spread(meds) < 0.01}
        print(f"{name}: median {med * 1000:.1f} us, spread over 5 runs {spread(meds) * 100:.2f}%", flush=True)
        if not a.skip_ncu:
            ncu = ncu_durations_ms(b, req, name + "-ncu", kernel, skip=11, count=20)
            ncu_med = statistics.median(ncu)
            diff = (med - ncu_med) / ncu_med
            result["ncu_agreement"][name] = {"harness_median_ms": med, "ncu_median_ms": ncu_med, "ncu_samples": len(ncu),
                                             "relative_difference": diff, "target": 0.03,
                                             "meets_target": abs(diff) <= 0.03}
            print(f"  ncu gpu__time_duration median {ncu_med * 1000:.1f} us: harness differs by {diff * 100:+.2f}%", flush=True)

    # 4. Wall time of the 3-case example, cold (empty cache) and with a cache hit.
    example = os.path.join(work, "example")
    shutil.copytree(os.path.join(ROOT, "examples", "harness", "matmul"), example,
                    ignore=shutil.ignore_patterns("outputs", "response.json"))
    def wall(cache_dir):
        t0 = time.perf_counter()
        p = subprocess.run([a.harness, os.path.join(example, "request.json"), "--quiet", "--cache-dir", cache_dir],
                           capture_output=True, text=True)
        w = time.perf_counter() - t0
        if p.returncode != 0:
            raise RuntimeError(p.stderr)
        return w, json.load(open(os.path.join(example, "response.json")))["phases_ms"]
    cold, hit = [], []
    for i in range(5):
        cold.append(wall(os.path.join(work, f"cold-cache-{i}")))
    for i in range(5):
        hit.append(wall(os.path.join(work, "cold-cache-0")))
    result["wall_time"] = {
        "cold_median_s": statistics.median(w for w, _ in cold), "cold_runs_s": [w for w, _ in cold],
        "cache_hit_median_s": statistics.median(w for w, _ in hit), "cache_hit_runs_s": [w for w, _ in hit],
        "cold_phases_ms": cold[len(cold) // 2][1], "cache_hit_phases_ms": hit[len(hit) // 2][1],
        "targets_s": {"cold": 0.45, "cache_hit": 0.35}}
    wt = result["wall_time"]
    wt["meets_target"] = wt["cold_median_s"] <= 0.45 and wt["cache_hit_median_s"] <= 0.35
    print(f"wall time, 3-case request: cold {wt['cold_median_s']:.3f} s, cache hit {wt['cache_hit_median_s']:.3f} s", flush=True)
    print("  phases (cold):", json.dumps(wt["cold_phases_ms"]), flush=True)
    print("  phases (hit): ", json.dumps(wt["cache_hit_phases_ms"]), flush=True)

    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(result, f, indent=2)
    print("wrote", a.out)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
