#include "orchestrator/proposers/candidate_reader.hpp"

#include "common/json_document.hpp"

namespace cuopt {

std::string apply_candidate_json(candidate& c, const rapidjson::Value& v, const manifest& m,
                                 std::string_view schema, const std::string& what) {
    try {
        validate_json(v, schema, what);
    } catch (const json_error& e) {
        return e.what();
    }
    if (v.HasMember("entry")) c.entry = v["entry"].GetString();
    if (v.HasMember("rationale")) c.rationale = v["rationale"].GetString();
    if (v.HasMember("defines")) {
        c.defines.clear();
        for (const auto& d : v["defines"].GetObject())
            c.defines[d.name.GetString()] = json_scalar_text(d.value);
    }
    if (v.HasMember("compile_options")) {
        c.compile_options.clear();
        for (const auto& o : v["compile_options"].GetArray())
            c.compile_options.emplace_back(o.GetString());
    }
    if (v.HasMember("launch")) c.launch = read_launch_expressions(v["launch"], m.launch);
    if (v.HasMember("case_launch"))
        for (const auto& cl : v["case_launch"].GetObject()) {
            const std::string name = cl.name.GetString();
            bool known = false;
            for (const auto& mc : m.cases) known |= mc.name == name;
            if (!known)
                return what + ": field case_launch." + name + ": names no case '" + name + "'";
            c.case_launch[name] = read_launch_expressions(cl.value, m.launch);
        }
    return "";
}

}  // namespace cuopt
