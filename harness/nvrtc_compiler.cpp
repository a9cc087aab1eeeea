#include "harness/nvrtc_compiler.hpp"

#include <cuda.h>
#include <dlfcn.h>
#include <nvrtc.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <type_traits>

#include "common/sha256.hpp"

namespace cuopt {

namespace {

// Every NVRTC entry point the harness calls: one list for the table and for its loading.
// clang-format off
#define CUOPT_NVRTC_FUNCTIONS(X)                                                       \
    X(nvrtcVersion) X(nvrtcGetErrorString) X(nvrtcGetNumSupportedArchs)               \
    X(nvrtcGetSupportedArchs) X(nvrtcCreateProgram) X(nvrtcDestroyProgram)             \
    X(nvrtcAddNameExpression) X(nvrtcCompileProgram) X(nvrtcGetProgramLogSize)         \
    X(nvrtcGetProgramLog) X(nvrtcGetLoweredName) X(nvrtcGetCUBINSize) X(nvrtcGetCUBIN)
// clang-format on

// NVRTC's entry points, from the library loaded at first use, each under its own name.
struct nvrtc_api {
    std::string file;     // the library's path as the loader found it
    std::string problem;  // why none could be loaded; "" when loaded
#define CUOPT_NVRTC_POINTER(name) decltype(&::name) name = nullptr;
    CUOPT_NVRTC_FUNCTIONS(CUOPT_NVRTC_POINTER)
#undef CUOPT_NVRTC_POINTER
};

// The soname of the NVRTC whose headers this was built with (libnvrtc.so.13 for CUDA 13).
std::string nvrtc_soname() {
    return "libnvrtc.so." + std::to_string(CUDA_VERSION / 1000);
}

nvrtc_api load_nvrtc() {
    nvrtc_api api;
    const std::string soname = nvrtc_soname();
    void* lib = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char* why = dlerror();
        api.problem = "NVRTC not found: " + soname + " (" + (why ? why : "cannot be opened") +
                      "); install the CUDA toolkit's NVRTC or put its folder on LD_LIBRARY_PATH";
        return api;
    }
    auto get = [&](auto& fn, const char* symbol) {
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, symbol));
        if (!fn && api.problem.empty()) api.problem = soname + " has no " + symbol;
    };
#define CUOPT_NVRTC_RESOLVE(name) get(api.name, #name);
    CUOPT_NVRTC_FUNCTIONS(CUOPT_NVRTC_RESOLVE)
#undef CUOPT_NVRTC_RESOLVE
    Dl_info info{};
    if (api.nvrtcVersion && dladdr(reinterpret_cast<void*>(api.nvrtcVersion), &info) &&
        info.dli_fname)
        api.file = info.dli_fname;
    return api;
}

// NVRTC, loaded at the first call; `problem` says why where it could not be.
const nvrtc_api& loaded_nvrtc() {
    static const nvrtc_api api = load_nvrtc();
    return api;
}

// NVRTC; throws nvrtc_error saying why where it could not be loaded.
const nvrtc_api& nvrtc() {
    const nvrtc_api& api = loaded_nvrtc();
    if (!api.problem.empty()) throw nvrtc_error(api.problem);
    return api;
}

void check_nvrtc(nvrtcResult r, const char* statement) {
    if (r != NVRTC_SUCCESS)
        throw nvrtc_error(std::string(statement) + " failed: " + nvrtc().nvrtcGetErrorString(r));
}
#define NVRTC_CALL(call) check_nvrtc(call, #call)

class nvrtc_program {
  public:
    nvrtc_program(const std::string& source, const std::string& name) {
        NVRTC_CALL(
            nvrtc().nvrtcCreateProgram(&m_prog, source.c_str(), name.c_str(), 0, nullptr, nullptr));
    }
    ~nvrtc_program() { nvrtc().nvrtcDestroyProgram(&m_prog); }
    nvrtc_program(const nvrtc_program&) = delete;
    nvrtc_program& operator=(const nvrtc_program&) = delete;
    nvrtcProgram get() const { return m_prog; }

  private:
    nvrtcProgram m_prog{};
};

bool starts_with(const std::string& s, const char* prefix) {
    return s.rfind(prefix, 0) == 0;
}

// The entry is looked up through a name expression that NVRTC compiles in a pseudo-file
// "__nv_name_map": when every error is there, the source is fine but has no such kernel.
bool only_entry_errors(const std::string& log) {
    std::size_t errors = 0, entry_errors = 0, start = 0;
    while (start < log.size()) {
        std::size_t end = log.find('\n', start);
        if (end == std::string::npos) end = log.size();
        const std::string line = log.substr(start, end - start);
        if (line.find(": error") != std::string::npos) {
            ++errors;
            entry_errors += starts_with(line, "__nv_name_map");
        }
        start = end + 1;
    }
    return errors > 0 && errors == entry_errors;
}

