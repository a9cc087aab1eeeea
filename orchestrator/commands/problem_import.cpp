#include "orchestrator/commands/problem_import.hpp"

#include <algorithm>
#include <iostream>
#include <set>
#include <sstream>

#include "common/dtype.hpp"
#include "common/exit_codes.hpp"
#include "common/file_io.hpp"
#include "common/json_builder.hpp"
#include "common/json_fields.hpp"
#include "common/temporary_folder.hpp"
#include "orchestrator/contract/integer_expression.hpp"
#include "orchestrator/evaluation/python_child.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t k_max_names = 256;
constexpr std::size_t k_max_source_bytes = std::size_t(4) << 20;

// A C identifier from a PyTorch name: "ln.weight" -> "ln_weight", "1x" -> "_1x".
std::string identifier(std::string name) {
    for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) name = "_" + name;
    return name.substr(0, 128);
}

std::string join(const std::vector<std::string>& parts, const std::string& glue) {
    std::string out;
    for (const std::string& p : parts) out += (out.empty() ? "" : glue) + p;
    return out;
}

// The manifest's init object for a generator the PyTorch side named.
std::string read_init(const json_field& f) {
    rapidjson::Document d;
    json_object o(d);
    const std::string kind = f.text("kind");
    o.add("kind", kind);
    if (kind == "uniform") {
        o.add("low", f.number("low")).add("high", f.number("high"));
    } else if (kind == "normal") {
        o.add("mean", f.number("mean")).add("stddev", f.number("stddev"));
    } else if (kind == "int_range") {
        o.add("low", f.integer("low")).add("high", f.integer("high"));
    } else {
        f["kind"].fail("one of uniform, normal, int_range", quote_value(kind));
    }
    return to_compact_json(d);
}

std::map<std::string, std::int64_t> read_sizes(const json_field& f,
                                               const std::vector<imported_axis>& axes) {
    std::map<std::string, std::int64_t> out;
    for (const auto& [key, value] : f.members()) {
        const std::string& name = key;  // clang 14 captures no structured binding
        if (std::none_of(axes.begin(), axes.end(),
                         [&](const imported_axis& a) { return a.name == name; }))
            continue;  // a workload's axis the import did not take as a size
        out[name] = value.integer_in(1, std::int64_t(1) << 40);
    }
    return out;
}

expression_variables values_of(const std::vector<imported_axis>& axes, bool small) {
    expression_variables v;
    for (const imported_axis& a : axes) v[a.name] = small ? a.small : a.value;
    return v;
}

imported_arg read_arg(const json_field& f, const std::string& role,
                      const expression_variables& sizes) {
    imported_arg a;
    a.key = f.text("name");
    a.name = identifier(a.key);
    a.role = role;
    const std::string type = f.text("dtype");
    if (!parse_dtype(type)) f["dtype"].fail("one of " + dtype_names_list(), quote_value(type));
    a.dtype = type;
    if (role == "scalar") {
        a.value = f.number("value");
        return a;
    }
    const json_field shape = f["shape"];
    if (shape.size() > 8) shape.fail("at most 8 dims");
    for (std::size_t i = 0; i < shape.size(); ++i) {
        const std::string e = shape[i].text();
        try {
            if (evaluate_integer_expression(e, sizes) < 0) shape[i].fail("a size of 0 or more");
        } catch (const expression_error& ex) {
            shape[i].fail("an expression over the problem's sizes", ex.what());
        }
        a.shape.push_back(e);
    }
    if (role != "output") a.init = read_init(f["init"]);
    return a;
}

