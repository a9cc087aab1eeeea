#include "orchestrator/artifacts/torch_export.hpp"

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>
#include <sstream>

#include "common/json_builder.hpp"
#include "common/message_text.hpp"
#include "orchestrator/artifacts/torch_op_code.hpp"
#include "orchestrator/contract/integer_expression.hpp"

// The package's Python: the same files in every package (they read export.json).
extern const unsigned char torch_package_runtime_py[];
extern const std::size_t torch_package_runtime_py_size;
extern const unsigned char torch_package_test_py[];
extern const std::size_t torch_package_test_py_size;
extern const unsigned char torch_package_bench_py[];
extern const std::size_t torch_package_bench_py_size;

namespace cuopt {

namespace {

std::string embedded(const unsigned char* data, std::size_t size) {
    return std::string(reinterpret_cast<const char*>(data), size);
}

// ---- export.json: what the Python side (fake implementation, test, timing) reads ----

rapidjson::Value init_json(const input_init& init, json_allocator& a) {
    json_object o(a);
    if (init.file) return o.add("kind", "file").take();
    const generator_spec& g = init.generator;
    o.add("kind", std::string(k_generator_kinds.name(g.kind)));
    switch (g.kind) {
        case generator_kind::uniform:
        case generator_kind::int_range:
            o.add("low", g.low).add("high", g.high);
            break;
        case generator_kind::normal:
            o.add("mean", g.mean).add("stddev", g.stddev);
            break;
        case generator_kind::sequence:
            o.add("start", g.start).add("step", g.step);
            break;
        case generator_kind::constant:
            o.add("value", g.value);
            break;
    }
    return o.take();
}

const char* kind_name(arg_kind k) {
    switch (k) {
        case arg_kind::input:
            return "input";
        case arg_kind::output:
            return "output";
        case arg_kind::inout:
            return "inout";
        case arg_kind::scalar:
            break;
    }
    return "scalar";
}

rapidjson::Value args_json(const op_binding& b, const manifest& m, json_allocator& a) {
    json_array args(a);
    for (const manifest_arg& arg : m.args) {
        json_object o(a);
        o.add("name", arg.name).add("kind", kind_name(arg.kind));
        o.add("dtype", std::string(torch_type_of(arg.type)->python));
        if (arg.is_buffer()) {
            o.add("count", arg.count);
            const auto s = b.shape.find(arg.name);
            o.add("shape", s != b.shape.end() ? json_value(s->second, a) : rapidjson::Value());
            if (arg.has_input()) o.add("init", init_json(m.init_for(m.cases.front(), arg), a));
        } else {
            o.add("value", arg.value).add("float", arg.value_is_number);
        }
        args.push(o.take());
    }
    return args.take();
}

rapidjson::Value cases_json(const manifest& m, const export_facts& f, json_allocator& a) {
    json_array cases(a);
    for (const export_case& c : f.cases) {
        json_object tol(a);
        for (const manifest_arg& arg : m.args) {
            if (!arg.has_output()) continue;
            const tolerance t = arg.tolerance_in(c.params);
            tol.add(arg.name, json_object(a)
                                  .add("atol", t.atol)
                                  .add("rtol", t.rtol)
                                  .add("rms_atol", t.rms_atol)
                                  .take());
        }
        cases.push(json_object(a)
                       .add("name", c.name)
                       .add("kind", c.kind)
                       .add("params", c.params)
                       .add("run_median_ms", c.run_median_ms > 0 ? json_value(c.run_median_ms, a)
                                                                 : rapidjson::Value())
                       .add("tolerance", tol.take())
                       .take());
    }
    return cases.take();
}

rapidjson::Value module_json(const export_module& mod, json_allocator& a) {
    json_array args(a);
    for (const export_module::mapped& m : mod.args)
        args.push(json_object(a).add("arg", m.arg).add("from", m.from).add("key", m.key).take());
    return json_object(a)
        .add("form", mod.form)
        .add("source", "reference.py")
        .add("axes", mod.axes)
        .add("forward", mod.forward)
        .add("args", args.take())
        .take();
}

std::string export_json(const exported_kernel& k, bool reference, const op_binding& b,
                        const manifest& m, const export_facts& f) {
    rapidjson::Document doc;
    json_allocator& a = doc.GetAllocator();
    json_object top(doc);
    json_object sources(a);
    for (const auto& [p, s] : b.source)
        sources.add(p, json_object(a).add("arg", s.arg).add("dim", s.dim).take());
    std::vector<std::string> op_args;
    for (const manifest_arg* t : b.tensors) op_args.push_back(t->name);
    for (const manifest_arg* s : b.ints) op_args.push_back(s->name);
    for (const std::string& p : b.free) op_args.push_back(b.source.at(p).arg);
    for (const manifest_arg* s : b.floats) op_args.push_back(s->name);
    top.add("schema_version", 1)
        .add("op", k.entry)
        .add("reference_op", reference ? json_value(k.entry + "_reference", a) : rapidjson::Value())
        .add("schema", k.entry + schema_of(b))
        .add("params", b.params)
        .add("param_sources", sources.take())
        .add("op_args", op_args)
        .add("args", args_json(b, m, a))
        .add("cases", cases_json(m, f, a))
        .add("module", f.module ? module_json(*f.module, a) : rapidjson::Value())
        .add("run", json_object(a)
                        .add("verdict", f.verdict)
                        .add("verdict_line", f.verdict_line)
                        .add("speedup", f.speedup)
                        .add("low", f.low)
                        .add("high", f.high)
                        .add("gpu", f.gpu)
                        .add("arch", k.arch)
                        .add("date", f.date)
                        .add("run_dir", f.run_dir)
                        .add("tool", f.tool_version)
                        .add("forced", f.forced)
                        .take());
    return to_pretty_json(doc) + "\n";
}

// ---- the build, the package's Python and its README ----

// "sm_90a" -> "9.0a": TORCH_CUDA_ARCH_LIST's spelling.
std::string torch_arch(const std::string& arch) {
    std::string digits = arch.substr(3), suffix;
    while (!digits.empty() && !std::isdigit(static_cast<unsigned char>(digits.back()))) {
        suffix.insert(suffix.begin(), digits.back());
        digits.pop_back();
    }
    if (digits.size() < 2) return arch;
    return digits.substr(0, digits.size() - 1) + "." + digits.back() + suffix;
}

// "cuopt-matmul-f32": the distribution's name (PEP 508: no trailing separator).
std::string distribution_name(const std::string& entry) {
    std::string name = "cuopt-" + entry;
    std::replace(name.begin(), name.end(), '_', '-');
    while (name.back() == '-') name.pop_back();
    return name;
}

std::string python_list(const std::vector<std::string>& words) {
    std::string out = "[";
    for (const std::string& w : words) out += (out.size() > 1 ? ", " : "") + ("\"" + w + "\"");
    return out + "]";
}

std::string setup_py(const exported_kernel& k, const std::optional<exported_kernel>& reference) {
    const std::string pkg = "cuopt_" + k.entry;
    std::ostringstream o;
    o << "# setup.py: generated by cuda-optimizer export. Builds " << pkg << " with\n"
      << "# torch.utils.cpp_extension against the PyTorch already installed:\n"
      << "#   pip install --no-build-isolation .      (or: python setup.py build_ext --inplace)\n"
      << "import os\n\nfrom setuptools import setup\n"
      << "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n\n"
      << "# The run's GPU (" << k.arch << "): SASS and PTX for it (a newer GPU compiles sm_XY's\n"
      << "# PTX at load; an architecture-specific sm_XYa's runs on that architecture only).\n"
      << "os.environ.setdefault(\"TORCH_CUDA_ARCH_LIST\", \"" << torch_arch(k.arch) << "+PTX\")\n"
      << "# The options the run compiled the winner with (NVRTC's; nvcc takes the same words).\n"
      << "OPTIONS = " << python_list(k.compile_options) << "\n";
    if (reference) o << "REFERENCE_OPTIONS = " << python_list(reference->compile_options) << "\n";
    o << "\n\ndef extension(name, prefix, options):\n"
      << "    return CUDAExtension(\n        name,\n"
      << "        [f\"csrc/{prefix}_op.cpp\", f\"csrc/{prefix}_kernel.cu\"],\n"
      << "        extra_compile_args={\"cxx\": [\"-O2\", \"-std=c++17\"],\n"
      << "                            \"nvcc\": [\"-O3\", \"-std=c++17\"] + options},\n    )\n\n\n"
      << "EXTENSIONS = [extension(\"" << pkg << "._C\", \"" << k.entry << "\", OPTIONS)]\n";
    if (reference)
        o << "# The run's reference, as its oracle: only the package's test calls it.\n"
          << "EXTENSIONS.append(extension(\"" << pkg << "._reference\", \"" << k.entry
          << "_reference\", REFERENCE_OPTIONS))\n";
    o << "\nsetup(\n    name=\"" << distribution_name(k.entry) << "\",\n    version=\"1.0.0\",\n"
      << "    packages=[\"" << pkg << "\"],\n    package_data={\"" << pkg
      << "\": [\"export.json\"]},\n"
      << "    ext_modules=EXTENSIONS,\n    cmdclass={\"build_ext\": BuildExtension},\n)\n";
    return o.str();
}

std::string pyproject(const exported_kernel& k) {
    return "# generated by cuda-optimizer export: build with the PyTorch you run it with\n"
           "#   pip install --no-build-isolation .\n"
           "[build-system]\nrequires = [\"setuptools>=61\", \"torch\"]\n"
           "build-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"" +
           distribution_name(k.entry) +
           "\"\nversion = \"1.0.0\"\ndescription = \"The cuda-optimizer winner " + k.entry +
           " as the PyTorch op cuda_optimizer::" + k.entry +
           "\"\nrequires-python = \">=3.8\"\ndependencies = [\"torch\"]\n";
}

std::string init_py(const exported_kernel& k) {
    return "\"\"\"cuda_optimizer::" + k.entry +
           ", exported by cuda-optimizer: see README.md and export.json.\n\n"
           "    from cuopt_" +
           k.entry + " import " + k.entry + "\n    out = " + k.entry +
           "(...)   # torch.ops.cuda_optimizer." + k.entry +
           "\n\"\"\"\nfrom ._runtime import load_package\n\n" + k.entry +
           ", replace, EXPORT = load_package(__name__)\nop = " + k.entry + "\n__all__ = [\"" +
           k.entry + "\", \"op\", \"replace\", \"EXPORT\"]\n";
}

// A value from the run folder in a Markdown code span: nothing in it can start markup, and a
// '|' cannot end a table cell.
std::string md_code(const std::string& text) {
    std::string out = "`";
    for (char c : comment_line(text)) {
        if (c == '`') c = '\'';
        if (c == '|') out += '\\';
        out += c;
    }
    return out + "`";
}

std::string readme(const exported_kernel& k, const op_binding& b, const manifest& m,
                   const export_facts& f, bool reference) {
    std::ostringstream o;
    o << "# cuda_optimizer::" << k.entry << "\n\n";
    if (f.forced)
        o << "**Exported with `--force`: the run's verdict is " << md_code(f.verdict)
          << ", not go. Do not ship this without reading the run's report.** Importing the "
             "package warns.\n\n";
    o << "The winner of a cuda-optimizer run as a PyTorch operator.\n\n"
      << "| | |\n|---|---|\n| verdict | " << md_code(f.verdict_line) << " |\n"
      << "| GPU | " << md_code(f.gpu) << " (" << k.arch << ") |\n"
      << "| run | " << md_code(f.run_dir) << ", finished " << md_code(f.date) << " |\n"
      << "| exported by | " << md_code(f.tool_version) << " |\n\n"
      << "## Build and test\n\n```sh\npip install --no-build-isolation .   # or: python setup.py "
         "build_ext --inplace\npython tests/test_"
      << k.entry << ".py         # or: pytest tests\n"
      << "python bench.py                          # the op's time beside the run's "
         "medians\n```\n\n"
      << "The test compares the op with "
      << (reference ? "the run's own reference kernel (built "
                      "beside it as `cuda_optimizer::" +
                          k.entry + "_reference`)"
                    : "the problem's PyTorch module")
      << " on random inputs drawn like the manifest's, at every case the run checked and "
         "every holdout shape, with the run's tolerances, and once under `torch.compile`.\n\n"
      << "## Use\n\n```python\nimport torch\nfrom cuopt_" << k.entry << " import " << k.entry
      << "\n\n# torch.ops.cuda_optimizer." << k.entry << schema_of(b) << "\n";
    if (f.module)
        o << "\n# or, the problem's own module with its forward swapped for the op:\n"
          << "from cuopt_" << k.entry
          << " import replace\nmodel = replace(model)   # model(...) now "
          << "calls the op with forward's arguments and the module's weights\n";
    o << "```\n\n";
    o << "Inputs must be contiguous CUDA tensors of the manifest's dtypes on one device; each call "
         "checks them and their shapes (one line naming the argument when one is wrong). Shapes: ";
    std::string shapes;
    for (const manifest_arg& a : m.args)
        if (a.is_buffer())
            shapes += (shapes.empty() ? "" : ", ") +
                      ("`" + a.name + "` " +
                       (b.shape.count(a.name) ? shape_text(b.shape.at(a.name))
                                              : comment_line(a.count) + " elements"));
    o << shapes << ". Outputs are allocated by the op and returned; it runs on PyTorch's "
      << "current stream. A size outside what the run measured or its holdout checked works, "
      << "with a warning (once): the verdict does not speak for it. A fake implementation is "
      << "registered, so `torch.compile(fullgraph=True)` traces through the op.\n";
    return o.str();
}

}  // namespace

std::optional<std::vector<std::string>> shape_of_count(const std::string& count) {
    static const std::regex k_factor("[A-Za-z_][A-Za-z0-9_]*|[1-9][0-9]{0,17}");
    std::vector<std::string> factors;
    std::string token;
    for (char c : count + "*") {
        if (c == ' ') continue;
        if (c != '*') {
            token += c;
            continue;
        }
        if (!std::regex_match(token, k_factor)) return std::nullopt;
        factors.push_back(token);
        token.clear();
    }
    return factors;
}

std::string torch_export_refusal(const manifest& m, const std::string& entry) {
    // Python's keywords and the names the package's __init__.py defines beside the op.
    static const std::set<std::string> k_python_names{
        "False",   "None",     "True",     "and",     "as",   "assert", "async",       "await",
        "break",   "class",    "continue", "def",     "del",  "elif",   "else",        "except",
        "finally", "for",      "from",     "global",  "if",   "import", "in",          "is",
        "lambda",  "nonlocal", "not",      "or",      "pass", "raise",  "return",      "try",
        "while",   "with",     "yield",    "replace", "op",   "EXPORT", "load_package"};
    if (k_python_names.count(entry))
        return "the kernel's name " + entry + " is a Python keyword or a name the package uses";
    // What the op's C++ names itself; an argument of that name would shadow it.
    static const std::set<std::string> k_cpp_names{"at", "c10", "std", "torch", "int64_t"};
    std::size_t inouts = 0, tensors = 0;
    for (const manifest_arg& a : m.args) {
        if (k_cpp_names.count(a.name) || a.name.rfind("cuopt_", 0) == 0 ||
            a.name.rfind("CUOPT_", 0) == 0)
            return "argument " + a.name + ": a name the generated op uses itself";
        const auto t = torch_type_of(a.type);
        if (!t)
            return "argument " + a.name + " is " + std::string(dtype_name(a.type)) +
                   ": PyTorch has no tensor of that type on every version";
        if (!a.is_buffer() && !t->c_type)
            return "scalar " + a.name + " is " + std::string(dtype_name(a.type)) +
                   ": the op takes integer and float32/float64 scalars only";
        if (!a.is_buffer() && !is_float(a.type) && a.value_is_number)
            return "integer scalar " + a.name + " is given as the float " + comment_line(a.value) +
                   ": give it as an integer expression";
        if (!a.is_buffer() && is_float(a.type) && !a.value_is_number)
            return "scalar " + a.name + " is a float given by an expression (" +
                   comment_line(a.value) + "): the op takes float scalars given as numbers only";
        inouts += a.kind == arg_kind::inout;
        tensors += a.has_input();
    }
    if (tensors == 0) return "no input buffer: the op could not tell which GPU to run on";
    if (inouts > 26) return "more than 26 inout buffers";
    if (m.cases.empty()) return "the manifest has no case";
    return "";
}

std::map<std::string, std::string> torch_package_files(
    const exported_kernel& k, const std::optional<exported_kernel>& reference, const manifest& m,
    const export_facts& f) {
    const op_binding b = binding_of(m);
    const std::string pkg = "cuopt_" + k.entry;
    std::map<std::string, std::string> files{
        {"csrc/" + k.entry + ".cuh", cuda_header(k, m)},
        {"csrc/" + k.entry + "_kernel.cu", kernel_cu(k, m, b, k.entry)},
        {"csrc/" + k.entry + "_op.cpp", op_cpp(b, m, k.entry, k.entry, f, true)},
        {"setup.py", setup_py(k, reference)},
        {"pyproject.toml", pyproject(k)},
        {pkg + "/__init__.py", init_py(k)},
        {pkg + "/_runtime.py", embedded(torch_package_runtime_py, torch_package_runtime_py_size)},
        {pkg + "/export.json", export_json(k, reference.has_value(), b, m, f)},
        {"tests/test_" + k.entry + ".py",
         embedded(torch_package_test_py, torch_package_test_py_size)},
        {"bench.py", embedded(torch_package_bench_py, torch_package_bench_py_size)},
        {"README.md", readme(k, b, m, f, reference.has_value())}};
    if (f.module) files[pkg + "/reference.py"] = f.module->source_text;
    if (reference) {
        // Its kernel renamed, so that both kernels may share one process and one name.
        exported_kernel r = *reference;
        const std::string prefix = k.entry + "_reference";
        r.source = "#define " + r.entry + " cuopt_ref_" + r.entry + "\n" + r.source;
        r.entry = "cuopt_ref_" + r.entry;
        files["csrc/" + prefix + ".cuh"] = cuda_header(r, m);
        std::string cu = kernel_cu(r, m, b, prefix);
        const std::string include = "#include \"" + r.entry + ".cuh\"";
        cu.replace(cu.find(include), include.size(), "#include \"" + prefix + ".cuh\"");
        files["csrc/" + prefix + "_kernel.cu"] = cu;
        files["csrc/" + prefix + "_op.cpp"] = op_cpp(b, m, prefix, prefix, f, false);
    }
    return files;
}

}  // namespace cuopt
