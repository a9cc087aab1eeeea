// The test runner's main: the tests, and every binary they start, cache cubins, device
// measurements and documentation pages in a folder of their own (XDG_CACHE_HOME is where all
// of them live), never in the user's ~/.cache.
#define CATCH_CONFIG_RUNNER
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <string>

int main(int argc, char** argv) {
    const std::filesystem::path cache =
        std::filesystem::temp_directory_path() / ("cuopt-test-cache-" + std::to_string(::getuid()));
    ::setenv("XDG_CACHE_HOME", cache.c_str(), 1);
    return Catch::Session().run(argc, argv);
}
