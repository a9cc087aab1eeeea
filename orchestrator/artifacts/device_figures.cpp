#include "orchestrator/artifacts/device_figures.hpp"

#include "common/json_builder.hpp"
#include "orchestrator/search/device_baselines.hpp"

namespace cuopt {

using rapidjson::Value;

rapidjson::Value initial_figures_json(const attempt_result* r, json_allocator& a) {
    if (!r) return Value();
    json_object medians(a);
    for (const case_evaluation& ce : r->cases)
        if (ce.kind == case_kind::performance) medians.add(ce.name, ce.median_ms);
    json_object v(a);
    v.add("verdict", to_string(r->verdict)).add("reason", r->reason);
    v.add("geomean_ms", r->geomean_ms).add("median_ms", medians);
    return v.take();
}

namespace {

// {"verdict", "reason", "median_ms": {case: ms}} of one GPU's vendor run; null for none.
Value vendor_figures_json(const vendor_outcome& v, json_allocator& a) {
    if (!v.ran) return Value();
    json_object out(a);
    out.add("verdict", v.verdict).add("reason", v.reason).add("median_ms", v.median_ms);
    return out.take();
}

// [{"name", "floor_ms", "bound", "initial_fraction"}] of one GPU: its floors, and the initial
// kernel's median there against them.
Value sol_figures_json(const search_outcome& o, const device_reference& d, json_allocator& a) {
    json_array cases(a);
    const attempt_result* initial = initial_on(o, d.index);
    for (const auto& [name, f] : d.floors) {
        std::optional<double> fraction;
        if (initial)
            for (const case_evaluation& ce : initial->cases)
                if (ce.name == name && ce.median_ms)
                    fraction = sol_fraction(f.floor_ms, *ce.median_ms);
        json_object c(a);
        c.add("name", name).add("floor_ms", f.floor_ms).add("bound", f.bound);
        cases.push(c.add("initial_fraction", fraction));
    }
    return cases.take();
}

void add_references(const device_reference& d, const search_outcome& o, json_object& entry) {
    json_allocator& a = entry.allocator();
    entry.add("name", d.name).add("vendor", vendor_figures_json(d.vendor, a));
    entry.add("sol", sol_figures_json(o, d, a));
}

}  // namespace

rapidjson::Value devices_json(const search_outcome& o, const std::map<int, device_facts>* infos,
                              json_allocator& a, const std::vector<device_reference>* references) {
    json_array out(a);
    if (!o.initial) return out.take();
    std::vector<int> indices{o.history[*o.initial].device};
    for (const attempt_result& b : o.baselines) indices.push_back(b.device);
    for (const int index : indices) {
        json_object d(a);
        d.add("index", index);
        if (infos) {
            rapidjson::Document parsed;
            const auto info = infos->find(index);
            if (info != infos->end()) try_parse_json(parsed, info->second.json);
            d.add("device", parsed.IsObject() ? Value(parsed, a) : Value());
            json_array measured(a);
            for (const attempt_result& r : o.history)
                if (r.device == index) measured.push(r.id());
            d.add("attempts", measured);
        }
        d.add("initial", initial_figures_json(initial_on(o, index), a));
        if (references)
            for (const device_reference& r : *references)
                if (r.index == index) add_references(r, o, d);
        out.push(d);
    }
    return out.take();
}

}  // namespace cuopt
