#pragma once
/// multipart/form-data (RFC 7578), the body of the dashboard's intake form: the boundary from
/// the Content-Type, then each part's field name, file name, type and bytes. Binary-safe; a
/// malformed body is a multipart_error saying what is wrong, never a partial result.

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace cuopt {

/// A body (or Content-Type) that is not well-formed multipart/form-data; what() says where.
struct multipart_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// One part: a form field (no filename) or an uploaded file.
struct multipart_part {
    std::string name;                     // Content-Disposition name="..."
    std::optional<std::string> filename;  // Content-Disposition filename="..." (files only)
    std::string content_type;             // "" when the part named none
    std::string data;                     // the bytes, exactly
};

/// The boundary of a "multipart/form-data; boundary=..." Content-Type (quoted or not, 1 to 70
/// characters). Throws multipart_error for another type or a missing or bad boundary.
std::string multipart_boundary(std::string_view content_type);

/// Every part of `body`, in order. Throws multipart_error when the body does not open with the
/// boundary, a part's headers are malformed or lack a form-data Content-Disposition with a
/// name, or the closing boundary is missing. At most `max_parts` parts.
std::vector<multipart_part> parse_multipart(std::string_view body, std::string_view boundary,
                                            std::size_t max_parts = 1000);

}  // namespace cuopt
