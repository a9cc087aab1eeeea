#pragma once
/// gate.html: one short self-contained page (inline CSS, no script, nothing fetched) that
/// shows a gate's verdict first, then per case the latency then and now with intervals, the
/// machine then and now with what changed, and every harness run.

#include <string>

#include "orchestrator/gate/gate_record.hpp"

namespace cuopt {

std::string gate_html(const gate_record& r);

}  // namespace cuopt
