# cuda-optimizer's PyTorch side. cuda-optimizer writes this file into a folder of its own and
# runs it there in a confined child (Landlock: that folder, the interpreter's libraries and, on
# a GPU, the driver's files; no network; a scrubbed environment): never run it by hand.
#
#   python3 -I pytorch_side.py introspect JOB OUT   what a problem file takes and returns
#   python3 -I pytorch_side.py oracle JOB OUT       forward() on given inputs, outputs to files
#   python3 -I pytorch_side.py time JOB OUT         eager or torch.compile timed per launch
#   python3 -I pytorch_side.py verify JOB OUT       an exported package (export --torch) built
#                                                   in this folder, its test run, its op timed
#
# JOB and OUT are JSON. Whatever the problem's code raises becomes {"refused": "..."} or
# {"error": "..."} in OUT: cuda-optimizer reads OUT as untrusted and says it in one line.
import inspect
import json
import math
import os
import sys

import torch

DTYPES = {
    torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16", torch.float64: "f64",
    torch.int8: "i8", torch.uint8: "u8", torch.int16: "i16", torch.int32: "i32",
    torch.int64: "i64",
}
for _name, _ours in (("float8_e4m3fn", "f8e4m3"), ("float8_e5m2", "f8e5m2")):
    if hasattr(torch, _name):
        DTYPES[getattr(torch, _name)] = _ours
TORCH_OF = {v: k for k, v in DTYPES.items()}
FLASHINFER_DTYPES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64",
                     "int8": "i8", "uint8": "u8", "int16": "i16", "int32": "i32", "int64": "i64",
                     "float8_e4m3fn": "f8e4m3", "float8_e5m2": "f8e5m2"}
SMALL = [37, 29, 19, 23, 31, 17, 13, 11, 7, 5]


class Refusal(Exception):
    pass


def short(e):
    text = "%s: %s" % (type(e).__name__, e)
    return text if len(text) <= 300 else text[:300] + "..."


# ---- problems: one interface over the three forms ----

class Problem:
    """form, entry, axes {name: value}, the names that are candidate axes, and
    build(sizes) -> (callable, parameters [(name, tensor)], inputs [tensor or number], arg names)."""

    def __init__(self, form, entry):
        self.form, self.entry = form, entry
        self.axes, self.candidates, self.workloads, self.scalars = {}, [], [], {}


class ModuleProblem(Problem):
    """A KernelBench file (class Model, get_inputs, get_init_inputs) or our plain form (a
    function forward and get_inputs): sizes are the module's integer globals."""

    def __init__(self, path, form):
        source = open(path, encoding="utf-8").read()
        self.ns = {"__name__": "cuopt_problem", "__file__": os.path.basename(path)}
        try:
            exec(compile(source, os.path.basename(path), "exec"), self.ns)
        except SyntaxError as e:
            raise Refusal("the file does not parse: line %s: %s" % (e.lineno, e.msg))
        except Exception as e:
            raise Refusal("running the file's top level raised %s" % short(e))
        if form == "auto":
            form = "kernelbench" if "Model" in self.ns else "plain"
        super().__init__(form, "Model" if form == "kernelbench" else "forward")
        if form == "kernelbench" and not isinstance(self.ns.get("Model"), type):
            raise Refusal("no class Model: a KernelBench file defines class Model(nn.Module)")
        if form == "plain" and not callable(self.ns.get("forward")):
            raise Refusal("no class Model (a KernelBench file) and no function forward (our plain "
                          "form): nothing to call")
        if not callable(self.ns.get("get_inputs")):
            raise Refusal("no function get_inputs(): it says what forward() takes")
        self.candidates = [k for k, v in self.ns.items()
                           if type(v) is int and not k.startswith("_") and v > 0]
        self.axes = {k: self.ns[k] for k in self.candidates}

    def build(self, sizes):
        for k, v in sizes.items():
            self.ns[k] = v
        torch.manual_seed(0)
        if self.form == "kernelbench":
            init = self.ns["get_init_inputs"]() if callable(self.ns.get("get_init_inputs")) else []
            model = self.ns["Model"](*init)
            call, params = model, list(model.named_parameters()) + list(model.named_buffers())
            names = list(inspect.signature(model.forward).parameters)
        else:
            call, params = self.ns["forward"], []
            names = list(inspect.signature(call).parameters)
        torch.manual_seed(1)
        inputs = list(self.ns["get_inputs"]())
        return call, params, inputs, names


