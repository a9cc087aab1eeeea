// The documentation tool of --nvidia-research: HTML to sections, the allow-list, the disk
// cache, the fetch budget, queries and redirects, against a real HTTP server on loopback.
#include "orchestrator/model/docs_library.hpp"

#include <catch2/catch.hpp>

#include "common/json_document.hpp"
#include "loopback_http_server.hpp"
#include "test_support.hpp"

using namespace cuopt;

namespace {

const char* k_guide = R"(<!DOCTYPE html><html><head><title>Guide</title>
<script>var tracking = "never shown";</script><style>body { color: red }</style></head>
<body><nav><a href="/">Home</a> navigation links</nav>
<header>Site banner</header>
<section id="shared-memory"><h1>Shared Memory<a class="headerlink" href="#shared-memory">&#182;</a></h1>
<p>Shared memory is   on-chip and
 much faster than global memory. Bank conflicts serialise accesses.</p>
<ul><li>32 banks</li><li>4-byte words</li></ul>
<section id="bank-conflicts"><h2>Bank Conflicts</h2>
<p>Pad the tile by one column to avoid bank conflicts in a transpose.</p>
<pre>__shared__ float tile[32][33];
tile[ty][tx] = in[i];</pre></section></section>
<section id="warp-shuffle"><h2>Warp Shuffle &amp; Reductions</h2>
<p>__shfl_down_sync exchanges registers within a warp without shared memory.</p>
<table><tr><td>latency</td><td>low</td></tr></table></section>
<footer>Copyright notice</footer></body></html>)";

rapidjson::Document args(const std::string& json) {
    return parse_json(json, "args");
}

}  // namespace

TEST_CASE("an HTML page becomes sections of readable text with their anchors", "[docs]") {
    const auto s = html_sections(k_guide);
    REQUIRE(s.size() == 3);
    CHECK(s[0].title == "Shared Memory");
    CHECK(s[0].anchor == "shared-memory");
    CHECK_THAT(s[0].text, Catch::Contains("Shared memory is on-chip and much faster"));
    CHECK_THAT(s[0].text, Catch::Contains("- 32 banks\n- 4-byte words"));
    CHECK(s[1].title == "Bank Conflicts");
    CHECK(s[1].anchor == "bank-conflicts");
    CHECK_THAT(s[1].text, Catch::Contains("__shared__ float tile[32][33];\ntile[ty][tx] = in[i];"));
    CHECK(s[2].title == "Warp Shuffle & Reductions");
    CHECK_THAT(s[2].text, Catch::Contains("latency | low"));
    for (const auto& sec : s)
        for (const char* hidden : {"tracking", "color: red", "navigation", "banner", "Copyright"})
            CHECK(sec.text.find(hidden) == std::string::npos);
}

TEST_CASE("only http(s) pages on allow-listed hosts are read", "[docs]") {
    const std::vector<std::string> hosts = {"docs.nvidia.com", "127.0.0.1"};
    std::string why;
    CHECK(url_allowed("https://docs.nvidia.com/cuda/index.html", hosts, why));
    CHECK(url_allowed("https://DOCS.nvidia.com/x", hosts, why));
    CHECK(url_allowed("https://sub.docs.nvidia.com/x", hosts, why));
    CHECK(url_allowed("http://127.0.0.1:8080/guide.html", hosts, why));
    CHECK_FALSE(url_allowed("https://evildocs.nvidia.com.example.org/", hosts, why));
    CHECK_THAT(why, Catch::Contains("not on the documentation allow-list"));
    CHECK_FALSE(url_allowed("https://notdocs.nvidia.com/", hosts, why));
    CHECK_FALSE(url_allowed("https://docs.nvidia.com@evil.example/", hosts, why));
    CHECK_FALSE(url_allowed("file:///etc/passwd", hosts, why));
    CHECK_THAT(why, Catch::Contains("only http and https"));
    CHECK_FALSE(url_allowed("not a url", hosts, why));
}

TEST_CASE("the guide pages follow the device's architecture", "[docs]") {
    const auto hopper = default_guide_pages("9.0");
    REQUIRE(hopper.size() == 4);
    CHECK_THAT(hopper[0], Catch::Contains("cuda-c-programming-guide"));
    CHECK_THAT(hopper[2], Catch::Contains("parallel-thread-execution"));
    CHECK_THAT(hopper[3], Catch::Contains("hopper-tuning-guide"));
    CHECK_THAT(default_guide_pages("8.9")[3], Catch::Contains("ada-tuning-guide"));
    CHECK_THAT(default_guide_pages("10.0")[3], Catch::Contains("blackwell-tuning-guide"));
    CHECK(default_guide_pages("").size() == 3);
}

