#include "orchestrator/artifacts/winner_files.hpp"

#include <array>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/file_io.hpp"
#include "common/json_builder.hpp"
#include "common/json_document.hpp"
#include "common/message_text.hpp"
#include "orchestrator/contract/request_writer.hpp"

namespace cuopt {

namespace fs = std::filesystem;
using rapidjson::Value;

namespace {

// The defines the harness was given for a candidate: its own, then the tunables it does not
// define itself (as attempt_evaluator::make_request builds the request).
std::map<std::string, std::string> harness_defines(const candidate& c) {
    std::map<std::string, std::string> d = c.defines;
    for (const auto& [k, v] : c.tunables) d.emplace(k, std::to_string(v));
    return d;
}

// The tunable values a candidate's launch expressions see: the manifest's first values, then
// the candidate's own.
std::map<std::string, std::int64_t> bound_tunables(const candidate& c, const manifest& m) {
    std::map<std::string, std::int64_t> t = m.default_tunables();
    for (const auto& [k, v] : c.tunables) t[k] = v;
    return t;
}

const launch_expressions& default_launch(const candidate& c, const manifest& m) {
    return c.launch ? *c.launch : m.launch;
}

// One case as the winner launches it: the expressions it uses and what they evaluate to.
struct case_launch {
    const manifest_case* mc = nullptr;
    const launch_expressions* expressions = nullptr;
    launch_config numbers;
};

std::vector<case_launch> case_launches(const candidate& c, const manifest& m) {
    const auto tunables = bound_tunables(c, m);
    std::vector<case_launch> out;
    for (const manifest_case& mc : m.cases) {
        case_launch& cl = out.emplace_back();
        cl.mc = &mc;
        cl.expressions = &launch_for(c, m, mc);
        cl.numbers = evaluate_launch(*cl.expressions, m.variables(mc, tunables));
    }
    return out;
}

Value expressions_json(const launch_expressions& l, json_allocator& a) {
    json_object v(a);
    v.add("grid", l.grid).add("block", l.block).add("dynamic_shared_bytes", l.dynamic_shared_bytes);
    return v.take();
}

Value case_launch_json(const case_launch& cl, std::size_t index, json_allocator& a) {
    json_object v(a);
    v.add("name", cl.mc->name);
    v.add("kind", cl.mc->kind == case_kind::performance ? "performance" : "correctness");
    json_object params(a);
    for (const auto& [k, x] : cl.mc->params) params.add(k, static_cast<int64_t>(x));
    v.add("params", params).add("grid", cl.numbers.grid).add("block", cl.numbers.block);
    v.add("dynamic_shared_bytes", cl.numbers.dynamic_shared_bytes);
    v.add("launch", expressions_json(*cl.expressions, a));
    return v.add("replay_request", "best-case-" + std::to_string(index) + ".json").take();
}

double speedup_of(const attempt_result& r) {
    return r.speedup_vs_initial.value_or(1.0);
}

std::string joined_list(const std::array<std::string, 3>& v) {
    return "[" + v[0] + ", " + v[1] + ", " + v[2] + "]";
}

std::string joined_list(const std::array<unsigned, 3>& v) {
    return "[" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " + std::to_string(v[2]) +
           "]";
}

std::string expressions_text(const launch_expressions& l) {
    std::string s = "grid " + joined_list(l.grid) + "  block " + joined_list(l.block);
    if (l.dynamic_shared_bytes != "0") s += "  dynamic shared bytes " + l.dynamic_shared_bytes;
    return s;
}

bool same_launch(const launch_expressions& x, const launch_expressions& y) {
    return x.grid == y.grid && x.block == y.block &&
           x.dynamic_shared_bytes == y.dynamic_shared_bytes;
}

// "//     perf-256 (m=256 n=256 k=256): grid [8, 16, 1]  block [32, 16, 1]", with the case's own
// expressions when they are not the default launch.
std::string case_comment(const case_launch& cl, const launch_expressions& fallback) {
    std::string s = "//     " + cl.mc->name;
    std::string params;
    for (const auto& [k, x] : cl.mc->params)
        params += (params.empty() ? "" : " ") + k + "=" + std::to_string(x);
    if (!params.empty()) s += " (" + params + ")";
    s += ": grid " + joined_list(cl.numbers.grid) + "  block " + joined_list(cl.numbers.block);
    if (cl.numbers.dynamic_shared_bytes != 0)
        s += "  dynamic shared bytes " + std::to_string(cl.numbers.dynamic_shared_bytes);
    if (!same_launch(*cl.expressions, fallback))
        s += "  (its own launch: " + expressions_text(*cl.expressions) + ")";
    return comment_line(s) + "\n";
}

// A -D/-U compile option as the preprocessor line it stands for; "" for any other option.
// NVRTC reads the options in order after the request's defines, so these lines follow them.
std::string macro_line(const std::string& option) {
    auto after = [&option](const char* prefix) -> std::optional<std::string> {
        const std::string p = prefix;
        if (option.size() > p.size() && option.compare(0, p.size(), p) == 0)
            return option.substr(p.size());
        return std::nullopt;
    };
    for (const char* prefix : {"--define-macro=", "-D"})
        if (const auto def = after(prefix)) {
            const auto eq = def->find('=');
            return "#define " + def->substr(0, eq) + " " +
                   (eq == std::string::npos ? "1" : def->substr(eq + 1));
        }
    for (const char* prefix : {"--undefine-macro=", "-U"})
        if (const auto name = after(prefix)) return "#undef " + *name;
    return "";
}

// A #define on one line (a value's backslashes stay: they may be the value's own).
std::string one_line(std::string s) {
    for (char& ch : s)
        if (ch == '\n' || ch == '\r') ch = ' ';
    return s;
}

// The #define lines for the defines the harness passed as -DNAME=VALUE (the same as defining
// them before the source's first line), then the -D/-U compile options in their order.
std::string macro_lines(const candidate& c) {
    std::string out;
    for (const auto& [k, v] : harness_defines(c)) out += one_line("#define " + k + " " + v) + "\n";
    for (const std::string& o : c.compile_options)
        if (const std::string line = macro_line(o); !line.empty()) out += one_line(line) + "\n";
    return out;
}

std::string options_comment(const candidate& c) {
    std::string opts;
    bool macros = false;
    for (const std::string& o : c.compile_options) {
        opts += (opts.empty() ? "" : " ") + o;
        macros |= !macro_line(o).empty();
    }
    if (opts.empty())
        return "//   compile options: none (the harness adds --std=c++17 and the device's arch)\n";
    return comment_line("//   compile options: " + opts) + "\n" +
           (macros ? "//     (the -D/-U among them are already applied below; passing them again "
                     "is harmless)\n"
                   : "");
}

std::string winner_comment(const attempt_result& r, const manifest& m, const fs::path& run) {
    const candidate& c = r.cand;
    char speedup[64];
    std::snprintf(speedup, sizeof speedup, "%.3fx", speedup_of(r));
    std::string s =
        "// best.cu: the winning kernel of a cuda-optimizer run, standing alone.\n" +
        comment_line("//   from: " + absolute_path(run) + ", iteration " +
                     std::to_string(r.iteration) + ", attempt " + std::to_string(r.attempt) + " (" +
                     to_string(c.proposer) + ": " + c.label + ")") +
        "\n//   speedup: " + speedup +
        " geomean over the initial kernel (medians of the performance cases in the search)\n" +
        comment_line("//   entry: " + c.entry) + "\n" + options_comment(c) +
        (macro_lines(c).empty()
             ? "//   defines: none\n"
             : "//   defines: the #define lines below; the harness passed them as -DNAME=VALUE\n");
    const launch_expressions& fallback = default_launch(c, m);
    std::string tunables;
    for (const auto& [k, x] : bound_tunables(c, m))
        tunables += (tunables.empty() ? "" : " ") + k + "=" + std::to_string(x);
    s += comment_line("//   launch: " + expressions_text(fallback) +
                      (tunables.empty() ? "" : "  with " + tunables)) +
         "\n//   per case (grid and block as numbers):\n";
    for (const case_launch& cl : case_launches(c, m)) s += case_comment(cl, fallback);
    return s +
           "//   replay: cuda-harness best-case-N.json (one case each); best.json holds all of "
           "this as data\n";
}

}  // namespace

void add_winner_fields(Value& v, const candidate& c, const manifest& m, json_allocator& a) {
    json_object w(v, a);
    w.add("entry", c.entry).add("defines", harness_defines(c));
    w.add("compile_options", c.compile_options).add("tunables", bound_tunables(c, m));
    w.add("launch", expressions_json(default_launch(c, m), a));
    json_array cases(a);
    const auto launches = case_launches(c, m);
    for (std::size_t i = 0; i < launches.size(); ++i)
        cases.push(case_launch_json(launches[i], i, a));
    w.add("cases", cases);
}

std::string best_source_text(const search_outcome& o, const manifest& m, const fs::path& run) {
    const attempt_result& r = o.history[o.best.value()];
    // A byte-order mark stays the file's first bytes.
    static const std::string k_bom = "\xEF\xBB\xBF";
    const bool bom = r.cand.source.compare(0, k_bom.size(), k_bom) == 0;
    return (bom ? k_bom : "") + winner_comment(r, m, run) + macro_lines(r.cand) +
           r.cand.source.substr(bom ? k_bom.size() : 0);
}

std::string best_json(const search_outcome& o, const manifest& m, const fs::path& run) {
    const attempt_result& r = o.history[o.best.value()];
    rapidjson::Document doc(rapidjson::kObjectType);
    auto& a = doc.GetAllocator();
    json_object top(doc);
    top.add("schema_version", 1).add("run_dir", absolute_path(run)).add("source_file", "best.cu");
    top.add("iteration", r.iteration).add("attempt", r.attempt);
    top.add("proposer", to_string(r.cand.proposer)).add("label", r.cand.label);
    top.add("speedup_vs_initial", speedup_of(r)).add("geomean_ms", r.geomean_ms);
    add_winner_fields(doc, r.cand, m, a);
    return to_pretty_json(doc);
}

void write_best(const fs::path& run, const search_outcome& o, const manifest& m,
                const attempt_evaluator& evaluator) {
    if (!o.best) return;
    const candidate& best = o.history[*o.best].cand;
    write_file_atomic(run / "best.cu", best_source_text(o, m, run));
    write_file_atomic(run / "best.json", best_json(o, m, run));
    for (std::size_t i = 0; i < m.cases.size(); ++i) {
        attempt_evaluator::request_paths paths;
        paths.source_file = "best.cu";
        paths.inputs_prefix = "inputs/";
        paths.outputs_prefix = "replay/";
        paths.only_case = m.cases[i].name;
        request req = evaluator.make_request(best, paths, false);
        req.folder = run;  // the inputs key: inputs-key.json beside it
        write_file_atomic(run / ("best-case-" + std::to_string(i) + ".json"),
                          write_request_json(req));
    }
}

std::string absolute_path(const fs::path& p) {
    return fs::absolute(p).lexically_normal().string();
}

}  // namespace cuopt
