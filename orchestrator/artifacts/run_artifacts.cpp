#include "orchestrator/artifacts/run_artifacts.hpp"

#include <rapidjson/document.h>
#include <sys/stat.h>

#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <optional>
#include <type_traits>
#include <variant>

#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "common/sha256.hpp"
#include "orchestrator/contract/request_writer.hpp"
#include "orchestrator/evaluation/compile_log.hpp"

namespace cuopt {

namespace fs = std::filesystem;
using rapidjson::Value;
using allocator = rapidjson::Document::AllocatorType;

namespace {

// A setting as run.json records it: text as a string, every other kind as itself.
Value setting_json(const setting_value& v, allocator& a) {
    return std::visit(
        [&a](const auto& x) {
            if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::string>)
                return json_text(x, a);
            else
                return Value(x);
        },
        v);
}
Value number(const std::optional<double>& v) {
    return v ? Value(*v) : Value();
}
Value integer(const std::optional<int>& v) {
    return v ? Value(*v) : Value();
}

Value compile_json(const compile_summary& c, allocator& a) {
    Value comp(rapidjson::kObjectType);
    comp.AddMember("ok", c.ok, a);
    comp.AddMember("cache_hit", c.cache_hit, a);
    comp.AddMember("wall_ms", c.wall_ms, a);
    comp.AddMember("registers", integer(c.registers), a);
    comp.AddMember("static_shared_bytes", integer(c.static_shared_bytes), a);
    comp.AddMember("local_bytes", integer(c.local_bytes), a);
    comp.AddMember("spill_store_bytes", integer(c.spill_store_bytes), a);
    comp.AddMember("log", json_text(trim_compile_log(c.log, 6000), a), a);
    return comp;
}

Value finite(double x) {
    return std::isfinite(x) ? Value(x) : Value();
}

Value output_json(const output_check& oc, const fs::path& run, allocator& a) {
    Value o(rapidjson::kObjectType);
    o.AddMember("arg", json_text(oc.arg, a), a);
    o.AddMember("file", json_text(oc.file.lexically_relative(run).generic_string(), a), a);
    o.AddMember("unwritten", static_cast<uint64_t>(oc.unwritten), a);
    if (!oc.validation) return o;
    const validation_result& vr = *oc.validation;
    o.AddMember("passed", vr.passed, a);
    o.AddMember("mismatches", static_cast<uint64_t>(vr.mismatches), a);
    o.AddMember("worst_index", static_cast<uint64_t>(vr.worst_index), a);
    o.AddMember("worst_actual", finite(vr.worst_actual), a);
    o.AddMember("worst_expected", finite(vr.worst_expected), a);
    o.AddMember("max_abs_error", finite(vr.max_abs_error), a);
    o.AddMember("max_rel_error", finite(vr.max_rel_error), a);
    o.AddMember("relative_l2_error", finite(vr.relative_l2_error), a);
    return o;
}

Value case_json(const case_evaluation& ce, const fs::path& run, allocator& a) {
    Value c(rapidjson::kObjectType);
    c.AddMember("name", json_text(ce.name, a), a);
    c.AddMember("kind",
                json_text(ce.kind == case_kind::performance ? "performance" : "correctness", a), a);
    c.AddMember("status", rapidjson::StringRef(to_string(ce.status)), a);
    c.AddMember("reason", json_text(ce.reason, a), a);
    c.AddMember("median_ms", number(ce.median_ms), a);
    c.AddMember("mean_ms", number(ce.mean_ms), a);
    c.AddMember("min_ms", number(ce.min_ms), a);
    c.AddMember("max_ms", number(ce.max_ms), a);
    c.AddMember("stdev_ms", number(ce.stdev_ms), a);
    Value outs(rapidjson::kArrayType);
    for (const output_check& oc : ce.outputs) outs.PushBack(output_json(oc, run, a), a);
    c.AddMember("outputs", outs, a);
    return c;
}

Value attempt_json(const attempt_result& r, const fs::path& run, allocator& a) {
    Value v(rapidjson::kObjectType);
    v.AddMember("iteration", r.iteration, a);
    v.AddMember("attempt", r.attempt, a);
    v.AddMember("proposer", rapidjson::StringRef(to_string(r.cand.proposer)), a);
    v.AddMember("label", json_text(r.cand.label, a), a);
    v.AddMember("rationale", json_text(r.cand.rationale, a), a);
    v.AddMember("parent_iteration",
                r.cand.parent_iteration ? Value(*r.cand.parent_iteration) : Value(), a);
    v.AddMember("repair_of", r.repair_of >= 0 ? Value(r.repair_of) : Value(), a);
    Value cand(rapidjson::kObjectType);
    cand.AddMember("entry", json_text(r.cand.entry, a), a);
    cand.AddMember("source_file",
                   json_text((r.folder / "kernel.cu").lexically_relative(run).generic_string(), a),
                   a);
    cand.AddMember("source_sha256", json_text(sha256_hex(r.cand.source), a), a);
    Value defines(rapidjson::kObjectType);
    for (const auto& [k, val] : r.cand.defines)
        defines.AddMember(json_text(k, a), json_text(val, a), a);
    cand.AddMember("defines", defines, a);
    Value tunables(rapidjson::kObjectType);
    for (const auto& [k, val] : r.cand.tunables)
        tunables.AddMember(json_text(k, a), Value(static_cast<int64_t>(val)), a);
    cand.AddMember("tunables", tunables, a);
    Value opts(rapidjson::kArrayType);
    for (const auto& o : r.cand.compile_options) opts.PushBack(json_text(o, a), a);
    cand.AddMember("compile_options", opts, a);
    v.AddMember("candidate", cand, a);
    v.AddMember("verdict", rapidjson::StringRef(to_string(r.verdict)), a);
    v.AddMember("reason", json_text(r.reason, a), a);
    v.AddMember("became_best", r.became_best, a);
    v.AddMember("geomean_ms", number(r.geomean_ms), a);
    v.AddMember("speedup_vs_initial", number(r.speedup_vs_initial), a);
    v.AddMember("compile", compile_json(r.compile, a), a);
    Value h(rapidjson::kObjectType);
    h.AddMember("exit_code", r.harness_exit_code, a);
    h.AddMember("signal", r.harness_signal, a);
    h.AddMember("wall_ms", r.harness_wall_ms, a);
    h.AddMember("stderr_tail", json_text(r.harness_stderr, a), a);
    v.AddMember("harness", h, a);
    Value cases(rapidjson::kArrayType);
    for (const case_evaluation& ce : r.cases) cases.PushBack(case_json(ce, run, a), a);
    v.AddMember("cases", cases, a);
    return v;
}

Value attempt_ref(const search_outcome& o, std::optional<std::size_t> index, allocator& a) {
    if (!index) return Value();
    const attempt_result& r = o.history[*index];
    Value v(rapidjson::kObjectType);
    v.AddMember("iteration", r.iteration, a);
    v.AddMember("attempt", r.attempt, a);
    v.AddMember("label", json_text(r.cand.label, a), a);
    v.AddMember("proposer", rapidjson::StringRef(to_string(r.cand.proposer)), a);
    v.AddMember("geomean_ms", number(r.geomean_ms), a);
    v.AddMember("speedup_vs_initial",
                number(r.speedup_vs_initial ? r.speedup_vs_initial : std::optional<double>(1.0)),
                a);
    return v;
}

// ---- the winner, standing alone ----

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

Value texts(const std::array<std::string, 3>& v, allocator& a) {
    Value out(rapidjson::kArrayType);
    for (const auto& x : v) out.PushBack(json_text(x, a), a);
    return out;
}

Value numbers(const std::array<unsigned, 3>& v, allocator& a) {
    Value out(rapidjson::kArrayType);
    for (unsigned x : v) out.PushBack(x, a);
    return out;
}

Value expressions_json(const launch_expressions& l, allocator& a) {
    Value v(rapidjson::kObjectType);
    v.AddMember("grid", texts(l.grid, a), a);
    v.AddMember("block", texts(l.block, a), a);
    v.AddMember("dynamic_shared_bytes", json_text(l.dynamic_shared_bytes, a), a);
    return v;
}

Value case_launch_json(const case_launch& cl, std::size_t index, allocator& a) {
    Value v(rapidjson::kObjectType);
    v.AddMember("name", json_text(cl.mc->name, a), a);
    v.AddMember("kind",
                json_text(cl.mc->kind == case_kind::performance ? "performance" : "correctness", a),
                a);
    Value params(rapidjson::kObjectType);
    for (const auto& [k, x] : cl.mc->params)
        params.AddMember(json_text(k, a), Value(static_cast<int64_t>(x)), a);
    v.AddMember("params", params, a);
    v.AddMember("grid", numbers(cl.numbers.grid, a), a);
    v.AddMember("block", numbers(cl.numbers.block, a), a);
    v.AddMember("dynamic_shared_bytes", cl.numbers.dynamic_shared_bytes, a);
    v.AddMember("launch", expressions_json(*cl.expressions, a), a);
    v.AddMember("replay_request", json_text("best-case-" + std::to_string(index) + ".json", a), a);
    return v;
}

// The winner as data, into `v`: entry, defines, compile options, tunables, the default launch
// expressions and per case the launch it ran with.
void add_winner_fields(Value& v, const candidate& c, const manifest& m, allocator& a) {
    v.AddMember("entry", json_text(c.entry, a), a);
    Value defines(rapidjson::kObjectType);
    for (const auto& [k, val] : harness_defines(c))
        defines.AddMember(json_text(k, a), json_text(val, a), a);
    v.AddMember("defines", defines, a);
    Value opts(rapidjson::kArrayType);
    for (const auto& o : c.compile_options) opts.PushBack(json_text(o, a), a);
    v.AddMember("compile_options", opts, a);
    Value tunables(rapidjson::kObjectType);
    for (const auto& [k, x] : bound_tunables(c, m))
        tunables.AddMember(json_text(k, a), Value(static_cast<int64_t>(x)), a);
    v.AddMember("tunables", tunables, a);
    v.AddMember("launch", expressions_json(default_launch(c, m), a), a);
    Value cases(rapidjson::kArrayType);
    const auto launches = case_launches(c, m);
    for (std::size_t i = 0; i < launches.size(); ++i)
        cases.PushBack(case_launch_json(launches[i], i, a), a);
    v.AddMember("cases", cases, a);
}

double speedup_of(const attempt_result& r) {
    return r.speedup_vs_initial.value_or(1.0);
}

std::string absolute_path(const fs::path& p) {
    return fs::absolute(p).lexically_normal().string();
}

// Text that stays on one comment line: no line breaks, and no backslash that could splice
// the next line (a #define) into the comment.
std::string comment_text(std::string s) {
    for (char& ch : s)
        if (ch == '\n' || ch == '\r')
            ch = ' ';
        else if (ch == '\\')
            ch = '/';
    return s;
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
    return comment_text(s) + "\n";
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
    return comment_text("//   compile options: " + opts) + "\n" +
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
        comment_text("//   from: " + absolute_path(run) + ", iteration " +
                     std::to_string(r.iteration) + ", attempt " + std::to_string(r.attempt) + " (" +
                     to_string(c.proposer) + ": " + c.label + ")") +
        "\n//   speedup: " + speedup +
        " geomean over the initial kernel (medians of the performance cases in the search)\n" +
        comment_text("//   entry: " + c.entry) + "\n" + options_comment(c) +
        (macro_lines(c).empty()
             ? "//   defines: none\n"
             : "//   defines: the #define lines below; the harness passed them as -DNAME=VALUE\n");
    const launch_expressions& fallback = default_launch(c, m);
    std::string tunables;
    for (const auto& [k, x] : bound_tunables(c, m))
        tunables += (tunables.empty() ? "" : " ") + k + "=" + std::to_string(x);
    s += comment_text("//   launch: " + expressions_text(fallback) +
                      (tunables.empty() ? "" : "  with " + tunables)) +
         "\n//   per case (grid and block as numbers):\n";
    for (const case_launch& cl : case_launches(c, m)) s += case_comment(cl, fallback);
    return s +
           "//   replay: cuda-harness best-case-N.json (one case each); best.json holds all of "
           "this as data\n";
}

}  // namespace

