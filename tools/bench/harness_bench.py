#!/usr/bin/env python3
"""cuda-harness benchmark for issue #12, run on the GPU machine (stdlib only).

Measures, and writes as one JSON (plus a readable printout and a closing summary):
  * ncu_agreement: the harness's primary median (and its "cupti" and "events" channels) vs ncu's
    gpu__time_duration (--clock-control none) for kernels of about 5, 20, 60 and 135 us;
    target: primary within 2% of ncu;
  * empty_kernel: the primary median for an empty kernel vs ncu's duration of the same kernel;
    target: within 0.3 us (absolute); the events channel beside it (its old bias was ~1.35 us);
  * run_to_run_spread: max/min - 1 of the medians of 5 separate harness runs, for the kernels
    of 20 us or more; target < 0.5%;
  * wall_time: process start to response for the 3-case example request, cold cache and cache hit
    (targets 0.45 s and 0.35 s), with the medians of the harness's phases_ms (cupti_init among them);
  * kernel_span (info, no target): a third measurement of what the kernel itself takes, read inside
    it from %globaltimer. A "_span" variant of each ncu-compared kernel and of the empty kernel
    (k_span.cu) takes one more argument, a u64[2] in-place buffer [~0, 0]: each block's first thread
    atomicMin's the timer into [0] at its start, and after a __syncthreads at the block's end
    atomicMax's it into [1]. The harness restores the buffer before every launch and keeps the last
    (checked, also the last timed) launch's values, so each harness run yields one span (end - start);
    the median over the runs is set beside ncu, primary, cupti and events (primary - span,
    ncu - span), with the variant's own harness median (the instrumentation's cost) and the CUPTI
    sample of that very launch.
Every figure is a median over repeated runs (5 by default); the individual runs are kept beside it.
--timer events puts "timing": {"timer": "events"} in every request, to compare with the default.
A harness whose response lacks the per-case "channels" (older builds) reads n/a there.
"""
import argparse, csv, io, json, math, os, re, shutil, statistics, struct, subprocess, sys, tempfile, time, traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

TARGETS = {"ncu_relative": 0.02, "empty_abs_us": 0.3, "spread": 0.005, "wall_cold_s": 0.45,
           "wall_cache_hit_s": 0.35}
SPREAD_MIN_NOMINAL_US = 20  # spread target applies to the kernels aimed at 20 us or more
SPAN_INIT = (0xFFFFFFFFFFFFFFFF, 0)  # the span buffer before every launch: [min start, max end]

KERNELS = r'''
extern "C" __global__ void empty_kernel() {}
extern "C" __global__ void copy_f32(const float* __restrict__ x, float* __restrict__ y, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) y[i] = x[i]; }
extern "C" __global__ void matmul_f32(const float* a, const float* b, float* c, int m, int n, int k) {
  int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < m && col < n) { float acc = 0.f; for (int p = 0; p < k; ++p) acc += a[row * k + p] * b[p * n + col];
    c[row * n + col] = acc; } }
'''

# The kernels above, instrumented: the bodies are the same, between SPAN_BEGIN (the block's first
# thread, at the very start) and SPAN_END (after a __syncthreads: the whole block's work is done).
# A file of its own, so the plain kernels' requests (and their cached cubins) stay as they were.
SPAN_KERNELS = r'''
__device__ __forceinline__ unsigned long long span_clock() {
  unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t) :: "memory"); return t; }
#define SPAN_FIRST_THREAD (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0)
#define SPAN_BEGIN if (SPAN_FIRST_THREAD) atomicMin(&span[0], span_clock());
#define SPAN_END __syncthreads(); if (SPAN_FIRST_THREAD) atomicMax(&span[1], span_clock());
extern "C" __global__ void empty_kernel_span(unsigned long long* span) {
  SPAN_BEGIN
  SPAN_END }
extern "C" __global__ void copy_f32_span(const float* __restrict__ x, float* __restrict__ y, long long n,
                                         unsigned long long* span) {
  SPAN_BEGIN
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) y[i] = x[i];
  SPAN_END }
extern "C" __global__ void matmul_f32_span(const float* a, const float* b, float* c, int m, int n, int k,
                                           unsigned long long* span) {
  SPAN_BEGIN
  int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < m && col < n) { float acc = 0.f; for (int p = 0; p < k; ++p) acc += a[row * k + p] * b[p * n + col];
    c[row * n + col] = acc; }
  SPAN_END }
'''


# ---------------------------------------------------------------- requests

def request(entry, launch, args, timer=None, warmup=10, iterations=100, flush=True):
    timing = {"warmup": warmup, "iterations": iterations, "flush_l2": flush}
    if timer:
        timing["timer"] = timer
    return {"schema_version": 1, "kernel": {"source_file": "k.cu", "entry": entry},
            "timing": timing, "cases": [{"name": entry, "launch": launch, "args": args}]}


def gen(name, count, seed):
    return {"name": name, "dtype": "f32", "count": count, "generator": {"kind": "uniform", "low": -1, "high": 1, "seed": seed}}


def copy_request(n, timer=None):
    return request("copy_f32", {"grid": [132 * 8], "block": [256]},
                   [gen("x", n, 1), {"name": "y", "dtype": "f32", "count": n, "output_file": "y.bin"},
                    {"name": "n", "dtype": "i64", "value": n}], timer)


