// docs/MODELS.md against the table of model families in the code: every family has its row
// with the same provider, effort values, default effort, anthropic-version and shutdown date,
// and no row names a family the code does not have, so the page cannot drift from the code.
#include <catch2/catch.hpp>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "orchestrator/model/model_families.hpp"
#include "test_support.hpp"

using namespace cuopt;

namespace {

std::string trimmed(const std::string& s) {
    const auto first = s.find_first_not_of(" \t");
    if (first == std::string::npos) return "";
    return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// The cells of a Markdown table row ("| a | b |" gives {"a", "b"}).
std::vector<std::string> cells_of(const std::string& row) {
    std::vector<std::string> cells;
    std::stringstream in(row.substr(1));
    std::string cell;
    while (std::getline(in, cell, '|')) cells.push_back(trimmed(cell));
    if (!cells.empty() && cells.back().empty()) cells.pop_back();
    return cells;
}

// The family table's rows in docs/MODELS.md by prefix: rows whose first cell is `a-prefix`.
std::map<std::string, std::vector<std::string>> family_rows(const std::string& page,
                                                            std::vector<std::string>& repeated) {
    std::map<std::string, std::vector<std::string>> rows;
    std::stringstream in(page);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("| `", 0) != 0) continue;
        std::vector<std::string> cells = cells_of(line);
        if (cells.size() != 9 || cells[0].size() < 3 || cells[0].back() != '`') continue;
        const std::string prefix = cells[0].substr(1, cells[0].size() - 2);
        if (rows.count(prefix)) repeated.push_back(prefix);
        rows[prefix] = cells;
    }
    return rows;
}

std::string or_dash(const std::string& s) {
    return s.empty() ? "—" : s;
}

}  // namespace

TEST_CASE(
    "docs/MODELS.md lists every model family of the table with its provider, effort values, "
    "default effort, anthropic-version and shutdown, and no family the code lacks") {
    const std::string page = test::read_text(std::string(CUOPT_SOURCE_DIR) + "/docs/MODELS.md");
    std::vector<std::string> repeated;
    const auto rows = family_rows(page, repeated);
    CHECK(repeated.empty());
    CHECK(page.find(std::string("Checked ") + k_model_table_checked) != std::string::npos);

    std::map<std::string, bool> in_code;
    for (const model_family& f : model_families()) {
        in_code[f.prefix] = true;
        INFO("family " << f.prefix);
        const auto it = rows.find(f.prefix);
        if (it == rows.end()) {
            FAIL_CHECK("docs/MODELS.md has no row for " << f.prefix);
            continue;
        }
        const std::vector<std::string>& cells = it->second;
        CHECK(cells[1] == k_llm_providers.name(f.provider));
        CHECK(cells[4] == or_dash(word_list(f.efforts, ", ")));
        if (!f.default_effort.empty()) CHECK(cells[5] == f.default_effort);
        if (f.default_effort.empty() && !f.efforts.empty())
            CHECK(cells[5].rfind("not sent", 0) == 0);
        CHECK(cells[7] == or_dash(f.anthropic_version));
        if (f.shuts_down.empty())
            CHECK(cells[8] == "none announced");
        else if (f.replacement.empty())
            CHECK(cells[8] == f.shuts_down + ", no replacement named");
        else
            CHECK(cells[8] == f.shuts_down + " → `" + f.replacement + "`");
    }
    for (const auto& [prefix, cells] : rows) {
        INFO("docs/MODELS.md row " << prefix);
        CHECK(in_code.count(prefix) == 1);
    }
}
