#pragma once
/// Reads a request file into a `request`: JSON syntax, the schema, then what a
/// schema cannot say (exactly one source, buffer vs scalar, file sizes against
/// dtype x count, paths inside the request folder, unique outputs that spare every file
/// the request reads). Every problem
/// is a json_error whose text names the file, the field and what was expected. An argument and
/// a vendor_call are read apart (request_fields.hpp).

#include <filesystem>
#include <stdexcept>
#include <vector>

#include "common/request.hpp"

namespace cuopt {

/// The response would be written over a file the request reads (the request itself, its kernel
/// source, an input or expected file): a usage error, and no response may be written for it.
struct response_overlap_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// `also_read`: files the run reads or writes besides the request's own (the response),
/// which no output may name. `root`: the folder tree the harness may read (its --root), where
/// a check's expected_file may lie; empty: the request's folder.
request read_request(const std::filesystem::path& file,
                     const std::vector<std::filesystem::path>& also_read = {},
                     const std::filesystem::path& root = {});

}  // namespace cuopt
