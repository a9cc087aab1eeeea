#include "serve_fixture.hpp"

#include <signal.h>
#include <unistd.h>

#include <boost/process.hpp>
#include <catch2/catch.hpp>
#include <thread>

namespace cuopt::test {

namespace fs = std::filesystem;
namespace bp = boost::process;

const std::string k_fake_harness = CUOPT_FAKE_HARNESS_BINARY;
const std::string k_fake_sanitizer =
    std::string(CUOPT_SOURCE_DIR) + "/tests/fake-compute-sanitizer.sh";

job_files::job_files(const std::string& settings, int timeout_s)
    : config(write_config("config.json", settings, timeout_s)) {}

job_files::job_files(file_owner owner, const std::string& settings) : job_files(settings) {
    if (owner != file_owner::nobody) return;
    REQUIRE(::lchown(pilot.dir.path().c_str(), 65534, 65534) == 0);
    for (const auto& e : fs::recursive_directory_iterator(pilot.dir.path()))
        REQUIRE(::lchown(e.path().c_str(), 65534, 65534) == 0);
}

fs::path job_files::write_config(const std::string& name, const std::string& settings,
                                 int timeout_s) const {
    return pilot.dir.write(name, R"({"reference": "reference.cu", "initial_kernel": "initial.cu",
               "input_cases": "input_cases.json", "timeout": )" +
                                     std::to_string(timeout_s) + ", " + settings + "}");
}

struct serve_process::impl {
    bp::child child;
};

serve_process::serve_process(const fs::path& spool, const fs::path& out_file,
                             const std::vector<std::string>& extra, const serve_launch& launch)
    : out(out_file), m_impl(std::make_unique<impl>()) {
    if (launch.wait_for_socket) fs::remove(spool / "submit.sock");
    std::vector<std::string> args = {"serve", "--spool", spool.string()};
    args.insert(args.end(), launch.executor_flags.begin(), launch.executor_flags.end());
    for (const std::string& a :
         {std::string("--harness"), k_fake_harness, std::string("--sanitizer"), k_fake_sanitizer,
          std::string("--poll"), launch.poll_s})
        args.push_back(a);
    args.insert(args.end(), extra.begin(), extra.end());
    m_impl->child = bp::child(CUOPT_OPTIMIZER_BINARY, bp::args(args), bp::std_out > out.string(),
                              bp::std_err > (out.string() + ".err"), bp::std_in < bp::null);
    if (!launch.wait_for_socket) return;
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!fs::exists(spool / "submit.sock")) {
        INFO(read_text(out.string() + ".err"));
        REQUIRE(m_impl->child.running());
        REQUIRE(std::chrono::steady_clock::now() < end);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

serve_process::~serve_process() {
    if (m_impl->child.running()) kill9();
}

int serve_process::pid() const {
    return m_impl->child.id();
}

bool serve_process::running() const {
    return m_impl->child.running();
}

void serve_process::kill9() {
    ::kill(m_impl->child.id(), SIGKILL);
    m_impl->child.wait();
}

int serve_process::wait(std::chrono::seconds limit) {
    if (!m_impl->child.wait_for(limit)) {
        kill9();
        FAIL("serve did not stop within " << limit.count() << " s:\n" << read_text(out));
    }
    return m_impl->child.exit_code();
}

std::string submit_job(const fs::path& spool, const fs::path& config,
                       const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"submit",        "--spool",   spool.string(), "--config",
                                     config.string(), "--harness", k_fake_harness};
    args.insert(args.end(), extra.begin(), extra.end());
    const process_result r = run_optimizer(args);
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    return r.output.substr(0, r.output.find('\n'));
}

void wait_until(const std::function<bool()>& ready, std::chrono::seconds limit,
                const std::string& what, std::chrono::milliseconds poll) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (!ready()) {
        if (std::chrono::steady_clock::now() > end) FAIL("timed out waiting for " << what);
        std::this_thread::sleep_for(poll);
    }
}

}  // namespace cuopt::test
