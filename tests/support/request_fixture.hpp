#pragma once
/// A harness request as the request-reading tests write it: its JSON saved as req.json in a
/// scratch folder (beside whatever files it names) and read back with read_request, or the
/// message of the json_error that reading it raised. Also one text edit, for the tests that
/// take a valid request or manifest and break one field of it.

#include <string>

#include "common/json_document.hpp"
#include "harness/request_reader.hpp"
#include "test_support.hpp"

namespace cuopt::test {

/// `text` with the first `from` replaced by `to` (REQUIREs `from` there).
std::string replaced(std::string text, const std::string& from, const std::string& to);

/// The message of the json_error `read()` throws, or "" when it throws none (anything else
/// is a finding and escapes).
template <class Read>
std::string refusal(Read read) {
    try {
        read();
    } catch (const json_error& e) {
        return e.what();
    }
    return "";
}

/// A scratch folder for requests: a test writes the files they name into `dir`.
struct request_folder {
    scratch_folder dir;
    /// `json` as dir/req.json, read.
    request read(const std::string& json) const;
    /// What reading `json` (as dir/req.json) says: "" when it reads fine.
    std::string error_of(const std::string& json) const;
};

}  // namespace cuopt::test
