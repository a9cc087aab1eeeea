#include "orchestrator/contract/manifest.hpp"

#include <algorithm>
#include <stdexcept>

#include "common/json_document.hpp"
#include "common/message_text.hpp"
#include "common/request.hpp"

namespace cuopt {

namespace fs = std::filesystem;

std::map<std::string, std::int64_t> manifest::default_tunables() const {
    std::map<std::string, std::int64_t> out;
    for (const auto& [name, values] : tunables) out[name] = values.front();
    return out;
}

expression_variables manifest::variables(const manifest_case& c,
                                         const std::map<std::string, std::int64_t>& t) const {
    expression_variables vars = c.params;
    for (const auto& [name, value] : t) vars[name] = value;
    return vars;
}

tolerance manifest_arg::tolerance_in(const expression_variables& params) const {
    if (reduction_length.empty()) return tol;
    return reduction_tolerance(
        type, static_cast<std::uint64_t>(evaluate_integer_expression(reduction_length, params)));
}

tolerance tolerance_in_case(const manifest& m, const manifest_arg& arg,
                            const std::string& case_name) {
    const manifest_case* c = m.find_case(case_name);
    if (!c) throw std::logic_error("no case " + quote_value(case_name) + " in " + m.file.string());
    return arg.tolerance_in(c->params);
}

const manifest_case* manifest::find_case(const std::string& name) const {
    const auto it = std::find_if(cases.begin(), cases.end(),
                                 [&](const manifest_case& c) { return c.name == name; });
    return it == cases.end() ? nullptr : &*it;
}

const manifest_arg* manifest::find_arg(const std::string& name) const {
    for (const manifest_arg& a : args)
        if (a.name == name) return &a;
    return nullptr;
}

std::string manifest::input_link(const fs::path& file) const {
    std::vector<fs::path> same_name;  // the distinct files of this name, in manifest order
    for (const manifest_case& mc : cases)
        for (const manifest_arg& ma : args)
            if (ma.has_input())
                if (const auto& f = init_for(mc, ma).file;
                    f && f->filename() == file.filename() &&
                    std::find(same_name.begin(), same_name.end(), *f) == same_name.end())
                    same_name.push_back(*f);
    const auto at = std::find(same_name.begin(), same_name.end(), file);
    const std::size_t k = at == same_name.end() ? 0 : at - same_name.begin();
    const std::string name = file.filename().string();
    return k == 0 ? name : std::to_string(k + 1) + "/" + name;
}

const input_init& manifest::init_for(const manifest_case& c, const manifest_arg& a) const {
    const auto it = c.inputs.find(a.name);
    return it != c.inputs.end() ? it->second : a.init;
}

launch_expressions read_launch_expressions(const json_field& v, const launch_expressions& base) {
    launch_expressions l = base;
    for (const char* key : {"grid", "block"}) {
        const std::optional<json_field> given = v.find(key);
        if (!given) continue;
        auto& dims = std::string(key) == "grid" ? l.grid : l.block;
        dims = {"1", "1", "1"};
        for (std::size_t i = 0; i < given->size() && i < 3; ++i)
            dims[i] = json_scalar_text((*given)[i].value());
    }
    if (const auto shared = v.find("dynamic_shared_bytes"))
        l.dynamic_shared_bytes = json_scalar_text(shared->value());
    return l;
}

launch_config evaluate_launch(const launch_expressions& l, const expression_variables& vars) {
    launch_config out;
    auto dim = [&vars](const std::string& e, const char* what) {
        const std::int64_t v = evaluate_integer_expression(e, vars);
        if (v < 1 || v > 0xFFFFFFFFll)
            throw expression_error(std::string(what) + " " + quote_value(e) + " is " +
                                   std::to_string(v) + ", outside 1..2^32-1");
        return static_cast<unsigned>(v);
    };
    for (int i = 0; i < 3; ++i) {
        out.grid[i] = dim(l.grid[i], "grid");
        out.block[i] = dim(l.block[i], "block");
    }
    const std::int64_t shared = evaluate_integer_expression(l.dynamic_shared_bytes, vars);
    if (shared < 0 || shared > 0xFFFFFFFFll)
        throw expression_error("dynamic_shared_bytes " + quote_value(l.dynamic_shared_bytes) +
                               " is " + std::to_string(shared));
    out.dynamic_shared_bytes = static_cast<unsigned>(shared);
    return out;
}

}  // namespace cuopt
