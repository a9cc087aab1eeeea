// The first user message of a model iteration: the task, the device, the cases and arguments
// with their tolerances, the current best (latencies, resources, source) and a compact history.
#include <cstdio>
#include <sstream>

#include "orchestrator/proposers/llm_proposer.hpp"

namespace cuopt {

namespace {

std::string fmt(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.4g", v);
    return b;
}

}  // namespace

std::string describe_for_model(const search_state& s, const llm_proposer_settings& settings) {
    const manifest& m = s.contract;
    std::ostringstream o;
    o << "# Task\n"
      << (settings.description.empty() ? m.description : settings.description) << "\n";
    if (!settings.signature.empty()) o << "Signature (fixed): " << settings.signature << "\n";
    o << "\n# Device\n"
      << settings.device.json
      << "\n\n# Cases (outputs are checked on every case; performance cases are ranked "
      << "by the geometric mean of their median latencies)\n";
    for (const manifest_case& mc : m.cases) {
        o << "- " << mc.name << " ("
          << (mc.kind == case_kind::performance ? "performance" : "correctness") << "):";
        for (const auto& [k, v] : mc.params) o << " " << k << "=" << v;
        o << "\n";
    }
    o << "Arguments (in order):";
    for (const manifest_arg& a : m.args) {
        o << " " << a.name << ":" << dtype_name(a.type);
        if (a.is_buffer()) o << "[" << a.count << "]";
        if (a.has_output() && is_float(a.type) && !a.reduction_length.empty())
            o << " (tolerance by the reduction rule over " << a.reduction_length
              << " products: |x - r| <= rtol * (|r| + rms(r)), rtol = 2u(" << dtype_name(a.type)
              << ") + 8 sqrt(" << a.reduction_length << ") "
              << (a.type == dtype::f64 ? "2^-53; accumulate in f64)"
                                       : "2^-24; accumulate in fp32 or wider)");
        else if (a.has_output() && is_float(a.type))
            o << " (atol " << fmt(a.tol.atol) << ", rtol " << fmt(a.tol.rtol) << ")";
    }
    o << "\nDefault launch: grid (" << m.launch.grid[0] << ", " << m.launch.grid[1] << ", "
      << m.launch.grid[2] << "), block (" << m.launch.block[0] << ", " << m.launch.block[1] << ", "
      << m.launch.block[2] << "); a submission may give its own, "
      << "as numbers or expressions over the case parameters.\n";
    const std::size_t best = s.best ? *s.best : 0;
    if (!s.history.empty()) {
        const attempt_result& b = s.history[best];
        o << "\n# Current best (iteration " << b.iteration << ", " << b.cand.label << ")\n";
        for (const auto& ce : b.cases)
            if (ce.median_ms) o << "- " << ce.name << ": median " << fmt(*ce.median_ms) << " ms\n";
        if (b.compile.registers) o << "registers " << *b.compile.registers;
        if (b.compile.static_shared_bytes)
            o << ", static shared " << *b.compile.static_shared_bytes << " B";
        if (b.compile.spill_store_bytes)
            o << ", spill stores " << *b.compile.spill_store_bytes << " B";
        if (b.cand.pytorch_mode.empty())
            o << "\n```cuda\n" << b.cand.source << "\n```\n";
        else  // an imported problem's baseline: its PyTorch source is what to write in CUDA
            o << "\nThis is PyTorch " << b.cand.pytorch_mode
              << ", the problem's own code and its oracle: write the CUDA kernel of the signature "
                 "above that computes what it computes.\n```python\n"
              << b.cand.source << "\n```\n";
        if (const candidate& eager = s.history.front().cand;
            b.cand.pytorch_mode.empty() && !eager.pytorch_mode.empty())  // the user's kernel leads
            o << "\n# The problem: PyTorch " << eager.pytorch_mode
              << ", its oracle and the baseline the speedup is over\n```python\n"
              << eager.source << "\n```\n";
    }
    std::string history;
    for (auto it = s.history.rbegin(); it != s.history.rend(); ++it) {
        std::string line = "- iteration " + std::to_string(it->iteration) + "." +
                           std::to_string(it->attempt) + " " + it->cand.label + ": " +
                           to_string(it->verdict);
        if (it->speedup_vs_initial) line += ", " + fmt(*it->speedup_vs_initial) + "x vs initial";
        if (!it->reason.empty()) line += " (" + it->reason.substr(0, 300) + ")";
        if (history.size() + line.size() > settings.history_budget_chars) {
            history = "- ... " + std::to_string(std::distance(it, s.history.rend())) +
                      " earlier attempts omitted\n" + history;
            break;
        }
        history = line + "\n" + history;
    }
    o << "\n# History (oldest first)\n" << history;
    o << "\nThis is iteration " << s.iteration << ". Propose one faster candidate.\n";
    return o.str();
}

}  // namespace cuopt
