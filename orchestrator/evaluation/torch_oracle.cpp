#include "orchestrator/evaluation/torch_oracle.hpp"

#include "common/file_io.hpp"
#include "common/json_builder.hpp"
#include "common/json_fields.hpp"
#include "orchestrator/contract/integer_expression.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

torch_problem::tensor read_tensor(const json_field& f, const manifest& m, bool output) {
    torch_problem::tensor t;
    t.name = f.text("name");
    t.dtype = f.text("dtype");
    t.role = output ? "output" : f.text("role");
    if (t.role != "input" && t.role != "parameter" && t.role != "scalar" && t.role != "output")
        f["role"].fail("one of input, parameter, scalar", quote_value(t.role));
    if (t.role == "scalar") {
        t.value = f.number("value");
        return t;
    }
    if (t.role == "parameter") t.key = f.text("key");
    t.shape = f.texts("shape");
    const manifest_arg* a = m.find_arg(t.name);
    if (!a || !a->is_buffer() || (a->has_output() != output))
        f["name"].fail(std::string("an ") + (output ? "output" : "input") + " buffer of " +
                           m.file.filename().string(),
                       quote_value(t.name));
    if (dtype_name(a->type) != t.dtype)
        f["dtype"].fail(std::string(dtype_name(a->type)) + " (the manifest's)",
                        quote_value(t.dtype));
    return t;
}

rapidjson::Value tensor_json(const torch_problem::tensor& t, const fs::path& file,
                             const expression_variables& sizes, json_allocator& al) {
    json_object o(al);
    o.add("name", t.name).add("role", t.role).add("dtype", t.dtype);
    if (t.role == "scalar") return o.add("value", t.value).take();
    std::vector<std::int64_t> shape;
    for (const std::string& d : t.shape) shape.push_back(evaluate_integer_expression(d, sizes));
    o.add_if(!t.key.empty(), "key", t.key);
    return o.add("shape", shape).add("file", file.string()).take();
}

}  // namespace

std::string inputs_only_kernel(const std::string& signature) {
    return "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n#include <cuda_fp8.h>\n"
           "extern \"C\" __global__ " +
           signature + " {}\n";
}

torch_problem read_torch_problem(const fs::path& file, const manifest& m) {
    const rapidjson::Document d = parse_json(read_text_file(file), file.string());
    const json_field root(d, file.string());
    torch_problem p;
    p.file = file;
    p.form = root.text("form");
    p.entry = root.text("entry");
    const fs::path folder = fs::absolute(file).parent_path();
    p.source = folder / root.text("source");
    if (const auto w = root.optional_text("workloads")) p.workloads = folder / *w;
    p.axes = root.texts("axes");
    for (const json_field& a : root["args"].items()) p.args.push_back(read_tensor(a, m, false));
    for (const json_field& o : root["outputs"].items())
        p.outputs.push_back(read_tensor(o, m, true));
    if (!fs::is_regular_file(p.source)) root["source"].fail("a file beside it", p.source.string());
    return p;
}

oracle_files run_torch_oracle(const torch_reference& t, const manifest& m, const fs::path& folder,
                              process_runner& runner) {
    const fs::path job = folder / "torch";
    fs::create_directories(job);
    rapidjson::Document d;
    json_object root(d);
    auto& al = d.GetAllocator();
    root.add("source", t.problem.source.string()).add("form", t.problem.form);
    root.add("workloads", t.problem.workloads.string()).add("device", t.gpu ? "cuda" : "cpu");
    std::vector<fs::path> readable{t.problem.source, fs::absolute(folder / "inputs")};
    if (!t.problem.workloads.empty()) readable.push_back(t.problem.workloads);
    oracle_files oracle;
    json_array cases(al);
    for (const manifest_case& mc : m.cases) {
        json_object c(al);
        c.add("name", mc.name);
        std::map<std::string, std::int64_t> axes;
        for (const std::string& a : t.problem.axes)
            if (mc.params.count(a)) axes[a] = mc.params.at(a);
        c.add("axes", axes);
        json_array args(al), outputs(al);
        for (const torch_problem::tensor& a : t.problem.args) {
            fs::path file;
            if (a.role != "scalar") {
                const input_init& init = m.init_for(mc, *m.find_arg(a.name));
                file = init.file
                           ? fs::absolute(*init.file)
                           : fs::absolute(folder / "inputs" / (mc.name + "." + a.name + ".bin"));
                if (init.file) readable.push_back(file);
            }
            args.push(tensor_json(a, file, mc.params, al));
        }
        for (const torch_problem::tensor& o : t.problem.outputs) {
            const fs::path file = fs::absolute(job / (mc.name + "." + o.name + ".bin"));
            outputs.push(tensor_json(o, file, mc.params, al));
            oracle[{mc.name, o.name}] = file;
        }
        cases.push(c.add("args", args.take()).add("outputs", outputs.take()).take());
    }
    root.add("cases", cases.take());
    write_file_atomic(job / "job.json", to_compact_json(d));
    const std::string answer = run_pytorch_side(
        t.python, {"oracle", job, readable, t.gpu, std::chrono::minutes(30)}, runner);
    const rapidjson::Document a = parse_json(answer, (job / "out.json").string());
    const json_field r(a, (job / "out.json").string());
    if (const auto e = r.find("error"))
        throw python_error("the PyTorch oracle failed: " + e->text());
    if (const auto e = r.find("refused"))
        throw python_error("the PyTorch oracle refused: " + e->text());
    for (const auto& [key, file] : oracle)
        if (!fs::is_regular_file(file))
            throw python_error("the PyTorch oracle wrote no " + file.filename().string());
    return oracle;
}

}  // namespace cuopt
