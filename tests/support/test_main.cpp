// The test runner's main: the tests, and every binary they start, cache cubins, device
// measurements and documentation pages in a folder of their own (XDG_CACHE_HOME is where all
// of them live), never in the user's ~/.cache.
// CUOPT_TEST_PROCESS_LOG=FILE names, one a line, every test case that started a child process
// without the [integration] tag (its children's page faults, counted as each is waited for,
// grew): how the tags were checked (docs/testing.md).
#define CATCH_CONFIG_RUNNER
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace {

long child_page_faults() {
    rusage u{};
    ::getrusage(RUSAGE_CHILDREN, &u);
    return u.ru_minflt + u.ru_majflt;
}

struct process_listener : Catch::TestEventListenerBase {
    using TestEventListenerBase::TestEventListenerBase;
    void testCaseStarting(const Catch::TestCaseInfo& info) override {
        TestEventListenerBase::testCaseStarting(info);
        m_faults = child_page_faults();
    }
    void testCaseEnded(const Catch::TestCaseStats& stats) override {
        TestEventListenerBase::testCaseEnded(stats);
        const char* log = std::getenv("CUOPT_TEST_PROCESS_LOG");
        const auto& tags = stats.testInfo.tags;
        if (!log || !*log || child_page_faults() == m_faults ||
            std::find(tags.begin(), tags.end(), "integration") != tags.end())
            return;
        const std::string line = stats.testInfo.name + "\n";
        const int fd = ::open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0) return;  // a report, not a test: nothing to fail
        if (::write(fd, line.data(), line.size()) < 0) {
        }  // the same
        ::close(fd);
    }
    long m_faults = 0;
};

}  // namespace

CATCH_REGISTER_LISTENER(process_listener)

int main(int argc, char** argv) {
    const std::filesystem::path cache =
        std::filesystem::temp_directory_path() / ("cuopt-test-cache-" + std::to_string(::getuid()));
    ::setenv("XDG_CACHE_HOME", cache.c_str(), 1);
    return Catch::Session().run(argc, argv);
}
