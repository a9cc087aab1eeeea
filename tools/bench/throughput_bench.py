#!/usr/bin/env python3
"""cuda-optimizer throughput for issue #14, run on the GPU machine (stdlib only).

Measures, and writes as one JSON (plus a readable table and a closing summary):
  * pilot: attempts per minute of the pilot (examples/matmul/config.json, autotune, 7 iterations,
    --no-evidence, --device 0) with --isolation worker and with --isolation process, the two
    alternating run for run; the median over --runs runs of each and their ratio (target >= 4x);
  * sweep: attempts per minute of the exhaustive matmul-tiled sweep (examples/matmul-tiled at
    4096^3: every configuration in one batch, --max-iterations 1 --batch 1000, --warmup 5
    --iterations 30, --no-evidence, as tools/gpu-optimizer-suite.sh runs it) on --devices 0,1
    against --devices 0, alternating; the median of each and their ratio (target >= 1.8x). Needs
    two GPUs; with one it reads n/a.
Attempts per minute are given two ways: over the search (from the progress line of iteration 0
to the last attempt's; what more GPUs or a worker speed up) and end to end (the run's wall_s in
run.json: preflight, the reference, the vendor library and the search). The targets hold the
search figure; the end-to-end figure is beside it. Each run also gives its best, its verdicts by
label (the two sides of a comparison should agree), what compile-ahead did (attempts compiled
ahead, the GPU's median wait for one), the devices that measured and run.json's
harness_processes. The JSON is rewritten after every run (a run cut off loses only itself);
--budget-s starts no run that would end past a time limit. --dry-run prints every command and
runs nothing (no GPU needed).
With --harness build/tests/fake-harness (and CUOPT_FAKE_SLEEP_MS set) it runs on a CPU, to try it.
"""
import argparse, json, os, re, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

TARGETS = {"worker_over_process": 4.0, "two_gpus_over_one": 1.8}
PROGRESS = re.compile(r"^\[iter (\d+)/\d+ #(\d+)\s+([0-9.]+) s\]")


def log(*parts):
    print(*parts, flush=True)


def fmt(x, spec=".1f", unit=""):
    return "n/a" if x is None else f"{x:{spec}}{unit}"


def verdict(ok):
    return "n/a" if ok is None else ("PASS" if ok else "FAIL")


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


# ---------------------------------------------------------------- one optimize run

def optimize_command(a, config, extra, results):
    cmd = [a.optimizer, "optimize", "--config", config, "--no-evidence", "--results-dir", results]
    if a.harness:
        cmd += ["--harness", a.harness]
    return cmd + extra


def load(path):
    with open(path) as f:
        return json.load(f)


def search_seconds(stderr):
    """From the progress lines: the time of iteration 0's line to the last attempt's."""
    times = [(int(m.group(1)), float(m.group(3))) for m in map(PROGRESS.match, stderr.splitlines()) if m]
    first = [t for it, t in times if it == 0]
    return (times[-1][1] - first[0]) if first and len(times) > 1 else None


def run_figures(run_dir, stderr, wall_s):
    """What one run says about its throughput, its outcome and how it ran."""
    history, summary, run = (load(os.path.join(run_dir, f)) for f in ("history.json", "summary.json", "run.json"))
    attempts = history["attempts"]
    searched = [x for x in attempts if x["iteration"] > 0]
    search_s = search_seconds(stderr)
    ahead = [x for x in attempts if x.get("compile_ahead")]
    return {
        "attempts": len(attempts),
        "search_attempts": len(searched),
        "search_s": search_s,
        "search_attempts_per_minute": len(searched) / search_s * 60 if search_s else None,
        "run_wall_s": run["wall_s"],
        "end_to_end_attempts_per_minute": len(attempts) / run["wall_s"] * 60 if run["wall_s"] else None,
        "process_wall_s": round(wall_s, 2),
        "best": (summary.get("best") or {}).get("label"),
        "best_speedup": (summary.get("best") or {}).get("speedup_vs_initial"),
        "verdicts": {x["label"]: x["verdict"] for x in attempts},
        "devices_used": sorted({x.get("device", 0) for x in attempts}),
        "initial_by_device": {str(d["index"]): (d.get("initial") or {}).get("geomean_ms")
                              for d in summary.get("devices") or []},
        "compiled_ahead": len(ahead),
        "compile_ahead_waited_ms_median": median([x["compile_ahead"]["waited_ms"] for x in ahead]),
        "compile_cache_hits": sum(1 for x in attempts if x["compile"]["cache_hit"]),
        "harness_processes": run.get("harness_processes"),
        "settings": {k: run["settings"].get(k) for k in ("devices", "compile_threads", "isolation")},
    }


def run_once(a, label, cmd, work):
    results = tempfile.mkdtemp(prefix=label + "-", dir=work)
    cmd = [results if x == "RESULTS" else x for x in cmd]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{label}: exit {p.returncode}: {p.stderr[-2000:]}")
    fig = run_figures(os.path.join(results, "run-001"), p.stderr, wall)
    log(f"  {label:<10} {fig['search_attempts']:>3} attempts in {fmt(fig['search_s'], '.2f', ' s')} "
        f"-> {fmt(fig['search_attempts_per_minute'])}/min (end to end {fmt(fig['end_to_end_attempts_per_minute'])}/min); "
        f"GPUs {fig['devices_used']}; compiled ahead {fig['compiled_ahead']}; best {fig['best']}")
    if not a.keep:
        shutil.rmtree(results, ignore_errors=True)
    return fig


