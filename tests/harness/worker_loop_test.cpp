// The worker's loop in this process, with a stand-in for the harness: what a refused stdin line
// gets back. Lines that reach the real harness are tested with the binary
// (orchestrator/evaluation/harness_workers_test.cpp).
#include "harness/worker_loop.hpp"

#include <catch2/catch.hpp>
#include <sstream>

#include "common/json_document.hpp"
#include "harness/cuda_handles.hpp"
#include "test_support.hpp"

using namespace cuopt;
namespace fs = std::filesystem;

namespace {

// serve_worker over `lines` with a harness that answers ok without reading anything; the
// replies, one document each, and how many lines reached the harness.
struct worker_run {
    std::vector<rapidjson::Document> replies;
    std::vector<std::size_t> reply_bytes;
    int served = 0;
    int exit_code = -1;
};

worker_run run_worker(const fs::path& root, const std::string& lines) {
    harness_options o;
    o.worker = true;
    o.root = root.string();
    o.quiet = true;
    worker_run run;
    const bool scrub = scrub_freed_memory();  // the loop turns it on for its process
    std::istringstream in(lines);
    std::ostringstream out;
    run.exit_code = serve_worker(o, in, out, [&run](const harness_options&) {
        ++run.served;
        served_request s;
        s.status = "ok";
        return s;
    });
    scrub_freed_memory() = scrub;
    std::istringstream replies(out.str());
    for (std::string line; std::getline(replies, line);) {
        run.reply_bytes.push_back(line.size());
        run.replies.push_back(parse_json(line, "reply"));
    }
    return run;
}

std::string text_of(const rapidjson::Document& doc, const char* key) {
    return doc[key].GetString();
}

}  // namespace

TEST_CASE(
    "a worker line refused for its length is echoed as its first 200 characters and its size, "
    "and the worker serves the next line") {
    test::scratch_folder root;
    const fs::path request = root.write("req.json", "{}");
    const auto run =
        run_worker(root.path(), std::string(1 << 20, 'x') + "\n" + std::string(5000, 'y') + "\n" +
                                    request.string() + "\n");
    CHECK(run.exit_code == 0);
    REQUIRE(run.replies.size() == 3);
    CHECK(run.served == 1);
    CHECK(run.replies[0]["exit_code"].GetInt() == 64);
    CHECK(text_of(run.replies[0], "request") == std::string(200, 'x') + "… (1048576 bytes)");
    CHECK(run.reply_bytes[0] < 1024);
    CHECK(run.replies[1]["exit_code"].GetInt() == 64);
    CHECK_THAT(text_of(run.replies[1], "messages"),
               Catch::Contains("a path of 5000 bytes; expected at most 4096"));
    CHECK(text_of(run.replies[1], "request") == std::string(200, 'y') + "… (5000 bytes)");
    CHECK(run.reply_bytes[1] < 1024);
    CHECK(run.replies[2]["exit_code"].GetInt() == 0);
    CHECK(text_of(run.replies[2], "request") == request.string());
}

TEST_CASE(
    "a worker's refusal names the request and response paths quoted on one line and cut after "
    "200 characters, and echoes a path it took whole in the reply's own fields") {
    test::scratch_folder root, outside;
    const fs::path request = root.write("req.json", "{}");
    fs::create_directories(root / "d");
    fs::create_directories(root / "taken");
    root.write("notes\nmine.txt", "mine\n");
    outside.write("other\nreq.json", "{}");
    fs::create_symlink(outside / "other\nreq.json", root / "linked.json");
    std::string climb;  // a long way to root/taken: 3500 bytes of d/../
    for (int i = 0; i < 700; ++i) climb += "d/../";
    const std::string long_response = (root / (climb + "taken")).string();
    auto line = [&](const std::string& response) {
        std::string escaped;
        for (const char c : response) escaped += c == '\n' ? std::string("\\n") : std::string(1, c);
        return "{\"request\": \"" + request.string() + "\", \"response\": \"" + escaped + "\"}\n";
    };
    const auto run =
        run_worker(root.path(), line(long_response) + line((root / "notes\nmine.txt").string()) +
                                    (root / "linked.json").string() + "\n");
    CHECK(run.served == 0);
    REQUIRE(run.replies.size() == 3);
    const std::vector<std::string> expected = {
        "… (" + std::to_string(long_response.size()) + " bytes): is a directory; expected a file",
        "notes\\nmine.txt' exists and is not an earlier cuda-harness response",
        "other\\nreq.json', outside " + fs::canonical(root.path()).string()};
    for (std::size_t i = 0; i < expected.size(); ++i) {
        const std::string messages = text_of(run.replies[i], "messages");
        INFO(messages);
        CHECK(run.replies[i]["exit_code"].GetInt() == 64);
        CHECK_THAT(messages, Catch::Contains(expected[i]));
        CHECK(messages.find('\n') == messages.size() - 1);  // one line
        CHECK(messages.size() < 1024);
    }
    // The paths the line named are the reply's own: the caller matches the reply by them.
    CHECK(text_of(run.replies[0], "response") == long_response);
    CHECK(text_of(run.replies[0], "request") == request.string());
}