class FlashInferProblem(Problem):
    """A FlashInfer-Trace definition: axes (var/const), inputs and outputs by shape, and a
    reference whose run(...) takes the inputs in their order."""

    def __init__(self, path, workloads_path):
        d = json.load(open(path, encoding="utf-8"))
        if not isinstance(d, dict) or not isinstance(d.get("reference"), str):
            raise Refusal("not a FlashInfer-Trace definition: no 'reference' code")
        super().__init__("flashinfer", "run")
        self.definition = d
        self.ns = {"__name__": "cuopt_definition"}
        try:
            exec(compile(d["reference"], "reference", "exec"), self.ns)
        except SyntaxError as e:
            raise Refusal("its reference does not parse: line %s: %s" % (e.lineno, e.msg))
        if not callable(self.ns.get("run")):
            raise Refusal("its reference defines no function run(...)")
        for name, axis in (d.get("axes") or {}).items():
            if axis.get("type") == "const":
                self.axes[name] = int(axis["value"])
            else:
                self.candidates.append(name)
        self.workloads = read_workloads(workloads_path, d.get("name"))
        # The largest workload sets the sizes the import analyses (and the others are cases too).
        first = max(self.workloads, key=lambda w: sorted(w.get("axes", {}).values()), default={})
        for name in self.candidates:
            self.axes[name] = int(first.get("axes", {}).get(name, 64))
        for name, spec in (d.get("inputs") or {}).items():
            if spec.get("shape") is None:
                self.scalars[name] = first.get("inputs", {}).get(name, {}).get("value")

    def build(self, sizes):
        torch.manual_seed(1)
        inputs = []
        for name, spec in self.definition["inputs"].items():
            ours = FLASHINFER_DTYPES.get(spec.get("dtype"))
            if ours is None:
                raise Refusal("input %s has dtype %s, which no kernel argument takes here"
                              % (name, spec.get("dtype")))
            if spec.get("shape") is None:
                value = self.scalars.get(name)
                inputs.append(1e-6 if value is None and ours.startswith("f") else
                              value if value is not None else 1)
                continue
            shape = [sizes[a] if isinstance(a, str) else int(a) for a in spec["shape"]]
            t = TORCH_OF[ours]
            inputs.append(torch.randn(shape).to(t) if t.is_floating_point else
                          torch.randint(0, 16, shape, dtype=t))
        return self.ns["run"], [], inputs, list(self.definition["inputs"])


def read_workloads(path, name):
    out = []
    if not path:
        return out
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        if not line:
            continue
        w = json.loads(line)
        if name and w.get("definition") not in (None, name):
            continue
        out.append(w.get("workload", w))
    return out


def load_problem(job):
    if job["form"] == "flashinfer":
        return FlashInferProblem(job["source"], job.get("workloads"))
    return ModuleProblem(job["source"], job["form"])


# ---- introspection ----

def outputs_of(result):
    if isinstance(result, torch.Tensor):
        return [result]
    if isinstance(result, (tuple, list)) and result and all(isinstance(t, torch.Tensor) for t in result):
        return list(result)
    raise Refusal("forward() returns %s, not a tensor or a tuple of tensors" % type(result).__name__)


def run_at(problem, sizes, meta=False):
    """The model, its weights, inputs, forward's argument names and outputs at these sizes: on
    PyTorch's meta device where asked and it can (shapes only, no memory), else on the CPU."""
    if meta and hasattr(torch.device("meta"), "__enter__"):
        try:
            with torch.device("meta"):
                return run_at(problem, sizes)
        except Exception:
            pass
    call, params, inputs, names = problem.build(sizes)
    with torch.no_grad():
        outputs = outputs_of(call(*inputs))
    return call, params, inputs, names, outputs


