#include "orchestrator/commands/export_verify.hpp"

#include <cmath>
#include <iostream>

#include "common/exit_codes.hpp"
#include "common/file_io.hpp"
#include "common/html_text.hpp"
#include "common/json_builder.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "common/message_text.hpp"
#include "orchestrator/commands/report_command.hpp"
#include "orchestrator/evaluation/python_child.hpp"

namespace cuopt {

namespace {

namespace fs = std::filesystem;

constexpr double k_within = 0.10;  // the op's time may differ from the run's by this much

struct case_figure {
    std::string name;
    double run_ms = 0, op_ms = 0, compiled_ms = 0;
    double warm_ms = 0;    // back to back, warm cache: beside the comparison, not in it
    double kernel_ms = 0;  // the op's kernel alone (CUPTI through torch.profiler), 0 if none
    bool within = false;
};

// The last lines of a step's log, on one line.
std::string tail_of(const std::string& log) {
    std::string text = log;
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    std::size_t at = text.size();
    for (int lines = 0; lines < 3 && at != std::string::npos && at > 0; ++lines)
        at = text.rfind('\n', at - 1);
    return printable(at == std::string::npos ? text : text.substr(at + 1));
}

std::string why_off(const case_figure& c) {
    return verify_off_reason({c.run_ms, c.op_ms, c.kernel_ms});
}

struct verify_outcome {
    bool built = false, tested = false;
    std::string torch_version, gpu, failure;
    std::vector<case_figure> cases;
};

verify_outcome outcome_of(const std::string& answer) {
    const rapidjson::Document doc = parse_record_json(answer, "the PyTorch child's answer");
    const json_field a(doc, "the PyTorch child's answer");
    verify_outcome v;
    if (const auto why = a.optional_text("error")) {
        v.failure = "the PyTorch child failed: " + printable(*why);
        return v;
    }
    v.torch_version = a.text("torch");
    const json_field build = a["build"];
    v.built = build.find("rc") && !build["rc"].is_null() && build["rc"].integer() == 0;
    if (!v.built) {
        v.failure = "the package did not build: " + printable(tail_of(build.text("log_tail")));
        return v;
    }
    const json_field test = a["test"];
    v.tested = !test["rc"].is_null() && test["rc"].integer() == 0;
    if (!v.tested) v.failure = "its test failed: " + printable(tail_of(test.text("log_tail")));
    const auto bench = a["bench"].find("figures");
    if (!bench) {
        if (v.failure.empty())
            v.failure = "its timing failed: " + printable(tail_of(a["bench"].text("log_tail")));
        return v;
    }
    v.gpu = bench->text("gpu");
    for (const json_field& c : (*bench)["cases"].items()) {
        case_figure f{c.text("name"),
                      c.number("run_ms"),
                      c.number("op_ms"),
                      c.optional_number("compiled_ms").value_or(0),
                      c.optional_number("warm_ms").value_or(0),
                      false};
        // Figures from the process that ran the package's code: positive, or nothing to hold
        // against (a ratio over zero would be no number at all in summary.json).
        if (!(f.run_ms > 0) || !(f.op_ms > 0) || !(f.compiled_ms >= 0) || !(f.warm_ms >= 0) ||
            !(f.kernel_ms >= 0))
            c.fail("positive times in ms");
        f.within = std::fabs(f.op_ms / f.run_ms - 1) <= k_within;
        v.cases.push_back(f);
    }
    return v;
}

rapidjson::Value export_block(const verify_request& r, const verify_outcome& v, json_allocator& a) {
    json_array cases(a);
    bool within = !v.cases.empty();
    for (const case_figure& c : v.cases) {
        within = within && c.within;
        json_object o(a);
        o.add("name", c.name).add("run_median_ms", c.run_ms).add("op_median_ms", c.op_ms);
        o.add("ratio", c.op_ms / c.run_ms).add("within", c.within);
        o.add("compiled_median_ms",
              c.compiled_ms > 0 ? json_value(c.compiled_ms, a) : rapidjson::Value());
        o.add("kernel_median_ms",
              c.kernel_ms > 0 ? json_value(c.kernel_ms, a) : rapidjson::Value());
        o.add("back_to_back_median_ms",
              c.warm_ms > 0 ? json_value(c.warm_ms, a) : rapidjson::Value());
        o.add_if(!c.within, "why", why_off(c));
        cases.push(o.take());
    }
    json_object o(a);
    o.add("package", fs::absolute(r.package).lexically_normal().string())
        .add("op", "cuda_optimizer::" + r.entry)
        .add("built", v.built)
        .add("test_passed", v.tested)
        .add("torch", v.torch_version)
        .add("gpu", v.gpu)
        .add("tolerance", k_within)
        .add("within_tolerance", within)
        .add("failure", v.failure.empty() ? rapidjson::Value() : json_value(v.failure, a))
        .add("cases", cases.take());
    return o.take();
}

void record(const verify_request& r, const verify_outcome& v) {
    const fs::path summary_file = r.run / "summary.json";
    untrusted_read s = read_untrusted_file(summary_file, 16 << 20);
    if (s.refused != untrusted_read::refusal::none)
        throw std::runtime_error(summary_file.string() +
                                 ": cannot be read again to record the export");
    rapidjson::Document summary = parse_record_json(s.text, summary_file.string());
    rapidjson::Value block = export_block(r, v, summary.GetAllocator());
    rapidjson::Document alone;
    alone.CopyFrom(block, alone.GetAllocator());
    write_file_atomic(r.package / "verify.json", to_pretty_json(alone) + "\n");
    if (summary.HasMember("export")) summary.RemoveMember("export");
    summary.AddMember("export", block, summary.GetAllocator());
    write_file_atomic(summary_file, to_pretty_json(summary) + "\n");
}

void print(const verify_request& r, const verify_outcome& v) {
    std::cout << "verify cuda_optimizer::" << r.entry << " (PyTorch " << v.torch_version
              << (v.gpu.empty() ? "" : ", " + v.gpu) << "): built " << (v.built ? "yes" : "no")
              << ", test " << (v.tested ? "passed" : "failed") << "\n";
    for (const case_figure& c : v.cases)
        std::cout << "  " << c.name << ": op " << fixed(c.op_ms, 4) << " ms, run "
                  << fixed(c.run_ms, 4) << " ms (" << fixed(c.op_ms / c.run_ms, 3) << "x, "
                  << (c.within ? "within 10 %" : why_off(c)) << ")"
                  << (c.compiled_ms > 0 ? ", under torch.compile " + fixed(c.compiled_ms, 4) + " ms"
                                        : "")
                  << (c.kernel_ms > 0 ? ", kernel " + fixed(c.kernel_ms, 4) + " ms" : "")
                  << (c.warm_ms > 0 ? ", back to back " + fixed(c.warm_ms, 4) + " ms" : "") << "\n";
    if (!v.failure.empty()) std::cout << "  " << v.failure << "\n";
}

}  // namespace

// Why an op's time is off the run's median, in one phrase: its kernel alone, timed by the
// run's own clock (CUPTI), tells the call's overhead from the kernel's own difference.
std::string verify_off_reason(const verify_case_times& c) {
    const double kernel_ratio = c.kernel_ms > 0 ? c.kernel_ms / c.run_ms : 0;
    const std::string kernel = c.kernel_ms > 0
                                   ? "its kernel alone " + fixed(c.kernel_ms, 4) + " ms (" +
                                         fixed(kernel_ratio, 3) + "x the run's)"
                                   : "";
    if (c.op_ms > c.run_ms && kernel_ratio > 0 && std::fabs(kernel_ratio - 1) <= k_within)
        return "launch overhead: " + kernel +
               ", so the rest is the call's (CUDA events around it, PyTorch's dispatch)";
    if (c.op_ms > c.run_ms && kernel_ratio == 0 && c.run_ms < 0.05)
        return "launch overhead: CUDA events around one call add microseconds that the run's "
               "kernel time (CUPTI) does not count, comparable to the kernel's " +
               fixed(c.run_ms * 1000, 1) + " us";
    const std::string besides =
        "another clock or GPU state, a build that differs from the "
        "run's NVRTC one, or inputs the kernel is sensitive to";
    return (c.op_ms > c.run_ms ? "slower than the run measured" : "faster than the run measured") +
           (kernel.empty() ? "" : " (" + kernel + ")") + ": " + besides;
}

int verify_export(const verify_request& r) {
    // It builds in RUN/export-verify and rewrites RUN/summary.json, by path: only in a run folder
    // of the caller's own that no one else may write.
    if (const std::string why = foreign_folder_reason(r.run); !why.empty())
        throw std::runtime_error("--verify: " + r.run.string() + " is " + why +
                                 ": it builds and records inside the run folder; copy the run "
                                 "into a folder of yours first");
    const auto runner = make_child_process_runner();
    const python_interpreter python = find_python(r.python, *runner);
    if (!python.cuda)
        throw std::runtime_error("--verify: " + python.path + " (torch " + python.torch_version +
                                 ") sees no CUDA device: the op can only be verified on a GPU");
    const fs::path folder = r.run / "export-verify";
    fs::remove_all(folder);
    fs::create_directories(folder);
    for (const auto& [name, text] : r.files) {
        fs::create_directories((folder / name).parent_path());
        write_file_atomic(folder / name, text);
    }
    rapidjson::Document job;
    json_object(job).add("test", "tests/test_" + r.entry + ".py").add("build_timeout_s", 1200);
    write_file_atomic(folder / "job.json", to_pretty_json(job) + "\n");
    python_job pj{"verify", folder, {}, true, std::chrono::minutes(50)};
    for (const char* cuda : {"/usr/local/cuda"})
        if (fs::exists(cuda)) pj.readable.push_back(fs::canonical(cuda));
    std::cerr << "cuda-optimizer export: building, testing and timing the package in "
              << folder.string() << " (a few minutes)\n";
    const verify_outcome v = outcome_of(run_pytorch_side(python, pj, *runner));
    print(r, v);
    record(r, v);
    report_options report;  // report.html shows the figures too
    report.run_dir = r.run.string();
    if (run_report(report) != 0)
        std::cerr << "cuda-optimizer export: report.html not rebuilt (the line above says why)\n";
    bool within = !v.cases.empty();
    for (const case_figure& c : v.cases) within = within && c.within;
    return to_int(v.built && v.tested && within ? exit_code::ok : exit_code::export_unverified);
}

}  // namespace cuopt
