#include "harness/cubin_cache.hpp"

#include <rapidjson/document.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
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

}  // namespace

fs::path cubin_cache::default_folder() {
    if (const char* v = std::getenv("CUDA_HARNESS_CACHE_DIR"); v && *v) return v;
    if (const char* v = std::getenv("XDG_CACHE_HOME"); v && *v) return fs::path(v) / "cuda-harness";
    if (const char* v = std::getenv("HOME"); v && *v)
        return fs::path(v) / ".cache" / "cuda-harness";
    return private_temporary_cache();
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
    static const std::regex include(R"(^[ \t]*#[ \t]*include(_next)?[ \t]*([^ \t<]))");
    std::istringstream lines(kernel.source);
    std::string line;
    while (std::getline(lines, line))
        if (std::regex_search(line, include)) return false;
    return true;
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