def shapes(params, inputs, outputs):
    out = [tuple(t.shape) for _, t in params]
    out += [tuple(x.shape) if isinstance(x, torch.Tensor) else None for x in inputs]
    return out + [tuple(t.shape) for t in outputs]


def dim_expression(axis_values, base, perturbed):
    """A dim's expression: its base value when no axis moves it, else k*a*b... when it follows
    the product of the axes that move it; None when it follows them some other way."""
    movers = [a for a, p in perturbed.items() if p != base]
    if not movers:
        return str(base)
    prod = 1
    for a in movers:
        prod *= axis_values[a]
    if base % prod:
        return None
    k = base // prod
    for a in movers:
        if perturbed[a] != k * prod // axis_values[a] * (axis_values[a] + 1):
            return None
    return "*".join(([str(k)] if k != 1 else []) + movers)


def find_axes(problem, base_shapes):
    """The candidate globals that are sizes: +1 on one moves shapes, each moved dim by a multiple."""
    moved = {}
    for a in problem.candidates:
        sizes = dict(problem.axes)
        sizes[a] += 1
        try:
            r = run_at(problem, sizes, meta=True)
            s = shapes(r[1], r[2], r[4])
        except Exception:
            continue  # cannot vary: a fixed constant
        if len(s) != len(base_shapes) or any((x is None) != (y is None) or (x and len(x) != len(y))
                                             for x, y in zip(s, base_shapes)):
            continue
        if s != base_shapes:
            moved[a] = s
    axes = {}
    for a, s in moved.items():
        ok = all(x is None or all(p == b or dim_expression({a: problem.axes[a]}, b, {a: p})
                                  for b, p in zip(y, x))
                 for x, y in zip(s, base_shapes))
        if ok:
            axes[a] = s
    return axes


def shape_expressions(problem, axes, base_shapes):
    exprs = []
    for i, base in enumerate(base_shapes):
        if base is None:
            exprs.append(None)
            continue
        dims = []
        for d, b in enumerate(base):
            e = dim_expression(problem.axes, b, {a: s[i][d] for a, s in axes.items()})
            dims.append(e if e is not None else str(b))
        exprs.append(dims)
    return exprs


def init_of(t, form):
    """The generator whose values look like t's (or, for a constant, vary around it); FlashInfer's
    own for a definition's random inputs (randn, integers in [-1024, 1024))."""
    if form == "flashinfer":
        return ({"kind": "normal", "mean": 0.0, "stddev": 1.0} if t.is_floating_point() else
                {"kind": "int_range", "low": -128 if t.dtype == torch.int8 else -1024,
                 "high": 127 if t.dtype == torch.int8 else 1023})
    if t.numel() == 0:
        return {"kind": "normal", "mean": 0.0, "stddev": 1.0}
    x = t.detach().to(torch.float64).flatten()
    lo, hi = float(x.min()), float(x.max())
    if not t.is_floating_point():
        return {"kind": "int_range", "low": int(lo), "high": int(hi)}  # both inclusive
    if lo == hi:
        return {"kind": "uniform", "low": lo - 0.5, "high": hi + 0.5}
    mean, std = float(x.mean()), float(x.std()) if x.numel() > 1 else 1.0
    std = 1.0 if abs(std - 1.0) < 0.1 else round(std, 2) or 1.0
    mean = 0.0 if abs(mean) < 0.15 * std else round(mean, 1)
    if x.numel() >= 64 and abs(std - (hi - lo) / math.sqrt(12)) < 0.1 * (hi - lo) / math.sqrt(12):
        return {"kind": "uniform", "low": round_nice(lo, hi - lo, -1), "high": round_nice(hi, hi - lo, 1)}
    return {"kind": "normal", "mean": mean, "stddev": std}


