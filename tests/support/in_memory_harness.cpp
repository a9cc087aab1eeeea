// fake-harness command lines served in the test process: the fake's globals set as its main()
// sets them, its process endings caught as a child's result.
#include "in_memory_harness.hpp"

#include <csignal>
#include <filesystem>
#include <stdexcept>

#include "common/exit_codes.hpp"
#include "fake_harness/fake_harness.hpp"

namespace cuopt::test {

namespace {

// The fake's state for one run, and back to the binary's defaults after it.
struct in_memory_scope {
    explicit in_memory_scope(const fake::fake_options& o) {
        fake::g_in_memory = true;
        fake::g_ended = false;
        fake::g_worker = false;
        fake::g_retire_reason.clear();
        fake::g_stdout.clear();
        fake::g_confinement = confinement{};
        fake::g_confinement.reason =
            "in_memory_harness: served inside the test process, which nothing confines";
        fake::g_read_root = o.request.empty() ? std::filesystem::path() : fake::fake_root(o);
    }
    ~in_memory_scope() {
        fake::g_in_memory = false;
        fake::g_cubin_out.clear();
        fake::g_read_root.clear();
    }
    in_memory_scope(const in_memory_scope&) = delete;
    in_memory_scope& operator=(const in_memory_scope&) = delete;
};

fake::fake_options parsed(const std::vector<std::string>& argv) {
    const std::string program = std::filesystem::path(argv.empty() ? "" : argv[0]).filename();
    if (program != "fake-harness")
        throw fake::needs_a_process(
            "in_memory_harness runs only fake-harness command lines, not '" +
            (argv.empty() ? std::string() : argv[0]) + "'");
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    fake::g_cubin_out.clear();
    const fake::fake_options o =
        fake::parse_fake_options(static_cast<int>(args.size()), args.data());
    if (o.worker)
        throw fake::needs_a_process(
            "in_memory_harness serves one request a run; --worker needs the fake-harness binary");
    return o;
}

// The exit code of a one-shot run, as the binary's main() returns it.
int serve(const fake::fake_options& o, process_result& r) {
    if (o.version) {
        fake::g_stdout = "fake\n";
        return 0;
    }
    if (o.device_info) {
        fake::g_stdout = fake::fake_device_info(o);
        return 0;
    }
    if (o.request.empty()) return to_int(exit_code::usage);
    try {
        return fake::serve_one(o.request, o.response, o.compile_only);
    } catch (const fake::needs_a_process&) {
        throw;  // the test asked for what this runner cannot do
    } catch (const std::exception& e) {
        r.stderr_text += std::string("fake-harness: internal_error: ") + e.what() + "\n";
        return to_int(exit_code::internal_error);
    }
}

}  // namespace

process_result in_memory_harness::run(const std::vector<std::string>& argv,
                                      std::chrono::milliseconds timeout) {
    const std::lock_guard<std::mutex> lock(m_mutex);
    m_commands.push_back(argv);
    const auto start = std::chrono::steady_clock::now();
    const fake::fake_options o = parsed(argv);
    const in_memory_scope scope(o);
    process_result r;
    try {
        r.exit_code = serve(o, r);
    } catch (const fake::process_ended& ended) {
        if (!ended.error_line.empty()) r.stderr_text += ended.error_line + "\n";
        r.exit_code = ended.signal || ended.hangs ? -1 : ended.exit_code;
        r.signal = ended.hangs ? SIGKILL : ended.signal;
        r.timed_out = ended.hangs;
    }
    r.stdout_text = fake::g_stdout;
    r.wall_ms =
        r.timed_out
            ? static_cast<double>(timeout.count())
            : std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                  .count();
    return r;
}

std::vector<std::vector<std::string>> in_memory_harness::commands() const {
    const std::lock_guard<std::mutex> lock(m_mutex);
    return m_commands;
}

}  // namespace cuopt::test