def matmul_request(m, n, k, timer=None):
    return request("matmul_f32", {"grid": [(n + 15) // 16, (m + 15) // 16], "block": [16, 16]},
                   [gen("a", m * k, 1), gen("b", k * n, 2),
                    {"name": "c", "dtype": "f32", "count": m * n, "output_file": "c.bin"},
                    {"name": "m", "dtype": "i32", "value": m}, {"name": "n", "dtype": "i32", "value": n},
                    {"name": "k", "dtype": "i32", "value": k}], timer)


def empty_request(timer=None, flush=True):
    return request("empty_kernel", {"grid": [1], "block": [32]}, [], timer, warmup=100, iterations=1000, flush=flush)


def copy_name(n):
    b = n * 4
    return f"copy_{b >> 20}MiB" if b % (1 << 20) == 0 else f"copy_{b >> 10}KiB"


def kernel_plan(a):
    """(name, nominal_us, request, entry). Sizes from the H200 figures in docs/evidence: a 64Mi-float
    copy ~135 us, naive matmul 512^3 ~61 us, 256^3 ~20 us; a 2Mi-float copy aims at ~5 us."""
    t = None if a.timer == "auto" else a.timer
    ms, ml = a.matmul_small, a.matmul_large
    return [(copy_name(a.small_copy_floats), 5, copy_request(a.small_copy_floats, t), "copy_f32"),
            (f"matmul_{ms}", 20, matmul_request(ms, ms, ms, t), "matmul_f32"),
            (f"matmul_{ml}", 60, matmul_request(ml, ml, ml, t), "matmul_f32"),
            (copy_name(a.large_copy_floats), 135, copy_request(a.large_copy_floats, t), "copy_f32")]


def span_file(name):
    return f"span-{name}.bin"


def span_request(req, name):
    """The request `req` with its kernel swapped for the "_span" variant (k_span.cu) and one more
    argument, last like the kernel's parameter: the u64[2] span buffer, in place (input_file and
    output_file), as_given so every launch, timed or checked, starts from exactly [~0, 0]."""
    r = json.loads(json.dumps(req))
    entry = r["kernel"]["entry"] + "_span"
    r["kernel"] = {"source_file": "k_span.cu", "entry": entry}
    case = r["cases"][0]
    case["name"] = entry
    case["args"].append({"name": "span", "dtype": "u64", "count": len(SPAN_INIT), "input_file": "span-init.bin",
                         "output_file": span_file(name), "timing_inputs": "as_given"})
    return r


def span_plan(a):
    """(name, nominal_us, span request, span entry): the ncu-compared kernels and the empty kernel."""
    t = None if a.timer == "auto" else a.timer
    plan = [(name, nominal, req, entry) for name, nominal, req, entry in kernel_plan(a)]
    plan.append(("empty_kernel", 0, empty_request(t), "empty_kernel"))
    return [(name, nominal, span_request(req, name), entry + "_span") for name, nominal, req, entry in plan]


def schema_errors(doc, schema, root=None, where="$"):
    """The draft-04 subset schemas/request.schema.json uses ($ref, type, enum, required, properties,
    additionalProperties false, items, min/max, exclusiveMinimum, minItems/maxItems, minLength/maxLength,
    pattern): a list of what in doc breaks it (empty: it conforms)."""
    root = root or schema
    if "$ref" in schema:
        node = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            node = node[part]
        return schema_errors(doc, node, root, where)
    errs = []
    kinds = {"object": dict, "array": list, "string": str, "boolean": bool}
    types = schema.get("type")
    if types is not None:
        types = types if isinstance(types, list) else [types]
        ok = any((isinstance(doc, int) and not isinstance(doc, bool)) if t == "integer" else
                 (isinstance(doc, (int, float)) and not isinstance(doc, bool)) if t == "number" else
                 isinstance(doc, kinds[t]) for t in types)
        if not ok:
            return [f"{where}: {json.dumps(doc)[:60]} is not {'/'.join(types)}"]
    if "enum" in schema and doc not in schema["enum"]:
        errs.append(f"{where}: {json.dumps(doc)} not in {schema['enum']}")
    if isinstance(doc, dict):
        errs += [f"{where}: missing '{k}'" for k in schema.get("required", []) if k not in doc]
        props = schema.get("properties", {})
        for k, v in doc.items():
            if k in props:
                errs += schema_errors(v, props[k], root, f"{where}.{k}")
            elif schema.get("additionalProperties") is False:
                errs.append(f"{where}: unknown field '{k}'")
            elif isinstance(schema.get("additionalProperties"), dict):
                errs += schema_errors(v, schema["additionalProperties"], root, f"{where}.{k}")
    if isinstance(doc, list):
        if len(doc) < schema.get("minItems", 0) or len(doc) > schema.get("maxItems", len(doc)):
            errs.append(f"{where}: {len(doc)} items")
        if "items" in schema:
            for i, v in enumerate(doc):
                errs += schema_errors(v, schema["items"], root, f"{where}[{i}]")
    if isinstance(doc, str):
        if len(doc) < schema.get("minLength", 0) or len(doc) > schema.get("maxLength", len(doc)):
            errs.append(f"{where}: length {len(doc)}")
        if "pattern" in schema and not re.search(schema["pattern"], doc):
            errs.append(f"{where}: '{doc}' does not match {schema['pattern']}")
    if isinstance(doc, (int, float)) and not isinstance(doc, bool):
        lo, hi = schema.get("minimum"), schema.get("maximum")
        if lo is not None and (doc <= lo if schema.get("exclusiveMinimum") else doc < lo):
            errs.append(f"{where}: {doc} below the minimum {lo}")
        if hi is not None and doc > hi:
            errs.append(f"{where}: {doc} above the maximum {hi}")
    return errs


def request_problems(req, folder, schema):
    """Schema errors, plus what the harness's reader checks beyond the schema and this script relies
    on: the kernel's source file present, each input_file holding count x dtype-size bytes."""
    errs = schema_errors(req, schema)
    sizes = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i8": 1, "u8": 1, "i16": 2, "u16": 2, "i32": 4, "u32": 4,
             "i64": 8, "u64": 8}
    src = (req.get("kernel") or {}).get("source_file")
    if src and not os.path.exists(os.path.join(folder, src)):
        errs.append(f"kernel.source_file {src} not in {folder}")
    for case in req.get("cases") or []:
        for arg in case.get("args") or []:
            if "input_file" in arg:
                f = os.path.join(folder, arg["input_file"])
                want = arg.get("count", 0) * sizes.get(arg.get("dtype"), 0)
                have = os.path.getsize(f) if os.path.exists(f) else None
                if have != want:
                    errs.append(f"{case.get('name')}.{arg.get('name')}: {arg['input_file']} holds {have} bytes, "
                                f"count x size is {want}")
    return errs


# ---------------------------------------------------------------- helpers

def med(values):
    v = [x for x in values if x is not None]
    return statistics.median(v) if v else None


def spread(values):
    """max/min - 1 over the values present; None with fewer than two."""
    v = [x for x in values if x is not None]
    return max(v) / min(v) - 1 if len(v) >= 2 and min(v) > 0 else None


def us(ms):
    return None if ms is None else ms * 1000.0


def fmt(x, spec=".2f", unit=""):
    return "n/a" if x is None else f"{x:{spec}}{unit}"


def verdict(ok):
    return "n/a" if ok is None else ("PASS" if ok else "FAIL")


def log(*parts):
    print(*parts, flush=True)


def case_record(resp):
    """The per-run figures of case 0, tolerant of an older response (no channels, no timer)."""
    top = resp.get("timer") if isinstance(resp.get("timer"), dict) else {}
    case = (resp.get("cases") or [{}])[0]
    t = case.get("timing") if isinstance(case.get("timing"), dict) else {}
    ch = t.get("channels") if isinstance(t.get("channels"), dict) else {}

    def channel(name):
        c = ch.get(name)
        return c.get("median_ms") if isinstance(c, dict) else None

    def last(name):  # the last timed launch's sample: in fixed mode, the checked launch
        c = ch.get(name)
        v = c.get("samples_ms") if isinstance(c, dict) else None
        return (v[-1], len(v)) if isinstance(v, list) and v else (None, 0)

    gs = t.get("gpu_state") if isinstance(t.get("gpu_state"), dict) else None
    return {"status": case.get("status"), "error": case.get("error"),
            "primary_ms": t.get("median_ms"), "timer": t.get("timer"), "timer_note": t.get("timer_note"),
            "cupti_ms": channel("cupti"), "events_ms": channel("events"),
            "has_channels": bool(ch), "event_overhead_ms": t.get("event_overhead_ms"),
            "channels_agree": t.get("channels_agree"), "iterations": t.get("iterations"),
            "stop_rule": t.get("stop_rule"), "relative_standard_error": t.get("relative_standard_error"),
            "stream_held": t.get("stream_held"), "throttled": gs.get("throttled") if gs else None,
            "throttle_reasons": gs.get("throttle_reasons") if gs else None,
            "response_timer": top.get("name"), "response_timer_note": top.get("note"),
            "cupti_last_ms": last("cupti")[0], "cupti_samples": last("cupti")[1],
            "events_last_ms": last("events")[0], "events_samples": last("events")[1]}


# ---------------------------------------------------------------- running

class Bench:
    def __init__(self, harness, work, timeout):
        self.harness, self.work, self.timeout = harness, work, timeout
        with open(os.path.join(work, "k.cu"), "w") as f:
            f.write(KERNELS)
        with open(os.path.join(work, "k_span.cu"), "w") as f:
            f.write(SPAN_KERNELS)
        with open(os.path.join(work, "span-init.bin"), "wb") as f:
            f.write(struct.pack("<2Q", *SPAN_INIT))
        self.cache = os.path.join(work, "cache")

    def write_request(self, req, name):
        path = os.path.join(self.work, name + ".json")
        with open(path, "w") as f:
            json.dump(req, f, indent=1)
        return path

    def run(self, req, name):
        """One harness process; returns (response or None, wall_s, returncode, stderr)."""
        path = self.write_request(req, name)
        resp_path = os.path.join(self.work, name + ".response.json")
        if os.path.exists(resp_path):
            os.remove(resp_path)
        cmd = [self.harness, path, "--quiet", "--cache-dir", self.cache, "--response", resp_path]
        t0 = time.perf_counter()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=self.timeout)
            rc, err = p.returncode, p.stderr
        except subprocess.TimeoutExpired:
            rc, err = None, f"timed out after {self.timeout} s"
        wall = time.perf_counter() - t0
        resp = None
        if os.path.exists(resp_path):
            try:
                with open(resp_path) as f:
                    resp = json.load(f)
            except ValueError as e:
                err = f"{err}\nunreadable response: {e}"
        return resp, wall, rc, err

    def read_span(self, file):
        """(start_ns, end_ns, span_ns, problem) from a span buffer the harness wrote."""
        path = os.path.join(self.work, file)
        if not os.path.exists(path):
            return None, None, None, f"no {file}"
        with open(path, "rb") as f:
            data = f.read()
        if len(data) != 16:
            return None, None, None, f"{file} holds {len(data)} bytes, expected 16"
        start, end = struct.unpack("<2Q", data)
        if start == SPAN_INIT[0] or end == SPAN_INIT[1]:
            return start, end, None, f"{file} unwritten ([{start:#x}, {end}])"
        if end < start:
            return start, end, None, f"{file}: end {end} before start {start}"
        return start, end, end - start, None

    def runs(self, req, name, count, span=None):
        """count separate harness processes; one record per run (an error recorded, not raised).
        span: the span buffer's output file, read after each run into span_ns (end - start)."""
        out = []
        for i in range(count):
            if span and os.path.exists(os.path.join(self.work, span)):
                os.remove(os.path.join(self.work, span))
            resp, wall, rc, err = self.run(req, name)
            rec = case_record(resp) if resp else {"primary_ms": None}
            rec["exit"] = rc
            rec["wall_s"] = wall
            if span:
                rec["span_start_ns"], rec["span_end_ns"], rec["span_ns"], problem = self.read_span(span)
                if problem and rc == 0:
                    rec["span_problem"] = problem
                    log(f"  {name} run {i + 1}: no span ({problem})")
            if rc != 0 or rec.get("primary_ms") is None:
                rec["failure"] = (f"exit {rc}; case status {rec.get('status')}: {rec.get('error')}; "
                                  f"{(err or '').strip()[-500:]}")
                log(f"  {name} run {i + 1}: no timing ({rec['failure']})")
            out.append(rec)
        return out