def round_nice(v, span, direction):
    step = 10 ** math.floor(math.log10(span)) / 10 if span > 0 else 1
    return (math.floor if direction < 0 else math.ceil)(v / step) * step


def type_of(t, what):
    if t.dtype not in DTYPES:
        raise Refusal("%s has dtype %s, which no kernel argument takes here (float, integer and "
                      "fp8 types only)" % (what, str(t.dtype).replace("torch.", "")))
    return DTYPES[t.dtype]


def check_forward(problem, sizes):
    """At small sizes, for real: no randomness, no writes to inputs or weights, output shapes that
    follow only the input shapes."""
    call, params, inputs, names, outputs = run_at(problem, sizes)
    before = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
    weights = [t.clone() for _, t in params]
    runs = []
    for seed in (11, 12):
        torch.manual_seed(seed)
        with torch.no_grad():
            runs.append(outputs_of(call(*inputs)))
    for i, (x, y) in enumerate(zip(inputs, before)):
        if isinstance(x, torch.Tensor) and not torch.equal(x, y):
            raise Refusal("forward() writes its input %s in place (an in-place op such as add_ or "
                          "relu_): a kernel's inputs are read-only" % arg_name(names, i))
    for (n, t), w in zip(params, weights):
        if not torch.equal(t, w):
            raise Refusal("forward() changes the module's %s (a BatchNorm in training mode, an "
                          "in-place update): the reference must be a pure function" % n)
    for a, b in zip(*runs):
        if a.shape != b.shape or not torch.equal(a, b):
            raise Refusal("forward() draws random numbers (dropout, torch.rand...): two calls on "
                          "the same inputs differ, so no output can be checked")
    torch.manual_seed(5)
    other = [torch.randn_like(x) * 3 if isinstance(x, torch.Tensor) and x.is_floating_point() else x
             for x in inputs]
    with torch.no_grad():
        again = outputs_of(call(*other))
    for a, b in zip(runs[0], again):
        if a.shape != b.shape:
            raise Refusal("an output's shape depends on the input values (nonzero, masked_select, "
                          "boolean indexing): %s vs %s for the same input shapes"
                          % (list(a.shape), list(b.shape)))
    return params, inputs, runs[0]


def arg_name(names, i):
    return names[i] if i < len(names) and not names[i].startswith("*") else "input%d" % i


def small_sizes(problem, axes):
    out = dict(problem.axes)
    for i, a in enumerate(sorted(axes, key=lambda a: problem.axes[a])):
        out[a] = min(problem.axes[a], SMALL[i % len(SMALL)])
    return out


def holdout_sizes(problem, axes):
    cases = []
    if not axes:
        return cases
    ones = dict(problem.axes)
    for a in axes:
        ones[a] = 1
    odd = dict(problem.axes)
    for a in axes:
        odd[a] = problem.axes[a] - 3 if problem.axes[a] > 8 else problem.axes[a] + 2
    mixed = dict(problem.axes)
    for i, a in enumerate(sorted(axes)):
        mixed[a] = [3, 65, 130][i % 3]
    for sizes in (ones, odd, mixed):
        try:
            run_at(problem, sizes, meta=True)
            cases.append({a: sizes[a] for a in axes})
        except Exception:
            pass
    return cases


