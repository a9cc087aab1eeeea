#include "orchestrator/artifacts/torch_export.hpp"

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>
#include <sstream>

#include "common/json_builder.hpp"
#include "common/message_text.hpp"
#include "orchestrator/contract/integer_expression.hpp"

// The package's Python: the same files in every package (they read export.json).
extern const unsigned char torch_package_runtime_py[];
extern const std::size_t torch_package_runtime_py_size;
extern const unsigned char torch_package_test_py[];
extern const std::size_t torch_package_test_py_size;
extern const unsigned char torch_package_bench_py[];
extern const std::size_t torch_package_bench_py_size;

namespace cuopt {

namespace {

std::string embedded(const unsigned char* data, std::size_t size) {
    return std::string(reinterpret_cast<const char*>(data), size);
}

struct torch_type {
    const char* scalar_type;  // at::kFloat
    const char* python;       // torch.float32
    const char* c_type;       // the launch wrapper's scalar type
};

std::optional<torch_type> torch_type_of(dtype t) {
    switch (t) {
        case dtype::f16:
            return torch_type{"at::kHalf", "float16", nullptr};
        case dtype::bf16:
            return torch_type{"at::kBFloat16", "bfloat16", nullptr};
        case dtype::f32:
            return torch_type{"at::kFloat", "float32", "float"};
        case dtype::f64:
            return torch_type{"at::kDouble", "float64", "double"};
        case dtype::i8:
            return torch_type{"at::kChar", "int8", "signed char"};
        case dtype::u8:
            return torch_type{"at::kByte", "uint8", "unsigned char"};
        case dtype::i16:
            return torch_type{"at::kShort", "int16", "short"};
        case dtype::i32:
            return torch_type{"at::kInt", "int32", "int"};
        case dtype::i64:
            return torch_type{"at::kLong", "int64", "long long"};
        case dtype::f8e4m3:
            return torch_type{"at::kFloat8_e4m3fn", "float8_e4m3fn", nullptr};
        case dtype::f8e5m2:
            return torch_type{"at::kFloat8_e5m2", "float8_e5m2", nullptr};
        case dtype::u16:
        case dtype::u32:
        case dtype::u64:
            break;
    }
    return std::nullopt;
}

bool is_integer_type(dtype t) {
    return t == dtype::i8 || t == dtype::u8 || t == dtype::i16 || t == dtype::i32 ||
           t == dtype::i64 || t == dtype::u16 || t == dtype::u32 || t == dtype::u64;
}

bool is_fp8(dtype t) {
    return t == dtype::f8e4m3 || t == dtype::f8e5m2;
}

// Where the op reads a case parameter: dimension `dim` of tensor `arg`, or an int argument of
// the op called `arg` (a scalar of the manifest that carries it, or one of its own).
struct param_source {
    std::string arg;
    int dim = -1;
};

// How the op's arguments map onto the manifest's: worked out once and written both into the
// C++ and into export.json, so that the fake implementation and the test read exactly what
// the op reads.
struct op_binding {
    std::vector<std::string> params;  // every case parameter, sorted
    std::map<std::string, param_source> source;
    std::map<std::string, std::vector<std::string>> shape;  // buffers whose count factors
    std::vector<const manifest_arg*> tensors;               // inputs and inouts, in order
    std::vector<const manifest_arg*> outputs;               // outputs, in order
    std::vector<const manifest_arg*> ints;    // scalars the op takes (no shape carries them)
    std::vector<std::string> free;            // parameters the op takes as int arguments
    std::vector<const manifest_arg*> floats;  // float scalars: arguments with defaults
};

std::set<std::string> params_of(const manifest& m) {
    std::set<std::string> out;
    for (const manifest_case& c : m.cases)
        for (const auto& [name, value] : c.params) out.insert(name);
    return out;
}

// A scalar whose value is exactly one case parameter: the op reads it from a shape if it can.
std::string carried(const manifest_arg& a, const std::set<std::string>& params) {
    if (a.kind != arg_kind::scalar || a.value_is_number || !is_integer_type(a.type)) return "";
    return params.count(a.value) ? a.value : "";
}

op_binding binding_of(const manifest& m) {
    op_binding b;
    const std::set<std::string> params = params_of(m);
    b.params.assign(params.begin(), params.end());
    for (const manifest_arg& a : m.args) {
        if (!a.is_buffer()) continue;
        if (const auto s = shape_of_count(a.count)) b.shape[a.name] = *s;
        if (a.has_input()) b.tensors.push_back(&a);
        if (a.kind == arg_kind::output) b.outputs.push_back(&a);
    }
    for (const manifest_arg* t : b.tensors) {
        const auto s = b.shape.find(t->name);
        if (s == b.shape.end()) continue;
        for (std::size_t d = 0; d < s->second.size(); ++d)
            if (params.count(s->second[d]) && !b.source.count(s->second[d]))
                b.source[s->second[d]] = {t->name, int(d)};
    }
    for (const manifest_arg& a : m.args) {
        if (a.kind != arg_kind::scalar) continue;
        if (a.value_is_number) {
            b.floats.push_back(&a);
        } else if (const std::string p = carried(a, params); !p.empty() && !b.source.count(p)) {
            b.source[p] = {a.name, -1};
            b.ints.push_back(&a);
        }
    }
    for (const std::string& p : b.params) {
        if (b.source.count(p)) continue;
        const std::string name = m.find_arg(p) ? "param_" + p : p;
        b.source[p] = {name, -1};
        b.free.push_back(p);
    }
    return b;
}

std::string schema_of(const op_binding& b) {
    std::string args;
    auto add = [&args](const std::string& a) { args += (args.empty() ? "" : ", ") + a; };
    int alias = 0;
    for (const manifest_arg* t : b.tensors)
        add(t->kind == arg_kind::inout
                ? "Tensor(" + std::string(1, char('a' + alias++)) + "!) " + t->name
                : "Tensor " + t->name);
    for (const manifest_arg* s : b.ints) add("int " + s->name);
    for (const std::string& p : b.free) add("int " + b.source.at(p).arg);
    for (const manifest_arg* f : b.floats) add("float " + f->name + "=" + f->value);
    std::string result;
    for (std::size_t i = 0; i < b.outputs.size(); ++i) result += i ? ", Tensor" : "Tensor";
    if (b.outputs.size() != 1) result = "(" + result + ")";
    return "(" + args + ") -> " + result;
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
}

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

// ---- PREFIX_op.cpp: the op, its checks and its registration ----

std::string shape_text(const std::vector<std::string>& dims) {
    std::string s;
    for (const std::string& d : dims) s += (s.empty() ? "" : " x ") + d;
    return s;
}

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

