// The generated C++ of an exported op: PREFIX_kernel.cu (the kernel behind two plain functions)
// and PREFIX_op.cpp (the op's checks, outputs, launch and registration). Its binding to the
// manifest: op_binding.cpp.
#include "orchestrator/artifacts/torch_op_code.hpp"

#include <algorithm>
#include <set>
#include <sstream>

#include "common/message_text.hpp"
#include "orchestrator/contract/integer_expression.hpp"

namespace cuopt {

namespace {

bool is_fp8(dtype t) {
    return t == dtype::f8e4m3 || t == dtype::f8e5m2;
}
std::string cpp_params(const op_binding& b) {
    std::string out;
    auto add = [&out](const std::string& a) { out += (out.empty() ? "" : ", ") + a; };
    for (const manifest_arg* t : b.tensors)
        add((t->kind == arg_kind::inout ? "at::Tensor& " : "const at::Tensor& ") + t->name);
    for (const manifest_arg* s : b.ints) add("int64_t " + s->name);
    for (const std::string& p : b.free) add("int64_t " + b.source.at(p).arg);
    for (const manifest_arg* f : b.floats) add("double " + f->name);
    return out;
}

std::string cpp_result_type(const op_binding& b) {
    if (b.outputs.empty()) return "void";
    if (b.outputs.size() == 1) return "at::Tensor";
    std::string t = "std::tuple<";
    for (std::size_t i = 0; i < b.outputs.size(); ++i)
        t += (i ? ", " : "") + std::string("at::Tensor");
    return t + ">";
}  // ---- PREFIX_op.cpp: the op, its checks and its registration ----

std::size_t index_of(const std::vector<std::string>& v, const std::string& s) {
    return std::size_t(std::find(v.begin(), v.end(), s) - v.begin());
}

const char* const k_op_helpers =
    R"cpp(void cuopt_check_tensor(const at::Tensor& t, const char* name, at::ScalarType type,
                                  const at::Device& device) {
              TORCH_CHECK(t.is_cuda(), CUOPT_OP, ": ", name, " must be a CUDA tensor, got one on ",
                          t.device());
              TORCH_CHECK(t.device() == device, CUOPT_OP, ": ", name, " is on ", t.device(),
                          ", the first on ", device);
              TORCH_CHECK(t.scalar_type() == type, CUOPT_OP, ": ", name, " must be ", type,
                          ", got ", t.scalar_type());
              TORCH_CHECK(t.is_contiguous(), CUOPT_OP, ": ", name,
                          " must be contiguous (call .contiguous())");
          }

          [[maybe_unused]] void cuopt_check_dim(const at::Tensor& t, const char* name, int64_t dim,
                                                long long want, const char* what) {
              TORCH_CHECK(t.size(dim) == want, CUOPT_OP, ": ", name, "'s dimension ", dim,
                          " must be ", what, " = ", want, ", got ", t.size(dim), " (", name, " is ",
                          t.sizes(), ")");
          }

          void cuopt_check_int(long long value, long long low, long long high, const char* name) {
              TORCH_CHECK(value >= low && value <= high, CUOPT_OP, ": ", name, " = ", value,
                          " does not fit the kernel's argument (", low, " to ", high, ")");
          }
    )cpp";

// The case parameters, read from the tensors' shapes and the op's int arguments; every other
// dimension checked against them.
std::string read_params(const op_binding& b, const manifest& m) {
    std::ostringstream o;
    std::set<std::string> read;
    o << "    long long cuopt_p[" << b.params.size() + 1 << "] = {0};\n";
    for (const std::string& p : b.params) {
        const param_source& s = b.source.at(p);
        if (s.dim >= 0) continue;
        o << "    cuopt_p[" << index_of(b.params, p) << "] = " << s.arg << ";  // " << p << "\n";
    }
    for (const manifest_arg* t : b.tensors) {
        const auto shape = b.shape.find(t->name);
        if (shape == b.shape.end()) continue;
        const std::vector<std::string>& dims = shape->second;
        o << "    TORCH_CHECK(" << t->name << ".dim() == " << dims.size()
          << ", CUOPT_OP, \": " << t->name << " must be " << shape_text(dims) << " (" << dims.size()
          << " dimensions), got \", " << t->name << ".sizes());\n";
        for (std::size_t d = 0; d < dims.size(); ++d) {
            const param_source* s = b.source.count(dims[d]) ? &b.source.at(dims[d]) : nullptr;
            if (s && s->arg == t->name && s->dim == int(d) && !read.count(dims[d])) {
                read.insert(dims[d]);
                o << "    cuopt_p[" << index_of(b.params, dims[d]) << "] = " << t->name << ".size("
                  << d << ");  // " << dims[d] << "\n";
            } else {
                const std::string want =
                    s ? "cuopt_p[" + std::to_string(index_of(b.params, dims[d])) + "]"
                      : dims[d] + "LL";
                o << "    cuopt_check_dim(" << t->name << ", \"" << t->name << "\", " << d << ", "
                  << want << ", \"" << dims[d] << "\");\n";
            }
        }
    }
    (void)m;
    return o.str();
}