def channel_summary(runs):
    """Medians (over the runs) of each run's primary, cupti and events medians, runs kept beside."""
    s = {}
    for key in ("primary_ms", "cupti_ms", "events_ms", "event_overhead_ms"):
        vals = [r.get(key) for r in runs]
        s[key.replace("_ms", "_median_ms")] = med(vals)
        s[key.replace("_ms", "_runs_ms")] = vals
    s["timers"] = [r.get("timer") for r in runs]
    # the primary channel of the case (per run; the response's top-level timer where a case lacks it)
    seen = sorted({r.get("timer") or r.get("response_timer") for r in runs} - {None})
    s["primary_timer"] = "/".join(seen) or None
    s["timer_notes"] = sorted({r.get("timer_note") for r in runs if r.get("timer_note")})
    s["response_timer"] = next((r.get("response_timer") for r in runs if r.get("response_timer")), None)
    s["response_timer_note"] = next((r.get("response_timer_note") for r in runs if r.get("response_timer_note")), None)
    s["channels_present"] = any(r.get("has_channels") for r in runs)
    s["channels_agree"] = [r.get("channels_agree") for r in runs]
    s["throttled_runs"] = sum(1 for r in runs if r.get("throttled"))
    s["ok_runs"] = sum(1 for r in runs if r.get("primary_ms") is not None)
    s["failures"] = [r["failure"] for r in runs if r.get("failure")]
    return s


NCU_SCALE = {"nsecond": 1e-6, "ns": 1e-6, "usecond": 1e-3, "us": 1e-3, "msecond": 1.0, "ms": 1.0,
             "second": 1e3, "s": 1e3}


