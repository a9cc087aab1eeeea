// serve's token file, held to the rules OpenSSH holds a private key to: owned by serve's
// user, mode 0600, 128 bits at least, not a link; else serve refuses in one line naming the
// file and what is wrong (exit 64, as for a bad flag). A file serve makes is 0600, and the
// token is never printed, only where it is.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "common/file_io.hpp"
#include "test_support.hpp"

using namespace cuopt;
namespace fs = std::filesystem;

namespace {

const std::string k_good_token = "0123456789abcdef0123456789abcdef\n";

test::process_result serve_with(const test::scratch_folder& dir, const fs::path& token_file) {
    std::vector<std::string> args = {"serve",  "--spool",     (dir / "spool").string(),
                                     "--http", "127.0.0.1:0", "--stop-when-idle",
                                     "0.2",    "--harness",   CUOPT_FAKE_HARNESS_BINARY};
    if (!token_file.empty()) args.insert(args.end(), {"--token-file", token_file.string()});
    return test::run_optimizer(args);
}

fs::path token_file(const test::scratch_folder& dir, const std::string& text, mode_t mode) {
    const fs::path file = dir.write("token", text);
    REQUIRE(::chmod(file.c_str(), mode) == 0);
    return file;
}

// serve refused the file in one line naming it and `what`.
void check_refused(const test::process_result& r, const fs::path& file, const std::string& what) {
    INFO(r.output);
    CHECK(r.exit_code == 64);
    CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
    CHECK_THAT(r.output,
               Catch::StartsWith("cuda-optimizer serve: --token-file: " + file.string() + ": ") &&
                   Catch::Contains(what));
}

}  // namespace

TEST_CASE("serve refuses a token file that other users may read or write",
          "[integration][daemon]") {
    test::scratch_folder dir;
    const fs::path file = token_file(dir, k_good_token, 0644);
    check_refused(serve_with(dir, file), file, "has mode 0644");
    REQUIRE(::chmod(file.c_str(), 0620) == 0);
    check_refused(serve_with(dir, file), file, "has mode 0620");
}

TEST_CASE("serve refuses a token file owned by another user", "[integration][daemon]") {
    if (::geteuid() != 0) {
        WARN("skipped: chown to another user needs root");
        return;
    }
    test::scratch_folder dir;
    const fs::path file = token_file(dir, k_good_token, 0600);
    REQUIRE(::chown(file.c_str(), 65534, 65534) == 0);
    check_refused(serve_with(dir, file), file, "is owned by uid 65534, not by serve's user");
}

TEST_CASE("serve refuses a token under 128 bits, a link, or not a token at all",
          "[integration][daemon]") {
    test::scratch_folder dir;
    fs::path file = token_file(dir, "0123456789abcdef0123456789abcde\n", 0600);  // 31 hex digits
    check_refused(serve_with(dir, file), file, "31 hex digits; 32 at least (128 bits)");
    file = token_file(dir, "m9vYmFyYmF6cXV4cXV1eA\n", 0600);  // 21 base64 characters
    check_refused(serve_with(dir, file), file, "22 base64url characters at least");
    file = token_file(dir, "two words that are long enough to pass\n", 0600);
    check_refused(serve_with(dir, file), file, "only hex digits or base64url");
    const fs::path link = dir / "link";
    fs::create_symlink(token_file(dir, k_good_token, 0600), link);
    check_refused(serve_with(dir, link), link, "is a symbolic link");
}

TEST_CASE("serve accepts a good token file and prints where the token is, never the token",
          "[integration][daemon]") {
    test::scratch_folder dir;
    const fs::path file = token_file(dir, k_good_token, 0600);
    const test::process_result r = serve_with(dir, file);
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.output, Catch::Contains("the dashboard's token is in " + file.string()) &&
                             Catch::Contains("dashboard: http://127.0.0.1:") &&
                             !Catch::Contains("?token=0") &&
                             !Catch::Contains(k_good_token.substr(0, 32)));
    const fs::path b64 = token_file(dir, "Zm9vYmFyYmF6cXV4cXV1eA-_\n", 0400);
    CHECK(serve_with(dir, b64).exit_code == 0);
}

TEST_CASE("without --token-file serve makes SPOOL/dashboard.token 0600 and names it",
          "[integration][daemon]") {
    test::scratch_folder dir;
    const test::process_result r = serve_with(dir, "");
    INFO(r.output);
    CHECK(r.exit_code == 0);
    const fs::path made = dir / "spool" / "dashboard.token";
    CHECK_THAT(r.output, Catch::Contains("the dashboard's token is in " + made.string()));
    struct stat st {};
    REQUIRE(::stat(made.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    CHECK(st.st_uid == ::geteuid());
    std::string token = read_text_file(made);
    CHECK(token.size() == 65);
    CHECK_THAT(r.output, !Catch::Contains(token.substr(0, 64)));
    CHECK(serve_with(dir, "").exit_code == 0);  // the next start reads the same file
    CHECK(read_text_file(made) == token);
}
