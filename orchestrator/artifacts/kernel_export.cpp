#include "orchestrator/artifacts/kernel_export.hpp"

#include <regex>
#include <set>
#include <sstream>

#include "common/message_text.hpp"
#include "orchestrator/contract/integer_expression.hpp"

namespace cuopt {

namespace {

// The exact rational the launch expressions are computed in, as the run computed them
// (integer_expression.hpp): q == 0 marks a value that went wrong (a division by zero, '%' of a
// fraction), which every later step keeps.
const char* const k_rational_code = R"(struct cuopt_q {
    __int128 p, q;
};
inline __int128 cuopt_floor_div(__int128 p, __int128 q) {
    return p >= 0 ? p / q : -((-p + q - 1) / q);
}
inline cuopt_q cuopt_norm(__int128 p, __int128 q) {
    if (q == 0) return {0, 0};
    if (q < 0) p = -p, q = -q;
    __int128 a = p < 0 ? -p : p, b = q;
    while (b) {
        const __int128 t = a % b;
        a = b;
        b = t;
    }
    if (a > 1) p /= a, q /= a;
    return {p, q};
}
inline cuopt_q cuopt_add(cuopt_q a, cuopt_q b) {
    return a.q && b.q ? cuopt_norm(a.p * b.q + b.p * a.q, a.q * b.q) : cuopt_q{0, 0};
}
inline cuopt_q cuopt_sub(cuopt_q a, cuopt_q b) {
    return a.q && b.q ? cuopt_norm(a.p * b.q - b.p * a.q, a.q * b.q) : cuopt_q{0, 0};
}
inline cuopt_q cuopt_mul(cuopt_q a, cuopt_q b) {
    return a.q && b.q ? cuopt_norm(a.p * b.p, a.q * b.q) : cuopt_q{0, 0};
}
inline cuopt_q cuopt_div(cuopt_q a, cuopt_q b) {
    return a.q && b.q ? cuopt_norm(a.p * b.q, a.q * b.p) : cuopt_q{0, 0};
}
inline cuopt_q cuopt_mod(cuopt_q a, cuopt_q b) {
    return a.q == 1 && b.q == 1 && b.p != 0 ? cuopt_q{a.p % b.p, 1} : cuopt_q{0, 0};
}
inline cuopt_q cuopt_neg(cuopt_q a) { return {-a.p, a.q}; }
inline cuopt_q cuopt_ceil(cuopt_q a) {
    return a.q ? cuopt_q{-cuopt_floor_div(-a.p, a.q), 1} : a;
}
inline cuopt_q cuopt_floor(cuopt_q a) { return a.q ? cuopt_q{cuopt_floor_div(a.p, a.q), 1} : a; }
inline cuopt_q cuopt_abs(cuopt_q a) { return {a.p < 0 ? -a.p : a.p, a.q}; }
inline cuopt_q cuopt_min(cuopt_q a, cuopt_q b) {
    if (!a.q || !b.q) return {0, 0};
    return b.p * a.q < a.p * b.q ? b : a;
}
inline cuopt_q cuopt_max(cuopt_q a, cuopt_q b) {
    if (!a.q || !b.q) return {0, 0};
    return a.p * b.q < b.p * a.q ? b : a;
}
// A whole number in [low, high] into *out; false for anything else.
inline bool cuopt_whole(cuopt_q a, long long low, long long high, long long* out) {
    if (a.q != 1 || a.p < low || a.p > high) return false;
    *out = static_cast<long long>(a.p);
    return true;
}
)";

// "const float* a, const float* b, float* c, int m, int n, int k" and, for the call, "a, b, c, m,
// n, k"; then the extra parameters.
struct parameter_lists {
    std::string declared, passed, kernel_args;
};

parameter_lists parameters_of(const manifest& m) {
    parameter_lists p;
    auto add = [&p](const std::string& declaration, const std::string& name) {
        p.declared += (p.declared.empty() ? "" : ", ") + declaration;
        p.passed += (p.passed.empty() ? "" : ", ") + name;
    };
    for (const manifest_arg& a : m.args) {
        if (a.is_buffer())
            add(std::string(a.kind == arg_kind::input ? "const " : "") + cuda_type_name(a.type) +
                    "* " + a.name,
                a.name);
        else
            add(cuda_type_name(a.type) + " " + a.name, a.name);
    }
    p.kernel_args = p.passed;
    for (const std::string& e : extra_launch_params(m)) add("long long param_" + e, "param_" + e);
    return p;
}

