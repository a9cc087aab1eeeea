#include "harness/cubin_cache.hpp"

#include <rapidjson/document.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <regex>
#include <sstream>

#include "common/file_io.hpp"
#include "common/json_builder.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "common/sha256.hpp"
#include "harness/confined_compile.hpp"
#include "harness/device_info.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

// $TMPDIR/cuda-harness-cache-<uid> when it is ours alone: made now (0700), or already a real
// folder (not a link) that we own and nobody else may write. Else "": a folder another user made
// there first could hold a forged cubin that would be loaded and timed as the candidate's.
fs::path private_temporary_cache() {
    std::error_code ec;
    fs::path tmp = fs::temp_directory_path(ec);
    if (ec) tmp = "/tmp";
    const fs::path folder = tmp / ("cuda-harness-cache-" + std::to_string(::geteuid()));
    if (::mkdir(folder.c_str(), 0700) == 0) return folder;
    struct stat st {};
    if (errno == EEXIST && ::lstat(folder.c_str(), &st) == 0 && S_ISDIR(st.st_mode) &&
        st.st_uid == ::geteuid() && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0)
        return folder;  // ours: in a sticky $TMPDIR nobody else can move or replace it
    static bool said = false;
    if (!said)
        std::cerr
            << "cuda-harness: no cache: no $CUDA_HARNESS_CACHE_DIR, $XDG_CACHE_HOME or $HOME, "
            << "and " << folder.string() << " is not a private folder of ours\n";
    said = true;
    return {};
}

// "" when `folder` is ours alone (made now, 0700, where missing): a real folder, not a link,
// owned by us, that no one else may write, and no folder above it that another user could
// rename it out of (each owned by us or root, not writable by others unless sticky). Else why.
std::string private_folder_problem(const fs::path& folder) {
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(folder, ec))) {
        fs::create_directories(folder.parent_path(), ec);
        if (::mkdir(folder.c_str(), 0700) != 0 && errno != EEXIST)
            return std::string("not a folder that can be made (") + std::strerror(errno) + ")";
    }
    struct stat st {};
    if (::lstat(folder.c_str(), &st) != 0) return std::strerror(errno);
    if (!S_ISDIR(st.st_mode)) return "not a folder (a link, or a file)";
    if (st.st_uid != ::geteuid()) return "another user's (uid " + std::to_string(st.st_uid) + ")";
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) return "writable by others";
    for (fs::path up = fs::absolute(folder, ec).parent_path(); !up.empty(); up = up.parent_path()) {
        if (::stat(up.c_str(), &st) != 0) return up.string() + ": " + std::strerror(errno);
        if (st.st_uid != 0 && st.st_uid != ::geteuid())
            return "inside " + up.string() + ", another user's (uid " + std::to_string(st.st_uid) +
                   ")";
        if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0)
            return "inside " + up.string() + ", which others may write";
        if (up == up.root_path()) break;
    }
    return "";
}

bool identifier_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$';
}

// The source without line splices (a backslash, blanks, a newline), as translation phase 2
// joins them.
std::string spliced(std::string_view src) {
    std::string out;
    out.reserve(src.size());
    for (std::size_t i = 0; i < src.size(); ++i) {
        if (src[i] == '\\') {
            std::size_t j = i + 1;
            while (j < src.size() && (src[j] == ' ' || src[j] == '\t' || src[j] == '\r')) ++j;
            if (j < src.size() && src[j] == '\n') {
                i = j;
                continue;
            }
        }
        out += src[i];
    }
    return out;
}

// The end of the literal opening at `at` (a quote): a raw string R"d(...)d" when the token
// before the quote is R, u8R, uR, UR or LR; else up to the closing quote (an escape skipped)
// or the line's end.
std::size_t literal_end(const std::string& s, std::size_t at, std::size_t token_start) {
    const std::string prefix = s.substr(token_start, at - token_start);
    if (s[at] == '"' &&
        (prefix == "R" || prefix == "u8R" || prefix == "uR" || prefix == "UR" || prefix == "LR")) {
        const std::size_t open = s.find('(', at + 1);
        if (open != std::string::npos && open - at - 1 <= 16) {
            const std::string close = ")" + s.substr(at + 1, open - at - 1) + "\"";
            const std::size_t end = s.find(close, open + 1);
            return end == std::string::npos ? s.size() : end + close.size();
        }
    }
    std::size_t i = at + 1;
    while (i < s.size() && s[i] != s[at] && s[i] != '\n') i += s[i] == '\\' ? 2 : 1;
    return std::min(i + 1, s.size());
}