constexpr std::size_t k_max_error_line = 240;

bool is_error_line(const std::string& line) {
    for (const char* marker : {"): error", "): catastrophic error", "): fatal error"})
        if (line.find(marker) != std::string::npos) return true;
    return false;
}

}  // namespace

std::vector<std::string> compile_error_lines(const std::string& log) {
    std::vector<std::string> lines;
    std::size_t start = 0;
    while (start < log.size()) {
        std::size_t end = log.find('\n', start);
        if (end == std::string::npos) end = log.size();
        std::string line = log.substr(start, end - start);
        start = end + 1;
        if (!is_error_line(line) || starts_with(line, "__nv_name_map")) continue;
        if (line.size() > k_max_error_line) line = line.substr(0, k_max_error_line) + "...";
        lines.push_back(std::move(line));
    }
    return lines;
}

std::string describe_compile_failure(const std::string& source_name, const std::string& arch,
                                     const std::string& log, const std::string& log_location,
                                     std::size_t max_lines) {
    const std::vector<std::string> errors = compile_error_lines(log);
    std::string text = "NVRTC could not compile " + source_name + " for " + arch + " (";
    if (!errors.empty())
        text += std::to_string(errors.size()) + (errors.size() == 1 ? " error; " : " errors; ");
    text += "the whole log is in " + log_location + ")";
    for (std::size_t i = 0; i < errors.size() && i < max_lines; ++i)
        text += (i == 0 ? ":\n  " : "\n  ") + errors[i];
    if (errors.size() > max_lines)
        text += "\n  ... and " + std::to_string(errors.size() - max_lines) + " more";
    return text;
}

std::string check_arch(const std::string& arch) {
    int count = 0;
    std::vector<int> known;
    const nvrtc_api& api = loaded_nvrtc();  // without NVRTC, the form alone is checked
    if (api.problem.empty() && api.nvrtcGetNumSupportedArchs(&count) == NVRTC_SUCCESS &&
        count > 0) {
        known.resize(static_cast<std::size_t>(count));
        if (api.nvrtcGetSupportedArchs(known.data()) != NVRTC_SUCCESS) known.clear();
    }
    std::smatch m;
    if (std::regex_match(arch, m, std::regex(R"(sm_([0-9]{2,3})[af]?)")) &&
        (known.empty() || std::find(known.begin(), known.end(), std::stoi(m[1])) != known.end()))
        return "";
    std::string list;
    for (int a : known) list += (list.empty() ? "sm_" : ", sm_") + std::to_string(a);
    return "unknown architecture " + arch + "; expected sm_XY such as sm_90" +
           (list.empty() ? "" : " (NVRTC " + nvrtc_version_string() + " knows " + list + ")");
}

std::string nvrtc_version_string() {
    int major = 0, minor = 0;
    nvrtc().nvrtcVersion(&major, &minor);
    return std::to_string(major) + "." + std::to_string(minor);
}

const std::string& nvrtc_library() {
    return nvrtc().file;
}

std::string toolkit_include_dir() {
    for (const char* var : {"CUDA_HOME", "CUDA_PATH", "CUDAToolkit_ROOT"})
        if (const char* v = std::getenv(var);
            v && *v && std::filesystem::exists(std::string(v) + "/include/cuda_fp16.h"))
            return std::string(v) + "/include";
#ifdef CUOPT_CUDA_INCLUDE_DIR
    if (std::filesystem::exists(CUOPT_CUDA_INCLUDE_DIR "/cuda_fp16.h"))
        return CUOPT_CUDA_INCLUDE_DIR;
#endif
    return "/usr/local/cuda/include";
}

std::vector<std::string> nvrtc_options(const kernel_spec& kernel, const std::string& arch) {
    std::vector<std::string> opts{"--gpu-architecture=" + arch};
    bool has_std = false;
    for (const auto& o : kernel.compile_options)
        has_std |= starts_with(o, "--std") || starts_with(o, "-std");
    if (!has_std) opts.emplace_back("--std=c++17");
    const std::string include = toolkit_include_dir();
    opts.push_back("--include-path=" + include);
    // CUDA 13 keeps libcu++, CUB and Thrust (which cooperative_groups.h includes) under cccl/.
    if (std::filesystem::exists(include + "/cccl/cuda/std/type_traits"))
        opts.push_back("--include-path=" + include + "/cccl");
    opts.emplace_back("--ptxas-options=-v");
    for (const auto& [name, value] : kernel.defines) opts.push_back("-D" + name + "=" + value);
    opts.insert(opts.end(), kernel.compile_options.begin(), kernel.compile_options.end());
    return opts;
}

