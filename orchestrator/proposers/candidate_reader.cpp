#include "orchestrator/proposers/candidate_reader.hpp"

#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "common/message_text.hpp"

namespace cuopt {

std::string apply_candidate_json(candidate& c, const rapidjson::Value& v, const manifest& m,
                                 std::string_view schema, const std::string& what) {
    try {
        validate_json(v, schema, what);
        const json_field f(v, what);
        if (const auto entry = f.optional_text("entry")) c.entry = *entry;
        if (const auto rationale = f.optional_text("rationale")) c.rationale = *rationale;
        if (const auto defines = f.find("defines")) {
            c.defines.clear();
            for (const auto& [name, d] : defines->members())
                c.defines[name] = json_scalar_text(d.value());
        }
        if (f.has("compile_options")) {
            c.compile_options.clear();
            // Up to a NUL, as NVRTC reads an option: what check_compile_options sees is what runs.
            for (const std::string& o : f.texts("compile_options"))
                c.compile_options.emplace_back(o.c_str());
        }
        if (const auto l = f.find("launch")) c.launch = read_launch_expressions(*l, m.launch);
        if (const auto case_launch = f.find("case_launch"))
            for (const auto& [name, l] : case_launch->members()) {
                bool known = false;
                for (const auto& mc : m.cases) known |= mc.name == name;
                if (!known)
                    return what + ": field case_launch." + shortened(name) + ": names no case " +
                           quote_value(name);
                c.case_launch[name] = read_launch_expressions(l, m.launch);
            }
    } catch (const json_error& e) {
        return e.what();
    }
    return "";
}

}  // namespace cuopt
