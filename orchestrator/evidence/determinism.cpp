#include "orchestrator/evidence/determinism.hpp"

namespace cuopt {

determinism_result classify_runs(dtype type, const tolerance& tol,
                                 const std::vector<std::vector<unsigned char>>& runs,
                                 const std::string& what) {
    determinism_result out;
    for (std::size_t i = 1; i < runs.size(); ++i) {
        if (runs[i] == runs[0]) continue;
        determinism_result r;
        if (runs[i].size() != runs[0].size()) {
            r.kind = determinism_class::beyond_tolerance;
            r.detail = what + ": run " + std::to_string(i + 1) + " wrote " +
                       std::to_string(runs[i].size()) + " bytes, run 1 wrote " +
                       std::to_string(runs[0].size());
        } else {
            const validation_result v = validate_output(type, runs[i].data(), runs[0].data(),
                                                        runs[0].size() / dtype_size(type), tol);
            r.kind = v.passed ? determinism_class::within_tolerance
                              : determinism_class::beyond_tolerance;
            r.detail = what + ": run " + std::to_string(i + 1) + " vs run 1: " + v.summary();
        }
        out = worse(out, r);
    }
    return out;
}

determinism_result worse(const determinism_result& a, const determinism_result& b) {
    return static_cast<int>(b.kind) > static_cast<int>(a.kind) ? b : a;
}

}  // namespace cuopt
