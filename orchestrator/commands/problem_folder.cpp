// The imported problem's folder: input_cases.json (with a placeholder launch and the tolerance
// each output's reduction needs), holdout_cases.json, pytorch.json and config.json.
#include <algorithm>
#include <map>
#include <set>

#include "common/dtype.hpp"
#include "common/file_io.hpp"
#include "common/json_builder.hpp"
#include "common/json_document.hpp"
#include "orchestrator/commands/imported_sizes.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

using problem_import::values_of;

std::string join(const std::vector<std::string>& parts, const std::string& glue) {
    std::string out;
    for (const std::string& p : parts) out += (out.empty() ? "" : glue) + p;
    return out;
}

std::string count_of(const imported_arg& a) {
    std::vector<std::string> dims;
    for (const std::string& d : a.shape)
        dims.push_back(d.find_first_of("+-") == std::string::npos ? d : "(" + d + ")");
    return dims.empty() ? "1" : join(dims, "*");
}

const char* c_type(const std::string& dtype) {
    static const std::map<std::string, const char*> k = {{"f32", "float"},
                                                         {"f64", "double"},
                                                         {"f16", "__half"},
                                                         {"bf16", "__nv_bfloat16"},
                                                         {"i8", "signed char"},
                                                         {"u8", "unsigned char"},
                                                         {"i16", "short"},
                                                         {"u16", "unsigned short"},
                                                         {"i32", "int"},
                                                         {"u32", "unsigned"},
                                                         {"i64", "long long"},
                                                         {"u64", "unsigned long long"},
                                                         {"f8e4m3", "__nv_fp8_e4m3"},
                                                         {"f8e5m2", "__nv_fp8_e5m2"}};
    return k.at(dtype);
}

// The axes an output does not keep but the inputs have: what each of its elements sums over.
std::vector<std::string> reduced_axes(const imported_problem& p, const imported_arg& out) {
    std::vector<std::string> reduced;
    const auto mentions = [](const imported_arg& a, const std::string& axis) {
        return std::any_of(a.shape.begin(), a.shape.end(), [&](const std::string& d) {
            return d == axis || d.find(axis + "*") == 0 || d.find("*" + axis) != std::string::npos;
        });
    };
    for (const imported_axis& axis : p.axes) {
        if (mentions(out, axis.name)) continue;
        for (const imported_arg& a : p.args)
            if (a.role == "input" && mentions(a, axis.name)) {
                reduced.push_back(axis.name);
                break;
            }
    }
    return reduced;
}

}  // namespace

std::string imported_signature(const imported_problem& p, const std::string& kernel_name) {
    std::vector<std::string> params;
    for (const imported_arg& a : p.args) {
        if (a.role == "scalar") continue;
        params.push_back(std::string(a.role == "output" ? "" : "const ") + c_type(a.dtype) + "* " +
                         a.name);
    }
    for (const imported_arg& a : p.args)
        if (a.role == "scalar") params.push_back(std::string(c_type(a.dtype)) + " " + a.name);
    for (const imported_axis& a : p.axes) params.push_back("int " + a.name);
    return "void " + kernel_name + "(" + join(params, ", ") + ")";
}

