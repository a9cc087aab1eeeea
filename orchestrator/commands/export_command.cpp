#include "orchestrator/commands/export_command.hpp"

#include <cstring>
#include <filesystem>
#include <iostream>
#include <regex>
#include <set>

#include "common/device_facts.hpp"
#include "common/exit_codes.hpp"
#include "common/file_io.hpp"
#include "common/html_text.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "common/message_text.hpp"
#include "orchestrator/artifacts/kernel_export.hpp"
#include "orchestrator/artifacts/torch_export.hpp"
#include "orchestrator/commands/export_verify.hpp"
#include "orchestrator/contract/candidate.hpp"

namespace cuopt {

namespace {

namespace fs = std::filesystem;

constexpr std::size_t k_max_run_file = 16 << 20;

class export_refused : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// RUN/NAME: a regular file reached without a link on the way, inside RUN, at most 16 MiB.
std::string read_run_file(const fs::path& run, const std::string& name) {
    try {
        return read_text_beneath(run, name, k_max_run_file);
    } catch (const std::runtime_error& e) {
        throw export_refused(e.what());
    }
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

// Compile options go into a CMake file, a setup.py and onto nvcc's command line: plain option
// words only, and only those the run itself allows.
std::vector<std::string> checked_options(const json_field& field, const std::string& where) {
    std::vector<std::string> options = field.texts();
    static const std::regex k_option("[A-Za-z0-9_=.,:+/-]{1,200}");
    for (const std::string& opt : options)
        if (!std::regex_match(opt, k_option) || opt.rfind("-ccbin", 0) == 0 ||
            opt.rfind("--compiler-bindir", 0) == 0)
            field.fail("option words of letters, digits and _=.,:+/- (not -ccbin)",
                       quote_value(opt));
    if (const std::string why = check_compile_options(options, where); !why.empty())
        field.fail("options the run allows", why);
    return options;
}

std::string checked_entry(const json_field& field) {
    static const std::regex k_identifier("[A-Za-z_][A-Za-z0-9_]{0,127}");
    const std::string entry = field.text();
    if (!std::regex_match(entry, k_identifier)) field.fail("a C identifier (the kernel's name)");
    return entry;
}

exported_kernel kernel_of(const fs::path& run, const rapidjson::Document& best,
                          const rapidjson::Document& summary, const rapidjson::Document& record,
                          bool forced) {
    const json_field b(best, (run / "best.json").string());
    exported_kernel k;
    k.entry = checked_entry(b["entry"]);
    k.source = read_run_file(run, "best.cu");
    k.compile_options = checked_options(b["compile_options"], run.string());
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

// The run's reference kernel as it ran (reference/request.json and kernel.cu): the oracle the
// package's test holds the op to.
exported_kernel reference_of(const fs::path& run, const manifest& m, const std::string& arch) {
    const rapidjson::Document request = run_json_file(run, "reference/request.json");
    const json_field kernel =
        json_field(request, (run / "reference/request.json").string())["kernel"];
    exported_kernel r;
    r.entry = checked_entry(kernel["entry"]);
    r.compile_options = checked_options(kernel["compile_options"], run.string());
    std::string defines;
    if (const auto d = kernel.find("defines"))
        for (const auto& [name, value] : d->members()) {
            if (!std::regex_match(name, std::regex("[A-Za-z_][A-Za-z0-9_]{0,63}")))
                value.fail("a define of a C identifier");
            r.tunables[name] = value.integer();
            defines += "#define " + name + " " + std::to_string(r.tunables[name]) + "\n";
        }
    r.source = defines + read_run_file(run, "reference/kernel.cu");
    r.launch = m.reference_launch ? *m.reference_launch : m.launch;
    r.arch = arch;
    r.about = {"the run's reference kernel, the oracle of the package's test"};
    return r;
}

// The holdout's cases as the run checked them (holdout-reference/request.json): parameters
// from the scalars that carry them; a case whose parameters are not all carried is left out.
std::vector<export_case> holdout_cases(const fs::path& run, const manifest& m) {
    std::vector<export_case> out;
    std::error_code ec;
    if (!fs::exists(run / "holdout-reference" / "request.json", ec)) return out;
    const rapidjson::Document request = run_json_file(run, "holdout-reference/request.json");
    const json_field r(request, (run / "holdout-reference/request.json").string());
    std::set<std::string> params;
    for (const auto& [name, value] : m.cases.front().params) params.insert(name);
    for (const json_field& c : r["cases"].items()) {
        export_case e{c.text("name"), "holdout", {}, 0};
        for (const json_field& a : c["args"].items()) {
            const manifest_arg* arg = m.find_arg(a.text("name"));
            if (arg && !arg->is_buffer() && params.count(arg->value) && a.has("value"))
                e.params[arg->value] = a["value"].integer();
        }
        if (e.params.size() == params.size()) out.push_back(std::move(e));
    }
    return out;
}

// An imported problem's PyTorch side, from the run's copy (pytorch/): nullopt for a problem
// with a CUDA reference.
std::optional<export_module> module_of(const fs::path& run) {
    std::error_code ec;
    if (!fs::exists(run / "pytorch", ec)) return std::nullopt;
    const std::string name = "pytorch/pytorch.json";
    const rapidjson::Document doc = run_json_file(run, name);
    const json_field p(doc, (run / name).string());
    export_module mod;
    mod.form = p.text("form");
    if (mod.form != "kernelbench" && mod.form != "plain")
        p["form"].fail("kernelbench or plain (a " + mod.form +
                       " problem cannot be exported as a PyTorch package yet)");
    mod.source_text =
        read_run_file(run, "pytorch/" + fs::path(p.text("source")).filename().string());
    mod.axes = p.texts("axes");
    for (const json_field& a : p["args"].items()) {
        const std::string role = a.text("role");
        const std::string arg = a.text("name");
        if (role == "parameter") {
            mod.args.push_back({arg, "module", a.text("key")});
        } else {
            mod.forward.push_back(arg);
            mod.args.push_back({arg, "forward", arg});
        }
    }
    return mod;
}

export_facts facts_of(const fs::path& run, const rapidjson::Document& summary,
                      const rapidjson::Document& best, const rapidjson::Document& record,
                      const manifest& m) {
    export_facts f;
    f.verdict = text_of(summary, "verdict");
    f.verdict_line = verdict_text(summary);
    f.forced = f.verdict != "go";
    std::map<std::string, double> medians;  // the significance rounds', else the search's
    for (const json_field& c : json_field(summary, "summary.json")["cases"].items())
        if (const auto ms = c.optional_number("best_median_ms")) medians[c.text("name")] = *ms;
    if (const rapidjson::Value* ev = member(summary, "evidence"))
        if (const rapidjson::Value* sig = member(*ev, "significance")) {
            const json_field sf(*sig, "summary.json evidence.significance");
            if (const auto sp = sf.find("speedup")) {
                f.speedup = sp->number("ratio");
                f.low = sp->number("low");
                f.high = sp->number("high");
            }
            if (const auto cases = sf.find("cases"))
                for (const json_field& c : cases->items())
                    if (const auto ms = c.optional_number("winner_median_ms"))
                        medians[c.text("name")] = *ms;
        }
    for (const json_field& c : json_field(best, (run / "best.json").string())["cases"].items()) {
        export_case e{c.text("name"), c.text("kind"), {}, 0};
        for (const auto& [name, value] : c["params"].members()) e.params[name] = value.integer();
        if (e.kind == "performance" && medians.count(e.name)) e.run_median_ms = medians[e.name];
        f.cases.push_back(std::move(e));
    }
    for (export_case& h : holdout_cases(run, m)) f.cases.push_back(std::move(h));
    f.module = module_of(run);
    const rapidjson::Value* device = member(record, "device");
    f.gpu = device ? text_of(*device, "name") : "";
    f.date = text_of(record, "finished");
    f.run_dir = fs::absolute(run).lexically_normal().string();
    if (const rapidjson::Value* tool = member(record, "tool"))
        f.tool_version =
            "cuda-optimizer " + text_of(*tool, "version") + " (" + text_of(*tool, "commit") + ")";
    return f;
}

}  // namespace

CLI::App* add_export_command(CLI::App& app, export_options& o) {
    CLI::App* e = app.add_subcommand(
        "export",
        "Write a run's winner as C++ (--header DIR) or a PyTorch op package (--torch DIR)");
    e->add_option("run", o.run, "The run folder (results/run-NNN)")->required()->type_name("RUN");
    e->add_option("--header", o.header,
                  "Write DIR/ENTRY.cuh (the kernel and launch_ENTRY(args..., stream)) and "
                  "DIR/ENTRY.cmake")
        ->type_name("DIR");
    e->add_option("--torch", o.torch,
                  "Write a PyTorch extension package: the op cuda_optimizer::ENTRY, its build, "
                  "test, timing script and README")
        ->type_name("DIR");
    e->add_flag("--verify", o.verify,
                "With --torch, on a GPU: build the package, run its test and time the op "
                "through PyTorch against the run's medians (summary.json gains `export`)");
    e->add_option("--python", o.python, "The Python with torch --verify uses")->type_name("PATH");
    e->add_flag("--force", o.force, "Export a run whose verdict is not go (the files say so)");
    e->footer(
        "\nExample:\n  cuda-optimizer export results/run-001 --header out/include --torch "
        "out/pkg --verify\n\nExit codes: 0 written (and verified); 11 the run cannot be exported "
        "(one line says "
        "why); 32 --verify failed (the package did not build, its test failed, or the op's "
        "time is off the run's); 26 DIR cannot be written; 64 bad command line.\n");
    return e;
}

namespace {

void write_files(const fs::path& dir, const std::map<std::string, std::string>& files) {
    for (const auto& [name, text] : files) {
        fs::create_directories((dir / name).parent_path());
        write_file_atomic(dir / name, text);
        std::cout << (dir / name).string() << "\n";
    }
}

}  // namespace

int run_export(const export_options& o) {
    try {
        if (o.header.empty() && o.torch.empty())
            throw std::invalid_argument("give --header DIR, --torch DIR or both");
        if (o.verify && o.torch.empty()) throw std::invalid_argument("--verify needs --torch DIR");
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
        exported_kernel k = kernel_of(run, best, summary, record, verdict != "go");
        if (m.arch_specific) k.arch = arch_specific_target(k.arch);  // as the run compiled it
        if (!o.header.empty())
            write_files(o.header, {{k.entry + ".cuh", cuda_header(k, m)},
                                   {k.entry + ".cmake", cmake_snippet(k)}});
        if (!o.torch.empty()) {
            if (const std::string why = torch_export_refusal(m, k.entry); !why.empty())
                throw export_refused((run / "input_cases.json").string() + ": " + why);
            const export_facts f = facts_of(run, summary, best, record, m);
            // An imported problem's oracle is its module; its run's reference kernel only dumped
            // the inputs.
            const auto files = torch_package_files(
                k, f.module ? std::nullopt : std::optional(reference_of(run, m, k.arch)), m, f);
            write_files(o.torch, files);
            if (o.verify) return verify_export({run, o.torch, files, k.entry, o.python});
        }
        if (verdict != "go")
            std::cerr << "cuda-optimizer: warning: exported a " << verdict
                      << " run (--force); the files say so\n";
        return to_int(exit_code::ok);
    } catch (const file_write_error& e) {
        std::cerr << "cuda-optimizer export: " << e.what() << "\n";
        return to_int(exit_code::io_error);
    } catch (const fs::filesystem_error& e) {
        std::cerr << "cuda-optimizer export: " << e.what() << "\n";
        return to_int(exit_code::io_error);
    } catch (const std::invalid_argument& e) {
        std::cerr << "cuda-optimizer export: " << e.what() << "\n";
        return to_int(exit_code::usage);
    } catch (const std::exception& e) {  // export_refused, json_error, expression_error
        std::cerr << "cuda-optimizer export: " << e.what() << "\n";
        return to_int(exit_code::invalid_request);
    }
}

}  // namespace cuopt