def ncu_durations_ms(bench, req, name, kernel, skip, count, timeout):
    """One ncu process over one harness run (the harness's no-stream-hold path, which it also takes
    by itself under ncu's injection): gpu__time_duration of `count` launches after `skip`."""
    path = bench.write_request(req, name)
    cmd = ["ncu", "--clock-control", "none", "--cache-control", "all", "--metrics", "gpu__time_duration.sum",
           "-k", f"regex:^{kernel}$", "--launch-skip", str(skip), "--launch-count", str(count), "--csv",
           bench.harness, path, "--quiet", "--cache-dir", bench.cache, "--no-stream-hold",
           "--response", os.path.join(bench.work, name + ".response.json")]
    # CUOPT_DIE_WITH_PARENT: the harness dies with ncu should the timeout kill ncu
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                       env=dict(os.environ, CUOPT_DIE_WITH_PARENT="1"))
    start = p.stdout.find('"ID"')
    rows = [] if start < 0 else [r for r in csv.DictReader(io.StringIO(p.stdout[start:]))
                                 if r.get("Metric Name") == "gpu__time_duration.sum"]
    values = [round(float(r["Metric Value"].replace(",", "")) * NCU_SCALE[r["Metric Unit"]], 9) for r in rows]
    if not values:
        raise RuntimeError(f"ncu produced no rows for {kernel} (exit {p.returncode}): "
                           f"{p.stderr[-1500:]} {p.stdout[-1500:]}")
    return values


def ncu_series(bench, req, name, kernel, skip, a):
    """a.ncu_runs ncu processes; per-run medians and their median."""
    runs, samples, errors = [], [], []
    for i in range(a.ncu_runs):
        try:
            v = ncu_durations_ms(bench, req, f"{name}-ncu", kernel, skip, a.ncu_count, a.ncu_timeout)
            runs.append(statistics.median(v))
            samples.append(v)
        except (RuntimeError, subprocess.TimeoutExpired, OSError, KeyError, ValueError) as e:
            errors.append(f"run {i + 1}: {e}")
            log(f"  ncu {name} run {i + 1}: {e}")
    return {"ncu_median_ms": med(runs), "ncu_runs_ms": runs, "ncu_samples_ms": samples,
            "ncu_launch_skip": skip, "ncu_launch_count": a.ncu_count, "ncu_errors": errors}


# ---------------------------------------------------------------- sections

def bench_kernels(b, a, result, summary):
    result["ncu_agreement"], result["run_to_run_spread"], result["kernels"] = {}, {}, {}
    for name, nominal, req, kernel in kernel_plan(a):
        t0 = time.perf_counter()
        runs = b.runs(req, name, a.runs)
        s = channel_summary(runs)
        s.update({"nominal_us": nominal, "entry": kernel, "runs": runs})
        result["kernels"][name] = s
        p = s["primary_median_ms"]
        sp = spread(s["primary_runs_ms"])
        log(f"{name} (aim ~{nominal} us): primary {fmt(us(p), '.2f', ' us')} [{s['primary_timer'] or 'n/a'}], "
            f"cupti {fmt(us(s['cupti_median_ms']), '.2f', ' us')}, events {fmt(us(s['events_median_ms']), '.2f', ' us')}, "
            f"spread of {a.runs} medians {fmt(None if sp is None else sp * 100, '.2f', '%')}"
            + (f" ({s['ok_runs']}/{a.runs} runs gave timing)" if s["ok_runs"] != a.runs else ""))
        log(f"  primary runs (us): {[round(us(x), 3) if x is not None else None for x in s['primary_runs_ms']]}")
        if s["throttled_runs"]:
            log(f"  warning: the GPU reported throttling in {s['throttled_runs']} run(s)")
        if s["response_timer_note"]:
            log(f"  response timer note: {s['response_timer_note']}")
        for note in s["timer_notes"]:
            log(f"  case timer note: {note}")

        spread_entry = {"nominal_us": nominal, "medians_ms": s["primary_runs_ms"], "median_ms": p, "spread": sp,
                        "cupti_spread": spread(s["cupti_runs_ms"]), "events_spread": spread(s["events_runs_ms"]),
                        "target": TARGETS["spread"] if nominal >= SPREAD_MIN_NOMINAL_US else None}
        if nominal >= SPREAD_MIN_NOMINAL_US:
            ok = None if sp is None else (sp < TARGETS["spread"] and s["ok_runs"] == a.runs)
            spread_entry["meets_target"] = ok
            summary.append({"group": "spread", "target": f"spread of {a.runs} medians, {name} ({fmt(us(p), '.1f', ' us')})",
                            "measured": fmt(None if sp is None else sp * 100, ".3f", "%")
                            + ("" if s["ok_runs"] == a.runs else f" ({s['ok_runs']}/{a.runs} runs)"),
                            "threshold": f"< {TARGETS['spread'] * 100:g}%", "status": verdict(ok)})
        result["run_to_run_spread"][name] = spread_entry

        if a.skip_ncu:
            summary.append({"group": "ncu", "target": f"harness vs ncu, {name}", "measured": "skipped",
                            "threshold": f"within {TARGETS['ncu_relative'] * 100:g}%", "status": "n/a"})
            continue
        n = ncu_series(b, req, name, kernel, skip=1 + req["timing"]["warmup"], a=a)
        nm = n["ncu_median_ms"]

        def rel(x):
            return None if x is None or not nm else x / nm - 1

        d, dc, de = rel(p), rel(s["cupti_median_ms"]), rel(s["events_median_ms"])
        ok = None if d is None else abs(d) <= TARGETS["ncu_relative"]
        result["ncu_agreement"][name] = {
            "nominal_us": nominal, **n, "harness_primary_median_ms": p, "harness_primary_runs_ms": s["primary_runs_ms"],
            "primary_timer": s["primary_timer"], "cupti_median_ms": s["cupti_median_ms"],
            "events_median_ms": s["events_median_ms"], "relative_difference": d,
            "cupti_relative_difference": dc, "events_relative_difference": de,
            "target": TARGETS["ncu_relative"], "meets_target": ok}
        log(f"  ncu gpu__time_duration {fmt(us(nm), '.2f', ' us')} (runs {[round(us(x), 3) for x in n['ncu_runs_ms']]}): "
            f"primary/ncu-1 {fmt(None if d is None else d * 100, '+.2f', '%')}, "
            f"cupti {fmt(None if dc is None else dc * 100, '+.2f', '%')}, "
            f"events {fmt(None if de is None else de * 100, '+.2f', '%')}  {verdict(ok)}  "
            f"[{time.perf_counter() - t0:.0f} s]")
        summary.append({"group": "ncu", "target": f"harness vs ncu, {name} (ncu {fmt(us(nm), '.1f', ' us')})",
                        "measured": fmt(None if d is None else d * 100, "+.2f", "%"),
                        "threshold": f"within {TARGETS['ncu_relative'] * 100:g}%", "status": verdict(ok)})


