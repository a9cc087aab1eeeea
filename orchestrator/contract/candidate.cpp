#include "orchestrator/contract/candidate.hpp"

#include <filesystem>

#include "common/message_text.hpp"

namespace cuopt {

namespace fs = std::filesystem;

const launch_expressions& launch_for(const candidate& c, const manifest& m,
                                     const manifest_case& mc) {
    if (const auto it = c.case_launch.find(mc.name); it != c.case_launch.end()) return it->second;
    if (c.launch) return *c.launch;
    if (mc.launch) return *mc.launch;
    return m.launch;
}

std::string check_compile_options(const std::vector<std::string>& options,
                                  const std::string& run_folder) {
    static const char* k_allowed_prefixes[] = {"--use_fast_math",
                                               "-use_fast_math",
                                               "--ftz=",
                                               "-ftz=",
                                               "--prec-div=",
                                               "-prec-div=",
                                               "--prec-sqrt=",
                                               "-prec-sqrt=",
                                               "--fmad=",
                                               "-fmad=",
                                               "--extra-device-vectorization",
                                               "-extra-device-vectorization",
                                               "--maxrregcount=",
                                               "-maxrregcount=",
                                               "--std=",
                                               "-std=",
                                               "-D",
                                               "--define-macro=",
                                               "-U",
                                               "--undefine-macro=",
                                               "--restrict",
                                               "-restrict",
                                               "--ptxas-options=",
                                               "-Xptxas",
                                               "-lineinfo",
                                               "--generate-line-info",
                                               "--dopt=",
                                               "-dopt=",
                                               "--split-compile=",
                                               "-split-compile=",
                                               "-default-device",
                                               "--default-device",
                                               "-I",
                                               "--include-path="};
    for (const auto& o : options) {
        bool allowed = false;
        for (const char* p : k_allowed_prefixes) allowed |= o.rfind(p, 0) == 0;
        if (!allowed) return "compile option " + quote_value(o) + " is not on the allow-list";
        std::string include;
        if (o.rfind("-I", 0) == 0) include = o.substr(2);
        if (o.rfind("--include-path=", 0) == 0) include = o.substr(15);
        if (!include.empty()) {
            const fs::path p = fs::weakly_canonical(include);
            const std::string s = p.string();
            const bool in_toolkit = s.rfind("/usr/local/cuda", 0) == 0;
            const bool in_run =
                !run_folder.empty() && s.rfind(fs::weakly_canonical(run_folder).string(), 0) == 0;
            if (!in_toolkit && !in_run)
                return "compile option " + quote_value(o) +
                       ": include paths must lie in the CUDA toolkit or the run folder";
        }
    }
    return "";
}

}  // namespace cuopt
