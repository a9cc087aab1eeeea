// Runs a candidate: its attempt folder and request, the harness (a child or a worker), and the
// response handed to response_judge; also compile-only runs and the vendor library's.
#include "orchestrator/evaluation/attempt_evaluator.hpp"

#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "common/message_text.hpp"
#include "orchestrator/contract/request_writer.hpp"
#include "orchestrator/evaluation/request_builder.hpp"
#include "orchestrator/evaluation/response_judge.hpp"
#include "orchestrator/evaluation/torch_baseline.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

std::string tail(const std::string& s, std::size_t n) {
    return s.size() <= n ? s : "..." + s.substr(s.size() - n);
}

// Every file input the manifest names, hard-linked (else copied) into folder/inputs/.
void link_input_files(const manifest& m, const fs::path& folder) {
    for (const manifest_case& mc : m.cases)
        for (const manifest_arg& ma : m.args)
            if (ma.has_input())
                if (const auto& init = m.init_for(mc, ma); init.file)
                    link_or_copy(*init.file, folder / "inputs" / m.input_link(*init.file));
}

// What NVRTC's messages call a candidate's source, which its attempt folder holds byte for byte
// as kernel.cu (so line numbers stay true): the user's own file for the initial kernel, the
// reference and a --candidates file (their label is that file's name); "" (kernel.cu) for a
// source a proposer made.
std::string source_name_for(const candidate& c, const evaluator_settings& s) {
    const bool from_file = c.proposer == proposer_kind::initial ||
                           c.proposer == proposer_kind::reference ||
                           c.proposer == proposer_kind::files;
    if (from_file) return c.label;
    // The autotuner changes defines only: its source is the initial kernel's file, line for line.
    return c.proposer == proposer_kind::autotune ? s.initial_file_name : "";
}

// Writes kernel.cu, the inputs and request.json into a fresh attempt folder; "" or why the
// request could not be made.
std::string prepare_folder(const attempt_evaluator& e, const manifest& m, const candidate& c,
                           const fs::path& folder, bool reference, request* made = nullptr,
                           const oracle_files* oracle = nullptr) {
    fs::create_directories(folder);
    write_file_atomic(folder / "kernel.cu", c.source);
    link_input_files(m, folder);
    try {
        request req = e.make_request(c, attempt_evaluator::request_paths{}, reference);
        req.folder = folder;  // the inputs key is named relative to it
        req.kernel.display_name = source_name_for(c, e.settings());
        if (oracle && !reference && e.checks_on_gpu()) e.add_gpu_checks(req, folder, *oracle);
        write_file_atomic(folder / "request.json", write_request_json(req));
        if (made) *made = req;
    } catch (const expression_error& ex) {
        return std::string("the launch does not evaluate: ") + ex.what();
    }
    return "";
}

vendor_call vendor_call_for(const vendor_baseline_spec& v, const manifest_case& mc) {
    vendor_call call;
    call.op = *k_vendor_ops.parse(v.op);  // the manifest's schema enum guarantees it
    call.layout = *k_matrix_layouts.parse(v.layout);
    if (is_row_sum(call.op)) {
        call.rows = static_cast<int>(evaluate_integer_expression(v.rows, mc.params));
        call.cols = static_cast<int>(evaluate_integer_expression(v.cols, mc.params));
        call.x = v.x;
        call.y = v.y;
        return call;
    }
    call.m = static_cast<int>(evaluate_integer_expression(v.m, mc.params));
    call.n = static_cast<int>(evaluate_integer_expression(v.n, mc.params));
    call.k = static_cast<int>(evaluate_integer_expression(v.k, mc.params));
    call.a = v.a;
    call.b = v.b;
    call.c = v.c;
    call.scale_a = v.scale_a;
    call.scale_b = v.scale_b;
    return call;
}

}  // namespace

attempt_evaluator::attempt_evaluator(const manifest& m, evaluator_settings settings,
                                     process_runner& runner)
    : m_manifest(m), m_settings(std::move(settings)), m_runner(runner) {}

request attempt_evaluator::make_request(const candidate& c, const request_paths& paths,
                                        bool reference) const {
    return request_builder(m_manifest, m_settings).make_request(c, paths, reference);
}

bool attempt_evaluator::checks_on_gpu() const {
    return request_builder(m_manifest, m_settings).checks_on_gpu();
}

void attempt_evaluator::add_gpu_checks(request& req, const fs::path& folder,
                                       const oracle_files& oracle) const {
    request_builder(m_manifest, m_settings).add_gpu_checks(req, folder, oracle);
}

compile_summary attempt_evaluator::compile_only(const candidate& c, const fs::path& folder,
                                                const fs::path& cubin_out) const {
    compile_summary out;
    if (const std::string bad = prepare_folder(*this, m_manifest, c, folder, false); !bad.empty()) {
        out.log = bad;
        return out;
    }
    std::vector<std::string> argv = {m_settings.harness, (folder / "request.json").string(),
                                     "--compile-only",   "--quiet",
                                     "--response",       (folder / "response.json").string()};
    if (!m_settings.arch.empty()) argv.insert(argv.end(), {"--arch", m_settings.arch});
    if (!cubin_out.empty()) argv.insert(argv.end(), {"--cubin-out", cubin_out.string()});
    if (m_settings.inputs_key)
        argv.insert(argv.end(), {"--root", m_settings.inputs_key->file.parent_path().string()});
    // The run's cubin cache, so that a later run of the same request finds what NVRTC made here.
    if (!m_settings.cache_dir.empty())
        argv.insert(argv.end(), {"--cache-dir", m_settings.cache_dir});
    const process_result p = m_runner.run(argv, m_settings.timeout);
    try {
        const harness_response response = read_response(folder / "response.json");
        if (response.compile) {
            out = *response.compile;
            out.ok = out.ok && p.exit_code == 0;
        }
        if (!out.ok && !response.error.empty()) out.log = response.error + "\n" + out.log;
    } catch (const std::exception& e) {
        out.log = "cuda-harness " + p.describe() + ": " + e.what();
    }
    return out;
}