          void cuopt_check_dim(const at::Tensor& t, const char* name, int64_t dim, long long want,
                               const char* what) {
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

// ---- export.json: what the Python side (fake implementation, test, timing) reads ----

rapidjson::Value init_json(const input_init& init, json_allocator& a) {
    json_object o(a);
    if (init.file) return o.add("kind", "file").take();
    const generator_spec& g = init.generator;
    o.add("kind", std::string(k_generator_kinds.name(g.kind)));
    switch (g.kind) {
        case generator_kind::uniform:
        case generator_kind::int_range:
            o.add("low", g.low).add("high", g.high);
            break;
        case generator_kind::normal:
            o.add("mean", g.mean).add("stddev", g.stddev);
            break;
        case generator_kind::sequence:
            o.add("start", g.start).add("step", g.step);
            break;
        case generator_kind::constant:
            o.add("value", g.value);
            break;
    }
    return o.take();
}

const char* kind_name(arg_kind k) {
    switch (k) {
        case arg_kind::input:
            return "input";
        case arg_kind::output:
            return "output";
        case arg_kind::inout:
            return "inout";
        case arg_kind::scalar:
            break;
    }
    return "scalar";
}

rapidjson::Value args_json(const op_binding& b, const manifest& m, json_allocator& a) {
    json_array args(a);
    for (const manifest_arg& arg : m.args) {
        json_object o(a);
        o.add("name", arg.name).add("kind", kind_name(arg.kind));
        o.add("dtype", std::string(torch_type_of(arg.type)->python));
        if (arg.is_buffer()) {
            o.add("count", arg.count);
            const auto s = b.shape.find(arg.name);
            o.add("shape", s != b.shape.end() ? json_value(s->second, a) : rapidjson::Value());
            if (arg.has_input()) o.add("init", init_json(m.init_for(m.cases.front(), arg), a));
        } else {
            o.add("value", arg.value).add("float", arg.value_is_number);
        }
        args.push(o.take());
    }
    return args.take();
}

rapidjson::Value cases_json(const manifest& m, const export_facts& f, json_allocator& a) {
    json_array cases(a);
    for (const export_case& c : f.cases) {
        json_object tol(a);
        for (const manifest_arg& arg : m.args) {
            if (!arg.has_output()) continue;
            const tolerance t = arg.tolerance_in(c.params);
            tol.add(arg.name, json_object(a)
                                  .add("atol", t.atol)
                                  .add("rtol", t.rtol)
                                  .add("rms_atol", t.rms_atol)
                                  .take());
        }
        cases.push(json_object(a)
                       .add("name", c.name)
                       .add("kind", c.kind)
                       .add("params", c.params)
                       .add("run_median_ms", c.run_median_ms > 0 ? json_value(c.run_median_ms, a)
                                                                 : rapidjson::Value())
                       .add("tolerance", tol.take())
                       .take());
    }
    return cases.take();
}

rapidjson::Value module_json(const export_module& mod, json_allocator& a) {
    json_array args(a);
    for (const export_module::mapped& m : mod.args)
        args.push(json_object(a).add("arg", m.arg).add("from", m.from).add("key", m.key).take());
    return json_object(a)
        .add("form", mod.form)
        .add("source", "reference.py")
        .add("axes", mod.axes)
        .add("forward", mod.forward)
        .add("args", args.take())
        .take();
}

std::string export_json(const exported_kernel& k, bool reference, const op_binding& b,
                        const manifest& m, const export_facts& f) {
    rapidjson::Document doc;
    json_allocator& a = doc.GetAllocator();
    json_object top(doc);
    json_object sources(a);
    for (const auto& [p, s] : b.source)
        sources.add(p, json_object(a).add("arg", s.arg).add("dim", s.dim).take());
    std::vector<std::string> op_args;
    for (const manifest_arg* t : b.tensors) op_args.push_back(t->name);
    for (const manifest_arg* s : b.ints) op_args.push_back(s->name);
    for (const std::string& p : b.free) op_args.push_back(b.source.at(p).arg);
    for (const manifest_arg* s : b.floats) op_args.push_back(s->name);
    top.add("schema_version", 1)
        .add("op", k.entry)
        .add("reference_op", reference ? json_value(k.entry + "_reference", a) : rapidjson::Value())
        .add("schema", k.entry + schema_of(b))
        .add("params", b.params)
        .add("param_sources", sources.take())
        .add("op_args", op_args)
        .add("args", args_json(b, m, a))
        .add("cases", cases_json(m, f, a))
        .add("module", f.module ? module_json(*f.module, a) : rapidjson::Value())
        .add("run", json_object(a)
                        .add("verdict", f.verdict)
                        .add("verdict_line", f.verdict_line)
                        .add("speedup", f.speedup)
                        .add("low", f.low)
                        .add("high", f.high)
                        .add("gpu", f.gpu)
                        .add("arch", k.arch)
                        .add("date", f.date)
                        .add("run_dir", f.run_dir)
                        .add("tool", f.tool_version)
                        .add("forced", f.forced)
                        .take());
    return to_pretty_json(doc) + "\n";
}

// ---- the build, the package's Python and its README ----

// "sm_90a" -> "9.0a": TORCH_CUDA_ARCH_LIST's spelling.
std::string torch_arch(const std::string& arch) {
    std::string digits = arch.substr(3), suffix;
    while (!digits.empty() && !std::isdigit(static_cast<unsigned char>(digits.back()))) {
        suffix.insert(suffix.begin(), digits.back());
        digits.pop_back();
    }
    if (digits.size() < 2) return arch;
    return digits.substr(0, digits.size() - 1) + "." + digits.back() + suffix;
}

// "cuopt-matmul-f32": the distribution's name (PEP 508: no trailing separator).
std::string distribution_name(const std::string& entry) {
    std::string name = "cuopt-" + entry;
    std::replace(name.begin(), name.end(), '_', '-');
    while (name.back() == '-') name.pop_back();
    return name;
}

std::string python_list(const std::vector<std::string>& words) {
    std::string out = "[";
    for (const std::string& w : words) out += (out.size() > 1 ? ", " : "") + ("\"" + w + "\"");
    return out + "]";
}

std::string setup_py(const exported_kernel& k, const std::optional<exported_kernel>& reference) {
    const std::string pkg = "cuopt_" + k.entry;
    std::ostringstream o;
    o << "# setup.py: generated by cuda-optimizer export. Builds " << pkg << " with\n"
      << "# torch.utils.cpp_extension against the PyTorch already installed:\n"
      << "#   pip install --no-build-isolation .      (or: python setup.py build_ext --inplace)\n"
      << "import os\n\nfrom setuptools import setup\n"
      << "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n\n"
      << "# The run's GPU (" << k.arch
      << "): SASS for it and PTX, which a newer GPU compiles at load.\n"
      << "os.environ.setdefault(\"TORCH_CUDA_ARCH_LIST\", \"" << torch_arch(k.arch) << "+PTX\")\n"
      << "# The options the run compiled the winner with (NVRTC's; nvcc takes the same words).\n"
      << "OPTIONS = " << python_list(k.compile_options) << "\n";
    if (reference) o << "REFERENCE_OPTIONS = " << python_list(reference->compile_options) << "\n";
    o << "\n\ndef extension(name, prefix, options):\n"
      << "    return CUDAExtension(\n        name,\n"
      << "        [f\"csrc/{prefix}_op.cpp\", f\"csrc/{prefix}_kernel.cu\"],\n"
      << "        extra_compile_args={\"cxx\": [\"-O2\", \"-std=c++17\"],\n"
      << "                            \"nvcc\": [\"-O3\", \"-std=c++17\"] + options},\n    )\n\n\n"
      << "EXTENSIONS = [extension(\"" << pkg << "._C\", \"" << k.entry << "\", OPTIONS)]\n";
    if (reference)
        o << "# The run's reference, as its oracle: only the package's test calls it.\n"
          << "EXTENSIONS.append(extension(\"" << pkg << "._reference\", \"" << k.entry
          << "_reference\", REFERENCE_OPTIONS))\n";
    o << "\nsetup(\n    name=\"" << distribution_name(k.entry) << "\",\n    version=\"1.0.0\",\n"
      << "    packages=[\"" << pkg << "\"],\n    package_data={\"" << pkg
      << "\": [\"export.json\"]},\n"
      << "    ext_modules=EXTENSIONS,\n    cmdclass={\"build_ext\": BuildExtension},\n)\n";
    return o.str();
}

std::string pyproject(const exported_kernel& k) {
    return "# generated by cuda-optimizer export: build with the PyTorch you run it with\n"
           "#   pip install --no-build-isolation .\n"
           "[build-system]\nrequires = [\"setuptools>=61\", \"torch\"]\n"
           "build-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"" +
           distribution_name(k.entry) +
           "\"\nversion = \"1.0.0\"\ndescription = \"The cuda-optimizer winner " + k.entry +
           " as the PyTorch op cuda_optimizer::" + k.entry +
           "\"\nrequires-python = \">=3.8\"\ndependencies = [\"torch\"]\n";
}

std::string init_py(const exported_kernel& k) {
    return "\"\"\"cuda_optimizer::" + k.entry +
           ", exported by cuda-optimizer: see README.md and export.json.\n\n"
           "    from cuopt_" +
           k.entry + " import " + k.entry + "\n    out = " + k.entry +
           "(...)   # torch.ops.cuda_optimizer." + k.entry +
           "\n\"\"\"\nfrom ._runtime import load_package\n\n" + k.entry +
           ", replace, EXPORT = load_package(__name__)\nop = " + k.entry + "\n__all__ = [\"" +
           k.entry + "\", \"op\", \"replace\", \"EXPORT\"]\n";
}

// A value from the run folder in a Markdown code span: nothing in it can start markup, and a
// '|' cannot end a table cell.
std::string md_code(const std::string& text) {
    std::string out = "`";
    for (char c : comment_line(text)) {
        if (c == '`') c = '\'';
        if (c == '|') out += '\\';
        out += c;
    }
    return out + "`";
}

std::string readme(const exported_kernel& k, const op_binding& b, const manifest& m,
                   const export_facts& f, bool reference) {
    std::ostringstream o;
    o << "# cuda_optimizer::" << k.entry << "\n\n";
    if (f.forced)
        o << "**Exported with `--force`: the run's verdict is " << md_code(f.verdict)
          << ", not go. Do not ship this without reading the run's report.** Importing the "
             "package warns.\n\n";
    o << "The winner of a cuda-optimizer run as a PyTorch operator.\n\n"
      << "| | |\n|---|---|\n| verdict | " << md_code(f.verdict_line) << " |\n"
      << "| GPU | " << md_code(f.gpu) << " (" << k.arch << ") |\n"
      << "| run | " << md_code(f.run_dir) << ", finished " << md_code(f.date) << " |\n"
      << "| exported by | " << md_code(f.tool_version) << " |\n\n"
      << "## Build and test\n\n```sh\npip install --no-build-isolation .   # or: python setup.py "
         "build_ext --inplace\npython tests/test_"
      << k.entry << ".py         # or: pytest tests\n"
      << "python bench.py                          # the op's time beside the run's "
         "medians\n```\n\n"
      << "The test compares the op with "
      << (reference ? "the run's own reference kernel (built "
                      "beside it as `cuda_optimizer::" +
                          k.entry + "_reference`)"
                    : "the problem's PyTorch module")
      << " on random inputs drawn like the manifest's, at every case the run checked and "
         "every holdout shape, with the run's tolerances, and once under `torch.compile`.\n\n"
      << "## Use\n\n```python\nimport torch\nfrom cuopt_" << k.entry << " import " << k.entry
      << "\n\n# torch.ops.cuda_optimizer." << k.entry << schema_of(b) << "\n";
    if (f.module)
        o << "\n# or, the problem's own module with its forward swapped for the op:\n"
          << "from cuopt_" << k.entry
          << " import replace\nmodel = replace(model)   # model(...) now "
          << "calls the op with forward's arguments and the module's weights\n";
    o << "```\n\n";
    o << "Inputs must be contiguous CUDA tensors of the manifest's dtypes on one device; each call "
         "checks them and their shapes (one line naming the argument when one is wrong). Shapes: ";
    std::string shapes;
    for (const manifest_arg& a : m.args)
        if (a.is_buffer())
            shapes += (shapes.empty() ? "" : ", ") +
                      ("`" + a.name + "` " +
                       (b.shape.count(a.name) ? shape_text(b.shape.at(a.name))
                                              : comment_line(a.count) + " elements"));
    o << shapes << ". Outputs are allocated by the op and returned; it runs on PyTorch's "
      << "current stream. A size outside what the run measured or its holdout checked works, "
      << "with a warning (once): the verdict does not speak for it. A fake implementation is "
      << "registered, so `torch.compile(fullgraph=True)` traces through the op.\n";
    return o.str();
}

}  // namespace

std::optional<std::vector<std::string>> shape_of_count(const std::string& count) {
    static const std::regex k_factor("[A-Za-z_][A-Za-z0-9_]*|[1-9][0-9]{0,17}");
    std::vector<std::string> factors;
    std::string token;
    for (char c : count + "*") {
        if (c == ' ') continue;
        if (c != '*') {
            token += c;
            continue;
        }
        if (!std::regex_match(token, k_factor)) return std::nullopt;
        factors.push_back(token);
        token.clear();
    }
    return factors;
}

std::string torch_export_refusal(const manifest& m, const std::string& entry) {
    // Python's keywords and the names the package's __init__.py defines beside the op.
    static const std::set<std::string> k_python_names{
        "False",   "None",     "True",     "and",     "as",   "assert", "async",       "await",
        "break",   "class",    "continue", "def",     "del",  "elif",   "else",        "except",
        "finally", "for",      "from",     "global",  "if",   "import", "in",          "is",
        "lambda",  "nonlocal", "not",      "or",      "pass", "raise",  "return",      "try",
        "while",   "with",     "yield",    "replace", "op",   "EXPORT", "load_package"};
    if (k_python_names.count(entry))
        return "the kernel's name " + entry + " is a Python keyword or a name the package uses";
    // What the op's C++ names itself; an argument of that name would shadow it.
    static const std::set<std::string> k_cpp_names{"at", "c10", "std", "torch", "int64_t"};
    std::size_t inouts = 0, tensors = 0;
    for (const manifest_arg& a : m.args) {
        if (k_cpp_names.count(a.name) || a.name.rfind("cuopt_", 0) == 0 ||
            a.name.rfind("CUOPT_", 0) == 0)
            return "argument " + a.name + ": a name the generated op uses itself";
        const auto t = torch_type_of(a.type);
        if (!t)
            return "argument " + a.name + " is " + std::string(dtype_name(a.type)) +
                   ": PyTorch has no tensor of that type on every version";
        if (!a.is_buffer() && !t->c_type)
            return "scalar " + a.name + " is " + std::string(dtype_name(a.type)) +
                   ": the op takes integer and float32/float64 scalars only";
        if (!a.is_buffer() && is_integer_type(a.type) && a.value_is_number)
            return "integer scalar " + a.name + " is given as the float " + comment_line(a.value) +
                   ": give it as an integer expression";
        if (!a.is_buffer() && !is_integer_type(a.type) && !a.value_is_number)
            return "scalar " + a.name + " is a float given by an expression (" +
                   comment_line(a.value) + "): the op takes float scalars given as numbers only";
        inouts += a.kind == arg_kind::inout;
        tensors += a.has_input();
    }
    if (tensors == 0) return "no input buffer: the op could not tell which GPU to run on";
    if (inouts > 26) return "more than 26 inout buffers";
    if (m.cases.empty()) return "the manifest has no case";
    return "";
}

std::map<std::string, std::string> torch_package_files(
    const exported_kernel& k, const std::optional<exported_kernel>& reference, const manifest& m,
    const export_facts& f) {
    const op_binding b = binding_of(m);
    const std::string pkg = "cuopt_" + k.entry;
    std::map<std::string, std::string> files{
        {"csrc/" + k.entry + ".cuh", cuda_header(k, m)},
        {"csrc/" + k.entry + "_kernel.cu", kernel_cu(k, m, b, k.entry)},
        {"csrc/" + k.entry + "_op.cpp", op_cpp(b, m, k.entry, k.entry, f, true)},
        {"setup.py", setup_py(k, reference)},
        {"pyproject.toml", pyproject(k)},
        {pkg + "/__init__.py", init_py(k)},
        {pkg + "/_runtime.py", embedded(torch_package_runtime_py, torch_package_runtime_py_size)},
        {pkg + "/export.json", export_json(k, reference.has_value(), b, m, f)},
        {"tests/test_" + k.entry + ".py",
         embedded(torch_package_test_py, torch_package_test_py_size)},
        {"bench.py", embedded(torch_package_bench_py, torch_package_bench_py_size)},
        {"README.md", readme(k, b, m, f, reference.has_value())}};
    if (f.module) files[pkg + "/reference.py"] = f.module->source_text;
    if (reference) {
        // Its kernel renamed, so that both kernels may share one process and one name.
        exported_kernel r = *reference;
        const std::string prefix = k.entry + "_reference";
        r.source = "#define " + r.entry + " cuopt_ref_" + r.entry + "\n" + r.source;
        r.entry = "cuopt_ref_" + r.entry;
        files["csrc/" + prefix + ".cuh"] = cuda_header(r, m);
        std::string cu = kernel_cu(r, m, b, prefix);
        const std::string include = "#include \"" + r.entry + ".cuh\"";
        cu.replace(cu.find(include), include.size(), "#include \"" + prefix + ".cuh\"");
        files["csrc/" + prefix + "_kernel.cu"] = cu;
        files["csrc/" + prefix + "_op.cpp"] = op_cpp(b, m, prefix, prefix, f, false);
    }
    return files;
}

}  // namespace cuopt