def introspect(job):
    problem = load_problem(job)
    try:
        call, params, inputs, names, outputs = run_at(problem, problem.axes, meta=True)
    except Refusal:
        raise
    except Exception as e:
        raise Refusal("building the model or calling forward() raised %s" % short(e))
    base = shapes(params, inputs, outputs)
    axes = find_axes(problem, base)
    exprs = shape_expressions(problem, axes, base)
    if problem.form == "flashinfer":  # the definition names every dim's axis
        specs = list(problem.definition["inputs"].values()) + list(problem.definition["outputs"].values())
        exprs = [None if sp.get("shape") is None else [str(a) for a in sp["shape"]] for sp in specs]
    small = small_sizes(problem, axes)
    try:
        run_at(problem, small)
    except Exception:
        small = dict(problem.axes)  # the sizes depend on each other: check at the file's own
    try:
        params_s, inputs_s, outputs_s = check_forward(problem, small)
    except Refusal:
        raise
    except Exception as e:
        raise Refusal("forward() at sizes %s raised %s" % (small, short(e)))
    if sum(x.numel() for x in inputs if isinstance(x, torch.Tensor)) <= 1 << 26:
        params_s, inputs_s = problem.build(problem.axes)[1:3]  # the file's own values, no call
    weights, args, k = [], [], 0
    for (n, t), (_, ts) in zip(params, params_s):
        weights.append({"name": n, "key": n, "role": "parameter", "dtype": type_of(t, "parameter " + n),
                     "shape": exprs[k], "init": init_of(ts, problem.form)})
        k += 1
    for i, (x, xs) in enumerate(zip(inputs, inputs_s)):
        name = arg_name(names, i)
        if isinstance(x, torch.Tensor):
            args.append({"name": name, "role": "input", "dtype": type_of(x, "input " + name),
                         "shape": exprs[k], "init": init_of(xs, problem.form)})
        elif isinstance(x, bool) or not isinstance(x, (int, float)):
            raise Refusal("get_inputs() gives %s for %s: tensors, ints and floats only"
                          % (type(x).__name__, name))
        else:
            args.append({"name": name, "role": "scalar", "dtype": "i64" if isinstance(x, int) else "f32",
                         "value": x})
        k += 1
    args += weights  # forward's arguments, then the module's weights
    outs = []
    for i, t in enumerate(outputs):
        what = "output %d" % i
        if t.dtype == torch.bool:
            raise Refusal("%s is a bool tensor, which no kernel argument takes here" % what)
        outs.append({"name": "out" if len(outputs) == 1 else "out%d" % i,
                     "dtype": type_of(t, what), "shape": exprs[k]})
        k += 1
    if problem.form == "flashinfer":
        fi_names = list(problem.definition.get("outputs") or {})
        if len(fi_names) == len(outs):
            for o, n in zip(outs, fi_names):
                o["name"] = n
    return {"form": problem.form, "entry": problem.entry,
            "axes": [{"name": a, "value": problem.axes[a], "small": small[a]} for a in axes] +
                    [{"name": a, "value": v, "small": v, "const": True} for a, v in problem.axes.items()
                     if problem.form == "flashinfer" and a not in axes],
            "fixed": {a: v for a, v in problem.axes.items() if a not in axes},
            "args": args, "outputs": outs, "holdout": holdout_sizes(problem, axes),
            "workloads": [{a: int(v) for a, v in w.get("axes", {}).items()} for w in problem.workloads],
            "torch": torch.__version__}


# ---- the oracle ----

def read_tensor(path, ours, shape, device):
    data = bytearray(open(path, "rb").read())
    t = torch.frombuffer(data, dtype=TORCH_OF[ours]) if data else torch.empty(0, dtype=TORCH_OF[ours])
    want = 1
    for d in shape:
        want *= d
    if t.numel() != want:
        raise RuntimeError("%s holds %d elements, the shape %s needs %d" % (path, t.numel(), shape, want))
    return t.reshape(shape).to(device)


def tensor_bytes(t):
    t = t.detach().contiguous().cpu()
    try:
        return t.view(torch.uint8).numpy().tobytes()
    except Exception:
        return bytes(t.view(torch.uint8).tolist())


