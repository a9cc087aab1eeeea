#include "test_support.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <random>

#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "common/pid_lock.hpp"
#include "harness/cuda_driver.hpp"
#include "harness/device_info.hpp"

namespace cuopt::test {

namespace fs = std::filesystem;

scratch_folder::scratch_folder() {
    std::random_device rd;
    m_path = fs::temp_directory_path() /
             ("cuopt-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    fs::create_directories(m_path);
}

scratch_folder::~scratch_folder() {
    std::error_code ec;
    fs::remove_all(m_path, ec);
}

fs::path scratch_folder::write(const std::string& name, const std::string& text) const {
    const fs::path p = m_path / name;
    write_file_atomic(p, text);
    return p;
}

std::string read_text(const fs::path& file) {
    return read_text_file(file);
}

std::string shell_quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

process_result run_harness(const std::vector<std::string>& args) {
    const char* override_binary = std::getenv("CUOPT_HARNESS_BINARY");
    return run_program(override_binary && *override_binary ? override_binary : CUOPT_HARNESS_BINARY,
                       args);
}

process_result run_optimizer(const std::vector<std::string>& args) {
    return run_program(CUOPT_OPTIMIZER_BINARY, args);
}

rapidjson::Document read_checked_json(const fs::path& file, const char* schema) {
    REQUIRE(fs::exists(file));
    rapidjson::Document doc = parse_json(read_text_file(file), file.string());
    REQUIRE_NOTHROW(validate_json(doc, embedded_schema(schema), file.string()));
    return doc;
}

process_result run_program(const std::string& binary, const std::vector<std::string>& args) {
    std::string command = shell_quote(binary);
    for (const auto& a : args) command += " " + shell_quote(a);
    command += " 2>&1";
    process_result r;
    FILE* pipe = ::popen(command.c_str(), "r");
    REQUIRE(pipe != nullptr);
    std::array<char, 4096> buf;
    std::size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) r.output.append(buf.data(), n);
    const int status = ::pclose(pipe);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return r;
}

rapidjson::Document read_response(const fs::path& file) {
    return read_checked_json(file, "response");
}

std::string gpu_unavailable_reason() {
    try {
        (void)query_device(0);
        return "";
    } catch (const std::exception& e) {
        return e.what();
    }
}

std::string test_cache_dir() {
    static const std::string dir =
        (fs::temp_directory_path() / ("cuopt-test-cache-" + std::to_string(::getpid()))).string();
    return dir;
}

std::string json_string(const std::string& s) {
    rapidjson::StringBuffer b;
    rapidjson::Writer<rapidjson::StringBuffer> w(b);
    w.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
    return b.GetString();
}

std::vector<std::string> optimize_args(const std::filesystem::path& dir,
                                       const std::string& harness) {
    std::vector<std::string> a = {"optimize",
                                  "--reference",
                                  (dir / "reference.cu").string(),
                                  "--initial-kernel",
                                  (dir / "initial.cu").string(),
                                  "--input-cases",
                                  (dir / "input_cases.json").string(),
                                  "--harness",
                                  harness,
                                  "--results-dir",
                                  (dir / "results").string()};
    // The fake harness never touches CUDA: the real compute-sanitizer (found on a GPU machine)
    // refuses it, so it gets its own stand-in everywhere.
    if (harness == CUOPT_FAKE_HARNESS_BINARY)
        a.insert(a.end(), {"--sanitizer",
                           std::string(CUOPT_SOURCE_DIR) + "/tests/fake-compute-sanitizer.sh"});
    return a;
}

std::vector<std::string> joined(std::vector<std::string> a, const std::vector<std::string>& b,
                                const std::vector<std::string>& c) {
    a.insert(a.end(), b.begin(), b.end());
    a.insert(a.end(), c.begin(), c.end());
    return a;
}

namespace {
const std::string k_pilot_folder = std::string(CUOPT_SOURCE_DIR) + "/examples/matmul/";
}

optimizer_fixture::optimizer_fixture() {
    for (const char* f : {"reference.cu", "initial.cu", "input_cases.json"})
        dir.write(f, read_text(k_pilot_folder + f));
    dir.write("initial.cu", read_text(k_pilot_folder + "initial.cu") + "// FAKE_MS=2\n");
}

std::string optimizer_fixture::kernel(const std::string& marker) const {
    return read_text(k_pilot_folder + "initial.cu") + "// " + marker + "\n";
}

std::vector<std::string> optimizer_fixture::args(std::vector<std::string> extra) const {
    std::vector<std::string> a = optimize_args(dir.path(), CUOPT_FAKE_HARNESS_BINARY);
    a.insert(a.end(), {"--timeout", "5", "--sanitizer",
                       std::string(CUOPT_SOURCE_DIR) + "/tests/fake-compute-sanitizer.sh"});
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
}

process_result optimizer_fixture::run_candidates(
    const std::vector<std::pair<std::string, std::string>>& kernels,
    std::vector<std::string> extra) const {
    for (const auto& [name, marker] : kernels) dir.write("cands/" + name, kernel(marker));
    std::vector<std::string> a = {"--proposer",          "files",
                                  "--candidates",        (dir / "cands").string(),
                                  "--significance-runs", "2"};
    a.insert(a.end(), extra.begin(), extra.end());
    return run_optimizer(args(a));
}

std::filesystem::path optimizer_fixture::run(int n) const {
    char name[16];
    std::snprintf(name, sizeof name, "run-%03d", n);
    return dir / "results" / name;
}

scoped_env::scoped_env(std::string n, const char* value) : name(std::move(n)) {
    if (const char* v = std::getenv(name.c_str())) old = v;
    if (value)
        ::setenv(name.c_str(), value, 1);
    else
        ::unsetenv(name.c_str());
}

scoped_env::~scoped_env() {
    if (old)
        ::setenv(name.c_str(), old->c_str(), 1);
    else
        ::unsetenv(name.c_str());
}

std::string verdict_of(const rapidjson::Document& history, const std::string& label) {
    for (const auto& a : history["attempts"].GetArray())
        if (label == a["label"].GetString()) return a["verdict"].GetString();
    return "(no attempt " + label + ")";
}

std::unique_ptr<cuopt::child_process> straggler_holding(const std::filesystem::path& file,
                                                        const std::string& seconds) {
    std::string holder;
    std::optional<cuopt::pid_lock> lock = cuopt::pid_lock::try_take(file, 0644, holder);
    REQUIRE(lock);
    std::unique_ptr<cuopt::child_process> child;
    cuopt::hand_down_to_children(lock->fd());
    try {
        child = std::make_unique<cuopt::child_process>(
            std::vector<std::string>{"/bin/sleep", seconds}, cuopt::child_streams{});
    } catch (...) {
        cuopt::hand_down_to_children(-1);
        throw;
    }
    cuopt::hand_down_to_children(-1);
    lock.reset();
    std::ofstream in_place(file, std::ios::trunc);  // the same file: the child's flock stays
    in_place << "2147483647\n";                     // above any pid_max: no process
    return child;
}

}  // namespace cuopt::test