ADAPTIVE = {"mode": "adaptive", "target_rse": 0.001, "min_samples": 100, "min_time_ms": 10, "iterations": 5000}


def bench_adaptive_spread(b, a, result, summary):
    """The spread of medians again, the kernels of 20 us or more timed by the adaptive rule
    (target_rse 0.1%, cap 5000): what a user who needs a tighter figure than 10 + 100 gets."""
    result["adaptive_spread"] = {}
    for name, nominal, req, kernel in kernel_plan(a):
        if nominal < SPREAD_MIN_NOMINAL_US:
            continue
        req = json.loads(json.dumps(req))
        req["timing"].update(ADAPTIVE)
        runs = b.runs(req, name + "-adaptive", a.runs)
        med_runs = [r.get("primary_ms") for r in runs]
        ok_runs = [x for x in med_runs if x is not None]
        sp = spread(ok_runs) if len(ok_runs) == a.runs else None
        samples = [r.get("iterations") for r in runs]
        rules = sorted({str(r.get("stop_rule")) for r in runs})
        rse = [r.get("relative_standard_error") for r in runs]
        result["adaptive_spread"][name] = {"timing": ADAPTIVE, "medians_ms": med_runs, "spread": sp,
                                           "samples": samples, "stop_rules": rules, "rse": rse}
        log(f"{name} adaptive: spread of {a.runs} medians {fmt(None if sp is None else sp * 100, '.2f', '%')}, "
            f"samples {samples}, stop {rules}, rse {[None if x is None else round(x * 100, 3) for x in rse]} %")
        ok = None if sp is None else sp < TARGETS["spread"]
        summary.append({"group": "spread", "target": f"spread of {a.runs} medians, {name}, adaptive (rse 0.1%)",
                        "measured": fmt(None if sp is None else sp * 100, ".3f", "%"),
                        "threshold": f"< {TARGETS['spread'] * 100:g}%", "status": verdict(ok)})


def bench_empty(b, a, result, summary):
    t = None if a.timer == "auto" else a.timer
    req = empty_request(t)
    runs = b.runs(req, "empty", a.runs)
    s = channel_summary(runs)
    noflush = channel_summary(b.runs(empty_request(t, flush=False), "empty-noflush", a.runs))
    e = {"primary_median_us": us(s["primary_median_ms"]), "primary_runs_us": [us(x) for x in s["primary_runs_ms"]],
         "cupti_median_us": us(s["cupti_median_ms"]), "cupti_runs_us": [us(x) for x in s["cupti_runs_ms"]],
         "events_median_us": us(s["events_median_ms"]), "events_runs_us": [us(x) for x in s["events_runs_ms"]],
         "event_overhead_median_us": us(s["event_overhead_median_ms"]),
         "primary_timer": s["primary_timer"], "timer_note": s["response_timer_note"],
         "primary_median_us_without_l2_flush": us(noflush["primary_median_ms"]),
         "primary_runs_us_without_l2_flush": [us(x) for x in noflush["primary_runs_ms"]],
         "events_median_us_without_l2_flush": us(noflush["events_median_ms"]),
         "failures": s["failures"] + noflush["failures"], "target_abs_us": TARGETS["empty_abs_us"]}
    log(f"empty kernel: primary {fmt(e['primary_median_us'], '.3f', ' us')} [{s['primary_timer'] or 'n/a'}], "
        f"cupti {fmt(e['cupti_median_us'], '.3f', ' us')}, events {fmt(e['events_median_us'], '.3f', ' us')} "
        f"(no L2 flush: primary {fmt(e['primary_median_us_without_l2_flush'], '.3f', ' us')})")
    log(f"  primary runs (us): {[round(x, 3) if x is not None else None for x in e['primary_runs_us']]}")
    if s["response_timer_note"]:
        log(f"  response timer note: {s['response_timer_note']}")
    if a.skip_ncu:
        e["meets_target"] = None
        summary.append({"group": "empty", "target": "empty kernel, primary vs ncu", "measured": "skipped",
                        "threshold": f"|diff| <= {TARGETS['empty_abs_us']} us", "status": "n/a"})
    else:
        n = ncu_series(b, req, "empty", "empty_kernel", skip=1 + req["timing"]["warmup"], a=a)
        nu = us(n["ncu_median_ms"])
        d = None if nu is None or e["primary_median_us"] is None else e["primary_median_us"] - nu
        de = None if nu is None or e["events_median_us"] is None else e["events_median_us"] - nu
        dc = None if nu is None or e["cupti_median_us"] is None else e["cupti_median_us"] - nu
        ok = None if d is None else abs(d) <= TARGETS["empty_abs_us"]
        e.update({"ncu_median_us": nu, "ncu_runs_us": [us(x) for x in n["ncu_runs_ms"]],
                  "ncu_samples_ms": n["ncu_samples_ms"], "ncu_errors": n["ncu_errors"],
                  "primary_minus_ncu_us": d, "cupti_minus_ncu_us": dc, "events_minus_ncu_us": de, "meets_target": ok})
        log(f"  ncu gpu__time_duration {fmt(nu, '.3f', ' us')}: primary - ncu {fmt(d, '+.3f', ' us')}, "
            f"cupti - ncu {fmt(dc, '+.3f', ' us')}, events - ncu {fmt(de, '+.3f', ' us')} (old events bias ~1.35 us)  {verdict(ok)}")
        summary.append({"group": "empty", "target": f"empty kernel, primary vs ncu ({fmt(nu, '.3f', ' us')})", "measured": fmt(d, "+.3f", " us"),
                        "threshold": f"|diff| <= {TARGETS['empty_abs_us']} us", "status": verdict(ok)})
        summary.append({"group": "empty", "target": "empty kernel, events channel vs ncu (info)", "measured": fmt(de, "+.3f", " us"),
                        "threshold": "(old bias ~1.35 us)", "status": "info"})
    result["empty_kernel"] = e


def diff(x, y):
    return None if x is None or y is None else x - y