def oracle(job):
    problem = load_problem(job)
    device = job.get("device", "cpu")
    if device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    done = []
    for case in job["cases"]:
        sizes = dict(problem.axes)
        sizes.update(case["axes"])
        call, params, inputs, names = problem.build(sizes)
        if hasattr(call, "to"):
            call = call.to(device)
        values = {a["key"]: a for a in case["args"] if a["role"] == "parameter"}
        for n, t in (list(call.named_parameters()) + list(call.named_buffers()) if params else []):
            a = values[n]
            t.data.copy_(read_tensor(a["file"], a["dtype"], a["shape"], device))
        feed = []
        for a in case["args"]:
            if a["role"] == "input":
                feed.append(read_tensor(a["file"], a["dtype"], a["shape"], device))
            elif a["role"] == "scalar":
                feed.append(a["value"])
        with torch.no_grad():
            outs = outputs_of(call(*feed))
        if len(outs) != len(case["outputs"]):
            raise RuntimeError("forward() returned %d outputs, the import found %d"
                               % (len(outs), len(case["outputs"])))
        for t, o in zip(outs, case["outputs"]):
            if list(t.shape) != list(o["shape"]) or DTYPES.get(t.dtype) != o["dtype"]:
                raise RuntimeError("case %s: forward() returned %s %s for %s, the import said %s %s"
                                   % (case["name"], DTYPES.get(t.dtype, str(t.dtype)), list(t.shape),
                                      o["name"], o["dtype"], o["shape"]))
            with open(o["file"], "wb") as f:
                f.write(tensor_bytes(t))
        done.append(case["name"])
    return {"cases": done, "device": device, "torch": torch.__version__}


# ---- the baseline: PyTorch eager or torch.compile, timed by cuda-optimizer's rules ----

def fill(t, init):
    """Fresh values in place, drawn as the manifest's generator draws them (PyTorch's own stream:
    the values a baseline sees do not need to be the candidates', only alike)."""
    kind = init.get("kind")
    if not t.is_floating_point():
        t.random_(int(init.get("low", 0)), int(init.get("high", 15)) + 1)
    elif kind == "normal":
        t.normal_(init.get("mean", 0.0), init.get("stddev", 1.0))
    elif kind == "constant":
        t.fill_(init.get("value", 1.0))
    else:
        t.uniform_(init.get("low", -1.0), init.get("high", 1.0))


def time_case(call, feed, tensors, job, device):
    """Per-launch times (ms): warm-up launches, then each timed launch on fresh inputs (untimed
    refill), after an untimed read of twice the L2 cache (a cold cache of clean lines, as the
    harness's flush: a write, KernelBench's, would leave dirty lines whose write-back the timed
    launch pays, some microseconds the candidates' times do not carry). The start event
    follows that read in the stream, so the Python dispatch of forward's first kernel overlaps
    it (as in KernelBench's recipe): the time is the GPU's, as a kernel's is."""
    cuda = device == "cuda"
    flush = None
    if cuda and job.get("flush_l2", True):
        l2 = getattr(torch.cuda.get_device_properties(torch.cuda.current_device()), "L2_cache_size", 0)
        flush = torch.empty(max(2 * l2, 1 << 20), dtype=torch.uint8, device=device)
    samples = []
    with torch.no_grad():
        for i in range(job["warmup"] + job["iterations"]):
            if job.get("fresh_inputs", True):
                for t, init in tensors:
                    fill(t, init)
            if cuda:
                torch.cuda.synchronize()
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                if flush is not None:
                    torch.sum(flush, dtype=torch.int64)  # in flight while forward is dispatched
                start.record()
                call(*feed)
                end.record()
                end.synchronize()
                ms = start.elapsed_time(end)
            else:
                import time
                t0 = time.perf_counter()
                call(*feed)
                ms = (time.perf_counter() - t0) * 1000
            if i >= job["warmup"]:
                samples.append(ms)
    return samples


