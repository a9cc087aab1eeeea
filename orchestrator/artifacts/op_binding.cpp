// How an exported op's arguments map onto the manifest's (op_binding), its schema, and each
// manifest dtype as PyTorch names it.
#include <set>

#include "orchestrator/artifacts/torch_op_code.hpp"

namespace cuopt {

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

op_binding binding_of(const manifest& m) {
    op_binding b;
    const std::set<std::string> params = case_params(m);
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
        } else if (const std::string p = carried_param(a, params);
                   !p.empty() && !b.source.count(p)) {
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

std::string shape_text(const std::vector<std::string>& dims) {
    std::string s;
    for (const std::string& d : dims) s += (s.empty() ? "" : " x ") + d;
    return s;
}

}  // namespace cuopt
