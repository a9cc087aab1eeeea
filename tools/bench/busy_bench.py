#!/usr/bin/env python3
"""Issue #29: how busy the GPU is during a search, and attempts per minute, this build against
another ("today's": --baseline-optimizer and --baseline-harness), run on the GPU machine
(stdlib only).

Two searches, each run --runs times per side, the sides alternating run for run:
  * matmul-tiled (examples/matmul-tiled, 4096^3, autotune, --max-iterations 2, --no-evidence);
  * the pilot (examples/matmul, autotune, --max-iterations 2, --no-evidence).
Per run: search attempts per minute (iteration 0's progress line to the last attempt's, as
throughput_bench.py measures it), run.json's measured GPU busy fraction of the search where
the build reports one (gpu_busy.busy_fraction; a baseline without it reads n/a), the verdict of
every attempt by label, and where outputs were checked (history's checked_on). Medians per side;
the ratio of this build's attempts per minute to the baseline's; whether the verdicts agree run
for run on every candidate both runs tried. Targets (issue #29): matmul-tiled >= 50% busy and >= 1.5x attempts per minute; the pilot
>= 20% busy. Writes one JSON (rewritten after every run) and prints a table.
"""
import argparse, json, os, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from throughput_bench import ROOT, fmt, log, median, search_seconds, verdict  # noqa: E402

TARGETS = {"tiled_busy": 0.50, "tiled_ratio": 1.5, "pilot_busy": 0.20}


def load(path):
    with open(path) as f:
        return json.load(f)


def figures(run_dir, stderr):
    history, run = load(os.path.join(run_dir, "history.json")), load(os.path.join(run_dir, "run.json"))
    attempts = history["attempts"]
    searched = [x for x in attempts if x["iteration"] > 0]
    search_s = search_seconds(stderr)
    busy = run.get("gpu_busy") if isinstance(run.get("gpu_busy"), dict) else None
    checked = {}
    for x in attempts:
        for c in x.get("cases", []):
            for o in c.get("outputs", []):
                where = o.get("checked_on", "cpu (no field)")
                checked[where] = checked.get(where, 0) + 1
    return {
        "attempts": len(attempts),
        "search_attempts": len(searched),
        "search_s": search_s,
        "search_attempts_per_minute": len(searched) / search_s * 60 if search_s else None,
        "run_wall_s": run["wall_s"],
        "harness_wall_s": run.get("harness_wall_s"),
        "busy_fraction": busy.get("busy_fraction") if busy else None,
        "gpu_busy": busy,
        "verdicts": {x["label"]: x["verdict"] for x in attempts},
        "outputs_checked_on": checked,
        "best": (load(os.path.join(run_dir, "summary.json")).get("best") or {}).get("label"),
    }


def run_once(a, side, config, iterations, work):
    optimizer, harness = (a.optimizer, a.harness) if side == "this build" else (a.baseline_optimizer,
                                                                               a.baseline_harness)
    results = tempfile.mkdtemp(prefix="busy-", dir=work)
    cmd = [optimizer, "optimize", "--config", config, "--no-evidence", "--results-dir", results,
           "--max-iterations", str(iterations), "--device", "0"]
    if harness:
        cmd += ["--harness", harness]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
    if p.returncode != 0:
        raise RuntimeError(f"{side}: exit {p.returncode}: {p.stderr[-2000:]}")
    f = figures(os.path.join(results, "run-001"), p.stderr)
    log(f"  {side:<10} {f['search_attempts']:>3} attempts in {fmt(f['search_s'], '.2f', ' s')} -> "
        f"{fmt(f['search_attempts_per_minute'])}/min; busy {fmt(f['busy_fraction'], '.3f')}; "
        f"checked on {f['outputs_checked_on']}; best {f['best']}")
    return f


