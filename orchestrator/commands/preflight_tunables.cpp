// The preflight's tunables check: each of the manifest's tunables is read by the initial
// kernel or the launch, the kernel #defines none outside its own guard (that would override
// every value), and the kernel's own `#ifndef` default for one is its first value.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>

#include "common/file_io.hpp"
#include "common/message_text.hpp"
#include "orchestrator/commands/preflight_checks.hpp"

namespace cuopt::preflight {

namespace fs = std::filesystem;

namespace {

// Whether `name` appears as a whole identifier in `text`.
bool names(const std::string& text, const std::string& name) {
    for (std::size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
        const auto word = [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
        };
        if ((at == 0 || !word(text[at - 1])) &&
            (at + name.size() == text.size() || !word(text[at + name.size()])))
            return true;
    }
    return false;
}

// Every launch expression of the manifest, one per line.
std::string launch_text(const manifest& m) {
    std::string out;
    auto add = [&out](const launch_expressions& l) {
        for (const auto& e : l.grid) out += e + "\n";
        for (const auto& e : l.block) out += e + "\n";
        out += l.dynamic_shared_bytes + "\n";
    };
    add(m.launch);
    if (m.reference_launch) add(*m.reference_launch);
    for (const manifest_case& c : m.cases)
        if (c.launch) add(*c.launch);
    return out;
}

// `source` without its comments (/* */ and //), each comment's newlines kept so line numbers
// stay; string literals are not told apart (a kernel's tunables do not live in them).
std::vector<std::string> code_lines(const std::string& source) {
    std::string code;
    for (std::size_t i = 0; i < source.size(); ++i) {
        if (source.compare(i, 2, "/*") == 0) {
            const std::size_t end = source.find("*/", i + 2);
            const std::size_t stop = end == std::string::npos ? source.size() : end + 2;
            code.append(static_cast<std::size_t>(
                            std::count(source.begin() + i, source.begin() + stop, '\n')),
                        '\n');
            i = stop - 1;
        } else if (source.compare(i, 2, "//") == 0) {
            i = std::min(source.find('\n', i), source.size()) - 1;
        } else {
            code += source[i];
        }
    }
    std::vector<std::string> lines;
    std::istringstream in(code);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

// The kernel's own default for `name`: the integer of a `#define NAME VALUE` right after
// `#ifndef NAME` (what -DNAME=... overrides), with its 1-based line; nullopt where there is
// none or its value is no plain integer literal (an expression is left unchecked).
std::optional<std::pair<long long, std::size_t>> guarded_default(
    const std::vector<std::string>& lines, const std::string& name) {
    static const std::regex k_ifndef(R"(^\s*#\s*ifndef\s+(\w+)\s*$)");
    static const std::regex k_define(
        R"(^\s*#\s*define\s+(\w+)\s+\(?\s*(-?(?:0[xX][0-9a-fA-F]+|[0-9]+))[uUlL]*\s*\)?\s*$)");
    for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
        std::smatch g, d;
        if (!std::regex_match(lines[i], g, k_ifndef) || g[1] != name) continue;
        if (!std::regex_match(lines[i + 1], d, k_define) || d[1] != name) continue;
        const std::string text = d[2];
        errno = 0;
        char* end = nullptr;
        const long long value = std::strtoll(text.c_str(), &end, 0);  // 0x10, 010 as C reads them
        if (errno == 0 && end && *end == '\0') return std::pair{value, i + 2};
    }
    return std::nullopt;
}

// A directive's line as a message shows it: without its indentation or trailing spaces.
std::string directive_text(const std::string& line) {
    const std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos) return "";
    return line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
}

// The 1-based line of the first `#define NAME` that -DNAME does not skip, 0 where there is none.
// A define is skipped inside the branch of a conditional that -DNAME rules out: `#ifndef NAME`
// or `#if !defined(NAME)` (or `#elif !defined(NAME)`), the `#else` or `#elif` after a branch
// -DNAME takes (`#ifdef NAME`, `#if defined(NAME)`), and `#if 0`.
// Any other redefines the tunable over the value each configuration passes.
std::size_t unguarded_define(const std::vector<std::string>& lines, const std::string& name) {
    static const std::regex k_directive(R"(^\s*#\s*(\w+)\s*(.*?)\s*$)");
    const std::regex undefined("^(ndef\\s+" + name + "|!\\s*defined\\s*\\(?\\s*" + name +
                               "\\s*\\)?|0)$");
    const std::regex defined("^(def\\s+" + name + "|defined\\s*\\(?\\s*" + name + "\\s*\\)?)$");
    struct branch {
        bool skipped_here, skipped_after;  // -DNAME skips this branch; the #else/#elif after it
    };
    std::vector<branch> open;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        std::smatch d;
        if (!std::regex_match(lines[i], d, k_directive)) continue;
        const std::string word = d[1], rest = d[2];
        if (word == "if" || word == "ifdef" || word == "ifndef") {
            const std::string test = word == "if" ? rest : word.substr(2) + " " + rest;
            open.push_back({std::regex_match(test, undefined), std::regex_match(test, defined)});
        } else if ((word == "elif" || word == "elifdef" || word == "elifndef") && !open.empty()) {
            // Reached only where no branch before it ran; its own test decides the rest.
            const std::string test = word == "elif" ? rest : word.substr(4) + " " + rest;
            const bool earlier = open.back().skipped_after;
            open.back() = {earlier || std::regex_match(test, undefined),
                           earlier || std::regex_match(test, defined)};
        } else if (word == "else" && !open.empty()) {
            open.back() = {open.back().skipped_after, open.back().skipped_after};
        } else if (word == "endif" && !open.empty()) {
            open.pop_back();
        } else if (word == "define" && rest.substr(0, rest.find_first_of(" \t(")) == name &&
                   std::none_of(open.begin(), open.end(),
                                [](const branch& b) { return b.skipped_here; })) {
            return i + 1;
        }
    }
    return 0;
}

}  // namespace