namespace {

std::string case_name(const std::string& prefix, const std::vector<imported_axis>& axes,
                      const std::map<std::string, std::int64_t>& sizes) {
    std::vector<std::string> values;
    for (const imported_axis& a : axes)
        if (!a.constant) values.push_back(std::to_string(sizes.at(a.name)));
    return prefix + (values.empty() ? "" : "-" + join(values, "x"));
}

rapidjson::Value case_json(const std::string& name, const char* kind,
                           const std::vector<imported_axis>& axes,
                           std::map<std::string, std::int64_t> sizes, json_allocator& al) {
    for (const imported_axis& a : axes) sizes.emplace(a.name, a.value);  // const axes, the rest
    json_object c(al);
    c.add("name", name).add("kind", kind).add("params", sizes);
    return c.take();
}

rapidjson::Value arg_json(const imported_problem& p, const imported_arg& a, int seed,
                          json_allocator& al) {
    json_object o(al);
    o.add("name", a.name).add("dtype", a.dtype);
    if (a.role == "scalar") return o.add("kind", "scalar").add("value", a.value).take();
    o.add("kind", a.role == "output" ? "output" : "input").add("count", count_of(a));
    if (a.role != "output") {
        rapidjson::Document init = parse_json(a.init, "init");
        init.AddMember("seed", seed, init.GetAllocator());
        return o.add("init", rapidjson::Value(init, al)).take();
    }
    if (!is_float(*parse_dtype(a.dtype))) return o.take();
    json_object tol(al);
    if (const auto reduced = reduced_axes(p, a); !reduced.empty())
        tol.add("reduction_length", join(reduced, "*"));
    else if (a.dtype == "f32")
        tol.add("atol", 1e-5).add("rtol", 1e-4);
    else
        return o.take();  // the dtype's default
    return o.add("tolerance", tol.take()).take();
}

std::string manifest_text(const imported_problem& p, const std::string& source, bool holdout) {
    rapidjson::Document d;
    json_object root(d);
    auto& al = d.GetAllocator();
    root.add("schema_version", 1);
    std::vector<std::map<std::string, std::int64_t>> perf = p.workloads;
    if (perf.empty()) perf.push_back(values_of(p.axes, false));
    json_array cases(al);
    if (holdout) {
        root.add("description", "Hidden sizes for " + source +
                                    ": never shown to a proposer, never timed; the winner "
                                    "must pass them (PyTorch is their oracle too).");
        for (const auto& h : p.holdout)
            cases.push(case_json(case_name("holdout", p.axes, h), "correctness", p.axes, h, al));
        root.add("cases", cases.take());
        return to_pretty_json(d) + "\n";
    }
    root.add("description", "Imported from " + source + " (" + p.form +
                                ") by cuda-optimizer import: PyTorch runs its " + p.entry +
                                " as the oracle (pytorch.json). The launch is a placeholder "
                                "(one thread per output element); a candidate gives its own.");
    const imported_arg& first_out = *std::find_if(p.args.begin(), p.args.end(),
                                                  [](const auto& a) { return a.role == "output"; });
    json_array grid(al);
    grid.push("ceil((" + count_of(first_out) + ")/256)").push(1).push(1);
    json_object launch(al);
    root.add("launch", launch.add("grid", grid.take())
                           .add("block", std::vector<int>{256, 1, 1})
                           .add("dynamic_shared_bytes", 0)
                           .take());
    json_object ref(al);
    root.add("reference_launch", ref.add("grid", std::vector<int>{1, 1, 1})
                                     .add("block", std::vector<int>{1, 1, 1})
                                     .add("dynamic_shared_bytes", 0)
                                     .take());
    json_array args(al);
    int seed = 1;
    for (const char* role : {"input", "parameter", "output", "scalar"})
        for (const imported_arg& a : p.args)
            if (a.role == role) args.push(arg_json(p, a, seed++, al));
    for (const imported_axis& a : p.axes) {
        json_object o(al);
        args.push(o.add("name", a.name)
                      .add("dtype", a.value > 0x7fffffff ? "i64" : "i32")
                      .add("kind", "scalar")
                      .add("value", a.name)
                      .take());
    }
    root.add("args", args.take());
    const auto small = values_of(p.axes, true);
    cases.push(
        case_json(case_name("correctness", p.axes, small), "correctness", p.axes, small, al));
    std::set<std::string> names;
    for (const auto& w : perf)
        if (const std::string n = case_name("perf", p.axes, w); names.insert(n).second)
            cases.push(case_json(n, "performance", p.axes, w, al));
    root.add("cases", cases.take());
    return to_pretty_json(d) + "\n";
}

std::string pytorch_text(const imported_problem& p, const std::string& source,
                         const std::string& workloads) {
    rapidjson::Document d;
    json_object root(d);
    auto& al = d.GetAllocator();
    root.add("schema_version", 1).add("form", p.form).add("source", source);
    root.add_if(!workloads.empty(), "workloads", workloads);
    root.add("entry", p.entry).add("torch_at_import", p.torch_version);
    std::vector<std::string> axes;
    for (const imported_axis& a : p.axes) axes.push_back(a.name);
    root.add("axes", axes);
    json_array args(al), outputs(al);
    for (const imported_arg& a : p.args) {
        json_object o(al);
        o.add("name", a.name).add("dtype", a.dtype);
        if (a.role == "scalar")
            o.add("value", a.value);
        else
            o.add("shape", a.shape);
        if (a.role == "output") {
            outputs.push(o.take());
            continue;
        }
        o.add("role", a.role).add_if(a.role == "parameter", "key", a.key);
        args.push(o.take());
    }
    root.add("args", args.take()).add("outputs", outputs.take());
    return to_pretty_json(d) + "\n";
}

}  // namespace

void write_problem_folder(const imported_problem& p, const import_options& o, const fs::path& dir,
                          const std::string& source_file) {
    const std::string name = kernel_name_for(o);
    const std::string source = fs::path(o.source).filename().string();
    write_file_atomic(dir / "input_cases.json", manifest_text(p, source, false));
    if (!p.holdout.empty())
        write_file_atomic(dir / "holdout_cases.json", manifest_text(p, source, true));
    write_file_atomic(
        dir / "pytorch.json",
        pytorch_text(p, source_file,
                     p.form == "flashinfer" && !o.workloads.empty() ? "workloads.jsonl" : ""));
    rapidjson::Document c;
    json_object config(c);
    config.add("description", "Imported from " + source + " (" + p.form + ")")
        .add("signature", imported_signature(p, name))
        .add("torch_reference", "pytorch.json")
        .add("input_cases", "input_cases.json");
    config.add_if(!p.holdout.empty(), "holdout_cases", "holdout_cases.json");
    config.add("max_iterations", 7).add("proposer", "llm");
    write_file_atomic(dir / "config.json", to_pretty_json(c) + "\n");
}

}  // namespace cuopt
