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

// $TMPDIR/cuda-harness-cache-<uid> when it is ours alone (private_folder_problem). Else "": a
// folder another user made there first could hold a forged cubin that would be loaded and timed
// as the candidate's.
fs::path private_temporary_cache() {
    std::error_code ec;
    fs::path tmp = fs::temp_directory_path(ec);
    if (ec) tmp = "/tmp";
    const fs::path folder = tmp / ("cuda-harness-cache-" + std::to_string(::geteuid()));
    const std::string why = private_folder_problem(folder);
    if (why.empty()) return folder;
    static bool said = false;
    if (!said)
        std::cerr
            << "cuda-harness: no cache: no $CUDA_HARNESS_CACHE_DIR, $XDG_CACHE_HOME or $HOME, "
            << "and " << folder.string() << " is " << why << "\n";
    said = true;
    return {};
}

// The text with line splices joined: a backslash right before a newline (LF or CRLF), NVRTC's
// reading; with `blanks_too`, also a backslash, blanks, then a newline (GCC's).
std::string joined(std::string_view src, bool blanks_too) {
    std::string out;
    out.reserve(src.size());
    for (std::size_t i = 0; i < src.size(); ++i) {
        if (src[i] == '\\') {
            std::size_t j = i + 1;
            while (blanks_too && j < src.size() &&
                   (src[j] == ' ' || src[j] == '\t' || src[j] == '\f' || src[j] == '\v'))
                ++j;
            if (j < src.size() && src[j] == '\r') ++j;
            if (j < src.size() && src[j] == '\n') {
                i = j;
                continue;
            }
        }
        out += src[i];
    }
    return out;
}

bool blank(char c) {
    return c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\r';
}

// True when `line` is exactly a toolkit include: `#include <NAME>`, blanks around, at most a
// `//` comment after; NAME of letters, digits and _ . + - /, neither absolute nor climbing.
bool toolkit_include_line(std::string_view line) {
    std::size_t i = 0;
    auto skip_blanks = [&] {
        while (i < line.size() && blank(line[i])) ++i;
    };
    skip_blanks();
    if (i >= line.size() || line[i] != '#') return false;
    ++i;
    skip_blanks();
    if (line.compare(i, 7, "include") != 0) return false;
    i += 7;
    skip_blanks();
    if (i >= line.size() || line[i] != '<') return false;
    const std::size_t name = ++i;
    while (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) ||
                               std::strchr("_.+-/", line[i]) != nullptr))
        ++i;
    if (i == name || i >= line.size() || line[i] != '>') return false;
    const std::string_view header = line.substr(name, i - name);
    if (header.front() == '/' || header.find("..") != std::string_view::npos) return false;
    ++i;
    skip_blanks();
    return i == line.size() || line.compare(i, 2, "//") == 0;
}

// True when some line of `text` holding "include", "import" or "embed" is anything but a
// toolkit include line.
bool reads_beyond_toolkit(const std::string& text) {
    for (const char* word : {"include", "import", "embed"})
        for (std::size_t at = text.find(word); at != std::string::npos;) {
            const std::size_t newline = text.rfind('\n', at);
            const std::size_t start = newline == std::string::npos ? 0 : newline + 1;
            const std::size_t end = std::min(text.find('\n', at), text.size());
            if (std::string_view(word) != "include" ||
                !toolkit_include_line(std::string_view(text).substr(start, end - start)))
                return true;
            at = end >= text.size() ? std::string::npos : text.find(word, end);
        }
    return false;
}

}  // namespace

bool names_outside_files(std::string_view source) {
    // No tokenizer that could drift from NVRTC's: every line that names "include", "import" or
    // "embed" (directives, __has_include, __has_embed, comments and strings alike) must be a
    // plain toolkit include, under either reading of line splices; and no trigraph (NVRTC reads
    // them below C++17: ??/ is a backslash, ??= a #).
    if (source.find("??") != std::string_view::npos) return true;
    return reads_beyond_toolkit(joined(source, false)) ||
           reads_beyond_toolkit(joined(source, true));
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
            o.rfind("--pre-include", 0) == 0 || o.rfind("-include", 0) == 0 ||
            o.find("pch") != std::string::npos)  // --use-pch, --pch-dir: files on disk
            return false;
    // `#include "x.h"` (or a macro) reads a file beside the kernel whose content the key lacks:
    // two requests with one source and different headers would share a cubin. Only <...>
    // (the toolkit's headers, fixed for an NVRTC version) keeps a source cacheable; the -D
    // values are source too (a value may be __has_include("x.h")).
    for (const auto& [name, value] : kernel.defines)
        if (names_outside_files(name) || names_outside_files(value)) return false;
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
        // A cache that cannot be written is no error: the compile stands, the next one repeats it.
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