def bench_span(b, a, result, summary):
    """The in-kernel span (globaltimer, the checked launch of each of a.runs harness runs of the
    "_span" variant) beside the plain kernel's ncu, primary, cupti and events medians."""
    kernels, ncu, empty = result.get("kernels") or {}, result.get("ncu_agreement") or {}, result.get("empty_kernel") or {}
    out, stamps = {}, []
    result["kernel_span"] = out
    for name, nominal, req, entry in span_plan(a):
        runs = b.runs(req, f"{name}-span", a.runs, span=span_file(name))
        v = channel_summary(runs)
        spans = [r.get("span_ns") for r in runs]
        stamps += [(r["span_start_ns"], r["span_end_ns"]) for r in runs if r.get("span_ns") is not None]
        if name == "empty_kernel":
            base = {"ncu": empty.get("ncu_median_us"), "primary": empty.get("primary_median_us"),
                    "cupti": empty.get("cupti_median_us"), "events": empty.get("events_median_us")}
        else:
            k = kernels.get(name) or {}
            base = {"ncu": us((ncu.get(name) or {}).get("ncu_median_ms")), "primary": us(k.get("primary_median_ms")),
                    "cupti": us(k.get("cupti_median_ms")), "events": us(k.get("events_median_ms"))}
        span_us = None if med(spans) is None else med(spans) / 1000.0
        # the CUPTI sample of the very launch the span was read from (fixed mode: the last timed one)
        iters = req["timing"]["iterations"]
        paired = [None if r.get("span_ns") is None or r.get("cupti_samples") != iters or r.get("cupti_last_ms") is None
                  else us(r["cupti_last_ms"]) - r["span_ns"] / 1000.0 for r in runs]
        e = {"nominal_us": nominal, "entry": entry, "span_median_us": span_us,
             "span_runs_us": [None if x is None else x / 1000.0 for x in spans],
             "span_start_end_ns": [[r.get("span_start_ns"), r.get("span_end_ns")] for r in runs],
             "span_problems": [r["span_problem"] for r in runs if r.get("span_problem")],
             "ncu_median_us": base["ncu"], "primary_median_us": base["primary"], "primary_timer": v["primary_timer"],
             "cupti_median_us": base["cupti"], "events_median_us": base["events"],
             "primary_minus_span_us": diff(base["primary"], span_us), "ncu_minus_span_us": diff(base["ncu"], span_us),
             "cupti_minus_span_us": diff(base["cupti"], span_us), "events_minus_span_us": diff(base["events"], span_us),
             "variant_primary_median_us": us(v["primary_median_ms"]),
             "variant_primary_runs_us": [us(x) for x in v["primary_runs_ms"]],
             "variant_cupti_median_us": us(v["cupti_median_ms"]), "variant_events_median_us": us(v["events_median_ms"]),
             "variant_minus_primary_us": diff(us(v["primary_median_ms"]), base["primary"]),
             "variant_primary_minus_span_us": diff(us(v["primary_median_ms"]), span_us),
             "checked_launch_cupti_minus_span_runs_us": paired,
             "checked_launch_cupti_minus_span_median_us": med(paired),
             "failures": v["failures"], "target": None}
        out[name] = e
        log(f"{name} span: in-kernel {fmt(span_us, '.3f', ' us')} (runs {[None if x is None else round(x, 3) for x in e['span_runs_us']]}); "
            f"primary - span {fmt(e['primary_minus_span_us'], '+.3f', ' us')}, ncu - span {fmt(e['ncu_minus_span_us'], '+.3f', ' us')}, "
            f"cupti - span {fmt(e['cupti_minus_span_us'], '+.3f', ' us')}")
        log(f"  span variant's own harness median {fmt(e['variant_primary_median_us'], '.3f', ' us')} "
            f"(vs plain {fmt(base['primary'], '.3f', ' us')}: {fmt(e['variant_minus_primary_us'], '+.3f', ' us')}); "
            f"its primary - span {fmt(e['variant_primary_minus_span_us'], '+.3f', ' us')}; "
            f"CUPTI of the same launch - span {fmt(e['checked_launch_cupti_minus_span_median_us'], '+.3f', ' us')}")
        summary.append({"group": "span", "target": f"in-kernel span, {name} ({fmt(span_us, '.3f', ' us')}) (info)",
                        "measured": f"primary {fmt(e['primary_minus_span_us'], '+.3f', ' us')}, ncu {fmt(e['ncu_minus_span_us'], '+.3f', ' us')}",
                        "threshold": "(minus the span)", "status": "info"})
    # globaltimer's tick shows in what every difference of its readings is a multiple of
    g = 0
    for start, end in stamps:
        g = math.gcd(g, end - start, start - stamps[0][0])
    result["kernel_span_info"] = {
        "globaltimer_gcd_ns": g or None,
        "note": "gcd of every span and of every start's distance from the first start: a large value "
                "(about 1000 or 1024 ns) means %globaltimer ticks coarsely on this GPU, and the spans are "
                "quantised by that much; spans are the checked launch of each harness run, the kernel's "
                "first block start to its last block end (the writes' drain after that not included)"}
    log(f"  globaltimer tick (gcd of the reading differences, {len(stamps)} spans): {fmt(g or None, 'd', ' ns')} "
        f"(~1000 ns would mean a coarse tick)")