ptxas_report parse_ptxas_report(const std::string& log, const std::string& lowered_name) {
    ptxas_report r;
    // ptxas prints "Compiling entry function 'NAME' for 'sm_90'", then "Function properties
    // for NAME" with stack/spill figures, then "Used N registers, ... N bytes smem, N bytes
    // cmem[0]".
    const std::string marker = "Compiling entry function '" + lowered_name + "'";
    std::size_t pos = log.find(marker);
    if (pos == std::string::npos) return r;
    std::size_t end = log.find("Compiling entry function", pos + marker.size());
    const std::string block =
        log.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    // ptxas may compile functions on several threads and interleave their lines; a block
    // that does not carry this function's own properties header is not trusted.
    if (block.find("Function properties for " + lowered_name) == std::string::npos) return r;
    std::smatch m;
    if (std::regex_search(
            block, m,
            std::regex(
                R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)"))) {
        r.stack_frame_bytes = std::stoll(m[1]);
        r.spill_store_bytes = std::stoll(m[2]);
        r.spill_load_bytes = std::stoll(m[3]);
    }
    if (std::regex_search(block, m, std::regex(R"(Used (\d+) registers)")))
        r.registers = std::stoi(m[1]);
    if (std::regex_search(block, m, std::regex(R"((\d+) bytes smem)")))
        r.static_shared_bytes = std::stoll(m[1]);
    else if (r.registers >= 0)
        r.static_shared_bytes = 0;
    if (std::regex_search(block, m, std::regex(R"((\d+) bytes cmem\[0\])")))
        r.constant_bytes = std::stoll(m[1]);
    return r;
}

compile_result compile_kernel(const kernel_spec& kernel, const std::string& arch) {
    const auto start = std::chrono::steady_clock::now();
    compile_result result;
    result.arch = arch;
    result.options = nvrtc_options(kernel, arch);

    nvrtc_program prog(kernel.source, kernel.shown_name());
    NVRTC_CALL(nvrtc().nvrtcAddNameExpression(prog.get(), kernel.entry.c_str()));
    std::vector<const char*> argv;
    for (const auto& o : result.options) argv.push_back(o.c_str());
    const nvrtcResult compiled =
        nvrtc().nvrtcCompileProgram(prog.get(), static_cast<int>(argv.size()), argv.data());

    std::size_t log_size = 0;
    NVRTC_CALL(nvrtc().nvrtcGetProgramLogSize(prog.get(), &log_size));
    result.log.resize(log_size);
    NVRTC_CALL(nvrtc().nvrtcGetProgramLog(prog.get(), result.log.data()));
    while (!result.log.empty() && (result.log.back() == '\0' || result.log.back() == '\n'))
        result.log.pop_back();

    if (compiled == NVRTC_SUCCESS) {
        const char* lowered = nullptr;
        NVRTC_CALL(nvrtc().nvrtcGetLoweredName(prog.get(), kernel.entry.c_str(), &lowered));
        if (!lowered) {  // seen with a non-UTF-8 byte in the source: compiled, yet no entry
            result.problem = "NVRTC compiled " + kernel.shown_name() + " but found no kernel '" +
                             kernel.entry + "' in it (is the source valid UTF-8?)";
            result.wall_ms =
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                    .count();
            return result;
        }
        result.lowered_name = lowered;
        std::size_t cubin_size = 0;
        NVRTC_CALL(nvrtc().nvrtcGetCUBINSize(prog.get(), &cubin_size));
        result.cubin.resize(cubin_size);
        NVRTC_CALL(nvrtc().nvrtcGetCUBIN(prog.get(), result.cubin.data()));
        result.cubin_sha256 = sha256_hex(result.cubin.data(), result.cubin.size());
        result.ptxas = parse_ptxas_report(result.log, result.lowered_name);
        result.ok = true;  // the name expression compiled, so the entry is a __global__ function
    } else if (compiled == NVRTC_ERROR_COMPILATION) {
        result.entry_missing = only_entry_errors(result.log);
    } else if (compiled == NVRTC_ERROR_INVALID_OPTION) {
        std::string given;
        for (const auto& o : kernel.compile_options)
            given += (given.empty() ? "'" : ", '") + o + "'";
        result.problem = "NVRTC rejected an option: check kernel.compile_options (" +
                         (given.empty() ? std::string("none given") : given) + ") and the arch (" +
                         arch + ")" + (result.log.empty() ? "" : ": " + result.log);
    } else {
        check_nvrtc(compiled, "nvrtcCompileProgram");
    }
    result.wall_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return result;
}

}  // namespace cuopt