TEST_CASE("a page is fetched once, cached on disk, and answered by url or query", "[docs]") {
    test::loopback_http_server server({{200, {{"Content-Type", "text/html"}}, k_guide}});
    test::scratch_folder cache;
    auto transport = make_curl_transport();
    docs_settings s;
    s.allowed_hosts = {"127.0.0.1"};
    s.guide_pages = {server.url("/guide.html")};
    s.cache_dir = cache.path();
    std::vector<docs_exchange> records;
    docs_library lib(s, *transport, [&](const docs_exchange& e) { records.push_back(e); });

    const std::string page = lib.answer(args(R"({"url": ")" + server.url("/guide.html") + "\"}"));
    CHECK_THAT(page, Catch::Contains("## Shared Memory"));
    CHECK_THAT(page, Catch::Contains("Sections of"));
    CHECK_THAT(page, Catch::Contains("Bank Conflicts #bank-conflicts"));
    const std::string one =
        lib.answer(args(R"({"url": ")" + server.url("/guide.html#warp-shuffle") + "\"}"));
    CHECK_THAT(one, Catch::StartsWith("## Warp Shuffle & Reductions"));
    CHECK(one.find("Bank conflicts serialise") == std::string::npos);
    const std::string hits = lib.answer(args(R"({"query": "avoid bank conflicts transpose"})"));
    CHECK_THAT(hits, Catch::StartsWith("## Bank Conflicts\n" + server.url("/guide.html") +
                                       "#bank-conflicts"));
    CHECK(server.requests().size() == 1);  // one fetch served all three
    CHECK(lib.fetches() == 1);
    REQUIRE(records.size() == 3);
    CHECK_THAT(records[0].response_json, Catch::Contains("fetch http://127.0.0.1"));

    // A new run reads the disk cache and fetches nothing.
    docs_library again(s, *transport);
    CHECK_THAT(again.answer(args(R"({"query": "warp shuffle"})")),
               Catch::StartsWith("## Warp Shuffle"));
    CHECK(again.fetches() == 0);
    CHECK(server.requests().size() == 1);
}

TEST_CASE("refused hosts, redirects off the list, HTTP errors and the budget are tool errors",
          "[docs]") {
    test::loopback_http_server server({
        {302, {{"Location", "https://evil.example/steal"}}, ""},
        {404, {}, "not here"},
        {301, {{"Location", "/moved.html"}}, ""},
        {200, {{"Content-Type", "text/plain"}}, "plain text page"},
    });
    auto transport = make_curl_transport();
    docs_settings s;
    s.allowed_hosts = {"127.0.0.1"};
    s.max_fetches = 4;
    docs_library lib(s, *transport);
    CHECK_THROWS_WITH(lib.answer(args(R"({"url": "http://localhost:1/x"})")),
                      Catch::Contains("localhost is not on the documentation allow-list"));
    CHECK(server.requests().empty());
    CHECK_THROWS_WITH(lib.answer(args(R"({"url": ")" + server.url("/a") + "\"}")),
                      Catch::Contains("a redirect to https://evil.example/steal is refused"));
    CHECK_THROWS_WITH(lib.answer(args(R"({"url": ")" + server.url("/b") + "\"}")),
                      Catch::Contains("HTTP 404"));
    CHECK_THAT(lib.answer(args(R"({"url": ")" + server.url("/c") + "\"}")),
               Catch::Contains("plain text page"));
    CHECK(server.requests().back().target == "/moved.html");
    CHECK_THROWS_WITH(lib.answer(args(R"({"url": ")" + server.url("/d") + "\"}")),
                      Catch::Contains("budget of 4 documentation fetches is spent"));
    CHECK_THROWS_WITH(lib.answer(args(R"({"url": "x", "query": "y"})")),
                      Catch::Contains("exactly one of url"));
    CHECK_THROWS_WITH(lib.answer(args(R"({"query": "a of"})")),
                      Catch::Contains("no words to search"));
}

TEST_CASE("an answer is capped without cutting a UTF-8 character", "[docs]") {
    std::string html = "<h1 id=\"t\">Title</h1><p>";
    for (int i = 0; i < 2000; ++i) html += "occupancy \xE2\x80\x94 ";  // an em dash
    html += "</p>";
    test::loopback_http_server server({{200, {{"Content-Type", "text/html"}}, html}});
    auto transport = make_curl_transport();
    docs_settings s;
    s.allowed_hosts = {"127.0.0.1"};
    s.max_result_chars = 1000;
    docs_library lib(s, *transport);
    const std::string out = lib.answer(args(R"({"url": ")" + server.url("/p") + "\"}"));
    CHECK(out.size() <= 1000 + 40);
    CHECK_THAT(out, Catch::Contains("more characters]"));
    const auto body = out.substr(0, out.find("\n[..."));
    // The last character is whole: its lead byte announces as many bytes as follow it.
    std::size_t lead = body.size() - 1;
    while ((static_cast<unsigned char>(body[lead]) & 0xC0) == 0x80) --lead;
    const unsigned char b = static_cast<unsigned char>(body[lead]);
    const std::size_t length = b < 0x80 ? 1 : b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2;
    CHECK(body.size() - lead == length);
}