std::optional<harness_response> attempt_evaluator::run_harness(const fs::path& folder,
                                                               attempt_result& r,
                                                               bool trusted) const {
    const fs::path response = folder / "response.json";
    std::error_code ec;
    fs::remove(response, ec);
    std::vector<std::string> argv = m_settings.wrapper;
    argv.insert(argv.end(), {m_settings.harness, (folder / "request.json").string(), "--response",
                             response.string(), "--quiet"});
    if (!m_settings.cache_dir.empty())
        argv.insert(argv.end(), {"--cache-dir", m_settings.cache_dir});
    // The inputs key lies in the run folder, outside the request's: the harness may read there.
    if (m_settings.inputs_key)
        argv.insert(argv.end(), {"--root", m_settings.inputs_key->file.parent_path().string()});
    const process_result p = m_runner.run(
        argv, m_settings.timeout, run_purpose{m_settings.device, trusted, m_settings.own_process});
    r.harness_exit_code = p.exit_code;
    r.harness_signal = p.signal;
    r.harness_wall_ms = p.wall_ms;
    r.harness_stderr = tail(p.stderr_text, 4000);
    write_file_atomic(folder / "harness.stderr.txt", p.stderr_text);
    if (p.failed_to_start || p.timed_out || p.signal) {
        r.verdict = p.failed_to_start ? verdict::harness_error
                    : p.timed_out     ? verdict::timeout
                                      : verdict::crash;
        r.reason = p.failed_to_start ? p.describe() : "cuda-harness " + p.describe();
        if (!p.failed_to_start) count_gpu_busy(std::nullopt, r);  // it may have run kernels
        return std::nullopt;
    }
    std::optional<harness_response> out;
    try {
        out = read_response(response);
    } catch (const std::exception& e) {
        r.verdict = verdict::harness_error;
        r.reason = "cuda-harness " + p.describe() + " without a usable response: " + e.what();
        // What the harness said on its way out (its response could not be written: "cannot
        // write …/response.json: No space left on device (errno 28)") is the real cause.
        if (const std::string said = last_line(p.stderr_text); !said.empty())
            r.reason += "; it said: " + shortened(said, 400);
    }
    count_gpu_busy(out, r);
    return out;
}

void attempt_evaluator::count_gpu_busy(const std::optional<harness_response>& response,
                                       attempt_result& r) const {
    long long kernels = 0;
    if (response && response->gpu_busy) {
        r.gpu_busy_ms = response->gpu_busy->ms;
        r.gpu_busy_source = k_gpu_busy_sources.name(response->gpu_busy->source);
        kernels = response->gpu_busy->kernels.value_or(0);
    }
    if (m_settings.gpu_busy)
        m_settings.gpu_busy->add(m_settings.device, r.gpu_busy_ms, kernels, r.gpu_busy_source);
}

attempt_result attempt_evaluator::evaluate(const candidate& c, const fs::path& folder,
                                           const oracle_files* oracle) const {
    if (!c.pytorch_mode.empty()) return time_pytorch(c, folder, m_manifest, m_settings, m_runner);
    attempt_result r;
    r.cand = c;
    r.folder = folder;
    r.device = m_settings.device;
    request req;
    if (const std::string bad =
            prepare_folder(*this, m_manifest, c, folder, oracle == nullptr, &req, oracle);
        !bad.empty()) {
        r.verdict = verdict::invalid_submission;
        r.reason = bad;
        return r;
    }
    run_and_check(req, oracle, r);
    return r;
}

void attempt_evaluator::run_and_check(const request& req, const oracle_files* oracle,
                                      attempt_result& r) const {
    // The reference run and the vendor library are trusted: never in a candidate's worker.
    const std::optional<harness_response> response =
        run_harness(r.folder, r, oracle == nullptr || req.vendor.has_value());
    if (!response) return;
    response_judge(m_manifest, m_settings).judge(req, *response, oracle, r);
}

std::optional<attempt_result> attempt_evaluator::evaluate_vendor(const candidate& c,
                                                                 const fs::path& folder,
                                                                 const oracle_files& oracle) const {
    request req = make_request(c, request_paths{}, false);
    req.kernel = kernel_spec{};
    std::vector<run_case> cases;
    for (std::size_t i = 0; i < req.cases.size(); ++i) {
        const manifest_case& mc = m_manifest.cases[i];
        if (!mc.vendor || !req.cases[i].measure) continue;
        // One library for every case: the manifest reader refuses a mix.
        req.vendor = *k_vendor_libraries.parse(mc.vendor->library);
        run_case rc = req.cases[i];
        rc.vendor = vendor_call_for(*mc.vendor, mc);
        cases.push_back(std::move(rc));
    }
    if (cases.empty()) return std::nullopt;
    req.cases = std::move(cases);
    attempt_result r;
    r.cand = c;
    r.cand.label = k_vendor_libraries.name(*req.vendor);  // "cublas", "cublaslt", "cub"
    r.folder = folder;
    fs::create_directories(folder);
    link_input_files(m_manifest, folder);
    req.folder = folder;
    write_file_atomic(folder / "request.json", write_request_json(req));
    run_and_check(req, &oracle, r);
    return r;
}

}  // namespace cuopt