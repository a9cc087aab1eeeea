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

namespace {

// {"verdict", "reason", "median_ms": {case: ms}} of one GPU's vendor run; null for none.
Value vendor_figures_json(const vendor_outcome& v, rapidjson::Document::AllocatorType& a) {
    if (!v.ran) return Value();
    Value out(rapidjson::kObjectType);
    out.AddMember("verdict", json_text(v.verdict, a), a);
    out.AddMember("reason", json_text(v.reason, a), a);
    Value medians(rapidjson::kObjectType);
    for (const auto& [name, ms] : v.median_ms) medians.AddMember(json_text(name, a), Value(ms), a);
    out.AddMember("median_ms", medians, a);
    return out;
}

// [{"name", "floor_ms", "bound", "initial_fraction"}] of one GPU: its floors, and the initial
// kernel's median there against them.
Value sol_figures_json(const search_outcome& o, const device_reference& d,
                       rapidjson::Document::AllocatorType& a) {
    Value cases(rapidjson::kArrayType);
    const attempt_result* initial = initial_on(o, d.index);
    for (const auto& [name, f] : d.floors) {
        Value c(rapidjson::kObjectType);
        c.AddMember("name", json_text(name, a), a);
        c.AddMember("floor_ms", f.floor_ms, a);
        c.AddMember("bound", json_text(f.bound, a), a);
        std::optional<double> fraction;
        if (initial)
            for (const case_evaluation& ce : initial->cases)
                if (ce.name == name && ce.median_ms)
                    fraction = sol_fraction(f.floor_ms, *ce.median_ms);
        c.AddMember("initial_fraction", json_number(fraction), a);
        cases.PushBack(c, a);
    }
    return cases;
}

void add_references(const device_reference& d, const search_outcome& o, Value& entry,
                    rapidjson::Document::AllocatorType& a) {
    entry.AddMember("name", json_text(d.name, a), a);
    entry.AddMember("vendor", vendor_figures_json(d.vendor, a), a);
    entry.AddMember("sol", sol_figures_json(o, d, a), a);
}

}  // namespace

rapidjson::Value devices_json(const search_outcome& o, const std::map<int, std::string>* infos,
                              rapidjson::Document::AllocatorType& a,
                              const std::vector<device_reference>* references) {
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
                if (r.device == index) measured.PushBack(json_text(r.id(), a), a);
            d.AddMember("attempts", measured, a);
        }
        d.AddMember("initial", initial_figures_json(initial_on(o, index), a), a);
        if (references)
            for (const device_reference& r : *references)
                if (r.index == index) add_references(r, o, d, a);
        out.PushBack(d, a);
    }
    return out;
}

}  // namespace cuopt