// Every name unique among the arguments and the sizes (a weight "x" beside an input "x").
void make_names_unique(imported_problem& p) {
    std::set<std::string> taken;
    for (const imported_axis& a : p.axes) taken.insert(a.name);
    for (imported_arg& a : p.args) {
        while (taken.count(a.name)) a.name += "_";
        taken.insert(a.name);
    }
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

imported_problem read_introspection(const std::string& text, const std::string& source) {
    const rapidjson::Document d = parse_json(text, source);
    const json_field root(d, source);
    if (const auto r = root.find("refused")) throw std::runtime_error(printable(r->text()));
    if (const auto e = root.find("error"))
        throw std::runtime_error("the PyTorch side failed: " + printable(e->text()));
    imported_problem p;
    p.form = root.text("form");
    p.entry = root.text("entry");
    p.torch_version = root.text("torch");
    const json_field axes = root["axes"];
    if (axes.size() > 64) axes.fail("at most 64 sizes");
    for (const json_field& a : axes.items()) {
        imported_axis x;
        x.name = a.text("name");
        if (identifier(x.name) != x.name) a["name"].fail("a C identifier", quote_value(x.name));
        x.value = a["value"].integer_in(1, std::int64_t(1) << 40);
        x.small = a["small"].integer_in(1, x.value);
        x.constant = a.optional_boolean("const").value_or(false);
        p.axes.push_back(x);
    }
    const expression_variables sizes = values_of(p.axes, false);
    const json_field args = root["args"], outputs = root["outputs"];
    if (args.size() + outputs.size() > k_max_names) args.fail("at most 256 arguments in all");
    for (const json_field& a : args.items()) {
        const std::string role = a.text("role");
        if (role != "input" && role != "parameter" && role != "scalar")
            a["role"].fail("one of input, parameter, scalar", quote_value(role));
        p.args.push_back(read_arg(a, role, sizes));
    }
    if (outputs.size() == 0) outputs.fail("at least one output");
    for (const json_field& o : outputs.items()) p.args.push_back(read_arg(o, "output", sizes));
    if (root["holdout"].size() > 16) root["holdout"].fail("at most 16 holdout cases");
    if (root["workloads"].size() > 4096) root["workloads"].fail("at most 4096 workloads");
    for (const char* key : {"holdout", "workloads"})
        for (const json_field& h : root[key].items())
            (std::string(key) == "holdout" ? p.holdout : p.workloads)
                .push_back(read_sizes(h, p.axes));
    make_names_unique(p);
    return p;
}

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

std::string kernel_name_for(const import_options& o) {
    if (!o.name.empty()) return identifier(o.name);
    std::string name = fs::path(o.source).stem().string();
    const std::size_t digits = name.find_first_not_of("0123456789");
    if (digits != std::string::npos && digits > 0 && name[digits] == '_')
        name = name.substr(digits + 1);  // KernelBench's "23_Softmax" -> "Softmax"
    return identifier(name);
}

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

namespace {

// form "auto": a .json is a FlashInfer-Trace definition; Python is read by the PyTorch side.
std::string form_of(const import_options& o) {
    if (o.form != "auto") return o.form;
    return fs::path(o.source).extension() == ".json" ? "flashinfer" : "auto";
}

// A definition's workloads: --workloads, else the dataset's layout
// (definitions/OP/NAME.json beside workloads/OP/NAME.jsonl), else none.
std::string workloads_of(const import_options& o) {
    if (!o.workloads.empty()) return o.workloads;
    const fs::path def = fs::absolute(o.source);
    const fs::path guess = def.parent_path().parent_path().parent_path() / "workloads" /
                           def.parent_path().filename() / (def.stem().string() + ".jsonl");
    return fs::is_regular_file(guess) ? guess.string() : "";
}

void check_source(const std::string& path, const char* what) {
    std::error_code ec;
    if (!fs::is_regular_file(fs::symlink_status(path, ec)))
        throw std::runtime_error(path + ": " + what + " is not a regular file");
    if (fs::file_size(path, ec) > k_max_source_bytes)
        throw std::runtime_error(path + ": " + what + " is larger than 4 MiB");
}

}  // namespace

int run_import(const import_options& given) {
    import_options o = given;
    o.form = form_of(given);
    const bool flashinfer = o.form == "flashinfer";
    if (flashinfer) o.workloads = workloads_of(given);
    try {
        check_source(o.source, "the source");
        if (!o.workloads.empty()) check_source(o.workloads, "--workloads");
        const fs::path dir = o.out;
        std::error_code ec;
        if (fs::exists(fs::symlink_status(dir, ec)) &&
            (!fs::is_directory(fs::symlink_status(dir, ec)) || !fs::is_empty(dir, ec)))
            throw std::runtime_error(o.out + ": --out must be a new or empty folder");
        temporary_folder job("cuopt-import");
        const std::string source_file = flashinfer ? "definition.json" : "reference.py";
        // What --out keeps is read now, before the child runs (it may rewrite its own copies).
        const std::string source_text = read_text_file(o.source);
        const std::string workloads_text = o.workloads.empty() ? "" : read_text_file(o.workloads);
        write_file_atomic(job / source_file, source_text);
        if (!o.workloads.empty()) write_file_atomic(job / "workloads.jsonl", workloads_text);
        rapidjson::Document j;
        json_object(j)
            .add("source", source_file)
            .add("form", o.form)
            .add("workloads", o.workloads.empty() ? "" : "workloads.jsonl");
        write_file_atomic(job / "job.json", to_compact_json(j));
        const auto runner = make_child_process_runner();
        const python_interpreter python = find_python(o.python, *runner);
        python_job pj{"introspect",
                      job.path(),
                      {},
                      false,
                      std::chrono::milliseconds(static_cast<long long>(o.timeout_s * 1000))};
        std::string answer;
        try {
            answer = run_pytorch_side(python, pj, *runner);
        } catch (const python_error& e) {  // the source's doing (a hang, a crash): exit 11
            throw std::runtime_error(o.source + ": cannot import: " + e.what());
        }
        imported_problem p;
        try {
            p = read_introspection(answer, o.source + " (the PyTorch side's answer)");
        } catch (const json_error&) {
            throw;
        } catch (const std::runtime_error& refused) {
            throw std::runtime_error(o.source + ": cannot import: " + refused.what());
        }
        fs::create_directories(dir);
        write_file_atomic(dir / source_file, source_text);
        if (!o.workloads.empty()) write_file_atomic(dir / "workloads.jsonl", workloads_text);
        write_problem_folder(p, o, dir, source_file);
        std::cerr << "cuda-optimizer: imported " << o.source << " (" << p.form << ", PyTorch "
                  << python.torch_version << ") into " << o.out
                  << "\n  signature: " << imported_signature(p, kernel_name_for(o))
                  << "\n  next: add an "
                  << "initial_kernel to " << (dir / "config.json").string()
                  << ", then cuda-optimizer check --config " << (dir / "config.json").string()
                  << "\n";
        return 0;
    } catch (const python_error& e) {
        std::cerr << "cuda-optimizer: import: " << e.what() << "\n";
        return to_int(exit_code::preflight_failed);
    } catch (const std::exception& e) {
        std::cerr << "cuda-optimizer: import: " << e.what() << "\n";
        return to_int(exit_code::invalid_request);
    }
}

void add_import_command(CLI::App& app, import_options& o, CLI::App*& command) {
    command = app.add_subcommand(
        "import",
        "Turn a PyTorch problem (KernelBench file, FlashInfer-Trace definition, or a "
        "function with get_inputs) into a problem folder");
    command->add_option("source", o.source, "The .py problem file or the definition's .json")
        ->required();
    command->add_option("--out", o.out, "The problem folder to write (new or empty)")
        ->required()
        ->type_name("DIR");
    command->add_option("--form", o.form, "auto | kernelbench | flashinfer | plain")
        ->capture_default_str()
        ->check(CLI::IsMember({"auto", "kernelbench", "flashinfer", "plain"}));
    command
        ->add_option("--workloads", o.workloads,
                     "A FlashInfer-Trace workloads .jsonl (default: the dataset's, beside)")
        ->type_name("FILE");
    command
        ->add_option("--python", o.python,
                     "The interpreter with torch (default: python3 on PATH, then "
                     "/usr/bin/python3)")
        ->type_name("FILE");
    command->add_option("--name", o.name, "The kernel's name (default: from the source's)");
    command->add_option("--timeout", o.timeout_s, "Wall-clock limit for the PyTorch child, s")
        ->capture_default_str();
    command->footer(
        "\nExample:\n  cuda-optimizer import KernelBench/level1/23_Softmax.py --out "
        "problems/softmax\n"
        "\nExit codes: 0 written; 11 the source cannot be imported (the line names the construct);"
        "\n20 no Python with torch; 64 bad command line.\n");
}

}  // namespace cuopt