# ---------------------------------------------------------------- a comparison of two settings

def out_of_time(a, longest_s):
    """True when the next run (as long as the longest so far, and a tenth) would pass --budget-s."""
    return bool(a.budget_s) and time.perf_counter() - a.started + 1.1 * longest_s > a.budget_s


def compare(a, name, sides, work, target, save):
    """sides: [(label, command), (label, command)], the first the faster one expected; alternating.
    save(partial) is called after every run, so a run cut off leaves what came before it."""
    runs = {label: [] for label, _ in sides}
    longest, stopped = 0.0, None
    for i in range(a.runs):
        order = sides if i % 2 == 0 else list(reversed(sides))
        for label, cmd in order:
            if out_of_time(a, longest):
                stopped = f"--budget-s {a.budget_s}: stopped before run {i + 1} of {label}"
                break
            runs[label].append(run_once(a, label, cmd, work))
            longest = max(longest, runs[label][-1]["process_wall_s"])
            save({"partial": True, "runs": runs})
        if stopped:
            log(f"  {stopped}")
            break
    result = summarise(sides, runs, target)
    result["stopped"] = stopped
    return result


def summarise(sides, runs, target):
    (fast, _), (slow, _) = sides
    per_side = {label: {"search_attempts_per_minute": median([r["search_attempts_per_minute"] for r in rs]),
                        "end_to_end_attempts_per_minute": median([r["end_to_end_attempts_per_minute"] for r in rs]),
                        "runs": rs} for label, rs in runs.items()}
    f, s = per_side[fast], per_side[slow]
    ratio = (f["search_attempts_per_minute"] / s["search_attempts_per_minute"]
             if f["search_attempts_per_minute"] and s["search_attempts_per_minute"] else None)
    e2e = (f["end_to_end_attempts_per_minute"] / s["end_to_end_attempts_per_minute"]
           if f["end_to_end_attempts_per_minute"] and s["end_to_end_attempts_per_minute"] else None)
    pairs = range(min(len(runs[fast]), len(runs[slow])))
    return {"sides": per_side, "ratio": ratio, "end_to_end_ratio": e2e, "target": target,
            "meets_target": None if ratio is None else ratio >= target,
            "same_verdicts_by_run": [runs[fast][i]["verdicts"] == runs[slow][i]["verdicts"] for i in pairs],
            "same_best_by_run": [runs[fast][i]["best"] == runs[slow][i]["best"] for i in pairs]}


def pilot_plan(a):
    base = optimize_command(a, a.pilot_config, ["--max-iterations", str(a.pilot_iterations), "--device", "0"] + a.extra,
                            "RESULTS")
    return [("worker", base + ["--isolation", "worker"]), ("process", base + ["--isolation", "process"])]


def sweep_plan(a):
    extra = ["--max-iterations", "1", "--batch", "1000", "--warmup", "5", "--iterations", "30", "--timeout", "120"]
    base = optimize_command(a, a.sweep_config, extra + a.extra, "RESULTS")
    return [("2 GPUs", base + ["--devices", "0,1"]), ("1 GPU", base + ["--devices", "0"])]


def second_gpu_problem(a):
    """"" when GPU 1 answers cuda-harness --device-info, else why not."""
    harness = a.harness or os.path.join(os.path.dirname(a.optimizer), "cuda-harness")
    p = subprocess.run([harness, "--device-info", "--device", "1"], capture_output=True, text=True)
    return "" if p.returncode == 0 else f"no GPU 1 ({(p.stderr or p.stdout).strip()[:200]})"


# ---------------------------------------------------------------- reporting

def print_table(result):
    log("")
    log("== attempts per minute (medians; search: iteration 0's line to the last attempt's)")
    head = ("comparison", "side", "search/min", "end-to-end/min", "runs")
    table = [head]
    for name in ("pilot", "sweep"):
        c = result.get(name)
        if not isinstance(c, dict) or "sides" not in c:
            continue
        for label, s in c["sides"].items():
            table.append((name, label, fmt(s["search_attempts_per_minute"]), fmt(s["end_to_end_attempts_per_minute"]),
                          " ".join(fmt(r["search_attempts_per_minute"], ".0f") for r in s["runs"])))
        table.append((name, "ratio", fmt(c["ratio"], ".2f", "x"), fmt(c["end_to_end_ratio"], ".2f", "x"), ""))
    widths = [max(len(r[i]) for r in table) for i in range(len(head))]
    for r in table:
        log("  ".join(c.ljust(w) if i in (0, 1, 4) else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))


