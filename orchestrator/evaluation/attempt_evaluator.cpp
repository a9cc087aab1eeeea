#include "orchestrator/evaluation/attempt_evaluator.hpp"

#include <rapidjson/document.h>

#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "orchestrator/evaluation/ranker.hpp"

namespace cuopt {

namespace fs = std::filesystem;
using rapidjson::Value;

namespace {

const char* generator_name(generator_kind k) {
    switch (k) {
        case generator_kind::uniform: return "uniform";
        case generator_kind::normal: return "normal";
        case generator_kind::int_range: return "int_range";
        case generator_kind::sequence: return "sequence";
        case generator_kind::constant: return "constant";
    }
    return "uniform";
}

std::string output_name(const std::string& case_name, const std::string& arg) { return case_name + "." + arg + ".bin"; }

std::string tail(const std::string& s, std::size_t n) { return s.size() <= n ? s : "..." + s.substr(s.size() - n); }

void link_or_copy(const fs::path& from, const fs::path& to) {
    fs::create_directories(to.parent_path());
    std::error_code ec;
    fs::remove(to, ec);
    fs::create_hard_link(from, to, ec);
    if (ec) fs::copy_file(from, to, fs::copy_options::overwrite_existing);
}

// Every file input the manifest names, hard-linked (else copied) into folder/inputs/.
void link_input_files(const manifest& m, const fs::path& folder) {
    for (const manifest_case& mc : m.cases)
        for (const manifest_arg& ma : m.args)
            if (ma.has_input())
                if (const auto& init = m.init_for(mc, ma); init.file)
                    link_or_copy(*init.file, folder / "inputs" / init.file->filename());
}

// The compile block of a harness response.
compile_summary read_compile_block(const Value& comp) {
    compile_summary out;
    out.ok = comp["ok"].GetBool();
    out.cache_hit = comp["cache_hit"].GetBool();
    out.wall_ms = comp["wall_ms"].GetDouble();
    out.log = comp["log"].GetString();
    const Value& res = comp["resources"];
    auto opt = [&res](const char* k) { return res[k].IsInt() ? std::optional<int>(res[k].GetInt()) : std::nullopt; };
    out.registers = opt("registers");
    out.static_shared_bytes = opt("static_shared_bytes");
    out.local_bytes = opt("local_bytes");
    out.spill_store_bytes = opt("spill_store_bytes");
    return out;
}

}  // namespace

attempt_evaluator::attempt_evaluator(const manifest& m, evaluator_settings settings, process_runner& runner)
    : m_manifest(m), m_settings(std::move(settings)), m_runner(runner) {}

std::string attempt_evaluator::build_request(const candidate& c, const request_paths& paths, bool reference) const {
    const bool dump_inputs = reference;
    rapidjson::Document doc(rapidjson::kObjectType);
    auto& a = doc.GetAllocator();
    auto str = [&a](const std::string& s) { return Value(s.c_str(), a); };
    doc.AddMember("schema_version", 1, a);
    Value kernel(rapidjson::kObjectType);
    kernel.AddMember("source_file", str(paths.source_file), a);
    kernel.AddMember("entry", str(c.entry), a);
    Value options(rapidjson::kArrayType);
    for (const auto& o : c.compile_options) options.PushBack(str(o), a);
    kernel.AddMember("compile_options", options, a);
    Value defines(rapidjson::kObjectType);
    for (const auto& [k, v] : c.defines) defines.AddMember(str(k), str(v), a);
    for (const auto& [k, v] : c.tunables)
        if (!c.defines.count(k)) defines.AddMember(str(k), Value(static_cast<int64_t>(v)), a);
    kernel.AddMember("defines", defines, a);
    doc.AddMember("kernel", kernel, a);
    doc.AddMember("device", m_settings.device, a);
    Value timing(rapidjson::kObjectType);
    timing.AddMember("warmup", m_settings.timing.warmup, a);
    timing.AddMember("iterations", m_settings.timing.iterations, a);
    timing.AddMember("flush_l2", m_settings.timing.flush_l2, a);
    timing.AddMember("fresh_inputs", m_settings.timing.fresh_inputs, a);
    doc.AddMember("timing", timing, a);

    std::map<std::string, std::int64_t> tunables = m_manifest.default_tunables();
    for (const auto& [k, v] : c.tunables) tunables[k] = v;
    Value cases(rapidjson::kArrayType);
    for (const manifest_case& mc : m_manifest.cases) {
        if (paths.only_case && *paths.only_case != mc.name) continue;
        const expression_variables vars = m_manifest.variables(mc, tunables);
        const launch_config l = evaluate_launch(launch_for(c, m_manifest, mc), vars);
        Value jc(rapidjson::kObjectType);
        jc.AddMember("name", str(mc.name), a);
        const bool measured = mc.kind == case_kind::performance;
        jc.AddMember("measure", measured && !reference, a);
        // A candidate's checked launch of a measured case is the last timed one.
        if (reference && measured && m_settings.timing.fresh_inputs)
            jc.AddMember("launch_index_base",
                         static_cast<uint64_t>(m_settings.timing.warmup + m_settings.timing.iterations), a);
        Value launch(rapidjson::kObjectType);
        Value grid(rapidjson::kArrayType), block(rapidjson::kArrayType);
        for (int i = 0; i < 3; ++i) grid.PushBack(l.grid[i], a), block.PushBack(l.block[i], a);
        launch.AddMember("grid", grid, a);
        launch.AddMember("block", block, a);
        launch.AddMember("dynamic_shared_bytes", l.dynamic_shared_bytes, a);
        jc.AddMember("launch", launch, a);
        Value args(rapidjson::kArrayType);
        for (const manifest_arg& ma : m_manifest.args) {
            Value arg(rapidjson::kObjectType);
            arg.AddMember("name", str(ma.name), a);
            arg.AddMember("dtype", str(std::string(dtype_name(ma.type))), a);
            if (!ma.is_buffer()) {
                if (ma.value_is_number)
                    arg.AddMember("value", std::stod(ma.value), a);
                else
                    arg.AddMember("value", static_cast<int64_t>(evaluate_integer_expression(ma.value, vars)), a);
                args.PushBack(arg, a);
                continue;
            }
            arg.AddMember("count", static_cast<uint64_t>(evaluate_integer_expression(ma.count, mc.params)), a);
            if (ma.has_input()) {
                const input_init& init = m_manifest.init_for(mc, ma);
                if (init.file) {
                    arg.AddMember("input_file", str(paths.inputs_prefix + init.file->filename().string()), a);
                } else {
                    const generator_spec& g = init.generator;
                    Value gen(rapidjson::kObjectType);
                    gen.AddMember("kind", Value(generator_name(g.kind), a), a);
                    gen.AddMember("low", g.low, a);
                    gen.AddMember("high", g.high, a);
                    gen.AddMember("mean", g.mean, a);
                    gen.AddMember("stddev", g.stddev, a);
                    gen.AddMember("start", g.start, a);
                    gen.AddMember("step", g.step, a);
                    gen.AddMember("value", g.value, a);
                    gen.AddMember("seed", static_cast<uint64_t>(g.seed), a);
                    arg.AddMember("generator", gen, a);
                    if (dump_inputs)
                        arg.AddMember("input_dump_file", str(paths.inputs_prefix + output_name(mc.name, ma.name)), a);
                }
            }
            if (ma.has_output()) arg.AddMember("output_file", str(paths.outputs_prefix + output_name(mc.name, ma.name)), a);
            args.PushBack(arg, a);
        }
        jc.AddMember("args", args, a);
        cases.PushBack(jc, a);
    }
    doc.AddMember("cases", cases, a);
    return to_pretty_json(doc);
}

compile_summary attempt_evaluator::compile_only(const candidate& c, const fs::path& folder) const {
    compile_summary out;
    fs::create_directories(folder);
    write_file_atomic(folder / "kernel.cu", c.source);
    link_input_files(m_manifest, folder);
    try {
        write_file_atomic(folder / "request.json", build_request(c, request_paths{}, false));
    } catch (const expression_error& e) {
        out.log = std::string("the launch does not evaluate: ") + e.what();
        return out;
    }
    const process_result p = m_runner.run({m_settings.harness, (folder / "request.json").string(), "--compile-only",
                                           "--quiet", "--response", (folder / "response.json").string()},
                                          m_settings.timeout);
    try {
        const rapidjson::Document d = parse_json(read_text_file(folder / "response.json"), "compile response");
        if (d["compile"].IsObject()) {
            out = read_compile_block(d["compile"]);
            out.ok = out.ok && p.exit_code == 0;
        }
        if (!out.ok && d["error"].IsString()) out.log = std::string(d["error"].GetString()) + "\n" + out.log;
    } catch (const std::exception& e) {
        out.log = "cuda-harness " + p.describe() + ": " + e.what();
    }
    return out;
}

attempt_result attempt_evaluator::evaluate(const candidate& c, const fs::path& folder, const oracle_files* oracle) const {
    attempt_result r;
    r.cand = c;
    r.folder = folder;
    fs::create_directories(folder);
    write_file_atomic(folder / "kernel.cu", c.source);
    link_input_files(m_manifest, folder);
    const fs::path request = folder / "request.json";
    const fs::path response = folder / "response.json";
    write_file_atomic(request, build_request(c, request_paths{}, oracle == nullptr));
    std::error_code ec;
    fs::remove(response, ec);

    std::vector<std::string> argv = {m_settings.harness, request.string(), "--response", response.string(), "--quiet"};
    if (!m_settings.cache_dir.empty()) argv.insert(argv.end(), {"--cache-dir", m_settings.cache_dir});
    const process_result p = m_runner.run(argv, m_settings.timeout);
    r.harness_exit_code = p.exit_code;
    r.harness_signal = p.signal;
    r.harness_wall_ms = p.wall_ms;
    r.harness_stderr = tail(p.stderr_text, 4000);
    write_file_atomic(folder / "harness.stderr.txt", p.stderr_text);
    if (p.failed_to_start) {
        r.verdict = "harness_error";
        r.reason = p.describe();
        return r;
    }
    if (p.timed_out || p.signal) {
        r.verdict = p.timed_out ? "timeout" : "crash";
        r.reason = "cuda-harness " + p.describe();
        return r;
    }
    rapidjson::Document doc;
    try {
        doc = parse_json(read_text_file(response), response.string());
        validate_json(doc, embedded_schema("response"), response.filename().string());
    } catch (const std::exception& e) {
        r.verdict = "harness_error";
        r.reason = "cuda-harness " + p.describe() + " without a usable response: " + e.what();
        return r;
    }

    if (doc["compile"].IsObject()) r.compile = read_compile_block(doc["compile"]);
    const std::string status = doc["status"].GetString();
    const std::string error = doc["error"].IsString() ? doc["error"].GetString() : "";
    for (const Value& jc : doc["cases"].GetArray()) {
        case_evaluation ce;
        ce.name = jc["name"].GetString();
        for (const auto& mc : m_manifest.cases)
            if (mc.name == ce.name) ce.kind = mc.kind;
        const std::string cs = jc["status"].GetString();
        ce.status = cs == "ok" ? "passed" : cs == "skipped" ? "not_run" : "failed";
        if (jc["error"].IsString()) ce.reason = jc["error"].GetString();
        if (jc["timing"].IsObject()) {
            const Value& t = jc["timing"];
            ce.median_ms = t["median_ms"].GetDouble();
            ce.mean_ms = t["mean_ms"].GetDouble();
            ce.min_ms = t["min_ms"].GetDouble();
            ce.max_ms = t["max_ms"].GetDouble();
            ce.stdev_ms = t["stdev_ms"].GetDouble();
        }
        for (const Value& o : jc["outputs"].GetArray()) {
            if (std::string(o["role"].GetString()) != "output") continue;
            output_check oc;
            oc.arg = o["arg"].GetString();
            oc.file = folder / o["file"].GetString();
            oc.unwritten = o["unwritten"].GetUint64();
            ce.outputs.push_back(oc);
        }
        r.cases.push_back(std::move(ce));
    }
    if (status != "ok") {
        r.verdict = status == "compile_error" ? "compile_error"
                    : status == "invalid_request" ? "invalid_request"
                    : status == "cuda_error" ? "cuda_error"
                                             : "harness_error";
        r.reason = error;
        return r;
    }
    if (!oracle) {
        r.verdict = "valid";
        return r;
    }

    // Every output of every case against the oracle.
    std::string first_failure;
    bool any_unwritten = false, any_nan = false;
    for (case_evaluation& ce : r.cases) {
        for (output_check& oc : ce.outputs) {
            const manifest_arg* arg = nullptr;
            for (const auto& ma : m_manifest.args)
                if (ma.name == oc.arg) arg = &ma;
            const auto key = std::make_pair(ce.name, oc.arg);
            const auto it = oracle->find(key);
            if (!arg || it == oracle->end()) continue;
            const auto actual = read_binary_file(oc.file);
            const auto expected = read_binary_file(it->second);
            if (actual.size() != expected.size()) {
                ce.status = "failed";
                ce.reason = oc.arg + ": " + std::to_string(actual.size()) + " bytes but the oracle has " +
                            std::to_string(expected.size());
            } else {
                oc.validation = validate_output(arg->type, actual.data(), expected.data(),
                                                actual.size() / dtype_size(arg->type), arg->tol);
                if (!oc.validation->passed) {
                    ce.status = "failed";
                    ce.reason = oc.arg + ": " + oc.validation->summary();
                    any_unwritten |= oc.validation->unwritten > 0;
                    any_nan |= oc.validation->non_finite > 0;
                }
            }
            if (ce.status == "failed" && first_failure.empty()) first_failure = "case '" + ce.name + "': " + ce.reason;
        }
    }
    if (!first_failure.empty()) {
        r.verdict = any_unwritten ? "unwritten_output" : any_nan ? "nan_output" : "wrong_output";
        r.reason = first_failure;
        return r;
    }
    std::vector<double> medians;
    for (const auto& ce : r.cases)
        if (ce.kind == case_kind::performance && ce.median_ms) medians.push_back(*ce.median_ms);
    r.geomean_ms = geometric_mean(medians);
    r.verdict = "valid";
    return r;
}

}  // namespace cuopt
