#!/usr/bin/env python3
"""What keying the generated inputs costs the GPU (issue 44), run on the GPU machine.

  keyed_inputs_bench.py HARNESS OUT.json [--elements N] [--rounds R]

One request, a copy kernel over N float32 elements generated fresh before every launch
(3 warm-up + 20 timed), run with the public generator and with the run's key (ChaCha20),
alternately (ABBA), R rounds each. Reports per variant the median of the response's
gpu_busy.ms (CUPTI: every kernel of the request, the generator's included) and of the timed
kernel's median latency (which must not move: generation is never timed), and the keyed
generator's extra cost per generated element and per launch.
"""
import argparse, json, os, statistics, subprocess, tempfile

KERNEL = r'''extern "C" __global__ void copy_f32(const float* x, float* y, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; if (i < n) y[i] = x[i]; }'''


def request(n, keyed):
    r = {"schema_version": 1,
         "kernel": {"source_file": "k.cu", "entry": "copy_f32"},
         "timing": {"warmup": 3, "iterations": 20, "fresh_inputs": True},
         "cases": [{"name": "copy", "launch": {"grid": [(n + 255) // 256], "block": [256]},
                    "args": [{"name": "x", "dtype": "f32", "count": n,
                              "generator": {"kind": "uniform", "low": -1, "high": 1, "seed": 11}},
                             {"name": "y", "dtype": "f32", "count": n, "output_file": "y.bin"},
                             {"name": "n", "dtype": "i64", "value": n}]}]}
    if keyed:
        r["inputs_key"] = {"file": "../inputs-key.json", "round": 3}
    return r


def main():
    p = argparse.ArgumentParser()
    p.add_argument('harness')
    p.add_argument('out')
    p.add_argument('--elements', type=int, default=1 << 26)
    p.add_argument('--rounds', type=int, default=5)
    a = p.parse_args()
    root = tempfile.mkdtemp()
    with open(os.path.join(root, 'inputs-key.json'), 'w') as f:
        json.dump({"schema_version": 1, "key": os.urandom(16).hex()}, f)
    runs = {False: [], True: []}
    for keyed in (False, True):
        d = os.path.join(root, 'keyed' if keyed else 'public')
        os.makedirs(d)
        with open(os.path.join(d, 'k.cu'), 'w') as f:
            f.write(KERNEL)
        with open(os.path.join(d, 'request.json'), 'w') as f:
            json.dump(request(a.elements, keyed), f)
    for i in range(a.rounds * 2):
        order = (False, True) if i % 2 == 0 else (True, False)
        for keyed in order:
            d = os.path.join(root, 'keyed' if keyed else 'public')
            subprocess.run([a.harness, os.path.join(d, 'request.json'), '--quiet', '--root', root],
                           check=True)
            with open(os.path.join(d, 'response.json')) as f:
                resp = json.load(f)
            runs[keyed].append({"gpu_busy_ms": resp["gpu_busy"]["ms"],
                                "kernel_median_ms": resp["cases"][0]["timing"]["median_ms"]})
    out = {"elements": a.elements, "launches_per_request": 24}
    for keyed, name in ((False, 'public'), (True, 'keyed')):
        out[name] = {k: statistics.median(r[k] for r in runs[keyed])
                     for k in ("gpu_busy_ms", "kernel_median_ms")}
    extra = out['keyed']['gpu_busy_ms'] - out['public']['gpu_busy_ms']
    out['keyed_extra_ms_per_launch'] = extra / 24
    out['keyed_extra_ns_per_element'] = extra * 1e6 / (24 * a.elements)
    out['kernel_median_ratio'] = out['keyed']['kernel_median_ms'] / out['public']['kernel_median_ms']
    out['runs'] = {('keyed' if k else 'public'): v for k, v in runs.items()}
    with open(a.out, 'w') as f:
        json.dump(out, f, indent=2)
    print(json.dumps({k: v for k, v in out.items() if k != 'runs'}, indent=2))


if __name__ == '__main__':
    main()
