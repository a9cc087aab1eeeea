#include "orchestrator/evaluation/torch_baseline.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/file_io.hpp"
#include "common/json_builder.hpp"
#include "common/json_fields.hpp"
#include "orchestrator/contract/integer_expression.hpp"
#include "orchestrator/evaluation/ranker.hpp"
#include "orchestrator/evaluation/torch_oracle.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

rapidjson::Value init_json(const generator_spec& g, json_allocator& al) {
    json_object o(al);
    o.add("kind", k_generator_kinds.name(g.kind)).add("low", g.low).add("high", g.high);
    return o.add("mean", g.mean).add("stddev", g.stddev).add("value", g.value).take();
}

std::string job_text(const candidate& c, const manifest& m, const evaluator_settings& s) {
    const torch_reference& t = *s.torch;
    rapidjson::Document d;
    json_object root(d);
    auto& al = d.GetAllocator();
    root.add("source", t.problem.source.string()).add("form", t.problem.form);
    root.add("workloads", t.problem.workloads.string()).add("device", t.gpu ? "cuda" : "cpu");
    root.add("gpu", s.device).add("mode", c.pytorch_mode);
    root.add("warmup", s.timing.warmup).add("iterations", s.timing.iterations);
    root.add("flush_l2", s.timing.flush_l2).add("fresh_inputs", s.timing.fresh_inputs);
    json_array cases(al);
    for (const manifest_case& mc : m.cases) {
        if (mc.kind != case_kind::performance) continue;
        json_object jc(al);
        std::map<std::string, std::int64_t> axes;
        for (const std::string& a : t.problem.axes)
            if (mc.params.count(a)) axes[a] = mc.params.at(a);
        jc.add("name", mc.name).add("axes", axes);
        json_array args(al);
        for (const torch_problem::tensor& a : t.problem.args) {
            json_object ja(al);
            ja.add("name", a.name).add("role", a.role).add("dtype", a.dtype);
            if (a.role == "scalar") {
                args.push(ja.add("value", a.value).take());
                continue;
            }
            std::vector<std::int64_t> shape;
            for (const std::string& e : a.shape)
                shape.push_back(evaluate_integer_expression(e, mc.params));
            const input_init& init = m.init_for(mc, *m.find_arg(a.name));
            args.push(ja.add("shape", shape).add("init", init_json(init.generator, al)).take());
        }
        cases.push(jc.add("args", args.take()).take());
    }
    root.add("cases", cases.take());
    return to_compact_json(d);
}

void fill_case(case_evaluation& ce, std::vector<double> samples) {
    ce.status = case_status::passed;
    ce.iterations = static_cast<int>(samples.size());
    if (samples.empty()) return;
    ce.samples_ms = samples;
    std::sort(samples.begin(), samples.end());
    const std::size_t n = samples.size();
    ce.median_ms = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
    ce.min_ms = samples.front();
    ce.max_ms = samples.back();
    const double mean = std::accumulate(samples.begin(), samples.end(), 0.0) / n;
    ce.mean_ms = mean;
    double sq = 0;
    for (const double x : samples) sq += (x - mean) * (x - mean);
    ce.stdev_ms = n > 1 ? std::sqrt(sq / (n - 1)) : 0.0;
}

}  // namespace

candidate pytorch_candidate(const torch_reference& t, const std::string& mode,
                            const std::string& entry) {
    candidate c;
    c.pytorch_mode = mode;
    c.entry = entry;
    c.proposer = proposer_kind::initial;
    c.label = "pytorch-" + mode;
    c.rationale = "PyTorch " + std::string(mode == "eager" ? "eager" : "torch.compile") + ": " +
                  t.problem.source.filename().string() + "'s " + t.problem.entry +
                  ", the problem's own code";
    c.source = "# PyTorch " + mode +
               " (not a CUDA kernel): " + t.problem.source.filename().string() + "\n" +
               read_text_file(t.problem.source);
    return c;
}

attempt_result time_pytorch(const candidate& c, const fs::path& folder, const manifest& m,
                            const evaluator_settings& s, process_runner& runner) {
    attempt_result r;
    r.cand = c;
    r.folder = folder;
    r.device = s.device;
    r.confinement = "landlock";
    for (const manifest_case& mc : m.cases) {
        case_evaluation& ce = r.cases.emplace_back();
        ce.name = mc.name;
        ce.kind = mc.kind;
        ce.status = case_status::passed;  // forward is the oracle: right by definition
    }
    r.verdict = verdict::valid;
    if (s.correctness_only || !s.torch) return r;
    fs::create_directories(folder);
    write_file_atomic(folder / "job.json", job_text(c, m, s));
    std::vector<fs::path> readable{s.torch->problem.source};
    if (!s.torch->problem.workloads.empty()) readable.push_back(s.torch->problem.workloads);
    try {
        const std::string answer = run_pytorch_side(
            s.torch->python, {"time", folder, readable, s.torch->gpu, std::chrono::minutes(30)},
            runner);
        const rapidjson::Document d = parse_json(answer, (folder / "out.json").string());
        const json_field root(d, (folder / "out.json").string());
        if (const auto e = root.find("error")) throw python_error(e->text());
        for (const json_field& jc : root["cases"].items()) {
            const std::string name = jc.text("name");
            for (case_evaluation& ce : r.cases)
                if (ce.name == name) fill_case(ce, jc.numbers("samples_ms"));
        }
    } catch (const std::exception& e) {
        r.verdict = verdict::harness_error;
        r.reason = std::string("PyTorch ") + c.pytorch_mode + ": " + e.what();
        return r;
    }
    std::vector<double> medians;
    for (const case_evaluation& ce : r.cases)
        if (ce.kind == case_kind::performance && ce.median_ms) medians.push_back(*ce.median_ms);
    r.geomean_ms = geometric_mean(medians);
    return r;
}

}  // namespace cuopt
