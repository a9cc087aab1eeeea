// The intake form read from its parts: upload names checked, sizes limited, nothing written
// outside the staging folder.
#include "orchestrator/service/dashboard_intake.hpp"

#include <catch2/catch.hpp>

#include "common/message_text.hpp"
#include "test_support.hpp"

using namespace cuopt;
namespace fs = std::filesystem;

namespace {

multipart_part file_part(const std::string& filename, const std::string& data,
                         const std::string& field = "files") {
    multipart_part p;
    p.name = field;
    p.filename = filename;
    p.data = data;
    return p;
}

multipart_part field_part(const std::string& name, const std::string& value) {
    multipart_part p;
    p.name = name;
    p.data = value;
    return p;
}

// The intake_refusal a form gives: its status and message (0 and "" when it is accepted).
std::pair<int, std::string> refusal(std::vector<multipart_part> parts, std::size_t max = 1000) {
    try {
        read_intake_form(std::move(parts), max);
    } catch (const intake_refusal& e) {
        return {e.http_status, e.what()};
    }
    return {0, ""};
}

}  // namespace

TEST_CASE("the intake form gives its files, config, priority and flags", "[http]") {
    const intake_form f = read_intake_form(
        {file_part("config.json", "{}"), file_part("kernels/a.cu", "k"),
         field_part("priority", " 5 "),
         field_part("args", "--max-iterations 3\r\n\r\n  --seed 7 \n"), file_part("", "")},
        1000);
    REQUIRE(f.files.size() == 2);
    CHECK(f.files[1].name == "kernels/a.cu");
    CHECK(f.config == "config.json");
    CHECK(f.priority == 5);
    CHECK(f.args == std::vector<std::string>{"--max-iterations", "3", "--seed", "7"});
}

TEST_CASE("a folder upload drops the chosen folder's own name", "[http]") {
    const intake_form f = read_intake_form(
        {file_part("matmul/config.json", "{}", "folder"),
         file_part("matmul/sub/in.bin", "x", "folder"), field_part("config", "config.json")},
        1000);
    REQUIRE(f.files.size() == 2);
    CHECK(f.files[0].name == "config.json");
    CHECK(f.files[1].name == "sub/in.bin");
}

TEST_CASE("path traversal in upload names is refused with 400 naming the name", "[http]") {
    for (const std::string bad : {"../x", "/etc/passwd", "a/../../b", "a\\b", "./a", "a//b", ""}) {
        INFO(bad);
        const auto [status, why] =
            refusal({file_part("config.json", "{}"), file_part(bad, "data")});
        CHECK(status == 400);
        // Shown as every message shows a value: quoted, a backslash or control character escaped.
        CHECK_THAT(why, Catch::Contains(quote_value(bad)));
    }
    CHECK_THAT(refusal({file_part("config.json", "{}"), file_part("a\\b", "data")}).second,
               Catch::StartsWith(R"(upload name 'a\\b' refused)"));
    CHECK(refusal({file_part("config.json", "{}"), field_part("config", "../config.json")}).first ==
          400);
}

TEST_CASE("a file over the per-file limit is refused with 413 naming it", "[http]") {
    const auto [status, why] =
        refusal({file_part("config.json", "{}"), file_part("big.bin", std::string(1001, 'x'))});
    CHECK(status == 413);
    CHECK_THAT(why, Catch::Contains("big.bin") && Catch::Contains("1001"));
}

TEST_CASE("a name twice, a bad priority or a config not uploaded is refused", "[http]") {
    CHECK_THAT(refusal({file_part("config.json", "{}"), file_part("config.json", "{}")}).second,
               Catch::Contains("twice"));
    CHECK_THAT(refusal({file_part("config.json", "{}"), field_part("priority", "high")}).second,
               Catch::Contains("priority 'high'"));
    CHECK_THAT(refusal({file_part("config.json", "{}"), field_part("priority", "5000")}).second,
               Catch::Contains("-1000 to 1000"));
    CHECK_THAT(refusal({file_part("a.cu", "k")}).second,
               Catch::Contains("config 'config.json' is not among"));
}

TEST_CASE("a refusal quotes at most 200 characters of a long name or priority", "[http]") {
    const std::string long_name = std::string(5000, 'n') + ".cu";
    const std::string name_said =
        refusal({file_part("config.json", "{}"), file_part(long_name, "k")}).second;
    CHECK_THAT(name_said, Catch::Contains("upload name '" + std::string(200, 'n') +
                                          "'… (5003 bytes) refused"));
    CHECK(name_said.size() < 1000);
    const std::string priority_said =
        refusal({file_part("config.json", "{}"), field_part("priority", std::string(5000, '9'))})
            .second;
    CHECK_THAT(priority_said, Catch::Contains("priority '" + std::string(200, '9') +
                                              "'… (5000 bytes) is not a whole number"));
    CHECK(priority_said.size() < 1000);
}

TEST_CASE("uploads are written below the folder's files/, never replacing or following", "[http]") {
    test::scratch_folder dir;
    const fs::path stage = dir / "stage";
    write_uploads(stage, {{"config.json", "{}"}, {"k/a.cu", std::string("\0x", 2)}});
    CHECK(test::read_text(stage / "files" / "config.json") == "{}");
    CHECK(test::read_text(stage / "files" / "k" / "a.cu") == std::string("\0x", 2));
    fs::create_directories(dir / "outside");
    fs::create_directory_symlink(dir / "outside", stage / "files" / "link");
    CHECK_THROWS(write_uploads(stage, {{"link/evil.txt", "x"}}));
    CHECK_THROWS(write_uploads(stage, {{"../evil.txt", "x"}}));
    CHECK_THROWS(write_uploads(stage, {{"config.json", "again"}}));
    CHECK_FALSE(fs::exists(dir / "outside" / "evil.txt"));
    CHECK_FALSE(fs::exists(stage / "evil.txt"));
    CHECK(test::read_text(stage / "files" / "config.json") == "{}");
}