fs::path create_run_folder(const fs::path& results_dir) {
    fs::create_directories(results_dir);
    for (int n = 1; n < 100000; ++n) {
        char name[32];
        std::snprintf(name, sizeof name, "run-%03d", n);
        const fs::path p = results_dir / name;
        if (::mkdir(p.c_str(), 0755) == 0) return p;
        if (errno != EEXIST)
            throw std::runtime_error(p.string() + ": cannot create (" + std::strerror(errno) + ")");
    }
    throw std::runtime_error(results_dir.string() + ": no free run number");
}

fs::path attempt_folder(const fs::path& run, int iteration, int attempt) {
    char name[64];
    std::snprintf(name, sizeof name, "candidates/iter-%02d/attempt-%d", iteration, attempt);
    return run / name;
}

std::string utc_now() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::string history_json(const search_outcome& o, const fs::path& run) {
    rapidjson::Document doc(rapidjson::kObjectType);
    auto& a = doc.GetAllocator();
    doc.AddMember("schema_version", 1, a);
    doc.AddMember("run", json_text(run.filename().string(), a), a);
    Value attempts(rapidjson::kArrayType);
    for (const auto& r : o.history) attempts.PushBack(attempt_json(r, run, a), a);
    doc.AddMember("attempts", attempts, a);
    return to_pretty_json(doc);
}

