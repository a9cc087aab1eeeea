#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
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

TEST_CASE(
    "autotune tries the best's one-step neighbours first, then values further along a tunable "
    "(gemm-fp8: from MMA 1 to MMA 3 and 4)") {
    const manifest m =
        read_manifest(std::string(CUOPT_SOURCE_DIR) + "/examples/gemm-fp8/input_cases.json");
    candidate initial;
    initial.entry = "gemm_fp8";
    initial.tunables = m.default_tunables();
    std::vector<attempt_result> history(1);
    history[0].iteration = 1;
    history[0].cand = initial;
    history[0].cand.tunables["MMA"] = 1;
    const auto best = history[0].cand.tunables;
    const search_state s{m, initial, history, std::size_t{0}, 2};
    const auto tuner = make_autotune_proposer(m, 1, 8, 1024);
    // How many tunables differ from the best's, and by how many places in their lists.
    auto distance = [&](const candidate& c) {
        int changed = 0, places = 0;
        for (const auto& entry : m.tunables) {
            const std::string& name = entry.first;
            const std::vector<std::int64_t>& values = entry.second;  // a lambda may capture it
            const auto at = [&](std::int64_t v) {
                return std::find(values.begin(), values.end(), v) - values.begin();
            };
            if (c.tunables.at(name) == best.at(name)) continue;
            ++changed;
            places = static_cast<int>(std::abs(at(c.tunables.at(name)) - at(best.at(name))));
        }
        return std::make_pair(changed, places);
    };
    const std::vector<candidate> first = tuner->propose(s);
    REQUIRE(first.size() == 8);
    int near = 0;
    for (const candidate& c : first)
        if (distance(c).first <= 1 && distance(c).second <= 1) ++near;
    // BLOCK_X, BLOCK_Y, ROWS_PER_THREAD, TILE_K one up; MMA 2; a flag (MMA 0 is the initial).
    CHECK(near >= 6);
    std::set<std::int64_t> mma_reached;
    for (int round = 0; round < 2; ++round)
        for (const candidate& c : tuner->propose(s))
            if (distance(c).first == 1 && c.tunables.at("MMA") != 1)
                mma_reached.insert(c.tunables.at("MMA"));
    CHECK(mma_reached.count(3) == 1);
    CHECK(mma_reached.count(4) == 1);
}

TEST_CASE(
    "autotune around a best point exhausts the space without proposing anything twice, and its "
    "farther moves leave the random spread half of a batch") {
    pilot p;
    std::vector<attempt_result> history(1);
    history[0].iteration = 1;
    history[0].cand = p.initial;
    history[0].cand.tunables["BLOCK_X"] = p.m.tunables.at("BLOCK_X").at(2);
    const search_state s{p.m, p.initial, history, std::size_t{0}, 2};
    const auto tuner = make_autotune_proposer(p.m, 7, 8, 1024);
    std::set<std::string> labels;
    std::size_t total = 0;
    for (std::vector<candidate> batch; !(batch = tuner->propose(s)).empty();) {
        CHECK(batch.size() <= 8);
        total += batch.size();
        for (const candidate& c : batch) CHECK(labels.insert(c.label).second);
    }
    CHECK(total == 900 - 1 - 36);  // every runnable point but the initial, the best included

    // Batch 1: 8 one-step moves. Batch 2: the one-step moves left, then farther ones up to half
    // of the places left; the rest random, so not every pick lies on a line through the best.
    const auto fresh_tuner = make_autotune_proposer(p.m, 7, 8, 1024);
    fresh_tuner->propose(s);
    int off_line = 0;
    for (const candidate& c : fresh_tuner->propose(s)) {
        int changed = 0;
        for (const auto& [name, value] : c.tunables)
            changed += value != history[0].cand.tunables.at(name);
        off_line += changed > 1;
    }
    CHECK(off_line >= 1);
}

TEST_CASE("autotune restored from a recorded batch never proposes that batch's points again") {
    pilot p;
    const search_state s{p.m, p.initial, p.history, std::nullopt, 1};
    // What another build proposed and measured: a batch this seed would not pick.
    const std::vector<candidate> other = make_autotune_proposer(p.m, 99, 8, 1024)->propose(s);
    const auto tuner = make_autotune_proposer(p.m, 1, 8, 1024);
    tuner->restore(s, other);
    std::set<std::string> recorded;
    for (const candidate& c : other) recorded.insert(c.label);
    for (std::vector<candidate> batch; !(batch = tuner->propose(s)).empty();)
        for (const candidate& c : batch) CHECK(recorded.count(c.label) == 0);
}
