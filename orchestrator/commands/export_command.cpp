#include "orchestrator/commands/export_command.hpp"

#include <cstring>
#include <filesystem>
#include <iostream>
#include <regex>

#include "common/exit_codes.hpp"
#include "common/file_io.hpp"
#include "common/html_text.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "common/message_text.hpp"
#include "orchestrator/artifacts/kernel_export.hpp"
#include "orchestrator/contract/candidate.hpp"

namespace cuopt {

namespace {

namespace fs = std::filesystem;

constexpr std::size_t k_max_run_file = 16 << 20;

class export_refused : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// RUN/NAME: a regular file reached without a link, at most 16 MiB.
std::string read_run_file(const fs::path& run, const std::string& name) {
    const fs::path file = run / name;
    untrusted_read r = read_untrusted_file(file, k_max_run_file);
    switch (r.refused) {
        case untrusted_read::refusal::none:
            return std::move(r.text);
        case untrusted_read::refusal::link:
            throw export_refused(file.string() + ": cannot be read (a link: not followed)");
        case untrusted_read::refusal::cannot_open:
            throw export_refused(file.string() + ": cannot be read (" + std::strerror(r.error) +
                                 ")");
        case untrusted_read::refusal::not_regular:
            throw export_refused(file.string() + ": not a regular file");
        case untrusted_read::refusal::too_big:
            break;
    }
    throw export_refused(file.string() + ": " + std::to_string(r.size) +
                         " bytes, over the 16 MiB a run's record may have");
}

rapidjson::Document run_json_file(const fs::path& run, const std::string& name) {
    return parse_record_json(read_run_file(run, name), (run / name).string());
}

// "go 2.310x [2.20, 2.40] over PyTorch eager" from summary.json.
std::string verdict_text(const rapidjson::Value& summary) {
    std::string out = text_of(summary, "verdict");
    const rapidjson::Value* evidence = member(summary, "evidence");
    const rapidjson::Value* sig = evidence ? member(*evidence, "significance") : nullptr;
    const rapidjson::Value* speedup = sig ? member(*sig, "speedup") : nullptr;
    if (speedup && number_of(*speedup, "ratio"))
        out += " " + fixed(number_of(*speedup, "ratio"), 3) + "x [" +
               fixed(number_of(*speedup, "low"), 3) + ", " + fixed(number_of(*speedup, "high"), 3) +
               "]";
    const rapidjson::Value* initial = member(summary, "initial");
    const std::string base = initial ? text_of(*initial, "label") : "";
    return out + " over " + (base == "pytorch-eager" ? "PyTorch eager" : "the initial kernel");
}

// A winner whose launch differs by case (a case's own launch in the manifest, or the
// candidate's) has no single launcher yet: refused rather than launched wrong.
void refuse_case_launches(const json_field& best, const launch_expressions& launch) {
    const auto cases = best.find("cases");
    if (!cases) return;
    for (const json_field& c : cases->items()) {
        const auto l = c.find("launch");
        if (!l) continue;
        bool same = l->text("dynamic_shared_bytes") == launch.dynamic_shared_bytes;
        for (std::size_t i = 0; i < 3; ++i)
            same = same && (*l)["grid"][i].text() == launch.grid[i] &&
                   (*l)["block"][i].text() == launch.block[i];
        if (!same)
            (*l).fail(
                "the winner's one launch (a case with its own launch cannot be exported "
                "yet)");
    }
}

exported_kernel kernel_of(const fs::path& run, const rapidjson::Document& best,
                          const rapidjson::Document& summary, const rapidjson::Document& record,
                          bool forced) {
    const json_field b(best, (run / "best.json").string());
    exported_kernel k;
    k.entry = b.text("entry");
    static const std::regex k_identifier("[A-Za-z_][A-Za-z0-9_]{0,127}");
    if (!std::regex_match(k.entry, k_identifier))
        b["entry"].fail("a C identifier (the kernel's name)");
    k.source = read_run_file(run, "best.cu");
    k.compile_options = b.texts("compile_options");
    // They go into a CMake file and onto nvcc's command line: plain option words only.
    static const std::regex k_option("[A-Za-z0-9_=.,:+/-]{1,200}");
    for (const std::string& opt : k.compile_options)
        if (!std::regex_match(opt, k_option) || opt.rfind("-ccbin", 0) == 0 ||
            opt.rfind("--compiler-bindir", 0) == 0)
            b["compile_options"].fail("option words of letters, digits and _=.,:+/- (not -ccbin)",
                                      quote_value(opt));
    if (const std::string why = check_compile_options(k.compile_options, run.string());
        !why.empty())
        b["compile_options"].fail("options the run allows", why);
    for (const auto& [name, value] : b["tunables"].members()) k.tunables[name] = value.integer();
    const json_field l = b["launch"];
    for (std::size_t i = 0; i < 3; ++i) {
        k.launch.grid[i] = l["grid"][i].text();
        k.launch.block[i] = l["block"][i].text();
    }
    k.launch.dynamic_shared_bytes = l.text("dynamic_shared_bytes");
    const rapidjson::Value* device = member(record, "device");
    k.arch = device ? text_of(*device, "arch") : "";
    static const std::regex k_arch("sm_[0-9]{2,3}[a-z]?");
    if (!std::regex_match(k.arch, k_arch))
        json_field(record, (run / "run.json").string())["device"]["arch"].fail(
            "a GPU architecture such as sm_90");
    refuse_case_launches(b, k.launch);
    k.about = {"from " + fs::absolute(run).lexically_normal().string() + ", iteration " +
                   text_of(best, "iteration") + " attempt " + text_of(best, "attempt") + " (" +
                   text_of(best, "label") + ")",
               "verdict " + verdict_text(summary) + " on " +
                   (device ? text_of(*device, "name") : std::string("an unknown GPU")) + ", " +
                   text_of(record, "finished")};
    if (forced)
        k.about.push_back(
            "EXPORTED WITH --force: the run's verdict is not go; do not ship this "
            "without reading the run's report");
    return k;
}

}  // namespace

CLI::App* add_export_command(CLI::App& app, export_options& o) {
    CLI::App* e = app.add_subcommand(
        "export", "Write a run's winner as C++ to build into your program (--header DIR)");
    e->add_option("run", o.run, "The run folder (results/run-NNN)")->required()->type_name("RUN");
    e->add_option("--header", o.header,
                  "Write DIR/ENTRY.cuh (the kernel and launch_ENTRY(args..., stream)) and "
                  "DIR/ENTRY.cmake")
        ->required()
        ->type_name("DIR");
    e->add_flag("--force", o.force, "Export a run whose verdict is not go (the header says so)");
    e->footer(
        "\nExit codes: 0 written; 11 the run cannot be exported (one line says why); 26 DIR "
        "cannot be written; 64 bad command line.\n");
    return e;
}

int run_export(const export_options& o) {
    try {
        const fs::path run = o.run;
        const rapidjson::Document summary = run_json_file(run, "summary.json");
        const std::string verdict = text_of(summary, "verdict");
        if (verdict != "go" && !o.force)
            throw export_refused(
                (run / "summary.json").string() + ": the verdict is " +
                (verdict.empty() ? std::string("missing") : verdict) +
                ", not go: nothing to ship (--force exports it anyway, saying so)");
        if (!member(summary, "best") || member(summary, "best")->IsNull())
            throw export_refused((run / "summary.json").string() + ": the run has no winner");
        const rapidjson::Document best = run_json_file(run, "best.json");
        const rapidjson::Document record = run_json_file(run, "run.json");
        read_run_file(run, "input_cases.json");  // a regular file, not a link, before it is read
        const manifest m = read_manifest(run / "input_cases.json");
        const exported_kernel k = kernel_of(run, best, summary, record, verdict != "go");
        const fs::path out = o.header;
        fs::create_directories(out);
        write_file_atomic(out / (k.entry + ".cuh"), cuda_header(k, m));
        write_file_atomic(out / (k.entry + ".cmake"), cmake_snippet(k));
        std::cout << (out / (k.entry + ".cuh")).string() << "\n"
                  << (out / (k.entry + ".cmake")).string() << "\n";
        if (verdict != "go")
            std::cerr << "cuda-optimizer: warning: exported a " << verdict
                      << " run (--force); the header says so\n";
        return to_int(exit_code::ok);
    } catch (const file_write_error& e) {
        std::cerr << "cuda-optimizer export: " << e.what() << "\n";
        return to_int(exit_code::io_error);
    } catch (const fs::filesystem_error& e) {
        std::cerr << "cuda-optimizer export: " << e.what() << "\n";
        return to_int(exit_code::io_error);
    } catch (const std::exception& e) {  // export_refused, json_error, expression_error
        std::cerr << "cuda-optimizer export: " << e.what() << "\n";
        return to_int(exit_code::invalid_request);
    }
}

}  // namespace cuopt