// The names the expressions may use, as C++ building a cuopt_q.
std::map<std::string, std::string> expression_names_of(const exported_kernel& k,
                                                       const manifest& m) {
    std::map<std::string, std::string> names;
    const std::set<std::string> params = case_params(m);
    for (const std::string& e : extra_launch_params(m))
        names[e] = "cuopt_q{static_cast<__int128>(param_" + e + "), 1}";
    for (const manifest_arg& a : m.args)
        if (const std::string p = carried_param(a, params); !p.empty())
            names[p] = "cuopt_q{static_cast<__int128>(" + a.name + "), 1}";
    for (const auto& [name, value] : k.tunables)
        names[name] = "cuopt_q{" + std::to_string(value) + ", 1}";
    return names;
}

// The body of ENTRY_launch_shape: the scalar checks, then the nine numbers.
std::string shape_body(const exported_kernel& k, const manifest& m) {
    const std::map<std::string, std::string> names = expression_names_of(k, m);
    const std::set<std::string> params = case_params(m);
    std::ostringstream o;
    for (const manifest_arg& a : m.args) {
        if (a.kind != arg_kind::scalar || a.value_is_number || !carried_param(a, params).empty())
            continue;
        if (is_float(a.type)) continue;
        // A scalar that stands for an expression over the parameters must equal it.
        o << "    {  // " << a.name << " = " << comment_line(a.value)
          << "\n        long long cuopt_want = 0;\n"
          << "        if (!cuopt_whole(" << integer_expression_cpp(a.value, names)
          << ", -(1LL << 62), 1LL << 62, &cuopt_want) || static_cast<long long>(" << a.name
          << ") != cuopt_want)\n            return cudaErrorInvalidValue;\n    }\n";
    }
    const char* axes[] = {"x", "y", "z"};
    o << "    long long cuopt_g[3], cuopt_b[3], cuopt_s = 0;\n";
    for (int i = 0; i < 3; ++i)
        o << "    if (!cuopt_whole(" << integer_expression_cpp(k.launch.grid[i], names)
          << ", 1, 2147483647LL, &cuopt_g[" << i << "])) return cudaErrorInvalidValue;  // grid."
          << axes[i] << " = " << comment_line(k.launch.grid[i]) << "\n";
    for (int i = 0; i < 3; ++i)
        o << "    if (!cuopt_whole(" << integer_expression_cpp(k.launch.block[i], names)
          << ", 1, 1024, &cuopt_b[" << i << "])) return cudaErrorInvalidValue;  // block."
          << axes[i] << " = " << comment_line(k.launch.block[i]) << "\n";
    o << "    if (!cuopt_whole(" << integer_expression_cpp(k.launch.dynamic_shared_bytes, names)
      << ", 0, 1LL << 31, &cuopt_s)) return cudaErrorInvalidValue;  // dynamic shared bytes = "
      << comment_line(k.launch.dynamic_shared_bytes) << "\n"
      << "    *cuopt_grid = dim3(unsigned(cuopt_g[0]), unsigned(cuopt_g[1]), "
         "unsigned(cuopt_g[2]));\n"
      << "    *cuopt_block = dim3(unsigned(cuopt_b[0]), unsigned(cuopt_b[1]), "
         "unsigned(cuopt_b[2]));\n"
      << "    *cuopt_shared = size_t(cuopt_s);\n    return cudaSuccess;\n";
    return o.str();
}

// The #define names at the top of best.cu, undefined after the kernel so that they do not
// leak into the program that includes the header.
std::vector<std::string> defined_names(const std::string& source) {
    static const std::regex k_define(R"(^#define\s+([A-Za-z_]\w*))", std::regex::multiline);
    std::vector<std::string> out;
    for (auto it = std::sregex_iterator(source.begin(), source.end(), k_define);
         it != std::sregex_iterator(); ++it)
        out.push_back((*it)[1]);
    return out;
}

}  // namespace

std::string cuda_type_name(dtype t) {
    switch (t) {
        case dtype::f16:
            return "__half";
        case dtype::bf16:
            return "__nv_bfloat16";
        case dtype::f32:
            return "float";
        case dtype::f64:
            return "double";
        case dtype::i8:
            return "signed char";
        case dtype::u8:
            return "unsigned char";
        case dtype::i16:
            return "short";
        case dtype::u16:
            return "unsigned short";
        case dtype::i32:
            return "int";
        case dtype::u32:
            return "unsigned int";
        case dtype::i64:
            return "long long";
        case dtype::u64:
            return "unsigned long long";
        case dtype::f8e4m3:
            return "__nv_fp8_e4m3";
        case dtype::f8e5m2:
            return "__nv_fp8_e5m2";
    }
    return "void";
}

std::set<std::string> case_params(const manifest& m) {
    std::set<std::string> out;
    for (const manifest_case& c : m.cases)
        for (const auto& [name, value] : c.params) out.insert(name);
    return out;
}

// The parameter a scalar argument carries: its value when that is exactly one case parameter.
std::string carried_param(const manifest_arg& a, const std::set<std::string>& params) {
    if (a.kind != arg_kind::scalar || a.value_is_number || is_float(a.type)) return "";
    return params.count(a.value) ? a.value : "";
}