def timing(job):
    problem = load_problem(job)
    device = job.get("device", "cpu")
    if device == "cuda":
        torch.cuda.set_device(int(job.get("gpu", 0)))
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    out = []
    for case in job["cases"]:
        sizes = dict(problem.axes)
        sizes.update(case["axes"])
        call, params, inputs, names = problem.build(sizes)
        if hasattr(call, "to"):
            call = call.to(device)
        if job["mode"] == "compile":
            call = torch.compile(call)
        feed, tensors = [], []
        for a in case["args"]:
            if a["role"] == "scalar":
                feed.append(a["value"])
            elif a["role"] == "input":
                t = torch.empty(a["shape"], dtype=TORCH_OF[a["dtype"]], device=device)
                fill(t, a["init"])
                feed.append(t)
                tensors.append((t, a["init"]))
        out.append({"name": case["name"], "samples_ms": time_case(call, feed, tensors, job, device)})
    name = torch.cuda.get_device_name() if device == "cuda" else "cpu"
    return {"cases": out, "device": name, "torch": torch.__version__, "mode": job["mode"]}


def tail(path, limit=3000):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()[-limit:]
    except OSError:
        return ""


def step(args, log, timeout):
    """One step of the package's own: a child of this (confined) interpreter, its output in
    LOG; its exit status, or None when it ran past TIMEOUT seconds. The child sees no GPU (it
    needs none: the architectures are named), so PyTorch does not warn that CUDA failed to
    start where the sandbox's rules, made for this process, refuse a child's driver."""
    import subprocess
    import time

    started = time.monotonic()
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    with open(log, "w", encoding="utf-8") as f:
        try:
            rc = subprocess.run([sys.executable] + args, stdout=f, stderr=subprocess.STDOUT,
                                timeout=timeout, check=False, env=env).returncode
        except subprocess.TimeoutExpired:
            rc = None
    return rc, time.monotonic() - started


def in_process(path, args, log):
    """Runs a script of the package in this process (its exit status): CUDA works here, in the
    process the sandbox was made for (its rules name this process's own /proc entries, which a
    child's are not)."""
    import contextlib
    import runpy
    import traceback

    saved = list(sys.argv), list(sys.path)
    with open(log, "w", encoding="utf-8") as f, contextlib.redirect_stdout(f), \
            contextlib.redirect_stderr(f):
        sys.argv = [path] + args
        try:
            runpy.run_path(path, run_name="__main__")
            rc = 0
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:  # noqa: BLE001 - the script's failure, reported in its log
            traceback.print_exc()
            rc = 1
    sys.argv, sys.path[:] = saved
    return rc


def verify(job):
    """Builds the exported package here (setup.py build_ext --inplace, a child: it needs no
    GPU), then runs its test and its timing script in this process; what each said."""
    import time

    os.environ.setdefault("MAX_JOBS", str(max(1, min(8, (os.cpu_count() or 2) // 2))))
    result = {"torch": torch.__version__, "cuda": torch.cuda.is_available()}
    rc, seconds = step(["setup.py", "build_ext", "--inplace"], "build.log",
                       job["build_timeout_s"])
    result["build"] = {"rc": rc, "seconds": seconds, "log_tail": tail("build.log")}
    if rc != 0:
        return result
    started = time.monotonic()
    rc = in_process(job["test"], [], "test.log")
    result["test"] = {"rc": rc, "seconds": time.monotonic() - started,
                      "log_tail": tail("test.log")}
    started = time.monotonic()
    rc = in_process("bench.py", ["--json", "bench.json"], "bench.log")
    result["bench"] = {"rc": rc, "seconds": time.monotonic() - started,
                       "log_tail": tail("bench.log")}
    if rc == 0:
        with open("bench.json", encoding="utf-8") as f:
            result["bench"]["figures"] = json.load(f)
    return result


def main():
    mode, job_path, out_path = sys.argv[1:4]
    with open(job_path, encoding="utf-8") as f:
        job = json.load(f)
    try:
        result = {"introspect": introspect, "oracle": oracle, "time": timing,
                  "verify": verify}[mode](job)
    except Refusal as e:
        result = {"refused": str(e)}
    except Exception as e:
        result = {"error": short(e)}
    with open(out_path + ".part", "w", encoding="utf-8") as f:
        json.dump(result, f)
    os.replace(out_path + ".part", out_path)


if __name__ == "__main__":
    main()
