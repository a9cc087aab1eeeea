"""The exported op against the run's own reference, on random inputs drawn like the manifest's,
at every case the run checked and every holdout shape, held to the run's tolerances; its
argument checks; and the op under torch.compile. Written by `cuda-optimizer export --torch`.
Runs under pytest or alone: python tests/test_OP.py (exit 0: passed or skipped, no GPU)."""
import glob
import importlib
import os
import sys

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.append(ROOT)  # an installed package first, else the one built here (--inplace)
PACKAGE = os.path.basename(os.path.dirname(glob.glob(os.path.join(ROOT, "cuopt_*", "export.json"))[0]))


class Skip(Exception):
    pass


def need_gpu():
    if not torch.cuda.is_available():
        message = "no CUDA device: the op runs on the GPU only"
        try:
            import pytest

            pytest.skip(message)
        except ImportError:
            raise Skip(message)


def package():
    need_gpu()
    return importlib.import_module(PACKAGE)


def reference_of(pkg):
    """The run's oracle as reference(args, params): its reference kernel (a CUDA problem) or
    the problem's own PyTorch module (an imported one)."""
    runtime = importlib.import_module(PACKAGE + "._runtime")
    if pkg.EXPORT.get("reference_op"):
        op = runtime.load_reference(PACKAGE)
        return lambda args, params: op(*args)
    if pkg.EXPORT.get("module"):
        return module_reference(pkg.EXPORT)
    raise AssertionError("export.json names no reference")


def module_reference(export, runtime=None):
    """An imported problem's module, built at the case's sizes as the run built it, its
    weights the op's tensors, called on the op's inputs."""
    module = export["module"]
    runtime = runtime or importlib.import_module(PACKAGE + "._runtime")
    path = os.path.join(ROOT, PACKAGE, "reference.py")
    with open(path, encoding="utf-8") as f:
        code = compile(f.read(), path, "exec")

    def call(args, params):
        ns = {"__name__": "cuopt_reference", "__file__": path}
        exec(code, ns)
        ns.update({axis: int(params[axis]) for axis in module["axes"] if axis in params})
        named = dict(zip(export["op_args"], args))
        torch.manual_seed(0)
        if module["form"] == "kernelbench":
            init = ns["get_init_inputs"]() if callable(ns.get("get_init_inputs")) else []
            tensors = [v for v in named.values() if isinstance(v, torch.Tensor)]
            model = ns["Model"](*init).to(tensors[0].device if tensors else "cuda")
            for a in module["args"]:
                if a["from"] == "module":
                    target = model
                    for part in a["key"].split("."):
                        target = getattr(target, part)
                    target.data.copy_(named[a["arg"]].reshape(target.shape))
            forward = model
        else:
            forward = ns["forward"]
        by_key = {a["key"]: a["arg"] for a in module["args"] if a["from"] == "forward"}
        by_name = runtime.args_by_name(export)

        def value(key):  # an argument the op computes from the sizes is the manifest's value
            name = by_key[key]
            if name in named:
                return named[name]
            arg = by_name[name]
            return float(arg["value"]) if arg["float"] else runtime.evaluate(arg["value"], params)

        with torch.no_grad():
            return forward(*[value(k) for k in module["forward"]])

    return call


def test_matches_reference():
    pkg = package()
    runtime = importlib.import_module(PACKAGE + "._runtime")
    reference = reference_of(pkg)
    failed = []
    for i, case in enumerate(pkg.EXPORT["cases"]):
        args = runtime.call_args(pkg.EXPORT, case["params"], "cuda", seed=i + 1)
        theirs = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
        got = runtime.results_of(pkg.EXPORT, pkg.op(*args), args)
        want = runtime.results_of(pkg.EXPORT, reference(theirs, case["params"]), theirs)
        torch.cuda.synchronize()
        for (arg, x), (_, r) in zip(got, want):
            bad, worst = runtime.mismatches(x, r, case["tolerance"][arg["name"]])
            print(f"{case['kind']:12} {case['name']:32} {arg['name']}: "
                  f"{'ok' if bad == 0 else f'{bad} element(s) off, worst {worst:.3g}'}")
            if bad:
                failed.append(f"{case['name']}.{arg['name']}: {bad} element(s), worst {worst:.3g}")
    assert not failed, "outputs outside the run's tolerance: " + "; ".join(failed)


def test_checks_name_the_argument():
    pkg = package()
    runtime = importlib.import_module(PACKAGE + "._runtime")
    case = pkg.EXPORT["cases"][0]
    args = runtime.call_args(pkg.EXPORT, case["params"], "cuda", seed=1)
    tensors = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor)]
    if not tensors:
        return
    i = tensors[0]
    name = pkg.EXPORT["op_args"][i]
    for wrong in (args[i].cpu(), args[i].to(torch.float64 if args[i].dtype != torch.float64
                                                  else torch.float32)):
        bad = list(args)
        bad[i] = wrong
        try:
            pkg.op(*bad)
        except RuntimeError as e:
            assert name in str(e), f"the error does not name {name}: {e}"
        else:
            raise AssertionError(f"the op took {name} as {wrong.device} {wrong.dtype}")


def test_torch_compile():
    pkg = package()
    if not hasattr(torch, "compile"):
        raise Skip(f"PyTorch {torch.__version__} has no torch.compile")
    runtime = importlib.import_module(PACKAGE + "._runtime")
    case = next((c for c in pkg.EXPORT["cases"] if c["kind"] == "performance"),
                pkg.EXPORT["cases"][0])
    args = runtime.call_args(pkg.EXPORT, case["params"], "cuda", seed=7)
    compiled = torch.compile(lambda *a: pkg.op(*a), fullgraph=True)
    theirs = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    got = runtime.results_of(pkg.EXPORT, compiled(*theirs), theirs)
    want = runtime.results_of(pkg.EXPORT, pkg.op(*args), args)
    for (arg, x), (_, r) in zip(got, want):
        bad, worst = runtime.mismatches(x, r, case["tolerance"][arg["name"]])
        assert bad == 0, f"under torch.compile {arg['name']} differs: {bad} element(s), worst {worst}"
    print(f"torch.compile(fullgraph=True) {case['name']}: ok")


def main():
    failed = 0
    for name, test in sorted((n, f) for n, f in globals().items() if n.startswith("test_")):
        try:
            test()
            print(f"PASS {name}")
        except Skip as e:
            print(f"SKIP {name}: {e}")
        except Exception as e:  # noqa: BLE001 - every failure is reported, then the next test
            failed += 1
            print(f"FAIL {name}: {type(e).__name__}: {e}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
