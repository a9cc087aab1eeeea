#!/usr/bin/env python3
"""Condenses the GPU optimizer runs (tools/gpu-optimizer-suite.sh) into one JSON."""
import json, os, sys

runs, cublas_file, out = sys.argv[1], sys.argv[2], sys.argv[3]


def load(path):
    with open(path) as f:
        return json.load(f)


def run_dir(name):
    return os.path.join(runs, name, "run-001")


result = {}
pilot = load(os.path.join(run_dir("pilot"), "summary.json"))
result["pilot"] = {"stop_reason": pilot["stop_reason"], "best": pilot["best"], "counts": pilot["counts"],
                   "cases": [{k: c[k] for k in ("name", "initial_median_ms", "best_median_ms", "speedup")} for c in pilot["cases"]]}
bad = load(os.path.join(run_dir("bad"), "history.json"))
result["bad_candidates"] = {a["label"]: {"verdict": a["verdict"], "reason": a["reason"][:200], "geomean_ms": a["geomean_ms"]}
                            for a in bad["attempts"]}
tiled = load(os.path.join(run_dir("tiled"), "summary.json"))
sweep = load(os.path.join(run_dir("sweep"), "summary.json"))
sweep_hist = load(os.path.join(run_dir("sweep"), "history.json"))
tiled_hist = load(os.path.join(run_dir("tiled"), "history.json"))


def perf_median(summary):
    return [c for c in summary["cases"] if c["kind"] == "performance"][0]["best_median_ms"]


cublas = load(cublas_file)
# The sweep's best is the fastest valid configuration it measured, not the run's "best"
# (which moves only for gains above the minimum gain, in the order configurations ran).
sweep_valid = [a for a in sweep_hist["attempts"] if a["verdict"] == "valid" and a["geomean_ms"]]
sweep_fastest = min(sweep_valid, key=lambda a: a["geomean_ms"])
auto_ms, sweep_ms = perf_median(tiled), sweep_fastest["geomean_ms"]
result["tiled"] = {
    "autotune": {"best": tiled["best"], "best_median_ms": auto_ms, "attempts": tiled["counts"]["attempts"],
                 "initial_median_ms": [c for c in tiled["cases"] if c["kind"] == "performance"][0]["initial_median_ms"]},
    "sweep": {"fastest": {"label": sweep_fastest["label"], "geomean_ms": sweep_ms}, "run_best": sweep["best"],
              "best_median_ms": sweep_ms, "attempts": sweep["counts"]["attempts"],
              "valid": sweep["counts"]["valid"], "rejected": sweep["counts"]["rejected"]},
    "autotune_vs_sweep": auto_ms / sweep_ms, "target_autotune_vs_sweep": 1.05,
    "cublas_median_ms": cublas["median_ms"], "sweep_best_vs_cublas_speed": cublas["median_ms"] / sweep_ms,
    "autotune_best_vs_cublas_speed": cublas["median_ms"] / auto_ms, "target_vs_cublas_speed": 0.6,
    "sweep_all": sorted(((a["label"], a["geomean_ms"], a["verdict"]) for a in sweep_hist["attempts"]),
                        key=lambda t: (t[1] is None, t[1] or 0)),
}
with open(out, "w") as f:
    json.dump(result, f, indent=2)
t = result["tiled"]
print(f"pilot: best speedup {pilot['best']['speedup_vs_initial']:.2f}x ({pilot['best']['label']}), stop {pilot['stop_reason']}")
print("bad candidates:", ", ".join(f"{k}: {v['verdict']}" for k, v in result["bad_candidates"].items()))
print(f"tiled 4096^3: autotune best {auto_ms:.3f} ms ({tiled['best']['label']}) after {tiled['counts']['attempts']} attempts; "
      f"sweep fastest {sweep_ms:.3f} ms ({sweep_fastest['label']}) over {sweep['counts']['attempts']}; "
      f"autotune/sweep {t['autotune_vs_sweep']:.3f} (target <= 1.05)")
print(f"cuBLAS {cublas['median_ms']:.3f} ms: sweep best at {t['sweep_best_vs_cublas_speed']:.2f}x cuBLAS speed, "
      f"autotune best at {t['autotune_best_vs_cublas_speed']:.2f}x (target >= 0.6)")
