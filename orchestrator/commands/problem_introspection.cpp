// The PyTorch side's answer about a problem, read as untrusted input: its sizes, arguments,
// outputs, holdout and workloads, each checked and bounded; and the kernel's name.
#include <algorithm>
#include <cctype>
#include <set>

#include "common/dtype.hpp"
#include "common/json_builder.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "orchestrator/commands/imported_sizes.hpp"
#include "orchestrator/evaluation/python_child.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

using problem_import::values_of;

constexpr std::size_t k_max_names = 256;

// A C identifier from a PyTorch name: "ln.weight" -> "ln_weight", "1x" -> "_1x".
std::string identifier(std::string name) {
    for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) name = "_" + name;
    return name.substr(0, 128);
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

std::string kernel_name_for(const import_options& o) {
    if (!o.name.empty()) return identifier(o.name);
    std::string name = fs::path(o.source).stem().string();
    const std::size_t digits = name.find_first_not_of("0123456789");
    if (digits != std::string::npos && digits > 0 && name[digits] == '_')
        name = name.substr(digits + 1);  // KernelBench's "23_Softmax" -> "Softmax"
    return identifier(name);
}

}  // namespace cuopt
