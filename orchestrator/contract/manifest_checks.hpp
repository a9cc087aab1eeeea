#pragma once
/// What reading a manifest checks beyond its schema, shared by the reader (manifest_reader)
/// and the checks it runs: the failure wording, every expression and file size against every
/// case (manifest_checks) and the vendor baseline call (manifest_vendor).

#include <string>
#include <utility>
#include <vector>

#include "common/json_fields.hpp"
#include "common/message_text.hpp"
#include "orchestrator/contract/manifest.hpp"

namespace cuopt::manifest_reading {

/// The failure wording: "<file>: field <field>: <what>".
struct context {
    std::string source;
    [[noreturn]] void fail(const std::string& field, const std::string& what) const {
        throw json_error(source + ": field " + shortened(field) + ": " + what);
    }
};

/// Every expression must evaluate for every case (under the default tunables) to a sane value;
/// `vendor_runs` (the main manifest, not a holdout): the vendor call of every performance case,
/// the cases it is timed on, against that case's sizes.
void check_expressions(const manifest& m, const context& ctx, bool vendor_runs);

/// Files must hold exactly count x dtype bytes for the case that uses them.
void check_file_sizes(const manifest& m, const context& ctx);

/// A vendor call's size fields and their expressions: m, n, k (the gemms) or rows, cols
/// (segmented_sum).
std::vector<std::pair<const char*, const std::string*>> vendor_size_fields(
    const vendor_baseline_spec& v);

/// A case's vendor call against its sizes (its size fields and every count evaluated already).
void check_vendor_sizes(const manifest& m, const manifest_case& mc, const std::string& field,
                        const context& ctx);

/// A vendor_baseline object as written (defaults for its buffers filled in later).
vendor_baseline_spec read_vendor(const json_field& v);

/// The buffers a vendor call names (defaults filled in), each checked to exist with the right
/// role and the op's dtype; the op checked to pair with the library and layout, its scales.
void resolve_vendor_buffers(vendor_baseline_spec& v, const manifest& m, const context& ctx,
                            const std::string& field);

/// A case's vendor call: its own, none (null) or, when it says nothing, the manifest's.
void read_case_vendor(const json_field& jc, const manifest& m, manifest_case& mc);

/// One vendor request times every case's baseline: the cases that declare one name one library.
void check_vendor_library(const manifest& m, const json_field& cases);

}  // namespace cuopt::manifest_reading
