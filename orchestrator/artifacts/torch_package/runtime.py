"""The runtime of a package written by `cuda-optimizer export --torch` (the same file in every
package): loads the compiled op, registers its fake implementation so that torch.compile traces
through it, and reads export.json, which says how the op's arguments map onto the run's
manifest, the cases the run checked and timed, and their tolerances. The package's test and
timing script build their inputs here too, so all three read the op the same way."""
import ast
import glob
import json
import math
import os
import sys
import warnings
from fractions import Fraction

import torch

FLOAT8 = ("float8_e4m3fn", "float8_e5m2")


def dtype_of(name):
    return getattr(torch, name)


def evaluate(text, params):
    """A manifest expression ("ceil(n/4)*k") in exact rationals, as the run computed it."""

    def ev(n):
        if isinstance(n, ast.Expression):
            return ev(n.body)
        if isinstance(n, ast.Constant) and type(n.value) is int:
            return Fraction(n.value)
        if isinstance(n, ast.Name):
            return Fraction(int(params[n.id]))
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd)):
            v = ev(n.operand)
            return -v if isinstance(n.op, ast.USub) else v
        if isinstance(n, ast.BinOp):
            a, b = ev(n.left), ev(n.right)
            if isinstance(n.op, ast.Add):
                return a + b
            if isinstance(n.op, ast.Sub):
                return a - b
            if isinstance(n.op, ast.Mult):
                return a * b
            if isinstance(n.op, ast.Div):
                return a / b
            if isinstance(n.op, ast.Mod) and a.denominator == 1 and b.denominator == 1:
                return Fraction(int(a) % int(b))
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and not n.keywords:
            args = [ev(a) for a in n.args]
            functions = {"ceil": lambda v: Fraction(math.ceil(v)),
                         "floor": lambda v: Fraction(math.floor(v)),
                         "abs": abs, "min": min, "max": max}
            if n.func.id in functions:
                return functions[n.func.id](*args)
        raise ValueError(f"not a manifest expression: {text!r}")

    value = ev(ast.parse(text, mode="eval"))
    if value.denominator != 1:
        raise ValueError(f"{text} = {value} is not a whole number")
    return int(value)


def args_by_name(export):
    return {a["name"]: a for a in export["args"]}


def params_of(export, named):
    """The case parameters, read where the op reads them: a tensor's dimension or an int."""
    params = {}
    for name, source in export["param_sources"].items():
        value = named[source["arg"]]
        params[name] = value.shape[source["dim"]] if source["dim"] >= 0 else int(value)
    return params


def shape_of(arg, params):
    if arg.get("shape") is not None:
        return [params[d] if d in params else int(d) for d in arg["shape"]]
    return [evaluate(arg["count"], params)]


def outputs_of(export):
    return [a for a in export["args"] if a["kind"] == "output"]


def results_of(export, result, args):
    """What a call produced, (manifest argument, tensor) each: the returned outputs, then the
    inout tensors it changed in place (among its positional `args`)."""
    pairs = list(zip(outputs_of(export), as_list(result)))
    by_name = args_by_name(export)
    for name, value in zip(export["op_args"], args):
        arg = by_name.get(name)
        if arg is not None and arg["kind"] == "inout":
            pairs.append((arg, value))
    return pairs


def make_fake(export):
    op_args = export["op_args"]

    def fake(*args, **kwargs):
        named = dict(zip(op_args, args))
        named.update(kwargs)
        params = params_of(export, named)
        tensors = [v for v in named.values() if isinstance(v, torch.Tensor)]
        device = tensors[0].device if tensors else torch.device("cuda")
        outs = [torch.empty(shape_of(a, params), dtype=dtype_of(a["dtype"]), device=device)
                for a in outputs_of(export)]
        if not outs:
            return None
        return outs[0] if len(outs) == 1 else tuple(outs)

    return fake


def register_fake(qualname, fn):
    """The fake (meta) implementation torch.compile traces with; False on a PyTorch too old
    to have one (before 2.2), where the op still runs eagerly."""
    library = torch.library
    register = getattr(library, "register_fake", None) or getattr(library, "impl_abstract", None)
    if register is None:
        return False
    register(qualname)(fn)
    return True


def load_library(package_dir, name):
    found = sorted(glob.glob(os.path.join(package_dir, name + ".*so")) +
                   glob.glob(os.path.join(package_dir, name + ".*pyd")))
    if not found:
        raise ImportError(
            f"{os.path.basename(package_dir)}: its compiled op ({name}) is not built: run "
            "`pip install --no-build-isolation .` or `python setup.py build_ext --inplace` "
            "in the package's folder")
    torch.ops.load_library(found[0])


def read_export(package_dir):
    with open(os.path.join(package_dir, "export.json"), encoding="utf-8") as f:
        return json.load(f)