// The source as the preprocessor tokenizes it: splices joined, each comment one space, each
// string, character and raw-string literal and each number (digit separators and all) one
// placeholder, so that none of their text reads as a directive.
std::string tokens_only(std::string_view source) {
    const std::string s = spliced(source);
    std::string out;
    std::size_t token_start = 0;  // where the identifier before a quote began
    for (std::size_t i = 0; i < s.size();) {
        const char c = s[i];
        if (c == '/' && i + 1 < s.size() && (s[i + 1] == '/' || s[i + 1] == '*')) {
            const bool line = s[i + 1] == '/';
            const std::size_t end = s.find(line ? "\n" : "*/", i + 2);
            out += ' ';
            i = end == std::string::npos ? s.size() : line ? end : end + 2;
        } else if (c == '"' || c == '\'') {
            const std::size_t from = !out.empty() && identifier_char(s[i - 1]) ? token_start : i;
            i = literal_end(s, i, from);
            out += "\"\"";
        } else if (std::isdigit(static_cast<unsigned char>(c)) ||
                   (c == '.' && i + 1 < s.size() &&
                    std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
            // A pp-number: digits, letters, '.', digit separators, and a sign after e/E/p/P.
            ++i;
            while (i < s.size() &&
                   (identifier_char(s[i]) || s[i] == '.' || s[i] == '\'' ||
                    ((s[i] == '+' || s[i] == '-') && std::strchr("eEpP", s[i - 1]))))
                ++i;
            out += '0';
        } else if (identifier_char(c)) {
            token_start = i;
            while (i < s.size() && identifier_char(s[i])) out += s[i++];
        } else {
            out += c;
            ++i;
        }
    }
    return out;
}

}  // namespace

bool names_outside_files(std::string_view source) {
    const std::string t = tokens_only(source);
    // Anywhere, not only where a line starts: a false alarm costs a compile, a miss a stale
    // cubin. '#', its digraph %: and its trigraph ??= alike; form feeds and vertical tabs are
    // blanks.
    static const std::regex include(
        R"((#|%:|\?\?=)[ \t\f\v\r\n]*(include|include_next|import|embed)\b[ \t\f\v\r\n]*([^< \t\f\v\r\n]|$))");
    static const std::regex has_include(
        R"(__has_(include|include_next|embed)\b[ \t\f\v\r\n]*\([ \t\f\v\r\n]*([^< \t\f\v\r\n]|$))");
    return std::regex_search(t, include) || std::regex_search(t, has_include);
}

namespace {

// `chosen` when it is ours alone, else "" (no cache), said once on stderr: a cubin found there
// is loaded as the candidate's own compile.
fs::path private_or_none(const fs::path& chosen) {
    const std::string why = private_folder_problem(chosen);
    if (why.empty()) return chosen;
    static bool said = false;
    if (!said)
        std::cerr << "cuda-harness: no cache: " << chosen.string() << " is " << why
                  << " (a cubin planted there would be loaded as a candidate's compile)\n";
    said = true;
    return {};
}

}  // namespace

fs::path cubin_cache::default_folder() {
    if (const char* v = std::getenv("CUDA_HARNESS_CACHE_DIR"); v && *v) return private_or_none(v);
    if (const char* v = std::getenv("XDG_CACHE_HOME"); v && *v)
        return private_or_none(fs::path(v) / "cuda-harness");
    if (const char* v = std::getenv("HOME"); v && *v)
        return private_or_none(fs::path(v) / ".cache" / "cuda-harness");
    return private_temporary_cache();
}

fs::path cubin_cache::folder_for(const std::string& given) {
    return given.empty() ? default_folder() : private_or_none(given);
}