// Buffer sizes and scalars from the parameters (the manifest's own expressions, in the kernel's
// translation unit), the flat tensors' sizes checked, the outputs allocated.
std::string sizes_and_outputs(const op_binding& b, const manifest& m, const std::string& prefix,
                              bool warn) {
    std::ostringstream o;
    o << "    long long cuopt_v[" << m.args.size() + 1 << "] = {0};\n"
      << "    TORCH_CHECK(" << prefix
      << "_values(cuopt_p, cuopt_v), CUOPT_OP, \": sizes for which one of the manifest's "
      << "counts or scalars is not a whole number in range\");\n";
    for (std::size_t i = 0; i < m.args.size(); ++i) {
        const manifest_arg& a = m.args[i];
        if (!a.has_input() || b.shape.count(a.name)) continue;
        o << "    TORCH_CHECK(" << a.name << ".numel() == cuopt_v[" << i
          << "], CUOPT_OP, \": " << a.name << " must hold " << comment_line(a.count)
          << " = \", cuopt_v[" << i << "], \" elements, got \", " << a.name << ".numel());\n";
    }
    if (warn) o << "    cuopt_warn_outside(cuopt_p);\n";
    o << "    const c10::cuda::CUDAGuard cuopt_guard(cuopt_device);\n";
    for (std::size_t i = 0; i < m.args.size(); ++i) {
        const manifest_arg& a = m.args[i];
        if (a.kind != arg_kind::output) continue;
        std::string dims;
        if (const auto s = b.shape.find(a.name); s != b.shape.end()) {
            for (const std::string& d : s->second)
                dims += (dims.empty() ? "" : ", ") +
                        (b.source.count(d)
                             ? "int64_t(cuopt_p[" + std::to_string(index_of(b.params, d)) + "])"
                             : "int64_t(" + d + ")");
        } else {
            dims = "int64_t(cuopt_v[" + std::to_string(i) + "])";
        }
        o << "    at::Tensor " << a.name << " = at::empty({" << dims
          << "}, at::TensorOptions().device(cuopt_device).dtype("
          << torch_type_of(a.type)->scalar_type << "));\n";
    }
    return o.str();
}

// The integer limits of a scalar's C type.
std::pair<std::string, std::string> limits_of(dtype t) {
    switch (t) {
        case dtype::i8:
            return {"-128", "127"};
        case dtype::u8:
            return {"0", "255"};
        case dtype::i16:
            return {"-32768", "32767"};
        case dtype::i32:
            return {"-2147483648LL", "2147483647LL"};
        default:
            return {"-(1LL << 62)", "1LL << 62"};
    }
}

std::string launch_and_return(const op_binding& b, const manifest& m, const std::string& prefix) {
    std::ostringstream o;
    std::string buffers, ints, floats, produced;
    for (std::size_t i = 0; i < m.args.size(); ++i) {
        const manifest_arg& a = m.args[i];
        if (a.is_buffer()) {
            buffers += a.name + ".data_ptr(), ";
            if (a.has_output())
                produced += (produced.empty() ? "" : " && ") + a.name + ".numel() == 0";
        } else if (a.value_is_number) {
            floats += a.name + ", ";
        } else {
            const auto [low, high] = limits_of(a.type);
            o << "    cuopt_check_int(cuopt_v[" << i << "], " << low << ", " << high << ", \""
              << a.name << "\");\n";
            ints += "cuopt_v[" + std::to_string(i) + "], ";
        }
    }
    std::string result;
    for (const manifest_arg* out : b.outputs) result += (result.empty() ? "" : ", ") + out->name;
    if (b.outputs.size() > 1) result = "std::make_tuple(" + result + ")";
    const std::string ret = b.outputs.empty() ? "return;" : "return " + result + ";";
    if (!produced.empty())
        o << "    if (" << produced << ") " << ret << "  // nothing to compute\n";
    o << "    void* const cuopt_buffers[] = {" << buffers << "nullptr};\n"
      << "    const long long cuopt_ints[] = {" << ints << "0};\n"
      << "    const double cuopt_floats[] = {" << floats << "0.0};\n"
      << "    const cudaError_t cuopt_e = " << prefix
      << "_launch(cuopt_buffers, cuopt_ints, cuopt_floats, cuopt_p,\n"
      << "        c10::cuda::getCurrentCUDAStream(cuopt_device.index()).stream());\n"
      << "    TORCH_CHECK(cuopt_e == cudaSuccess, CUOPT_OP, \": \", cuopt_e == "
         "cudaErrorInvalidValue\n"
      << "        ? \"arguments the run's manifest rules out (a launch dimension that is not a \"\n"
      << "          \"positive whole number, or a scalar that contradicts its expression)\"\n"
      << "        : cudaGetErrorString(cuopt_e));\n"
      << "    " << ret << "\n";
    return o.str();
}

