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

/// 0 built, tested and within 10 %; 32 not; 11 no Python with torch or no GPU for it.
int verify_export(const verify_request& r);

}  // namespace cuopt
