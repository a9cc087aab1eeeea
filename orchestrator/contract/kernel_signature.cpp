#include "orchestrator/contract/kernel_signature.hpp"

#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "orchestrator/contract/manifest.hpp"

namespace cuopt {

namespace {

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\n");
    const auto e = s.find_last_not_of(" \t\n");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::optional<dtype> dtype_of(const std::string& c_type) {
    static const std::map<std::string, dtype> k_types = {{"float", dtype::f32},
                                                         {"double", dtype::f64},
                                                         {"half", dtype::f16},
                                                         {"__half", dtype::f16},
                                                         {"__nv_bfloat16", dtype::bf16},
                                                         {"nv_bfloat16", dtype::bf16},
                                                         {"__nv_fp8_e4m3", dtype::f8e4m3},
                                                         {"__nv_fp8_e5m2", dtype::f8e5m2},
                                                         {"int", dtype::i32},
                                                         {"int32_t", dtype::i32},
                                                         {"unsigned", dtype::u32},
                                                         {"unsigned int", dtype::u32},
                                                         {"uint32_t", dtype::u32},
                                                         {"long long", dtype::i64},
                                                         {"long long int", dtype::i64},
                                                         {"int64_t", dtype::i64},
                                                         {"long", dtype::i64},
                                                         {"unsigned long long", dtype::u64},
                                                         {"uint64_t", dtype::u64},
                                                         {"size_t", dtype::u64},
                                                         {"unsigned long", dtype::u64},
                                                         {"short", dtype::i16},
                                                         {"int16_t", dtype::i16},
                                                         {"unsigned short", dtype::u16},
                                                         {"uint16_t", dtype::u16},
                                                         {"char", dtype::i8},
                                                         {"signed char", dtype::i8},
                                                         {"int8_t", dtype::i8},
                                                         {"unsigned char", dtype::u8},
                                                         {"uint8_t", dtype::u8},
                                                         {"bool", dtype::u8}};
    const auto it = k_types.find(c_type);
    return it == k_types.end() ? std::nullopt : std::optional<dtype>(it->second);
}

}  // namespace

std::vector<std::string> kernel_names(const std::string& source) {
    static const std::regex k_global(
        R"(__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?([A-Za-z_]\w*))");
    std::vector<std::string> names;
    for (auto it = std::sregex_iterator(source.begin(), source.end(), k_global);
         it != std::sregex_iterator(); ++it)
        names.push_back((*it)[1]);
    return names;
}

std::string first_kernel_name(const std::string& source) {
    const auto names = kernel_names(source);
    return names.empty() ? std::string() : names.front();
}

kernel_signature parse_kernel_signature(const std::string& text) {
    std::smatch m;
    static const std::regex k_shape(
        R"(^\s*(?:extern\s+"C"\s+)?(?:__global__\s+)?void\s+(?:__global__\s+)?([A-Za-z_]\w*)\s*\(([^)]*)\)\s*;?\s*$)");
    if (!std::regex_match(text, m, k_shape))
        throw std::invalid_argument("signature '" + text +
                                    "': expected 'void NAME(TYPE NAME, ...)'");
    kernel_signature sig;
    sig.entry = m[1];
    const std::string params = trim(m[2]);
    if (params.empty() || params == "void") return sig;
    std::stringstream ss(params);
    std::string part;
    while (std::getline(ss, part, ',')) {
        std::string p = trim(part);
        const std::string before_star = p.substr(0, p.find('*'));
        const bool const_before_star = p.find('*') != std::string::npos &&
                                       std::regex_search(before_star, std::regex(R"(\bconst\b)"));
        for (const char* noise : {"__restrict__", "__restrict", "const", "volatile"}) {
            const std::regex word(std::string("\\b") + noise + "\\b");
            p = std::regex_replace(p, word, " ");
        }
        signature_param sp;
        const auto star = p.find('*');
        sp.is_pointer = star != std::string::npos;
        sp.const_pointee = const_before_star;
        if (p.find('*', star == std::string::npos ? 0 : star + 1) != std::string::npos)
            throw std::invalid_argument("signature parameter '" + trim(part) +
                                        "': pointers to pointers are not kernel buffers");
        std::string flat = p;
        for (char& ch : flat)
            if (ch == '*') ch = ' ';
        std::smatch pm;
        static const std::regex k_param(R"(^\s*(.*\S)\s+([A-Za-z_]\w*)\s*$)");
        if (!std::regex_match(flat, pm, k_param))
            throw std::invalid_argument("signature parameter '" + trim(part) +
                                        "': expected 'TYPE NAME'");
        sp.name = pm[2];
        sp.type_text = std::regex_replace(std::string(pm[1]), std::regex(R"(\s+)"), " ");
        sp.type = dtype_of(sp.type_text);
        sig.params.push_back(sp);
    }
    return sig;
}

std::string check_signature(const kernel_signature& sig, const manifest& m) {
    std::string problems;
    auto problem = [&problems](const std::string& p) {
        problems += (problems.empty() ? "" : "\n") + p;
    };
    if (sig.params.size() != m.args.size())
        problem("the signature has " + std::to_string(sig.params.size()) +
                " parameters but the manifest lists " + std::to_string(m.args.size()) + " args");
    for (std::size_t i = 0; i < std::min(sig.params.size(), m.args.size()); ++i) {
        const signature_param& p = sig.params[i];
        const manifest_arg& a = m.args[i];
        const std::string where = "parameter " + std::to_string(i) + " ('" + p.name + "' vs args[" +
                                  std::to_string(i) + "] '" + a.name + "')";
        if (p.is_pointer != a.is_buffer())
            problem(where + ": the signature has " + (p.is_pointer ? "a pointer" : "a scalar") +
                    ", the manifest " + (a.is_buffer() ? "a buffer" : "a scalar"));
        else if (!p.type)
            problem(where + ": type '" + p.type_text +
                    "' has no dtype; use one of float, double, __half, __nv_bfloat16, "
                    "int, unsigned, long long, ...");
        else if (*p.type != a.type)
            problem(where + ": '" + p.type_text + "' is " + std::string(dtype_name(*p.type)) +
                    " but the manifest says " + std::string(dtype_name(a.type)));
        else if (p.is_pointer && p.const_pointee && a.has_output())
            problem(where + ": 'const " + p.type_text + "*' on an " +
                    (a.kind == arg_kind::inout ? "inout" : "output") +
                    " buffer; the kernel writes it, so drop the const (a model is shown this "
                    "signature)");
    }
    return problems;
}

}  // namespace cuopt
