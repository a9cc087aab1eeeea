#include "orchestrator/commands/named_files.hpp"

#include <algorithm>
#include <iostream>

#include "common/exit_codes.hpp"
#include "common/json_builder.hpp"
#include "common/json_document.hpp"
#include "orchestrator/contract/manifest.hpp"
#include "orchestrator/evaluation/torch_oracle.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

void add_manifest_files(const manifest& m, std::vector<fs::path>& files) {
    for (const manifest_case& mc : m.cases) {
        for (const manifest_arg& a : m.args)
            if (a.has_input())
                if (const auto& init = m.init_for(mc, a); init.file) files.push_back(*init.file);
        for (const auto& [name, path] : mc.expected) files.push_back(path);
    }
}

bool inside(const fs::path& folder, const fs::path& p) {
    const std::string rel = fs::absolute(p).lexically_normal().lexically_relative(folder).string();
    return !rel.empty() && rel.rfind("..", 0) != 0;
}

void confine(const fs::path& box, const fs::path& p, bool folder) {
    if (box.empty()) return;
    std::error_code ec;
    const fs::path real = fs::weakly_canonical(p, ec);
    if (ec || !inside(box, real))
        throw std::runtime_error("submit: the job names " + p.filename().string() +
                                 " outside the files it was given; name only those");
    if (folder ? !fs::is_directory(real, ec) : !fs::is_regular_file(real, ec))
        throw std::runtime_error("submit: " + p.filename().string() + " is not a " +
                                 (folder ? "folder" : "regular file"));
}

}  // namespace

std::vector<fs::path> files_named(const optimizer_options& o, const fs::path& box_given) {
    const fs::path box = box_given.empty() ? fs::path() : fs::weakly_canonical(box_given);
    std::vector<fs::path> files = {o.config};
    for (const std::string* f : {&o.reference, &o.initial_kernel, &o.input_cases, &o.holdout_cases})
        if (!f->empty()) {
            confine(box, *f, false);
            files.emplace_back(*f);
        }
    if (!o.candidates.empty()) confine(box, o.candidates, true);
    if (!o.torch_reference.empty()) confine(box, o.torch_reference, false);
    if (!o.input_cases.empty()) {
        const manifest m = read_manifest(o.input_cases);
        add_manifest_files(m, files);
        if (!o.torch_reference.empty()) {  // the mapping, the module's source, its workloads
            const torch_problem t = read_torch_problem(o.torch_reference, m);
            files.insert(files.end(), {o.torch_reference, t.source});
            if (!t.workloads.empty()) files.push_back(t.workloads);
        }
        if (!o.holdout_cases.empty())
            add_manifest_files(read_holdout_manifest(o.holdout_cases, m), files);
    }
    if (!o.candidates.empty())
        for (const auto& e : fs::recursive_directory_iterator(o.candidates))
            if (e.is_regular_file()) files.push_back(e.path());
    for (fs::path& f : files) f = fs::absolute(f).lexically_normal();
    for (const fs::path& f : files) confine(box, f, false);  // the manifests' files too
    std::sort(files.begin(), files.end());
    files.erase(std::unique(files.begin(), files.end()), files.end());
    return files;
}

int run_list_files(const optimizer_options& o, const fs::path& box) {
    std::vector<fs::path> files;
    try {
        files = files_named(o, box);
    } catch (const std::exception& e) {
        std::cerr << e.what() << "\n";
        return to_int(exit_code::invalid_request);
    }
    rapidjson::Document d(rapidjson::kObjectType);
    json_array list(d.GetAllocator());
    for (const fs::path& f : files) list.push(f.string());
    json_object(d).add("files", list);
    std::cout << to_compact_json(d) << "\n";
    return 0;
}

}  // namespace cuopt
