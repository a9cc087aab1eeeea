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
    const std::vector<std::string> hosts = {"docs.nvidia.com", "http://127.0.0.1:8080"};
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

TEST_CASE(
    "a bare host is read over https on port 443 only, an entry with a scheme and port "
    "allows exactly that origin",
    "[docs]") {
    const std::vector<std::string> hosts = {"docs.nvidia.com", "http://127.0.0.1:8080",
                                            "https://mirror.example:8443/"};
    std::string why;
    CHECK(url_allowed("https://docs.nvidia.com:443/cuda/", hosts, why));
    CHECK_FALSE(url_allowed("http://docs.nvidia.com/cuda/", hosts, why));
    CHECK(why ==
          "docs.nvidia.com is read over https on port 443 only, not http on port 80 "
          "(--docs-hosts http://docs.nvidia.com:80 would allow it)");
    CHECK_FALSE(url_allowed("https://docs.nvidia.com:8443/cuda/", hosts, why));
    CHECK_THAT(why, Catch::Contains("not https on port 8443"));
    CHECK_FALSE(url_allowed("https://sub.docs.nvidia.com:444/", hosts, why));
    CHECK(url_allowed("https://mirror.example:8443/guide", hosts, why));
    CHECK_FALSE(url_allowed("https://mirror.example/guide", hosts, why));
    CHECK_THAT(why, Catch::Contains("read over https on port 8443 only, not https on port 443"));
    CHECK_FALSE(url_allowed("https://sub.mirror.example:8443/", hosts, why));  // exactly that host
    CHECK_THAT(why, Catch::Contains("not on the documentation allow-list"));
    CHECK_FALSE(url_allowed("http://127.0.0.1:8081/", hosts, why));
    CHECK_THAT(why, Catch::Contains("read over http on port 8080 only, not http on port 8081"));
    CHECK_FALSE(url_allowed("https://127.0.0.1:8080/", hosts, why));
    CHECK_FALSE(url_allowed("http://127.0.0.1/", hosts, why));
    // The same host twice: either origin.
    CHECK(url_allowed("http://127.0.0.1:9000/", {"http://127.0.0.1:8080", "http://127.0.0.1:9000"},
                      why));
    CHECK(docs_host_problem("docs.nvidia.com").empty());
    CHECK(docs_host_problem("http://127.0.0.1:8080").empty());
    for (const char* bad : {"ftp://docs.nvidia.com", "http://user@127.0.0.1:8080",
                            "http://127.0.0.1:8080/path", "127.0.0.1:8080", "docs.nvidia.com/x"}) {
        INFO(bad);
        CHECK_THAT(docs_host_problem(bad), Catch::Contains("neither a host nor http(s)://host"));
    }
}

TEST_CASE(
    "a loopback page is read only when --docs-hosts names its scheme, host and port, and a "
    "redirect to another port is refused",
    "[docs]") {
    test::loopback_http_server other({{200, {{"Content-Type", "text/plain"}}, "other port"}});
    test::loopback_http_server server({
        {200, {{"Content-Type", "text/plain"}}, "loopback page"},
        {302, {{"Location", other.url("/elsewhere")}}, ""},
    });
    const std::string origin = server.url("");
    auto transport = make_curl_transport();
    docs_settings s;
    s.allowed_hosts = {"127.0.0.1"};  // a bare host: https on 443 only
    docs_library bare(s, *transport);
    CHECK_THROWS_WITH(bare.answer(args(R"({"url": ")" + server.url("/p") + "\"}")),
                      server.url("/p") +
                          " is refused: 127.0.0.1 is read over https on port 443 "
                          "only, not http on port " +
                          origin.substr(origin.rfind(':') + 1) + " (--docs-hosts " + origin +
                          " would allow it)");
    CHECK(server.requests().empty());

    s.allowed_hosts = {origin};
    docs_library named(s, *transport);
    CHECK_THAT(named.answer(args(R"({"url": ")" + server.url("/p") + "\"}")),
               Catch::Contains("loopback page"));
    CHECK_THROWS_WITH(named.answer(args(R"({"url": ")" + server.url("/r") + "\"}")),
                      Catch::StartsWith("a redirect to " + other.url("/elsewhere") +
                                        " is refused: 127.0.0.1 is read over http on port " +
                                        origin.substr(origin.rfind(':') + 1) + " only"));
    CHECK(server.requests().size() == 2);
    CHECK(other.requests().empty());
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
    s.allowed_hosts = {server.url("")};
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
    s.allowed_hosts = {server.url("")};
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
    s.allowed_hosts = {server.url("")};
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
