// The gates that run a candidate untimed: its instruction mix, the holdout cases, repeated
// runs for determinism, and compute-sanitizer's tools.
#include "common/cli_value_checks.hpp"
#include "common/file_io.hpp"
#include "common/message_text.hpp"
#include "orchestrator/evidence/evidence_gates.hpp"

namespace cuopt {

namespace fs = std::filesystem;

attempt_evaluator correctness_gates::correctness_evaluator() const {
    evaluator_settings es = m_in.evaluator.settings();
    es.correctness_only = true;
    es.floors_ms.clear();
    return m_in.evaluator.with(es);
}

// The candidate compiled again for the run's GPU (cuda-harness --compile-only --cubin-out: the
// optimizer never links NVRTC) and its cubin disassembled; ran = false with the reason where
// either cannot be done.
instruction_audit correctness_gates::audit(const attempt_result& r, const fs::path& dir) const {
    instruction_audit a;
    if (m_s.disassembler.empty()) {
        a.reason = "cuobjdump not found (--cuobjdump PATH)";
        return a;
    }
    const fs::path folder = dir / "instructions", cubin = folder / "kernel.cubin";
    const compile_summary compiled = m_in.evaluator.compile_only(r.cand, folder, cubin);
    std::error_code ec;
    if (!compiled.ok || !fs::is_regular_file(cubin, ec)) {
        a.reason = !compiled.ok ? "cuda-harness --compile-only failed: " +
                                      compiled.log.substr(0, compiled.log.find('\n'))
                                : "the harness wrote no cubin (" + cubin.string() + ")";
        return a;
    }
    const auto runner = make_child_process_runner();
    a = audit_cubin(
        *runner, m_s.disassembler, cubin,
        compiled.lowered_name.empty() ? r.cand.entry : compiled.lowered_name,
        std::chrono::milliseconds(static_cast<long long>(1000 * m_s.disassembler_timeout_s)));
    if (a.arch.empty()) a.arch = compiled.arch;
    return a;
}

// The instruction mix on the record; a candidate without the manifest's requires.mma class is
// precision_path, and reads of the clock registers are a warning (clock_read). An audit that
// cannot run proves nothing: not run, and where an MMA class is required, a warning that the
// verdict's rule turns into a no-go. The initial kernel is audited, never held to it.
bool correctness_gates::instructions(const attempt_result& r, const fs::path& dir,
                                     candidate_check& c) {
    c.instructions = audit(r, dir);
    const instruction_audit& a = *c.instructions;
    const bool initial = m_outcome.initial && &r == &m_outcome.history[*m_outcome.initial];
    const std::string required = initial ? "" : m_in.evaluator.contract().required_mma;
    if (!a.ran) {
        c.gates.push_back({"instructions", true, false, a.reason});
        if (!required.empty())
            c.warnings.push_back("instructions: not run: requires.mma " + required +
                                 " cannot be checked (" + a.reason + ")");
        return true;
    }
    std::string detail = describe_mix(a.mix) + (a.arch.empty() ? "" : " (" + a.arch + ")");
    if (!a.mix.other_kernels.empty())
        detail += "; " + std::to_string(a.mix.other_kernels.size()) +
                  " other kernel(s) of the source not counted: never launched";
    if (!initial && a.mix.clock_reads) {
        std::string regs;
        for (const std::string& s : a.mix.clock_registers) regs += (regs.empty() ? "" : ", ") + s;
        c.warnings.push_back("clock_read: the kernel reads the clock (" + regs +
                             "): it can tell when it is timed and behave differently then");
    }
    if (!required.empty() && !satisfies_mma(a.mix, required))
        return disqualify(c, "instructions", "precision_path",
                          "requires.mma is " + required + ", but its SASS holds no " + required +
                              " MMA: " + detail);
    c.gates.push_back(
        {"instructions", true, true,
         detail + (required.empty() ? "" : "; requires.mma " + required + ": present")});
    return true;
}

bool correctness_gates::holdout(const attempt_result& r, const fs::path& dir, candidate_check& c) {
    if (!m_in.holdout || !m_in.holdout_oracle) {
        c.gates.push_back({"holdout", true, false, "no --holdout-cases given"});
        return true;
    }
    const attempt_evaluator e = correctness_evaluator().with(*m_in.holdout);
    const attempt_result h = e.evaluate(r.cand, dir / "holdout", m_in.holdout_oracle);
    if (h.verdict != verdict::valid)
        return disqualify(c, "holdout", "holdout_failed",
                          std::string(to_string(h.verdict)) + ": " + h.reason);
    c.gates.push_back({"holdout", true, true,
                       "all " + std::to_string(h.cases.size()) + " holdout case(s) match"});
    return true;
}

bool correctness_gates::determinism(const attempt_result& r, const fs::path& dir,
                                    candidate_check& c) {
    const attempt_evaluator e = correctness_evaluator();
    const oracle_files none;
    std::vector<attempt_result> runs;
    for (int i = 1; i <= m_s.determinism_runs; ++i) {
        runs.push_back(e.evaluate(r.cand, dir / ("determinism-" + std::to_string(i)), &none));
        if (runs.back().verdict != verdict::valid)
            return disqualify(c, "determinism", "nondeterministic",
                              "run " + std::to_string(i) + " failed: " +
                                  to_string(runs.back().verdict) + ": " + runs.back().reason);
    }
    determinism_result worst;
    for (std::size_t ci = 0; ci < runs[0].cases.size(); ++ci)
        for (std::size_t oi = 0; oi < runs[0].cases[ci].outputs.size(); ++oi) {
            const output_check& first = runs[0].cases[ci].outputs[oi];
            const manifest& contract = m_in.evaluator.contract();
            const manifest_arg* arg = contract.find_arg(first.arg);
            if (!arg) continue;
            std::vector<std::vector<unsigned char>> bytes;
            for (const attempt_result& run : runs)
                bytes.push_back(read_binary_file(run.cases[ci].outputs[oi].file));
            const std::string& case_name = runs[0].cases[ci].name;
            worst =
                worse(worst, classify_runs(arg->type, tolerance_in_case(contract, *arg, case_name),
                                           bytes, case_name + " " + quote_value(first.arg)));
        }
    c.determinism = worst;
    if (worst.kind == determinism_class::beyond_tolerance)
        return disqualify(c, "determinism", "nondeterministic", worst.detail);
    if (worst.kind == determinism_class::within_tolerance)
        c.warnings.push_back(
            "determinism: results differ bitwise between runs, within "
            "tolerance (" +
            worst.detail + ")");
    c.gates.push_back({"determinism", true, true,
                       std::to_string(runs.size()) + " runs: " + to_string(worst.kind)});
    return true;
}

// The correctness cases, plus the smallest performance case when it is small enough for the
// slow tools (a fast path taken only at performance shapes is sanitized too); without
// correctness cases, the smallest performance case whatever its size.
manifest correctness_gates::sanitized_cases() const {
    const manifest& m = m_in.evaluator.contract();
    manifest out = m;
    out.cases.clear();
    const manifest_case* smallest = nullptr;
    std::uint64_t smallest_bytes = 0;
    for (const manifest_case& mc : m.cases) {
        if (mc.kind == case_kind::correctness) {
            out.cases.push_back(mc);
            continue;
        }
        std::uint64_t bytes = 0;
        for (const manifest_arg& a : m.args)
            if (a.is_buffer())
                bytes +=
                    static_cast<std::uint64_t>(evaluate_integer_expression(a.count, mc.params)) *
                    dtype_size(a.type);
        if (!smallest || bytes < smallest_bytes) {
            smallest = &mc;
            smallest_bytes = bytes;
        }
    }
    if (smallest && (out.cases.empty() || smallest_bytes <= m_s.sanitizer_max_case_bytes))
        out.cases.push_back(*smallest);
    return out;
}

bool correctness_gates::sanitizer(const attempt_result& r, const fs::path& dir,
                                  candidate_check& c) {
    if (m_s.sanitizer.empty()) {
        c.gates.push_back({"sanitizer", true, false, m_s.sanitizer_skipped});
        c.warnings.push_back(
            "sanitizer: not run: " + m_s.sanitizer_skipped +
            (m_s.sanitizer_skipped == "--no-sanitizer" ? "" : " (--sanitizer PATH)"));
        return true;
    }
    const manifest checked = sanitized_cases();
    std::string findings, names;
    for (const manifest_case& mc : checked.cases) names += (names.empty() ? "" : ", ") + mc.name;
    for (const std::string& tool : k_sanitizer_tools) {
        evaluator_settings es = correctness_evaluator().settings();
        const fs::path folder = dir / ("sanitizer-" + tool), log = folder / "sanitizer.log";
        fs::create_directories(folder);
        es.wrapper = {m_s.sanitizer.string(), "--tool", tool, "--log-file", log.string()};
        if (tool == "memcheck") es.wrapper.insert(es.wrapper.end(), {"--report-api-errors", "all"});
        es.timeout = milliseconds_of(m_s.sanitizer_timeout_s);
        const oracle_files none;
        const attempt_result run =
            m_in.evaluator.with(es).with(checked).evaluate(r.cand, folder, &none);
        const std::string text = fs::exists(log) ? read_text_file(log) : "";
        // racecheck prints nothing at all when it finds nothing; the others always summarise.
        sanitizer_result s = parse_sanitizer_output(
            tool, text, tool == "racecheck" && run.verdict == verdict::valid);
        std::string finding;
        if (!s.completed)
            finding = tool + " did not finish (" + s.problem + "; harness " +
                      to_string(run.verdict) + (run.reason.empty() ? "" : ": " + run.reason) +
                      "; log " + log.string() + ")";
        else if (!s.clean())
            finding = tool + ": " + std::to_string(s.errors) + " error(s)" +
                      (s.warnings ? ", " + std::to_string(s.warnings) + " warning(s)" : "") +
                      (s.first_lines.empty() ? "" : " (" + s.first_lines.front() + ")");
        if (!finding.empty()) findings += (findings.empty() ? "" : "; ") + finding;
        c.sanitizer.push_back(s);
    }
    if (!findings.empty() && !m_s.allow_sanitizer_findings)
        return disqualify(c, "sanitizer", "sanitizer_findings", findings);
    if (!findings.empty()) c.warnings.push_back("sanitizer (allowed): " + findings);
    c.gates.push_back(
        {"sanitizer", true, true, (findings.empty() ? "clean" : findings) + " on " + names});
    return true;
}

}  // namespace cuopt
