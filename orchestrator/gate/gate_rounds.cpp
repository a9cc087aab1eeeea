#include "orchestrator/gate/gate_rounds.hpp"

#include <algorithm>

#include "common/cli_value_checks.hpp"
#include "common/exit_codes.hpp"
#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "common/message_text.hpp"
#include "orchestrator/gate/accepted_figures.hpp"

namespace cuopt {

namespace fs = std::filesystem;
using rapidjson::Value;

namespace {

// Where a replay request's input_file lies under `base` (the run, or the gate's own folder):
// refused unless relative and inside it, links resolved. The accepted run folder may come
// from someone else, and a name like "/etc/x" or "../../x" would otherwise be replaced by a
// link (link_or_copy removes what is at its destination first).
fs::path input_inside(const fs::path& base, const std::string& name) {
    try {
        return resolve_inside(base, name);
    } catch (const std::invalid_argument&) {
        throw json_error("a replay request's input_file " + name.substr(0, 200) +
                         ": expected a path inside the run folder");
    }
}

// The request in `folder`, its kernel `source`, its input files linked beside it (the same
// relative paths as in the run) and its outputs in outputs/.
void prepare_run(const gate_plan& plan, const rapidjson::Document& merged, const fs::path& source,
                 const fs::path& folder) {
    rapidjson::Document req;
    req.CopyFrom(merged, req.GetAllocator());
    auto& a = req.GetAllocator();
    fs::create_directories(folder / "outputs");
    write_file_atomic(folder / "kernel.cu", read_text_file(source));
    req["kernel"]["source_file"].SetString("kernel.cu", a);
    if (plan.device) req["device"].SetInt(*plan.device);
    // The run's inputs key, named from this folder: the harness reads it inside --root (the
    // run), where the gated kernel's compile, confined to this folder, cannot.
    if (const auto key = json_field(merged, "replay request").find("inputs_key"))
        req["inputs_key"]["file"] = json_text(
            input_inside(plan.run, key->text("file")).lexically_relative(folder).generic_string(),
            a);
    // Read from `merged` (as the run wrote it), written into the copy.
    const json_field cases = json_field(merged, "replay request")["cases"];
    for (std::size_t c = 0; c < cases.size(); ++c) {
        const json_field args = cases[c]["args"];
        Value& written = req["cases"][static_cast<rapidjson::SizeType>(c)]["args"];
        for (std::size_t i = 0; i < args.size(); ++i) {
            if (const auto name = args[i].optional_text("input_file"))
                link_or_copy(input_inside(plan.run, *name), input_inside(folder, *name));
            for (const char* out : {"output_file", "input_dump_file"})
                if (const auto name = args[i].optional_text(out))
                    written[static_cast<rapidjson::SizeType>(i)][out] =
                        json_text("outputs/" + fs::path(*name).filename().string(), a);
        }
    }
    write_file_atomic(folder / "request.json", to_pretty_json(req));
}

verdict verdict_of(const process_result& p) {
    if (p.timed_out) return verdict::timeout;
    if (p.signal) return verdict::crash;
    if (p.exit_code == to_int(exit_code::compile_error)) return verdict::compile_error;
    if (p.exit_code == to_int(exit_code::context_lost)) return verdict::cuda_error;
    return verdict::harness_error;
}

// The response's cases against the replay cases: failed cases, outputs against the oracle.
void judge_cases(const gate_plan& plan, const harness_response& resp, kernel_run& k) {
    attempt_result& r = k.result;
    for (const replay_case& c : plan.cases) {
        const auto rc = std::find_if(resp.cases.begin(), resp.cases.end(),
                                     [&](const response_case& x) { return x.name == c.name; });
        if (rc == resp.cases.end() || rc->status != case_run_status::ok) {
            r.verdict = rc == resp.cases.end()                          ? verdict::harness_error
                        : rc->status == case_run_status::invalid_timing ? verdict::invalid_timing
                                                                        : verdict::cuda_error;
            r.reason = "case " + quote_value(c.name) + ": " +
                       (rc == resp.cases.end() ? "the response has no such case" : rc->error);
            return;
        }
        if (std::string written = inputs_written_reason(*rc); !written.empty()) {
            r.verdict = verdict::mutates_inputs;  // whatever its outputs
            r.reason = std::move(written);
            return;
        }
        r.cases.push_back(case_from_response(
            *rc, c.performance ? case_kind::performance : case_kind::correctness));
        for (const replay_output_check& o : check_replay_outputs(c, r.folder / "outputs"))
            if (!o.passed)
                k.wrong.push_back("case " + quote_value(c.name) + ": " + o.arg + ": " + o.summary);
    }
    r.verdict = k.wrong.empty() ? verdict::valid : verdict::wrong_output;
    r.reason = k.wrong.empty() ? "" : k.wrong.front();
}

kernel_run run_kernel(const gate_plan& plan, const rapidjson::Document& merged,
                      const gate_kernel& kernel, int round, process_runner& runner) {
    kernel_run k;
    k.round = round;
    k.role = kernel.role;
    attempt_result& r = k.result;
    r.iteration = round;
    r.cand.label = kernel.role;
    r.folder = plan.folder / ("round-" + std::to_string(round)) / kernel.role;
    prepare_run(plan, merged, kernel.source, r.folder);
    const fs::path response = r.folder / "response.json";
    const process_result p =
        runner.run({plan.harness, (r.folder / "request.json").string(), "--response",
                    response.string(), "--quiet", "--root", plan.run.string()},
                   milliseconds_of(plan.timeout_s));
    r.harness_exit_code = p.exit_code;
    r.harness_wall_ms = p.wall_ms;
    write_file_atomic(r.folder / "harness.stderr.txt", p.stderr_text);
    const bool answered = !p.timed_out && !p.signal &&
                          (p.exit_code == 0 || p.exit_code == to_int(exit_code::case_failed));
    if (!answered) {
        const harness_failure f = describe_harness_failure(p, response, "gate");
        k.no_machine = f.no_machine;
        r.verdict = verdict_of(p);
        r.reason = f.message;
        return k;
    }
    try {
        const harness_response resp = read_response(response);
        k.device = resp.device;
        r.timer = resp.timer;
        r.gpu_monitor = resp.gpu_monitor;
        judge_cases(plan, resp, k);
    } catch (const std::exception& e) {
        r.verdict = verdict::harness_error;
        r.reason = "cuda-harness " + p.describe() + " without a usable response: " + e.what();
    }
    return k;
}

}  // namespace

case_samples samples_of(const std::vector<kernel_run>& runs, const std::string& role) {
    case_samples out;
    for (const kernel_run& k : runs)
        if (k.role == role && k.result.verdict == verdict::valid)
            for (const case_evaluation& ce : k.result.cases)
                if (ce.kind == case_kind::performance && !ce.samples_ms.empty())
                    out[ce.name].push_back(ce.samples_ms);
    return out;
}

rapidjson::Document merged_replay_request(const fs::path& run,
                                          const std::vector<replay_case>& cases) {
    rapidjson::Document merged;
    for (const replay_case& c : cases) {
        if (!fs::is_regular_file(c.request))
            throw cannot_judge_error("no replay request " + c.request.string() + " for case '" +
                                     c.name + "'");
        rapidjson::Document doc;
        try {  // inside the run, no link followed on the way: the run may be someone else's
            doc = parse_json(
                read_text_beneath(
                    run, fs::absolute(c.request).lexically_relative(fs::absolute(run)), 64 << 20),
                c.request.filename().string());
            validate_json(doc, embedded_schema("request"), c.request.filename().string());
        } catch (const std::exception& e) {
            throw cannot_judge_error(std::string("unreadable replay request: ") + e.what());
        }
        if (merged.IsNull()) {
            merged.Swap(doc);
            continue;
        }
        for (const char* part : {"kernel", "timing"})
            if (to_compact_json(doc[part]) != to_compact_json(merged[part]))
                throw cannot_judge_error(c.request.filename().string() + "'s " + part +
                                         " differs from the other replay requests'");
        for (Value& rc : doc["cases"].GetArray())
            merged["cases"].PushBack(Value(rc, merged.GetAllocator()), merged.GetAllocator());
    }
    if (merged.IsNull()) throw cannot_judge_error("the run records no case to replay");
    return merged;
}

std::vector<kernel_run> run_rounds(const gate_plan& plan,
                                   const std::function<void(const std::string&)>& progress) {
    const rapidjson::Document merged = merged_replay_request(plan.run, plan.cases);
    const auto runner = make_child_process_runner();
    std::vector<kernel_run> out;
    for (int round = 1; round <= plan.runs; ++round) {
        std::vector<gate_kernel> order = plan.kernels;
        if (round % 2 == 0) std::reverse(order.begin(), order.end());
        for (const gate_kernel& k : order) {
            out.push_back(run_kernel(plan, merged, k, round, *runner));
            const attempt_result& r = out.back().result;
            progress("  round " + std::to_string(round) + "/" + std::to_string(plan.runs) + " " +
                     k.role + ": " + to_string(r.verdict) + (r.reason.empty() ? "" : ": ") +
                     r.reason);
            if (out.back().no_machine) return out;
        }
    }
    return out;
}

}  // namespace cuopt
