// The baselines beside the initial kernel, before the search: the vendor library on every GPU
// of --devices, and an imported problem's torch.compile.
#include <iostream>

#include "orchestrator/artifacts/console_report.hpp"
#include "orchestrator/commands/optimize_run.hpp"
#include "orchestrator/evaluation/torch_baseline.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

// "cuda-optimizer: vendor baseline cublas[ on GPU 1]: valid  perf-256 0.0123 ms ..." (the
// library's name, the run's label: cublas, cublaslt).
void say_vendor(const attempt_result& v, const std::string& where) {
    std::cerr << "cuda-optimizer: vendor baseline " << v.cand.label << where << ": "
              << to_string(v.verdict);
    for (const case_evaluation& ce : v.cases)
        if (ce.median_ms) std::cerr << "  " << ce.name << " " << format_ms(ce.median_ms);
    std::cerr << (v.reason.empty() ? "" : ": " + v.reason) << "\n";
}

}  // namespace

void measure_vendor(run_context& c) {
    const std::vector<int> devices = devices_of(c.o);
    c.vendor = c.evaluator->evaluate_vendor(c.initial, c.run / "vendor", c.oracle);
    if (!c.vendor) return;
    if (!c.o.quiet)
        say_vendor(*c.vendor, devices.size() > 1 ? " on GPU " + std::to_string(devices[0]) : "");
    for (std::size_t i = 1; i < devices.size(); ++i) {
        evaluator_settings es = c.evaluator->settings();
        es.device = devices[i];
        if (const std::string& arch = device_of(c, devices[i]).arch; !arch.empty()) es.arch = arch;
        const fs::path folder = c.run / ("vendor-device-" + std::to_string(devices[i]));
        auto v = c.evaluator->with(es).evaluate_vendor(c.initial, folder, c.oracle);
        if (!v) continue;
        if (!c.o.quiet) say_vendor(*v, " on GPU " + std::to_string(devices[i]));
        c.device_vendors.emplace(devices[i], std::move(*v));
    }
}

void measure_pytorch_compile(run_context& c) {
    if (!c.torch) return;
    const std::string entry = c.signature ? c.signature->entry : c.initial.entry;
    c.pytorch_compile = c.evaluator->evaluate(pytorch_candidate(*c.torch, "compile", entry),
                                              c.run / "pytorch-compile", &c.oracle);
    if (c.o.quiet) return;
    std::cerr << "cuda-optimizer: torch.compile baseline: "
              << to_string(c.pytorch_compile->verdict);
    for (const case_evaluation& ce : c.pytorch_compile->cases)
        if (ce.median_ms) std::cerr << "  " << ce.name << " " << format_ms(ce.median_ms);
    const std::string& why = c.pytorch_compile->reason;
    std::cerr << (why.empty() ? "" : ": " + why.substr(0, 300)) << "\n";
}

}  // namespace cuopt
