#pragma once
/// The gates of winner_evidence, by what they do to a candidate: correctness_gates run it
/// untimed (instructions, holdout, determinism, sanitizer); timing_gates time it again (fresh
/// seeds, repetition, significance, amortised work) and keep every timed run; fresh_rounds
/// draws what makes a timed round fresh. gather_evidence's gate_runner drives them in order.

#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "orchestrator/evidence/winner_evidence.hpp"

namespace cuopt {

/// `v` with `precision` significant digits, as the gates' details give figures.
std::string fmt(double v, int precision = 4);

/// Fails the check with `verdict` at `gate`; false, for the gate to return.
bool disqualify(candidate_check& c, const std::string& gate, const std::string& verdict,
                const std::string& reason);

/// Settings for a round of fresh inputs: the run's key under a round drawn now (getrandom, not
/// the --seed's generator: nobody can know it beforehand) and a launch offset drawn past the
/// search's; without a key (a run from before keys), the fixed offset of old.
evaluator_settings fresh_round(evaluator_settings es);

/// The random draws of the timed rounds (fresh seeds, significance, rerank): launch counts and
/// the checked launch, from the --seed's generator (or std::random_device).
class fresh_rounds {
  public:
    fresh_rounds(const evidence_inputs& in, std::uint64_t seed)
        : m_in(in),
          m_rng(seed ? seed
                     : (std::uint64_t{std::random_device{}()} << 32) ^ std::random_device{}()) {}

    int draw(int low, int high) { return std::uniform_int_distribution<int>(low, high)(m_rng); }
    /// The checked launch among `positions` timed ones: with keyed inputs the key's secret for
    /// the round (the request then says only that it is keyed: a kernel's compile can read its
    /// request), else drawn here.
    int checked_position(evaluator_settings& es, int positions);
    /// The oracle and evaluator of one significance or rerank round: a random warm-up count and
    /// checked launch where an oracle can be built for them, else the search's.
    std::pair<attempt_evaluator, oracle_files> round_setup(const std::filesystem::path& dir,
                                                           int* warmup, std::string* note);

  private:
    const evidence_inputs& m_in;
    std::mt19937_64 m_rng;
};

/// The gates that run a candidate untimed; they keep nothing between candidates.
class correctness_gates {
  public:
    correctness_gates(const search_outcome& o, const evidence_inputs& in,
                      const evidence_settings& s)
        : m_outcome(o), m_in(in), m_s(s) {}

    bool instructions(const attempt_result& r, const std::filesystem::path& dir,
                      candidate_check& c);
    bool holdout(const attempt_result& r, const std::filesystem::path& dir, candidate_check& c);
    bool determinism(const attempt_result& r, const std::filesystem::path& dir, candidate_check& c);
    bool sanitizer(const attempt_result& r, const std::filesystem::path& dir, candidate_check& c);

  private:
    instruction_audit audit(const attempt_result& r, const std::filesystem::path& dir) const;
    attempt_evaluator correctness_evaluator() const;
    manifest sanitized_cases() const;

    const search_outcome& m_outcome;
    const evidence_inputs& m_in;
    const evidence_settings& m_s;
};

/// The gates that time a candidate again, with every timed run they made.
class timing_gates {
  public:
    timing_gates(const search_outcome& o, const evidence_inputs& in, const evidence_settings& s,
                 fresh_rounds& rounds)
        : m_outcome(o), m_in(in), m_s(s), m_rounds(rounds) {}

    bool fresh_seeds(const attempt_result& r, const std::filesystem::path& dir, candidate_check& c);
    bool repetition(const attempt_result& r, const std::filesystem::path& dir, candidate_check& c);
    bool significance(const attempt_result& r, const std::filesystem::path& dir,
                      candidate_check& c);
    bool amortised_work(const attempt_result& r, const std::filesystem::path& dir,
                        candidate_check& c);
    /// A new candidate: none of the timed runs so far is its own.
    void begin_candidate() { m_own.clear(); }
    /// Every timed harness run of the gates so far (fresh seeds, repetition, significance).
    const std::vector<attempt_result>& timed() const { return m_timed; }

  private:
    /// A timed run of the candidate itself on varied inputs: the amortised_work gate's input.
    void keep_own(const attempt_result& run) {
        m_timed.push_back(run);
        m_own.push_back(m_timed.size() - 1);
    }
    void flag_throttling(significance_report& rep, std::size_t first, candidate_check& c);
    void say(const std::string& line) const {
        if (m_in.progress) m_in.progress(line);
    }

    const search_outcome& m_outcome;
    const evidence_inputs& m_in;
    const evidence_settings& m_s;
    fresh_rounds& m_rounds;
    std::vector<attempt_result> m_timed;  // every timed run of the gates, in order
    std::vector<std::size_t> m_own;       // the checked candidate's varied runs in m_timed
};

}  // namespace cuopt
