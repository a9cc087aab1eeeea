// The search loop with a proposer that can repair: a compile error is handed back to the
// proposer within the same iteration, the repair is recorded, and the bound holds; the fake
// harness served in memory (support/in_memory_harness), no process started.
#include "orchestrator/search/search_loop.hpp"

#include <catch2/catch.hpp>

#include "in_memory_harness.hpp"
#include "test_support.hpp"

using namespace cuopt;

namespace {

class repairing_proposer final : public proposer {
  public:
    explicit repairing_proposer(int repairs_that_still_fail)
        : m_still_failing(repairs_that_still_fail) {}
    std::vector<candidate> propose(const search_state& s) override {
        if (s.iteration > 1) return {};
        candidate c = s.initial;
        c.proposer = proposer_kind::files;
        c.label = "broken";
        c.source += "\n// FAKE_COMPILE_ERROR\n";
        return {c};
    }
    std::optional<candidate> repair(const search_state& s, const attempt_result& failed) override {
        ++calls;
        candidate c = failed.cand;
        c.label = "repair-" + std::to_string(calls);
        if (calls > m_still_failing) c.source = s.initial.source + "\n// FAKE_MS=0.5\n";
        return c;
    }
    int calls = 0;

  private:
    int m_still_failing;
};

struct loop_fixture {
    test::scratch_folder dir;
    manifest m = read_manifest(std::string(CUOPT_SOURCE_DIR) + "/examples/matmul/input_cases.json");
    std::unique_ptr<process_runner> runner =
        std::make_unique<test::in_memory_harness>();  // no process
    candidate initial;
    oracle_files oracle;
    evaluator_settings settings() const {
        evaluator_settings s;
        s.harness = CUOPT_FAKE_HARNESS_BINARY;
        s.timing.fresh_inputs = true;
        return s;
    }
    loop_fixture() {
        initial.source =
            test::read_text(std::string(CUOPT_SOURCE_DIR) + "/examples/matmul/initial.cu");
        initial.entry = "matmul_f32";
        initial.proposer = proposer_kind::initial;
        initial.label = "initial";
        const attempt_evaluator ref(m, settings(), *runner);
        const attempt_result r = ref.evaluate(initial, dir / "reference", nullptr);
        REQUIRE(r.verdict == verdict::valid);
        for (const auto& ce : r.cases)
            for (const auto& oc : ce.outputs) oracle[{ce.name, oc.arg}] = oc.file;
    }
    search_outcome run(proposer& p, int max_repairs) {
        const attempt_evaluator ev(m, settings(), *runner);
        search_settings ss;
        ss.max_iterations = 3;
        ss.max_repairs = max_repairs;
        int hooks = 0;
        search_loop loop(
            m, ev, p, ss,
            [this](int it, int at) {
                return dir / ("a" + std::to_string(it) + "-" + std::to_string(at));
            },
            [&hooks](const attempt_result&, const search_outcome&) { ++hooks; }, nullptr);
        search_outcome o = loop.run(initial, oracle);
        CHECK(hooks ==
              static_cast<int>(o.history.size()));  // history could be written after every attempt
        return o;
    }
};

}  // namespace

TEST_CASE("a compile error is repaired within its iteration and the repair is recorded") {
    loop_fixture f;
    repairing_proposer p(1);  // the first repair still fails, the second compiles
    const search_outcome o = f.run(p, 2);
    REQUIRE(o.history.size() == 4);
    CHECK(o.history[1].verdict == verdict::compile_error);
    CHECK(o.history[2].verdict == verdict::compile_error);
    CHECK(o.history[2].repair_of == 0);
    CHECK(o.history[3].verdict == verdict::valid);
    CHECK(o.history[3].repair_of == 1);
    CHECK(o.history[3].iteration == 1);
    CHECK(o.history[3].became_best);
    CHECK(o.stop == stop_reason::proposer_exhausted);
}

TEST_CASE("repairs stop at the per-iteration bound") {
    loop_fixture f;
    repairing_proposer p(10);
    const search_outcome o = f.run(p, 2);
    CHECK(p.calls == 2);
    REQUIRE(o.history.size() == 4);
    CHECK(o.history.back().verdict == verdict::compile_error);
    CHECK_FALSE(o.best != o.initial);
}
