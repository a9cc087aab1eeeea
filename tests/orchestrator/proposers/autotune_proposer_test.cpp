#include <catch2/catch.hpp>
#include <set>

#include "orchestrator/proposers/proposer.hpp"

using namespace cuopt;

namespace {

struct pilot {
    manifest m = read_manifest(std::string(CUOPT_SOURCE_DIR) + "/examples/matmul/input_cases.json");
    candidate initial;
    std::vector<attempt_result> history;
    pilot() {
        initial.entry = "matmul_f32";
        initial.tunables = m.default_tunables();
    }
};

}  // namespace

TEST_CASE("autotune skips configurations whose block the device cannot run") {
    pilot p;
    const auto tuner = make_autotune_proposer(p.m, 1, 1000, 1024);
    const search_state s{p.m, p.initial, p.history, std::nullopt, 1};
    const std::vector<candidate> batch = tuner->propose(s);
    // 5 x 5 block shapes x 4 TILE_K x 3 ROWS_PER_THREAD x 3 flag variants, minus the initial
    // configuration, minus BLOCK 128x16 (2048 threads) x 4 x 3 x 3.
    CHECK(batch.size() == 900 - 1 - 36);
    for (const candidate& c : batch)
        CHECK(c.tunables.at("BLOCK_X") * c.tunables.at("BLOCK_Y") <= 1024);
    CHECK(tuner->propose(s).empty());  // exhausted: nothing is ever proposed twice
}

TEST_CASE("autotune batches are the same for the same seed and differ for another") {
    pilot p;
    const search_state s{p.m, p.initial, p.history, std::nullopt, 1};
    auto labels = [&](std::uint64_t seed) {
        std::vector<std::string> out;
        for (const candidate& c : make_autotune_proposer(p.m, seed, 8, 1024)->propose(s))
            out.push_back(c.label);
        return out;
    };
    CHECK(labels(3) == labels(3));
    CHECK(labels(3) != labels(4));
    CHECK(labels(3).size() == 8);
}