def bench_wall(a, work, result, summary):
    example = os.path.join(work, "example")
    shutil.copytree(os.path.join(ROOT, "examples", "harness", "matmul"), example,
                    ignore=shutil.ignore_patterns("outputs", "response.json"))
    req_path = os.path.join(example, "request.json")
    if a.timer != "auto":
        with open(req_path) as f:
            req = json.load(f)
        req.setdefault("timing", {})["timer"] = a.timer
        with open(req_path, "w") as f:
            json.dump(req, f, indent=1)
    resp_path = os.path.join(example, "response.json")
    failures = []

    def wall(cache_dir):
        if os.path.exists(resp_path):
            os.remove(resp_path)
        t0 = time.perf_counter()
        p = subprocess.run([a.harness, req_path, "--quiet", "--cache-dir", cache_dir],
                           capture_output=True, text=True, timeout=a.harness_timeout)
        w = time.perf_counter() - t0
        if not os.path.exists(resp_path):
            raise RuntimeError(f"example request: harness exit {p.returncode}, no response: {p.stderr[-1500:]}")
        with open(resp_path) as f:
            resp = json.load(f)
        if p.returncode != 0:  # the wall time still counts; the failure is kept beside it
            bad = [f"{c.get('name')}: {c.get('status')} {c.get('error')}" for c in resp.get("cases") or []
                   if c.get("status") != "ok"]
            failures.append(f"exit {p.returncode}: {'; '.join(bad)}")
            log(f"  example request: harness exit {p.returncode}: {'; '.join(bad)}")
        timer = resp.get("timer") if isinstance(resp.get("timer"), dict) else {}
        return w, resp.get("phases_ms") or {}, timer.get("name")

    cold = [wall(os.path.join(work, f"cold-cache-{i}")) for i in range(a.runs)]
    hit = [wall(os.path.join(work, "cold-cache-0")) for _ in range(a.runs)]

    def phases(runs):
        keys = []
        for _, ph, _ in runs:
            keys += [k for k in ph if k not in keys]
        return ({k: med([ph.get(k) for _, ph, _ in runs]) for k in keys},
                {k: [ph.get(k) for _, ph, _ in runs] for k in keys})

    cold_ph, cold_ph_runs = phases(cold)
    hit_ph, hit_ph_runs = phases(hit)
    wt = {"cold_median_s": med(w for w, _, _ in cold), "cold_runs_s": [w for w, _, _ in cold],
          "cache_hit_median_s": med(w for w, _, _ in hit), "cache_hit_runs_s": [w for w, _, _ in hit],
          "cold_phases_median_ms": cold_ph, "cold_phases_runs_ms": cold_ph_runs,
          "cache_hit_phases_median_ms": hit_ph, "cache_hit_phases_runs_ms": hit_ph_runs,
          "timers": [t for _, _, t in cold + hit], "failures": failures, "request_timer_override": None if a.timer == "auto" else a.timer,
          "targets_s": {"cold": TARGETS["wall_cold_s"], "cache_hit": TARGETS["wall_cache_hit_s"]}}
    ok_cold = wt["cold_median_s"] <= TARGETS["wall_cold_s"]
    ok_hit = wt["cache_hit_median_s"] <= TARGETS["wall_cache_hit_s"]
    wt["meets_target"] = ok_cold and ok_hit
    result["wall_time"] = wt
    log(f"wall time, 3-case request: cold {wt['cold_median_s']:.3f} s, cache hit {wt['cache_hit_median_s']:.3f} s "
        f"(timer {sorted({t or 'n/a' for t in wt['timers']})})")
    log(f"  cold runs (s): {[round(w, 3) for w in wt['cold_runs_s']]}; hit runs (s): {[round(w, 3) for w in wt['cache_hit_runs_s']]}")
    log("  phases median ms (cold):", json.dumps({k: round(v, 2) if v is not None else None for k, v in cold_ph.items()}))
    log("  phases median ms (hit): ", json.dumps({k: round(v, 2) if v is not None else None for k, v in hit_ph.items()}))
    if "cupti_init" not in cold_ph:
        log("  note: no cupti_init phase in phases_ms (older harness, or CUPTI not used)")
    summary.append({"group": "wall", "target": "wall time, 3-case request, cold cache", "measured": f"{wt['cold_median_s']:.3f} s",
                    "threshold": f"<= {TARGETS['wall_cold_s']} s", "status": verdict(ok_cold)})
    summary.append({"group": "wall", "target": "wall time, 3-case request, cache hit", "measured": f"{wt['cache_hit_median_s']:.3f} s",
                    "threshold": f"<= {TARGETS['wall_cache_hit_s']} s", "status": verdict(ok_hit)})


def section(name, fn, result, summary, *args):
    t0 = time.perf_counter()
    try:
        fn(*args)
    except Exception as e:  # one broken section must not lose the others
        result.setdefault("errors", {})[name] = f"{type(e).__name__}: {e}"
        log(f"{name}: ERROR {type(e).__name__}: {e}")
        traceback.print_exc(file=sys.stdout)
        summary.append({"target": name, "measured": "error", "threshold": "-", "status": "FAIL"})
    result.setdefault("elapsed_s", {})[name] = round(time.perf_counter() - t0, 1)


GROUPS = ("ncu", "empty", "span", "spread", "wall")


def print_ncu_table(result):
    rows = result.get("ncu_agreement") or {}
    if not rows:
        return
    log("")
    log("== harness vs ncu gpu__time_duration (medians, us)")
    head = ("kernel", "ncu", "primary", "timer", "cupti", "events", "primary/ncu-1", "status")
    table = [head] + [(name, fmt(us(r["ncu_median_ms"]), ".3f"), fmt(us(r["harness_primary_median_ms"]), ".3f"),
                       r.get("primary_timer") or "n/a", fmt(us(r["cupti_median_ms"]), ".3f"),
                       fmt(us(r["events_median_ms"]), ".3f"),
                       fmt(None if r["relative_difference"] is None else r["relative_difference"] * 100, "+.2f", "%"),
                       verdict(r["meets_target"])) for name, r in rows.items()]
    e = result.get("empty_kernel") or {}
    if "ncu_median_us" in e:
        table.append(("empty_kernel", fmt(e["ncu_median_us"], ".3f"), fmt(e["primary_median_us"], ".3f"),
                      e.get("primary_timer") or "n/a", fmt(e["cupti_median_us"], ".3f"), fmt(e["events_median_us"], ".3f"),
                      fmt(e["primary_minus_ncu_us"], "+.3f", " us"), verdict(e["meets_target"])))
    widths = [max(len(r[i]) for r in table) for i in range(len(head))]
    for r in table:
        log("  ".join(c.ljust(w) if i in (0, 3) else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))


