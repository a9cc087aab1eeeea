#include "request_fixture.hpp"

#include <catch2/catch.hpp>

namespace cuopt::test {

std::string replaced(std::string text, const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
}

request request_folder::read(const std::string& json) const {
    dir.write("req.json", json);
    return read_request(dir / "req.json");
}

std::string request_folder::error_of(const std::string& json) const {
    return refusal([&] { read(json); });
}

}  // namespace cuopt::test
