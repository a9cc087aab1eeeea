#include "orchestrator/commands/problem_import.hpp"

#include <algorithm>
#include <iostream>
#include <sstream>

#include "common/exit_codes.hpp"
#include "common/file_io.hpp"
#include "common/json_builder.hpp"
#include "common/json_document.hpp"
#include "common/temporary_folder.hpp"
#include "orchestrator/evaluation/python_child.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t k_max_source_bytes = std::size_t(4) << 20;

// form "auto": a .json is a FlashInfer-Trace definition; Python is read by the PyTorch side.
std::string form_of(const import_options& o) {
    if (o.form != "auto") return o.form;
    return fs::path(o.source).extension() == ".json" ? "flashinfer" : "auto";
}

// A definition's workloads: --workloads, else the dataset's layout
// (definitions/OP/NAME.json beside workloads/OP/NAME.jsonl), else none.
std::string workloads_of(const import_options& o) {
    if (!o.workloads.empty()) return o.workloads;
    const fs::path def = fs::absolute(o.source);
    const fs::path guess = def.parent_path().parent_path().parent_path() / "workloads" /
                           def.parent_path().filename() / (def.stem().string() + ".jsonl");
    return fs::is_regular_file(guess) ? guess.string() : "";
}

void check_source(const std::string& path, const char* what) {
    std::error_code ec;
    if (!fs::is_regular_file(fs::symlink_status(path, ec)))
        throw std::runtime_error(path + ": " + what + " is not a regular file");
    if (fs::file_size(path, ec) > k_max_source_bytes)
        throw std::runtime_error(path + ": " + what + " is larger than 4 MiB");
}

}  // namespace

int run_import(const import_options& given) {
    import_options o = given;
    o.form = form_of(given);
    const bool flashinfer = o.form == "flashinfer";
    if (flashinfer) o.workloads = workloads_of(given);
    try {
        check_source(o.source, "the source");
        if (!o.workloads.empty()) check_source(o.workloads, "--workloads");
        const fs::path dir = o.out;
        std::error_code ec;
        if (fs::exists(fs::symlink_status(dir, ec)) &&
            (!fs::is_directory(fs::symlink_status(dir, ec)) || !fs::is_empty(dir, ec)))
            throw std::runtime_error(o.out + ": --out must be a new or empty folder");
        temporary_folder job("cuopt-import");
        const std::string source_file = flashinfer ? "definition.json" : "reference.py";
        // What --out keeps is read now, before the child runs (it may rewrite its own copies).
        const std::string source_text = read_text_file(o.source);
        const std::string workloads_text = o.workloads.empty() ? "" : read_text_file(o.workloads);
        write_file_atomic(job / source_file, source_text);
        if (!o.workloads.empty()) write_file_atomic(job / "workloads.jsonl", workloads_text);
        rapidjson::Document j;
        json_object(j)
            .add("source", source_file)
            .add("form", o.form)
            .add("workloads", o.workloads.empty() ? "" : "workloads.jsonl");
        write_file_atomic(job / "job.json", to_compact_json(j));
        const auto runner = make_child_process_runner();
        const python_interpreter python = find_python(o.python, *runner);
        python_job pj{"introspect",
                      job.path(),
                      {},
                      false,
                      std::chrono::milliseconds(static_cast<long long>(o.timeout_s * 1000))};
        std::string answer;
        try {
            answer = run_pytorch_side(python, pj, *runner);
        } catch (const python_error& e) {  // the source's doing (a hang, a crash): exit 11
            throw std::runtime_error(o.source + ": cannot import: " + e.what());
        }
        imported_problem p;
        try {
            p = read_introspection(answer, o.source + " (the PyTorch side's answer)");
        } catch (const json_error&) {
            throw;
        } catch (const std::runtime_error& refused) {
            throw std::runtime_error(o.source + ": cannot import: " + refused.what());
        }
        fs::create_directories(dir);
        write_file_atomic(dir / source_file, source_text);
        if (!o.workloads.empty()) write_file_atomic(dir / "workloads.jsonl", workloads_text);
        write_problem_folder(p, o, dir, source_file);
        std::cerr << "cuda-optimizer: imported " << o.source << " (" << p.form << ", PyTorch "
                  << python.torch_version << ") into " << o.out
                  << "\n  signature: " << imported_signature(p, kernel_name_for(o))
                  << "\n  next: add an "
                  << "initial_kernel to " << (dir / "config.json").string()
                  << ", then cuda-optimizer check --config " << (dir / "config.json").string()
                  << "\n";
        return 0;
    } catch (const python_error& e) {
        std::cerr << "cuda-optimizer: import: " << e.what() << "\n";
        return to_int(exit_code::preflight_failed);
    } catch (const std::exception& e) {
        std::cerr << "cuda-optimizer: import: " << e.what() << "\n";
        return to_int(exit_code::invalid_request);
    }
}

void add_import_command(CLI::App& app, import_options& o, CLI::App*& command) {
    command = app.add_subcommand(
        "import",
        "Turn a PyTorch problem (KernelBench file, FlashInfer-Trace definition, or a "
        "function with get_inputs) into a problem folder");
    command->add_option("source", o.source, "The .py problem file or the definition's .json")
        ->required();
    command->add_option("--out", o.out, "The problem folder to write (new or empty)")
        ->required()
        ->type_name("DIR");
    command->add_option("--form", o.form, "auto | kernelbench | flashinfer | plain")
        ->capture_default_str()
        ->check(CLI::IsMember({"auto", "kernelbench", "flashinfer", "plain"}));
    command
        ->add_option("--workloads", o.workloads,
                     "A FlashInfer-Trace workloads .jsonl (default: the dataset's, beside)")
        ->type_name("FILE");
    command
        ->add_option("--python", o.python,
                     "The interpreter with torch (default: python3 on PATH, then "
                     "/usr/bin/python3)")
        ->type_name("FILE");
    command->add_option("--name", o.name, "The kernel's name (default: from the source's)");
    command->add_option("--timeout", o.timeout_s, "Wall-clock limit for the PyTorch child, s")
        ->capture_default_str();
    command->footer(
        "\nExample:\n  cuda-optimizer import KernelBench/level1/23_Softmax.py --out "
        "problems/softmax\n"
        "\nExit codes: 0 written; 11 the source cannot be imported (the line names the construct);"
        "\n20 no Python with torch; 64 bad command line.\n");
}

}  // namespace cuopt