// The warning for sizes beyond what the run's verdict covers, once per process.
std::string warn_function(const op_binding& b, const export_facts& f) {
    std::ostringstream names, low, high;
    for (const std::string& p : b.params) {
        long long lo = 0, hi = 0;
        bool any = false;
        for (const export_case& c : f.cases) {
            const auto v = c.params.find(p);
            if (v == c.params.end()) continue;
            lo = any ? std::min<long long>(lo, v->second) : v->second;
            hi = any ? std::max<long long>(hi, v->second) : v->second;
            any = true;
        }
        names << "\"" << p << "\", ";
        low << lo << "LL, ";
        high << hi << "LL, ";
    }
    std::ostringstream o;
    o << "const char* const cuopt_params[] = {" << names.str() << "nullptr};\n"
      << "const long long cuopt_low[] = {" << low.str() << "0};\n"
      << "const long long cuopt_high[] = {" << high.str() << "0};\n\n"
      << "void cuopt_warn_outside(const long long* p) {\n"
      << "    for (int i = 0; i < " << b.params.size() << "; ++i)\n"
      << "        if (p[i] < cuopt_low[i] || p[i] > cuopt_high[i]) {\n"
      << "            TORCH_WARN_ONCE(CUOPT_OP, \": \", cuopt_params[i], \" = \", p[i],\n"
      << "                            \" is outside the sizes the run measured and its holdout \"\n"
      << "                            \"checked (\", cuopt_low[i], \" to \", cuopt_high[i],\n"
      << "                            \"): the run's verdict does not speak for it\");\n"
      << "            return;\n        }\n}\n\n";
    return o.str();
}

}  // namespace

// ---- PREFIX_kernel.cu: the header, and two plain functions the op calls ----

std::string kernel_cu(const exported_kernel& k, const manifest& m, const op_binding& b,
                      const std::string& prefix) {
    std::map<std::string, std::string> names;
    for (std::size_t i = 0; i < b.params.size(); ++i)
        names[b.params[i]] = "cuopt_q{static_cast<__int128>(p[" + std::to_string(i) + "]), 1}";
    for (const auto& [name, value] : k.tunables)
        names[name] = "cuopt_q{" + std::to_string(value) + ", 1}";
    std::ostringstream o;
    o << "// " << prefix << "_kernel.cu: generated by cuda-optimizer export. The kernel and its\n"
      << "// launch arithmetic (" << k.entry << ".cuh) behind two plain functions the op calls.\n"
      << "#include \"" << k.entry << ".cuh\"\n\n"
      << "// The launch on `stream`: buffers, integer scalars, float scalars and case parameters\n"
      << "// in the manifest's order (parameters sorted by name).\n"
      << "cudaError_t " << prefix << "_launch(void* const* buffers, const long long* ints, "
      << "const double* floats, const long long* p, cudaStream_t stream) {\n"
      << "    return launch_" << k.entry << "(";
    std::size_t buffer = 0, integer = 0, real = 0;
    std::string args;
    auto add = [&args](const std::string& a) { args += (args.empty() ? "" : ", ") + a; };
    for (const manifest_arg& a : m.args) {
        const std::string c = cuda_type_name(a.type);
        if (a.is_buffer())
            add("static_cast<" + std::string(a.kind == arg_kind::input ? "const " : "") + c +
                "*>(buffers[" + std::to_string(buffer++) + "])");
        else if (a.value_is_number)
            add("static_cast<" + c + ">(floats[" + std::to_string(real++) + "])");
        else
            add("static_cast<" + c + ">(ints[" + std::to_string(integer++) + "])");
    }
    for (const std::string& e : extra_launch_params(m)) {
        const auto at = std::find(b.params.begin(), b.params.end(), e);
        add("p[" + std::to_string(at - b.params.begin()) + "]");
    }
    add("stream");
    o << args << ");\n}\n\n"
      << "// Every buffer's element count and every integer scalar's value (the manifest's order)\n"
      << "// at these parameters; false when one is not a whole number in range.\n"
      << "bool " << prefix << "_values(const long long* p, long long* out) {\n"
      << "    using namespace cuopt_export_" << k.entry << ";\n    (void)p;\n";
    std::size_t i = 0;
    for (const manifest_arg& a : m.args) {
        const std::string& text = a.is_buffer() ? a.count : a.value;
        if (!a.is_buffer() && a.value_is_number) {
            o << "    out[" << i++ << "] = 0;  // " << a.name << ": a float\n";
            continue;
        }
        o << "    if (!cuopt_whole(" << integer_expression_cpp(text, names) << ", "
          << (a.is_buffer() ? "0" : "-(1LL << 62)") << ", 1LL << 62, &out[" << i++
          << "])) return false;  // " << a.name << " = " << comment_line(text) << "\n";
    }
    o << "    return true;\n}\n";
    return o.str();
}

