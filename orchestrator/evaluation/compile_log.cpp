#include "orchestrator/evaluation/compile_log.hpp"

#include <sstream>

namespace cuopt {

std::string trim_compile_log(const std::string& log, std::size_t budget) {
    if (log.size() <= budget) return log;
    std::string errors, line;
    std::istringstream in(log);
    while (std::getline(in, line) && errors.size() < budget / 2)
        if (line.find("error") != std::string::npos) errors += line + "\n";
    return errors + "[... " + std::to_string(log.size()) + " bytes in all; end of log:]\n" +
           log.substr(log.size() - budget / 2);
}

}  // namespace cuopt