std::string summary_json(const search_outcome& o, const manifest& m, const oracle_files& oracle,
                         const fs::path& run, const std::string& model_json,
                         const evidence_report* evidence) {
    rapidjson::Document doc(rapidjson::kObjectType);
    auto& a = doc.GetAllocator();
    doc.AddMember("schema_version", 1, a);
    doc.AddMember("run_dir", json_text(absolute_path(run), a), a);
    doc.AddMember("stop_reason", rapidjson::StringRef(to_string(o.stop)), a);
    doc.AddMember("error", o.error.empty() ? Value() : json_text(o.error, a), a);
    doc.AddMember("initial", attempt_ref(o, o.initial, a), a);
    Value best = attempt_ref(o, o.best, a);
    if (o.best) add_winner_fields(best, o.history[*o.best].cand, m, a);
    doc.AddMember("best", best, a);
    doc.AddMember("best_source", o.best ? Value("best.cu") : Value(), a);
    doc.AddMember("best_json", o.best ? Value("best.json") : Value(), a);
    Value cases(rapidjson::kArrayType);
    for (std::size_t i = 0; i < m.cases.size(); ++i) {
        const manifest_case& mc = m.cases[i];
        Value c(rapidjson::kObjectType);
        c.AddMember("index", static_cast<uint64_t>(i), a);
        c.AddMember("name", json_text(mc.name, a), a);
        c.AddMember("kind",
                    json_text(mc.kind == case_kind::performance ? "performance" : "correctness", a),
                    a);
        const auto initial_ms = o.median_ms(o.initial, mc.name),
                   best_ms = o.median_ms(o.best, mc.name);
        c.AddMember("initial_median_ms", number(initial_ms), a);
        c.AddMember("best_median_ms", number(best_ms), a);
        c.AddMember("speedup", initial_ms && best_ms ? Value(*initial_ms / *best_ms) : Value(), a);
        c.AddMember("replay_request",
                    o.best ? json_text("best-case-" + std::to_string(i) + ".json", a) : Value(), a);
        Value outs(rapidjson::kArrayType);
        for (const manifest_arg& ma : m.args) {
            if (!ma.has_output()) continue;
            Value ov(rapidjson::kObjectType);
            ov.AddMember("arg", json_text(ma.name, a), a);
            ov.AddMember("dtype", json_text(std::string(dtype_name(ma.type)), a), a);
            ov.AddMember("atol", ma.tol.atol, a);
            ov.AddMember("rtol", ma.tol.rtol, a);
            const auto it = oracle.find({mc.name, ma.name});
            ov.AddMember("oracle",
                         it == oracle.end()
                             ? Value()
                             : json_text(it->second.lexically_relative(run).generic_string(), a),
                         a);
            outs.PushBack(ov, a);
        }
        c.AddMember("outputs", outs, a);
        cases.PushBack(c, a);
    }
    doc.AddMember("cases", cases, a);
    Value counts(rapidjson::kObjectType);
    std::map<std::string, int> rejected;
    int valid = 0;
    for (const auto& r : o.history) {
        if (r.verdict == verdict::valid)
            ++valid;
        else
            ++rejected[to_string(r.verdict)];
    }
    counts.AddMember("attempts", static_cast<int>(o.history.size()), a);
    counts.AddMember("valid", valid, a);
    Value rej(rapidjson::kObjectType);
    for (const auto& [k, n] : rejected) rej.AddMember(json_text(k, a), Value(n), a);
    counts.AddMember("rejected", rej, a);
    doc.AddMember("counts", counts, a);
    int iterations = 0;
    for (const auto& r : o.history) iterations = std::max(iterations, r.iteration);
    doc.AddMember("iterations_run", iterations, a);
    rapidjson::Document model;
    try_parse_json(model, model_json);
    doc.AddMember("model", model.IsNull() ? Value() : Value(model, a), a);
    doc.AddMember("evidence", evidence ? evidence_json(*evidence, o, m, a) : Value(), a);
    return to_pretty_json(doc);
}