def print_span_table(result):
    rows = result.get("kernel_span") or {}
    if not rows:
        return
    log("")
    log("== in-kernel span (%globaltimer, first block start to last block end; median of the runs' checked launches, us; info)")
    head = ("kernel", "ncu", "primary", "cupti", "events", "span", "primary-span", "ncu-span",
            "variant", "variant-primary", "same-launch cupti-span")
    table = [head] + [(name, fmt(r["ncu_median_us"], ".3f"), fmt(r["primary_median_us"], ".3f"), fmt(r["cupti_median_us"], ".3f"),
                       fmt(r["events_median_us"], ".3f"), fmt(r["span_median_us"], ".3f"),
                       fmt(r["primary_minus_span_us"], "+.3f"), fmt(r["ncu_minus_span_us"], "+.3f"),
                       fmt(r["variant_primary_median_us"], ".3f"), fmt(r["variant_minus_primary_us"], "+.3f"),
                       fmt(r["checked_launch_cupti_minus_span_median_us"], "+.3f")) for name, r in rows.items()]
    widths = [max(len(r[i]) for r in table) for i in range(len(head))]
    for r in table:
        log("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
    info = result.get("kernel_span_info") or {}
    log(f"  variant: the span kernel's own harness median (primary channel); same-launch: its CUPTI sample of the "
        f"launch the span came from; globaltimer tick (gcd): {fmt(info.get('globaltimer_gcd_ns'), 'd', ' ns')}")


def print_summary(summary):
    log("")
    log("== summary (issue #12 targets)")
    w = max([len(s["target"]) for s in summary] + [6])
    m = max([len(s["measured"]) for s in summary] + [8])
    t = max([len(s["threshold"]) for s in summary] + [6])
    log(f"{'target':<{w}}  {'measured':>{m}}  {'limit':<{t}}  status")
    for s in summary:
        log(f"{s['target']:<{w}}  {s['measured']:>{m}}  {s['threshold']:<{t}}  {s['status']}")
    counts = {k: sum(1 for s in summary if s["status"] == k) for k in ("PASS", "FAIL", "n/a")}
    log(f"{counts['PASS']} pass, {counts['FAIL']} fail, {counts['n/a']} n/a")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="output JSON (default results/bench/harness-bench.json, "
                                  "harness-bench-events.json with --timer events)")
    ap.add_argument("--harness", default=os.path.join(ROOT, "build", "cuda-harness"))
    ap.add_argument("--timer", choices=["auto", "events"], default="auto",
                    help='events: put "timing": {"timer": "events"} in every request (default auto: leave it out)')
    ap.add_argument("--skip-ncu", action="store_true", help="no ncu comparisons (they read n/a)")
    ap.add_argument("--skip-wall", action="store_true", help="no wall-time runs of the example request")
    ap.add_argument("--skip-span", action="store_true", help="no in-kernel span (globaltimer) runs")
    ap.add_argument("--runs", type=int, default=5, help="harness runs per figure (default 5)")
    ap.add_argument("--ncu-runs", type=int, default=5, help="ncu processes per kernel (default 5)")
    ap.add_argument("--ncu-count", type=int, default=20, help="launches profiled per ncu process (default 20)")
    ap.add_argument("--ncu-timeout", type=int, default=180, help="seconds per ncu process (default 180)")
    ap.add_argument("--harness-timeout", type=int, default=120, help="seconds per harness process (default 120)")
    ap.add_argument("--small-copy-floats", type=int, default=2 * 1024 * 1024, help="the ~5 us copy (default 2Mi floats)")
    ap.add_argument("--matmul-small", type=int, default=256, help="the ~20 us naive matmul, m=n=k (default 256)")
    ap.add_argument("--matmul-large", type=int, default=512, help="the ~60 us naive matmul, m=n=k (default 512)")
    ap.add_argument("--large-copy-floats", type=int, default=64 * 1024 * 1024, help="the ~135 us copy (default 64Mi floats)")
    ap.add_argument("--dry-run", action="store_true", help="write the requests and print the plan; run nothing (no GPU)")
    a = ap.parse_args()
    out = a.out or os.path.join(ROOT, "results", "bench",
                                "harness-bench-events.json" if a.timer == "events" else "harness-bench.json")

    if a.dry_run:
        work = tempfile.mkdtemp(prefix="harness-bench-dry-")
        b = Bench(a.harness, work, a.harness_timeout)
        t = None if a.timer == "auto" else a.timer
        log(f"dry run: requests in {work}; would write {out}")
        with open(os.path.join(ROOT, "schemas", "request.schema.json")) as f:
            schema = json.load(f)
        bad = 0
        plan = [(name, nominal, req, kernel, False) for name, nominal, req, kernel in
                kernel_plan(a) + [("empty", 0, empty_request(t), "empty_kernel")]]
        if not a.skip_span:
            plan += [(f"{name}-span", nominal, req, kernel, True) for name, nominal, req, kernel in span_plan(a)]
        for name, nominal, req, kernel, is_span in plan:
            b.write_request(req, name)
            problems = request_problems(req, work, schema)
            bad += bool(problems)
            if is_span:
                log(f"  {name}: {kernel} in k_span.cu, {a.runs} harness runs, span buffer -> "
                    f"{req['cases'][0]['args'][-1]['output_file']}; timing {json.dumps(req['timing'])}")
            else:
                log(f"  {name}: aim ~{nominal} us, {a.runs} harness runs"
                    + ("" if a.skip_ncu else f", {a.ncu_runs} ncu runs of {a.ncu_count} launches "
                       f"after {1 + req['timing']['warmup']}") + f"; timing {json.dumps(req['timing'])}")
            for p in problems:
                log(f"    request problem: {p}")
        log(f"  {len(plan)} requests checked against schemas/request.schema.json: "
            + ("all conform" if not bad else f"{bad} with problems"))
        log(f"  wall time: examples/harness/matmul/request.json, {a.runs} cold + {a.runs} cache hit"
            + ("" if a.timer == "auto" else f", timing.timer={a.timer}") + (" (skipped)" if a.skip_wall else ""))
        return 1 if bad else 0

    if not os.path.exists(a.harness):
        subprocess.run([os.path.join(ROOT, "tools", "setup.sh")], check=True)
    if not a.skip_ncu and not shutil.which("ncu"):
        log("ncu not on PATH: the ncu comparisons read n/a (--skip-ncu)")
        a.skip_ncu = True
    work = tempfile.mkdtemp(prefix="harness-bench-")
    b = Bench(a.harness, work, a.harness_timeout)
    t_start = time.perf_counter()
    result = {"schema_version": 2, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "config": {"timer": a.timer, "runs": a.runs, "ncu_runs": 0 if a.skip_ncu else a.ncu_runs,
                         "ncu_count": a.ncu_count, "harness": a.harness, "targets": TARGETS,
                         "kernel_span": not a.skip_span}}
    info = subprocess.run([a.harness, "--device-info"], capture_output=True, text=True)
    result["device"] = json.loads(info.stdout) if info.returncode == 0 else info.stderr
    ver = subprocess.run([a.harness, "--version"], capture_output=True, text=True)
    result["harness_version"] = (ver.stdout or ver.stderr).strip()
    log(f"{result['harness_version']}; timer option: {a.timer}; {a.runs} runs per figure"
        + ("" if a.skip_ncu else f", {a.ncu_runs} ncu runs x {a.ncu_count} launches"))

    summary = []
    section("kernels", bench_kernels, result, summary, b, a, result, summary)
    section("adaptive_spread", bench_adaptive_spread, result, summary, b, a, result, summary)
    section("empty_kernel", bench_empty, result, summary, b, a, result, summary)
    if not a.skip_span:
        section("kernel_span", bench_span, result, summary, b, a, result, summary)
    if not a.skip_wall:
        section("wall_time", bench_wall, result, summary, a, work, result, summary)
    else:
        for what, lim in (("cold cache", TARGETS["wall_cold_s"]), ("cache hit", TARGETS["wall_cache_hit_s"])):
            summary.append({"group": "wall", "target": f"wall time, 3-case request, {what}", "measured": "skipped",
                            "threshold": f"<= {lim} s", "status": "n/a"})
    summary.sort(key=lambda s: GROUPS.index(s["group"]) if s.get("group") in GROUPS else len(GROUPS))
    result["summary"] = summary
    result["elapsed_s"]["total"] = round(time.perf_counter() - t_start, 1)

    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        json.dump(result, f, indent=2)
    print_ncu_table(result)
    print_span_table(result)
    print_summary(summary)
    log(f"wrote {out} ({result['elapsed_s']['total']:.0f} s)")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