std::string cubin_cache::key_for(const kernel_spec& kernel, const std::string& arch,
                                 bool confined) {
    std::string material = std::string("cuda-harness-cubin-v2\n") +
                           (confined ? "confined\n" : "unconfined\n") + arch + "\n" +
                           nvrtc_version_string() + "\n" + kernel.entry + "\n" +
                           kernel.shown_name() + "\n";  // the log names it
    for (const auto& o : nvrtc_options(kernel, arch)) material += o + "\n";
    material += '\0';
    material += kernel.source;
    return sha256_hex(material);
}

bool cubin_cache::cacheable(const kernel_spec& kernel) {
    for (const auto& o : kernel.compile_options)
        if (o.rfind("-I", 0) == 0 || o.rfind("--include-path", 0) == 0 ||
            o.rfind("--pre-include", 0) == 0 || o.rfind("-include", 0) == 0)
            return false;
    // `#include "x.h"` (or a macro) reads a file beside the kernel whose content the key lacks:
    // two requests with one source and different headers would share a cubin. Only <...>
    // (the toolkit's headers, fixed for an NVRTC version) keeps a source cacheable.
    return !names_outside_files(kernel.source);
}

std::optional<compile_result> cubin_cache::find(const std::string& key) const {
    if (m_folder.empty()) return std::nullopt;  // no private folder: no cache
    try {
        const fs::path meta_path = m_folder / (key + ".json");
        const fs::path cubin_path = m_folder / (key + ".cubin");
        if (!fs::exists(meta_path) || !fs::exists(cubin_path)) return std::nullopt;
        const rapidjson::Document doc = parse_json(read_text_file(meta_path), meta_path.string());
        const json_field meta(doc, meta_path.string());
        const auto bytes = read_binary_file(cubin_path);
        compile_result r;
        r.cubin.assign(bytes.begin(), bytes.end());
        r.cubin_sha256 = sha256_hex(r.cubin.data(), r.cubin.size());
        if (r.cubin_sha256 != meta.text("cubin_sha256")) return std::nullopt;  // torn or tampered
        r.ok = true;
        r.cache_hit = true;
        r.cache_key = key;
        r.log = meta.text("log");
        r.arch = meta.text("arch");
        r.lowered_name = meta.text("lowered_name");
        r.options = meta.texts("options");
        r.ptxas = parse_ptxas_report(r.log, r.lowered_name);
        return r;
    } catch (const std::exception&) {
        return std::nullopt;  // an unreadable entry is a miss, never an error
    }
}

void cubin_cache::store(const compile_result& result) const noexcept {
    if (m_folder.empty()) return;
    try {
        rapidjson::Document meta(rapidjson::kObjectType);
        json_object m(meta);
        m.add("schema_version", 1)
            .add("arch", result.arch)
            .add("lowered_name", result.lowered_name);
        m.add("cubin_sha256", result.cubin_sha256).add("log", result.log);
        m.add("options", result.options);
        // cubin first: a reader needs the .json, so it never sees a cubin without its record.
        // write_file_atomic: a fresh O_EXCL|O_NOFOLLOW file renamed into place, never through
        // a link, in the user's own folder.
        write_file_atomic(m_folder / (result.cache_key + ".cubin"), result.cubin.data(),
                          result.cubin.size());
        write_file_atomic(m_folder / (result.cache_key + ".json"), to_pretty_json(meta));
    } catch (const std::exception&) {
    }
}

compile_result compile_cached(const kernel_spec& kernel, const std::string& arch,
                              const cubin_cache* cache, const fs::path* confined_to) {
    auto compile = [&] {
        compile_result r = confined_to ? compile_confined(kernel, arch, *confined_to)
                                       : compile_kernel(kernel, arch);
        r.nvrtc_version = nvrtc_version_string();  // in a confined compile, the child's too
        return r;
    };
    if (!cache || !cubin_cache::cacheable(kernel)) return compile();
    const auto start = std::chrono::steady_clock::now();
    const std::string key = cubin_cache::key_for(kernel, arch, confined_to != nullptr);
    if (auto hit = cache->find(key)) {
        hit->nvrtc_version = nvrtc_version_string();  // as the key says
        hit->wall_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count();
        return *hit;
    }
    compile_result r = compile();
    r.cache_key = key;
    if (r.ok) cache->store(r);
    return r;
}

}  // namespace cuopt