// The manifest's tunables against the initial kernel's source (comments left out): each is read
// by the kernel or the launch, none is #defined where -DNAME would not skip it, and where the
// kernel gives one a default inside its own
// `#ifndef` guard, that default is its first value (the first configuration is the initial
// kernel as written, what best.cu and the guide rely on).
void check_tunables(const std::string& kernel, const manifest& m, const add_check& add) {
    if (m.tunables.empty()) return;
    const std::vector<std::string> lines = code_lines(read_text_file(kernel));
    const std::string launches = launch_text(m);
    const std::string file = fs::path(kernel).filename().string();
    for (const auto& [name, values] : m.tunables) {
        // Its own guard, default and #undef are no reads of it; any other line naming it is
        // (code, #if, another macro's definition).
        const std::regex own(R"(^\s*#\s*(ifndef|ifdef|undef|define)\s+)" + name + R"(\b.*)");
        if (const std::size_t at = unguarded_define(lines, name); at != 0)
            return void(add("tunables", false,
                            "'" + name + "': " + file + " line " + std::to_string(at) + " " +
                                quote_value(directive_text(lines[at - 1]), 80) +
                                " is outside an #ifndef " + name +
                                " guard, so it overrides every value of the tunable (-D" + name +
                                "=" + std::to_string(values.front()) + " included)",
                            "wrap it in #ifndef " + name +
                                " ... #endif, its value the tunable's "
                                "first (" +
                                std::to_string(values.front()) + ")",
                            exit_code::invalid_request));
        if (const auto d = guarded_default(lines, name); d && d->first != values.front())
            return void(add("tunables", false,
                            "'" + name + "': first value " + std::to_string(values.front()) +
                                " but " + file + " line " + std::to_string(d->second) +
                                " #defines " + name + " " + std::to_string(d->first),
                            "make the kernel's default the tunable's first value: the first "
                            "configuration is the initial kernel as written",
                            exit_code::invalid_request));
        bool read = names(launches, name);
        for (const std::string& line : lines)
            if (names(line, name) && !std::regex_match(line, own)) read = true;
        if (!read)
            return void(add("tunables", false,
                            "'" + name + "' is read by neither " + file + " nor the launch",
                            "drop it from the manifest's tunables, or use it in the kernel",
                            exit_code::invalid_request));
    }
    add("tunables", true,
        std::to_string(m.tunables.size()) +
            " read by the kernel or the launch, first values "
            "its defaults",
        "", exit_code::ok);
}

}  // namespace cuopt::preflight
