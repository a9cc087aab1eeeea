#include "orchestrator/artifacts/device_figures.hpp"

#include "common/json_document.hpp"
#include "orchestrator/search/device_baselines.hpp"

namespace cuopt {

using rapidjson::Value;

rapidjson::Value initial_figures_json(const attempt_result* r,
                                      rapidjson::Document::AllocatorType& a) {
    if (!r) return Value();
    Value v(rapidjson::kObjectType);
    v.AddMember("verdict", rapidjson::StringRef(to_string(r->verdict)), a);
    v.AddMember("reason", json_text(r->reason, a), a);
    v.AddMember("geomean_ms", json_number(r->geomean_ms), a);
    Value medians(rapidjson::kObjectType);
    for (const case_evaluation& ce : r->cases)
        if (ce.kind == case_kind::performance)
            medians.AddMember(json_text(ce.name, a), json_number(ce.median_ms), a);
    v.AddMember("median_ms", medians, a);
    return v;
}

rapidjson::Value devices_json(const search_outcome& o, const std::map<int, std::string>* infos,
                              rapidjson::Document::AllocatorType& a) {
    Value out(rapidjson::kArrayType);
    if (!o.initial) return out;
    std::vector<int> indices{o.history[*o.initial].device};
    for (const attempt_result& b : o.baselines) indices.push_back(b.device);
    for (const int index : indices) {
        Value d(rapidjson::kObjectType);
        d.AddMember("index", index, a);
        if (infos) {
            rapidjson::Document parsed;
            const auto info = infos->find(index);
            if (info != infos->end()) try_parse_json(parsed, info->second);
            d.AddMember("device", parsed.IsObject() ? Value(parsed, a) : Value(), a);
            Value measured(rapidjson::kArrayType);
            for (const attempt_result& r : o.history)
                if (r.device == index)
                    measured.PushBack(
                        json_text(std::to_string(r.iteration) + "." + std::to_string(r.attempt), a),
                        a);
            d.AddMember("attempts", measured, a);
        }
        d.AddMember("initial", initial_figures_json(initial_on(o, index), a), a);
        out.PushBack(d, a);
    }
    return out;
}

}  // namespace cuopt