std::string run_json(const run_info& info, const search_outcome& o) {
    rapidjson::Document doc(rapidjson::kObjectType);
    auto& a = doc.GetAllocator();
    add_document_header(doc, "cuda-optimizer");
    Value cmd(rapidjson::kArrayType);
    for (const auto& c : info.command_line) cmd.PushBack(json_text(c, a), a);
    doc.AddMember("command_line", cmd, a);
    doc.AddMember("proposer", rapidjson::StringRef(to_string(info.proposer)), a);
    Value settings(rapidjson::kObjectType);
    for (const auto& [k, v] : info.settings)
        settings.AddMember(json_text(k, a), setting_json(v, a), a);
    doc.AddMember("settings", settings, a);
    Value hashes(rapidjson::kObjectType);
    for (const auto& [k, v] : info.sha256) hashes.AddMember(json_text(k, a), json_text(v, a), a);
    doc.AddMember("sha256", hashes, a);
    rapidjson::Document device;
    try_parse_json(device, info.device_json);
    doc.AddMember("device", device.IsNull() ? Value() : Value(device, a), a);
    doc.AddMember("started", json_text(info.started_utc, a), a);
    doc.AddMember("finished", info.finished_utc.empty() ? Value() : json_text(info.finished_utc, a),
                  a);
    doc.AddMember("wall_s", info.wall_s, a);
    double harness_s = 0, gpu_ms = 0;
    for (const auto& r : o.history) {
        harness_s += r.harness_wall_ms / 1000.0;
        for (const auto& ce : r.cases)
            if (ce.median_ms) gpu_ms += *ce.median_ms * info.launches_per_measured_case;
    }
    doc.AddMember("harness_wall_s", harness_s, a);
    doc.AddMember("gpu_busy_ms_estimate", gpu_ms, a);
    doc.AddMember("attempts", static_cast<int>(o.history.size()), a);
    doc.AddMember("stop_reason", rapidjson::StringRef(to_string(o.stop)), a);
    doc.AddMember("error", o.error.empty() ? Value() : json_text(o.error, a), a);
    rapidjson::Document model;
    try_parse_json(model, info.model_json);
    doc.AddMember("model", model.IsNull() ? Value() : Value(model, a), a);
    return to_pretty_json(doc);
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
    doc.AddMember("schema_version", 1, a);
    doc.AddMember("run_dir", json_text(absolute_path(run), a), a);
    doc.AddMember("source_file", Value("best.cu"), a);
    doc.AddMember("iteration", r.iteration, a);
    doc.AddMember("attempt", r.attempt, a);
    doc.AddMember("proposer", rapidjson::StringRef(to_string(r.cand.proposer)), a);
    doc.AddMember("label", json_text(r.cand.label, a), a);
    doc.AddMember("speedup_vs_initial", speedup_of(r), a);
    doc.AddMember("geomean_ms", number(r.geomean_ms), a);
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
        write_file_atomic(run / ("best-case-" + std::to_string(i) + ".json"),
                          write_request_json(evaluator.make_request(best, paths, false)));
    }
}

}  // namespace cuopt