def compare(a, name, config, iterations, work, save):
    runs = {"this build": [], "baseline": []}
    for i in range(a.runs):
        for side in (("this build", "baseline") if i % 2 == 0 else ("baseline", "this build")):
            runs[side].append(run_once(a, side, config, iterations, work))
            save({"partial": True, "runs": runs})
    sides = {s: {"search_attempts_per_minute": median([r["search_attempts_per_minute"] for r in rs]),
                 "busy_fraction": median([r["busy_fraction"] for r in rs]), "runs": rs}
             for s, rs in runs.items()}
    new, old = sides["this build"], sides["baseline"]
    ratio = (new["search_attempts_per_minute"] / old["search_attempts_per_minute"]
             if new["search_attempts_per_minute"] and old["search_attempts_per_minute"] else None)
    pairs = range(min(len(runs["this build"]), len(runs["baseline"])))
    return {"sides": sides, "ratio": ratio,
            "same_verdicts_by_run": [same_verdicts(runs["this build"][i], runs["baseline"][i]) for i in pairs]}


def same_verdicts(a, b):
    """Whether every candidate both runs tried got the same verdict. The autotuner's later
    iterations follow its best so far, so two runs whose bests are a near tie try other labels;
    those are compared where they meet. "yes (12 of 17 shared)" or "NO: LABEL a vs b"."""
    shared = sorted(set(a["verdicts"]) & set(b["verdicts"]))
    differ = [f"{l}: {a['verdicts'][l]} vs {b['verdicts'][l]}" for l in shared if a["verdicts"][l] != b["verdicts"][l]]
    if differ:
        return "NO: " + "; ".join(differ)
    return f"yes ({len(shared)} of {max(len(a['verdicts']), len(b['verdicts']))} shared)"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "results", "bench", "busy-bench.json"))
    ap.add_argument("--optimizer", default=os.path.join(ROOT, "build", "cuda-optimizer"))
    ap.add_argument("--harness", help="cuda-harness for this build (default: beside --optimizer)")
    ap.add_argument("--baseline-optimizer", required=True, help="today's cuda-optimizer, to compare with")
    ap.add_argument("--baseline-harness", help="today's cuda-harness (default: beside it)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=2)
    ap.add_argument("--skip-pilot", action="store_true")
    ap.add_argument("--timeout", type=int, default=900)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="busy-bench-")
    result = {"schema_version": 1, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "targets": TARGETS, "config": {k: v for k, v in vars(a).items()}}
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)

    def save(name, partial):
        result[name] = partial
        with open(a.out, "w") as f:
            json.dump(result, f, indent=2)

    plans = [("tiled", os.path.join(ROOT, "examples", "matmul-tiled", "config.json"))]
    if not a.skip_pilot:
        plans.append(("pilot", os.path.join(ROOT, "examples", "matmul", "config.json")))
    for name, config in plans:
        log(f"== {name}: this build vs baseline, {a.runs} runs each, alternating")
        try:
            save(name, compare(a, name, config, a.iterations, work, lambda p, n=name: save(n, p)))
        except Exception as e:
            save(name, f"error: {type(e).__name__}: {e}")
            log(f"  ERROR {result[name]}")
    log("\n== summary (issue #29 targets; medians)")
    t, p = result.get("tiled"), result.get("pilot")
    rows = []
    if isinstance(t, dict):
        b = t["sides"]["this build"]["busy_fraction"]
        rows += [("matmul-tiled GPU busy (this build)", fmt(b, ".3f"), ">= 0.50",
                  verdict(None if b is None else b >= TARGETS["tiled_busy"])),
                 ("matmul-tiled attempts/min, this build / baseline", fmt(t["ratio"], ".2f", "x"), ">= 1.5x",
                  verdict(None if t["ratio"] is None else t["ratio"] >= TARGETS["tiled_ratio"])),
                 ("matmul-tiled same verdicts per run", ", ".join(t["same_verdicts_by_run"]), "all", "")]
    if isinstance(p, dict):
        b = p["sides"]["this build"]["busy_fraction"]
        rows += [("pilot GPU busy (this build)", fmt(b, ".3f"), ">= 0.20",
                  verdict(None if b is None else b >= TARGETS["pilot_busy"])),
                 ("pilot attempts/min, this build / baseline", fmt(p["ratio"], ".2f", "x"), "info", ""),
                 ("pilot same verdicts per run", ", ".join(p["same_verdicts_by_run"]), "all", "")]
    for r in rows:
        log(f"  {r[0]:<50} {r[1]:>16}  {r[2]:<8} {r[3]}")
    result["summary"] = rows
    save("summary", rows)
    log(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