def make_replace(export, op):
    def replace(model):
        module = export.get("module")
        if not module:
            raise TypeError(
                f"cuda_optimizer::{export['op']} comes from a CUDA problem, not an imported "
                "PyTorch module: call the op itself")
        return replace_forward(model, export, op)

    return replace


def replace_forward(model, export, op):
    """Swaps `model.forward` for the op: forward's own arguments, then the module's weights
    by their attribute names, as the import mapped them onto the manifest."""
    module = export["module"]
    by_arg = {a["arg"]: a for a in module["args"]}

    def forward(*args):
        named = dict(zip(module["forward"], args))  # forward's own names
        call = []
        for name in export["op_args"]:
            source = by_arg.get(name)
            if source is None:
                raise TypeError(f"cuda_optimizer::{export['op']}: no value for {name}")
            if source["from"] == "forward":
                value = named[source["key"]]
            else:
                value = model
                for part in source["key"].split("."):
                    value = getattr(value, part)
            call.append(value.contiguous() if isinstance(value, torch.Tensor) else value)
        return op(*call)

    model.forward = forward
    return model


def load_package(module_name):
    package_dir = os.path.dirname(os.path.abspath(sys.modules[module_name].__file__))
    export = read_export(package_dir)
    if export["run"].get("forced"):
        warnings.warn(
            f"cuda_optimizer::{export['op']} was exported with --force: the run's verdict is "
            f"{export['run']['verdict']}, not go", stacklevel=2)
    load_library(package_dir, "_C")
    register_fake(f"cuda_optimizer::{export['op']}", make_fake(export))
    op = getattr(torch.ops.cuda_optimizer, export["op"])
    return op, make_replace(export, op), export


def load_reference(module_name):
    """The run's reference kernel as cuda_optimizer::OP_reference (CUDA problems only)."""
    package_dir = os.path.dirname(os.path.abspath(sys.modules[module_name].__file__))
    export = read_export(package_dir)
    load_library(package_dir, "_reference")
    return getattr(torch.ops.cuda_optimizer, export["reference_op"])


def fill(arg, shape, generator):
    """Random values drawn the way the manifest draws this input (not its values)."""
    init = arg.get("init") or {"kind": "uniform", "low": -1.0, "high": 1.0}
    kind = init["kind"]
    count = math.prod(shape)
    if kind == "normal":
        v = torch.randn(shape, generator=generator) * init["stddev"] + init["mean"]
    elif kind == "int_range":
        v = torch.randint(int(init["low"]), int(init["high"]) + 1, shape, generator=generator)
    elif kind == "sequence":
        v = (init["start"] + init["step"] * torch.arange(count, dtype=torch.float64)).reshape(shape)
    elif kind == "constant":
        v = torch.full(shape, float(init["value"]))
    else:
        low, high = init.get("low", -1.0), init.get("high", 1.0)
        v = torch.rand(shape, generator=generator) * (high - low) + low
    dtype = dtype_of(arg["dtype"])
    if not dtype.is_floating_point:
        v = v.round()
    return v.to(dtype)


def call_args(export, params, device, seed=0):
    """The op's positional arguments for a case with these parameters: fresh random tensors."""
    generator = torch.Generator().manual_seed(seed)
    args = args_by_name(export)
    free = {s["arg"]: p for p, s in export["param_sources"].items() if s["dim"] < 0}
    call = []
    for name in export["op_args"]:
        arg = args.get(name)
        if arg is None:
            call.append(int(params[free[name]]))
        elif arg["kind"] in ("input", "inout"):
            call.append(fill(arg, shape_of(arg, params), generator).to(device))
        elif arg["float"]:
            call.append(float(arg["value"]))
        else:
            call.append(evaluate(arg["value"], params))
    return call


def as_list(result):
    if result is None:
        return []
    return list(result) if isinstance(result, (tuple, list)) else [result]


def mismatches(out, ref, tol):
    """Elements of `out` outside the run's tolerance of `ref`: |x - r| <= atol + rms_atol *
    rms(r) + rtol * |r| (both NaN counts as equal), and the worst difference."""
    x, r = out.detach().to(torch.float64).cpu(), ref.detach().to(torch.float64).cpu()
    if x.shape != r.shape and x.numel() == r.numel():
        r = r.reshape(x.shape)  # a module's output, the op's flat or factored shape
    if x.shape != r.shape:
        return x.numel() or 1, float("inf")
    finite = torch.isfinite(r)
    rms = float(r[finite].pow(2).mean().sqrt()) if bool(finite.any()) else 0.0
    bound = tol["atol"] + tol["rms_atol"] * rms + tol["rtol"] * r.abs()
    diff = (x - r).abs()
    ok = (diff <= bound) | (torch.isnan(x) & torch.isnan(r)) | (x == r)
    worst = float(diff[~ok].max()) if bool((~ok).any()) else 0.0
    return int((~ok).sum()), worst