std::string op_cpp(const op_binding& b, const manifest& m, const std::string& op,
                   const std::string& prefix, const export_facts& f, bool warn) {
    bool fp8 = false;
    for (const manifest_arg& a : m.args) fp8 = fp8 || is_fp8(a.type);
    std::ostringstream o;
    o << "// " << prefix << "_op.cpp: generated by cuda-optimizer export. The operator\n"
      << "// cuda_optimizer::" << op << schema_of(b) << "\n"
      << "// on PyTorch's current stream, every argument checked.\n"
      << "#include <ATen/ATen.h>\n#include <c10/cuda/CUDAFunctions.h>\n"
      << "#include <c10/cuda/CUDAGuard.h>\n#include <c10/cuda/CUDAStream.h>\n"
      << "#include <cuda_runtime_api.h>\n#include <torch/library.h>\n\n";
    if (fp8)
        o << "#include <torch/version.h>\n"
          << "#if TORCH_VERSION_MAJOR < 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR < "
             "1)\n"
          << "#error \"this op takes float8 tensors: it needs PyTorch 2.1 or newer\"\n#endif\n\n";
    o << "cudaError_t " << prefix << "_launch(void* const* buffers, const long long* ints, "
      << "const double* floats,\n    const long long* p, cudaStream_t stream);\n"
      << "bool " << prefix << "_values(const long long* p, long long* out);\n\n"
      << "namespace {\n\nconstexpr const char* CUOPT_OP = \"cuda_optimizer::" << op << "\";\n\n"
      << k_op_helpers << "\n";
    if (warn) o << warn_function(b, f);
    o << cpp_result_type(b) << " " << op << "_cuda(" << cpp_params(b) << ") {\n";
    if (b.tensors.empty())
        o << "    const at::Device cuopt_device(at::kCUDA, c10::cuda::current_device());\n";
    else
        o << "    const at::Device cuopt_device = " << b.tensors.front()->name << ".device();\n";
    for (const manifest_arg* t : b.tensors)
        o << "    cuopt_check_tensor(" << t->name << ", \"" << t->name << "\", "
          << torch_type_of(t->type)->scalar_type << ", cuopt_device);\n";
    o << read_params(b, m) << sizes_and_outputs(b, m, prefix, warn)
      << launch_and_return(b, m, prefix) << "}\n\n"
      << "}  // namespace\n\n"
      << "TORCH_LIBRARY_FRAGMENT(cuda_optimizer, m) {\n    m.def(\"" << op << schema_of(b)
      << "\");\n}\n\n"
      << "TORCH_LIBRARY_IMPL(cuda_optimizer, CUDA, m) {\n    m.impl(\"" << op << "\", &" << op
      << "_cuda);\n}\n\n"
      << "// CPU tensors reach the same checks, which name the argument that is not on the GPU.\n"
      << "TORCH_LIBRARY_IMPL(cuda_optimizer, CPU, m) {\n    m.impl(\"" << op << "\", &" << op
      << "_cuda);\n}\n";
    return o.str();
}
}  // namespace cuopt