std::vector<std::string> extra_launch_params(const manifest& m) {
    const std::set<std::string> params = case_params(m);
    std::set<std::string> carried;
    for (const manifest_arg& a : m.args)
        if (const std::string p = carried_param(a, params); !p.empty()) carried.insert(p);
    std::vector<std::string> out;
    for (const std::string& p : params)
        if (!carried.count(p)) out.push_back(p);
    return out;
}

std::string cuda_header(const exported_kernel& k, const manifest& m) {
    const parameter_lists p = parameters_of(m);
    std::ostringstream o;
    o << "// " << k.entry
      << ".cuh: generated by cuda-optimizer export; include it in ONE .cu file\n"
      << "// (it defines the kernel), compile with nvcc and " << k.entry << ".cmake's options.\n";
    for (const std::string& line : k.about) o << "//   " << comment_line(line) << "\n";
    o << "#pragma once\n#include <cuda_runtime.h>\n#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"
      << "#include <cuda_fp8.h>\n\n// ---- the kernel, as the run measured it ----\n"
      << k.source << (k.source.empty() || k.source.back() == '\n' ? "" : "\n");
    for (const std::string& d : defined_names(k.source)) o << "#undef " << d << "\n";
    o << "\n// ---- the launch, from the manifest's expressions ----\nnamespace cuopt_export_"
      << k.entry << " {\n"
      << k_rational_code << "}  // namespace cuopt_export_" << k.entry << "\n\n"
      << "/// Grid, block and dynamic shared memory for these arguments, computed as the run did.\n"
      << "inline cudaError_t " << k.entry << "_launch_shape(" << p.declared
      << (p.declared.empty() ? "" : ", ")
      << "dim3* cuopt_grid, dim3* cuopt_block, size_t* cuopt_shared) {\n"
      << "    using namespace cuopt_export_" << k.entry << ";\n"
      << shape_body(k, m) << "}\n\n"
      << "/// Launches the kernel on `stream`; cudaErrorInvalidValue for arguments the manifest\n"
      << "/// rules out, else the launch's own error.\n"
      << "inline cudaError_t launch_" << k.entry << "(" << p.declared
      << (p.declared.empty() ? "" : ", ") << "cudaStream_t cuopt_stream = 0) {\n"
      << "    dim3 cuopt_grid, cuopt_block;\n    size_t cuopt_shared = 0;\n"
      << "    if (const cudaError_t cuopt_e = " << k.entry << "_launch_shape(" << p.passed
      << (p.passed.empty() ? "" : ", ")
      << "&cuopt_grid, &cuopt_block, &cuopt_shared); cuopt_e != cudaSuccess)\n"
      << "        return cuopt_e;\n"
      << "    if (cuopt_shared > 48 * 1024) {\n"
      << "        const cudaError_t cuopt_e = cudaFuncSetAttribute(" << k.entry
      << ", cudaFuncAttributeMaxDynamicSharedMemorySize, int(cuopt_shared));\n"
      << "        if (cuopt_e != cudaSuccess) return cuopt_e;\n    }\n"
      << "    " << k.entry << "<<<cuopt_grid, cuopt_block, cuopt_shared, cuopt_stream>>>("
      << p.kernel_args << ");\n"
      << "    return cudaGetLastError();\n}\n";
    return o.str();
}

std::string cmake_snippet(const exported_kernel& k) {
    std::string arch = k.arch.rfind("sm_", 0) == 0 ? k.arch.substr(3) : k.arch;
    std::string options = "--std=c++17";
    for (const std::string& opt : k.compile_options) options += " " + opt;
    std::ostringstream o;
    o << "# " << k.entry << ".cmake: generated by cuda-optimizer export. In your CMakeLists.txt:\n"
      << "#   include(path/to/" << k.entry << ".cmake)\n"
      << "#   cuopt_export_" << k.entry << "(your_cuda_target)   # then #include \"" << k.entry
      << ".cuh\" in one of its .cu files\n"
      << "# The run compiled the kernel for " << (k.arch.empty() ? "its GPU" : k.arch)
      << " with: " << options << "\n"
      << "function(cuopt_export_" << k.entry << " target)\n"
      << "  target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_FUNCTION_LIST_DIR})\n";
    if (!arch.empty())
        o << "  set_property(TARGET ${target} APPEND PROPERTY CUDA_ARCHITECTURES " << arch
          << "-real " << arch << "-virtual)\n";
    o << "  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:";
    for (const std::string& opt : k.compile_options) o << opt << ";";
    o << ">)\n  set_property(TARGET ${target} PROPERTY CUDA_STANDARD 17)\nendfunction()\n";
    return o.str();
}

}  // namespace cuopt
