// The intake form's multipart/form-data parser: well-formed bodies, binary files, and every
// malformed shape refused with a message rather than a partial result.
#include "orchestrator/service/multipart.hpp"

#include <catch2/catch.hpp>

using namespace cuopt;

namespace {

const std::string k_boundary = "----WebKitFormBoundaryX3b9";

std::string field(const std::string& name, const std::string& value) {
    return "--" + k_boundary + "\r\nContent-Disposition: form-data; name=\"" + name + "\"\r\n\r\n" +
           value + "\r\n";
}

std::string file(const std::string& name, const std::string& filename, const std::string& data) {
    return "--" + k_boundary + "\r\nContent-Disposition: form-data; name=\"" + name +
           "\"; filename=\"" + filename + "\"\r\nContent-Type: application/octet-stream\r\n\r\n" +
           data + "\r\n";
}

std::string closing() {
    return "--" + k_boundary + "--\r\n";
}

std::string refusal(const std::string& body) {
    try {
        parse_multipart(body, k_boundary);
    } catch (const multipart_error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("a form's fields and files are read in order with their names and bytes", "[http]") {
    const std::string binary =
        std::string("\0\r\n--", 5) + k_boundary.substr(0, 8) + "\r\n" + std::string("\xff\x00z", 3);
    const std::string body = field("config", "config.json") + file("files", "a.cu", "__global__") +
                             file("files", "in.bin", binary) + closing();
    const auto parts = parse_multipart(body, k_boundary);
    REQUIRE(parts.size() == 3);
    CHECK(parts[0].name == "config");
    CHECK_FALSE(parts[0].filename);
    CHECK(parts[0].data == "config.json");
    CHECK(parts[1].filename == std::optional<std::string>("a.cu"));
    CHECK(parts[1].content_type == "application/octet-stream");
    CHECK(parts[2].data == binary);  // NULs, CRLFs and a boundary's start kept exactly
}

TEST_CASE("a preamble, an epilogue, empty parts and an empty filename are all read", "[http]") {
    const std::string body = "ignored preamble\r\n" + field("args", "") + file("folder", "", "") +
                             closing() + "epilogue";
    const auto parts = parse_multipart(body, k_boundary);
    REQUIRE(parts.size() == 2);
    CHECK(parts[0].data.empty());
    CHECK(parts[1].filename == std::optional<std::string>(""));
}

TEST_CASE("the boundary comes from a multipart/form-data Content-Type, quoted or not", "[http]") {
    CHECK(multipart_boundary("multipart/form-data; boundary=abc") == "abc");
    CHECK(multipart_boundary("Multipart/Form-Data;boundary=\"a b:c\"") == "a b:c");
    CHECK(multipart_boundary("multipart/form-data; charset=utf-8; boundary=x-1") == "x-1");
    CHECK_THROWS_WITH(multipart_boundary("application/json"), Catch::Contains("not multipart"));
    CHECK_THROWS_WITH(multipart_boundary("multipart/form-data"), Catch::Contains("no boundary"));
    CHECK_THROWS_WITH(multipart_boundary("multipart/form-data; boundary=" + std::string(71, 'a')),
                      Catch::Contains("70"));
    CHECK_THROWS_WITH(multipart_boundary("multipart/form-data; boundary=a<b"),
                      Catch::Contains("forbids"));
    CHECK_THROWS_WITH(multipart_boundary("multipart/form-data; boundary=\"abc"),
                      Catch::Contains("unterminated"));
}

TEST_CASE("malformed multipart bodies are refused, each with what is wrong", "[http]") {
    const std::string head = "--" + k_boundary + "\r\n";
    CHECK_THAT(refusal(""), Catch::Contains("does not contain its boundary"));
    CHECK_THAT(refusal("just text"), Catch::Contains("does not contain its boundary"));
    CHECK_THAT(refusal(field("a", "1")), Catch::Contains("closing boundary"));
    CHECK_THAT(refusal(field("a", "1").substr(0, 60)), Catch::Contains("headers do not end"));
    CHECK_THAT(refusal(head + "Content-Disposition form-data\r\n\r\nx\r\n" + closing()),
               Catch::Contains("malformed header line"));
    CHECK_THAT(refusal(head + "Content-Type: text/plain\r\n\r\nx\r\n" + closing()),
               Catch::Contains("no Content-Disposition"));
    CHECK_THAT(refusal(head + "\r\nx\r\n" + closing()), Catch::Contains("no Content-Disposition"));
    CHECK_THAT(
        refusal(head + "Content-Disposition: attachment; name=\"a\"\r\n\r\nx\r\n" + closing()),
        Catch::Contains("not form-data with a name"));
    CHECK_THAT(refusal(head + "Content-Disposition: form-data\r\n\r\nx\r\n" + closing()),
               Catch::Contains("not form-data with a name"));
    CHECK_THAT(refusal(head + "Content-Disposition: form-data; name=\"a\r\n\r\nx\r\n" + closing()),
               Catch::Contains("unterminated"));
    CHECK_THAT(refusal(head + "Content-Disposition: form-data; name=\"a\"\r\n"),
               Catch::Contains("headers do not end"));
    CHECK_THAT(refusal("--" + k_boundary + "garbage\r\n" + closing()),
               Catch::Contains("not followed by CRLF"));
    CHECK_THAT(
        refusal(head + "Content-Disposition: form-data; name=\"a\" junk\r\n\r\nx\r\n" + closing()),
        Catch::Contains("text after a quoted value"));
    CHECK_THAT(refusal(head + "X: " + std::string(20000, 'a') + "\r\n\r\nx\r\n" + closing()),
               Catch::Contains("16 KiB"));
}

TEST_CASE("more parts than allowed are refused", "[http]") {
    std::string body;
    for (int i = 0; i < 5; ++i) body += field("f" + std::to_string(i), "v");
    body += closing();
    CHECK(parse_multipart(body, k_boundary, 5).size() == 5);
    CHECK_THROWS_WITH(parse_multipart(body, k_boundary, 4), Catch::Contains("more than 4 parts"));
}