def summary_rows(result):
    rows = []
    for name, what, key in (("pilot", "pilot: worker / process, search attempts per minute", "worker_over_process"),
                            ("sweep", "matmul-tiled sweep: 2 GPUs / 1, search attempts per minute", "two_gpus_over_one")):
        c = result.get(name)
        if isinstance(c, dict) and "ratio" in c:
            rows.append({"target": what, "measured": fmt(c["ratio"], ".2f", "x"),
                         "threshold": f">= {TARGETS[key]}x", "status": verdict(c["meets_target"])})
            rows.append({"target": f"{name}: same verdicts both ways (per run)",
                         "measured": " ".join("yes" if s else "no" for s in c["same_verdicts_by_run"]),
                         "threshold": "info", "status": "n/a"})
        else:
            rows.append({"target": what, "measured": str(c) if c else "skipped",
                         "threshold": f">= {TARGETS[key]}x", "status": "n/a"})
    return rows


def print_summary(rows):
    log("")
    log("== summary (issue #14 targets)")
    w = max(len(s["target"]) for s in rows)
    m = max(len(s["measured"]) for s in rows)
    for s in rows:
        log(f"{s['target']:<{w}}  {s['measured']:>{m}}  {s['threshold']:<8}  {s['status']}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "results", "bench", "throughput-bench.json"))
    ap.add_argument("--optimizer", default=os.path.join(ROOT, "build", "cuda-optimizer"))
    ap.add_argument("--harness", help="cuda-harness binary for optimize (default: beside cuda-optimizer)")
    ap.add_argument("--runs", type=int, default=3, help="runs of each side, alternating (default 3)")
    ap.add_argument("--pilot-config", default=os.path.join(ROOT, "examples", "matmul", "config.json"))
    ap.add_argument("--pilot-iterations", type=int, default=7)
    ap.add_argument("--sweep-config", default=os.path.join(ROOT, "examples", "matmul-tiled", "config.json"))
    ap.add_argument("--skip-pilot", action="store_true", help="no worker vs process comparison")
    ap.add_argument("--skip-sweep", action="store_true", help="no 2 GPUs vs 1 comparison")
    ap.add_argument("--extra", action="append", default=[],
                    help="one more optimize argument for every run (repeat: --extra=--compile-threads --extra=4)")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per optimize run (default 1800)")
    ap.add_argument("--budget-s", type=float, default=0,
                    help="start no run that would end past this many seconds from the start, judged by "
                         "the longest run so far (a device lease's limit); 0: no limit")
    ap.add_argument("--keep", action="store_true", help="keep the run folders (printed) instead of removing them")
    ap.add_argument("--dry-run", action="store_true", help="print every command; run nothing (no GPU)")
    a = ap.parse_args()

    plans = []
    if not a.skip_pilot:
        plans.append(("pilot", pilot_plan(a), TARGETS["worker_over_process"]))
    if not a.skip_sweep:
        plans.append(("sweep", sweep_plan(a), TARGETS["two_gpus_over_one"]))
    if a.dry_run:
        log(f"dry run: would write {a.out}; {a.runs} runs of each side, alternating; RESULTS is a fresh folder per run")
        for name, sides, target in plans:
            log(f"  {name} (target >= {target}x, {sides[0][0]} over {sides[1][0]}):")
            for label, cmd in sides:
                log(f"    {label}: {' '.join(cmd)}")
        missing = [p for p in (a.optimizer, a.harness) if p and not os.path.exists(p)]
        for p in missing:
            log(f"  missing here: {p}")
        return 0

    if not os.path.exists(a.optimizer):
        subprocess.run([os.path.join(ROOT, "tools", "setup.sh")], check=True)
    a.started = time.perf_counter()
    work = tempfile.mkdtemp(prefix="throughput-bench-")
    result = {"schema_version": 1, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "config": {"runs": a.runs, "optimizer": a.optimizer, "harness": a.harness, "extra": a.extra,
                         "targets": TARGETS, "pilot_config": a.pilot_config, "sweep_config": a.sweep_config}}
    smi = shutil.which("nvidia-smi")
    if smi:
        result["gpus"] = subprocess.run([smi, "-L"], capture_output=True, text=True).stdout.strip().splitlines()
    t_start = time.perf_counter()
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)

    def save(name, partial):  # the JSON so far, after every run: a run cut off loses only itself
        result[name] = partial
        with open(a.out, "w") as f:
            json.dump(result, f, indent=2)

    for name, sides, target in plans:
        log(f"== {name}: {sides[0][0]} vs {sides[1][0]}, {a.runs} runs each")
        try:
            problem = second_gpu_problem(a) if name == "sweep" else ""
            result[name] = problem or compare(a, name, sides, work, target, lambda p, n=name: save(n, p))
            if problem:
                log(f"  skipped: {problem}")
        except Exception as e:  # one broken comparison must not lose the other
            result[name] = f"error: {type(e).__name__}: {e}"
            log(f"  ERROR {result[name]}")
    result["summary"] = summary_rows(result)
    result["elapsed_s"] = round(time.perf_counter() - t_start, 1)
    with open(a.out, "w") as f:
        json.dump(result, f, indent=2)
    print_table(result)
    print_summary(result["summary"])
    log(f"wrote {a.out} ({result['elapsed_s']:.0f} s){'; run folders in ' + work if a.keep else ''}")
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
