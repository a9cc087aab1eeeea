#pragma once
/// `export --torch DIR --verify`: the package built, tested and timed where users run it. A
/// copy of it is built in RUN/export-verify by the PyTorch child (python_child.hpp: confined,
/// its environment scrubbed), which runs `setup.py build_ext --inplace`, the package's test and
/// its timing script; the op's per-call time at each performance case is held against the
/// run's own median for that case (within 10 %, or one line says why not). summary.json gains
/// an `export` block; DIR/verify.json says the same.

#include <filesystem>
#include <map>
#include <string>

namespace cuopt {

struct verify_request {
    std::filesystem::path run, package;
    std::map<std::string, std::string> files;  // the package, as written to `package`
    std::string entry;
    std::string python;  // --python; "" finds one
};

/// One case's figures (ms): the run's median, the op's cold per-call median (CUDA events), its
/// kernel alone by CUPTI through torch.profiler (0 when the profiler gave none).
struct verify_case_times {
    double run_ms = 0, op_ms = 0, kernel_ms = 0;
};

/// Why the op's time is off the run's, in one phrase: launch overhead where its kernel alone is
/// within 10 % of the run's (or, without a kernel time, where the kernel is under 50 us);
/// else slower or faster than the run measured, the kernel's own ratio named.
std::string verify_off_reason(const verify_case_times& t);

/// 0 built, tested and within 10 %; 32 not; 11 no Python with torch or no GPU for it.
int verify_export(const verify_request& r);

}  // namespace cuopt
