#pragma once
/// A run folder as the report reads it, from its files alone: run.json, history.json,
/// summary.json and the model-NNN.json exchanges, each parsed once (a missing or malformed
/// file is named in a report_input_error), and any other file by its path inside the folder.
/// Fields are read with common/json_fields' lenient functions, which never throw: the report
/// shows "-" where a run did not record a figure.

#include <rapidjson/document.h>

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/json_fields.hpp"

namespace cuopt {

/// The run folder cannot be read: what() names the file and why.
class report_input_error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

struct model_exchange_file {
    std::string name;              // "model-003.json"
    std::optional<int> iteration;  // the search iteration it served, where recorded
    rapidjson::Document doc;
};

struct run_folder {
    std::filesystem::path path;
    rapidjson::Document run;      // run.json (always)
    rapidjson::Document history;  // history.json; null where a failed run wrote none
    rapidjson::Document summary;  // summary.json; likewise
    std::vector<model_exchange_file> model_exchanges;  // in file order
    /// A file inside the folder as text, opened beneath it (no link followed, nothing outside
    /// it, 256 MiB at most); nullopt otherwise.
    std::optional<std::string> text_file(const std::string& relative) const;
};

/// Reads the folder, every file opened beneath it without following a link (a run folder may
/// be someone else's). run.json is required; history.json and summary.json too, unless run.json
/// says the run stopped with an error before writing them. Throws report_input_error.
run_folder read_run_folder(const std::filesystem::path& dir);

}  // namespace cuopt
