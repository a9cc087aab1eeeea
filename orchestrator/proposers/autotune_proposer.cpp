#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "orchestrator/proposers/proposer.hpp"

namespace cuopt {

namespace {

// NVRTC flag variants tried on top of every tunable configuration.
const std::vector<std::vector<std::string>> k_flag_variants = {
    {}, {"--extra-device-vectorization"}, {"--use_fast_math"}};

class autotune_proposer final : public proposer {
  public:
    autotune_proposer(const manifest& m, std::uint64_t seed, int batch, int max_threads)
        : m_manifest(m), m_batch(std::max(1, batch)), m_max_threads(max_threads), m_rng(seed) {
        for (const auto& [name, values] : m.tunables) {
            m_names.push_back(name);
            m_values.push_back(values);
        }
        m_dims = m_values;
        m_dims.push_back({});
        for (std::size_t i = 0; i < k_flag_variants.size(); ++i)
            m_dims.back().push_back(static_cast<std::int64_t>(i));
        for (const auto& d : m_dims)
            m_widest = std::max(m_widest, static_cast<long long>(d.size()) - 1);
    }

    std::vector<candidate> propose(const search_state& s) override {
        // The initial kernel is the default configuration: never propose it again.
        if (m_seen.empty()) m_seen.insert(std::vector<std::size_t>(m_dims.size(), 0));
        std::vector<std::vector<std::size_t>> picks;
        // The best's neighbours one value away in one tunable first; once those are used up,
        // values further along (a categorical tunable's other choices, MMA paths) take half of
        // what is left of the batch, rounded up: with two places left or more, the spread sample
        // below has a share.
        const auto best = best_point(s);
        if (best) {
            const std::size_t batch = static_cast<std::size_t>(m_batch);
            for (const auto& p : moves(*best, 1, 1))
                if (picks.size() < batch && fresh(p, picks)) picks.push_back(p);
            const std::size_t far_cap = picks.size() + (batch - picks.size() + 1) / 2;
            for (const auto& p : moves(*best, 2, m_widest))
                if (picks.size() < far_cap && fresh(p, picks)) picks.push_back(p);
        }
        // A spread sample (and fill-up when the neighbourhood is used up): random unseen points.
        const std::size_t space = space_size();
        for (int tries = 0; picks.size() < static_cast<std::size_t>(m_batch) &&
                            m_seen.size() + picks.size() < space && tries < 10000;
             ++tries) {
            std::vector<std::size_t> p(m_dims.size());
            for (std::size_t d = 0; d < m_dims.size(); ++d)
                p[d] = std::uniform_int_distribution<std::size_t>(0, m_dims[d].size() - 1)(m_rng);
            if (fresh(p, picks)) picks.push_back(p);
        }
        if (picks.size() < static_cast<std::size_t>(m_batch) &&
            m_seen.size() + picks.size() < space)
            enumerate_rest(picks);
        std::vector<candidate> out;
        for (const auto& p : picks) {
            m_seen.insert(p);
            out.push_back(make_candidate(s, p));
        }
        return out;
    }

    // Proposing is deterministic for a history: proposing again for the same state moves the
    // generator and the seen set exactly as the first time did.
    // A batch recorded by another build may hold points this one would not pick: what was
    // measured is seen all the same, and never proposed again.
    void restore(const search_state& s, const std::vector<candidate>& batch) override {
        propose(s);
        for (const candidate& c : batch)
            if (const auto p = point_of(s, c, true)) m_seen.insert(*p);
    }

  private:
    std::size_t space_size() const {
        std::size_t n = 1;
        for (const auto& d : m_dims) n *= d.size();
        return n;
    }
    bool fresh(const std::vector<std::size_t>& p,
               const std::vector<std::vector<std::size_t>>& picks) {
        if (m_seen.count(p) || std::find(picks.begin(), picks.end(), p) != picks.end())
            return false;
        if (runnable(p)) return true;
        m_seen.insert(p);  // never proposed, never asked about again
        return false;
    }
    // Every case's launch evaluates and fits the device's block limit under these tunables.
    bool runnable(const std::vector<std::size_t>& p) const {
        std::map<std::string, std::int64_t> tunables;
        for (std::size_t d = 0; d < m_names.size(); ++d) tunables[m_names[d]] = m_values[d][p[d]];
        candidate probe;
        for (const manifest_case& mc : m_manifest.cases) {
            try {
                const launch_config l = evaluate_launch(launch_for(probe, m_manifest, mc),
                                                        m_manifest.variables(mc, tunables));
                const unsigned long long threads = 1ull * l.block[0] * l.block[1] * l.block[2];
                if (m_max_threads > 0 && threads > static_cast<unsigned long long>(m_max_threads))
                    return false;
            } catch (const expression_error&) {
                return false;
            }
        }
        return true;
    }
    void enumerate_rest(std::vector<std::vector<std::size_t>>& picks) {
        std::vector<std::size_t> p(m_dims.size(), 0);
        for (;;) {
            if (picks.size() >= static_cast<std::size_t>(m_batch)) return;
            if (fresh(p, picks)) picks.push_back(p);
            std::size_t d = 0;
            while (d < p.size() && ++p[d] == m_dims[d].size()) p[d++] = 0;
            if (d == p.size()) return;
        }
    }
    // The points that differ from p in one dimension by `from` to `to` values, nearest first.
    std::vector<std::vector<std::size_t>> moves(const std::vector<std::size_t>& p, long long from,
                                                long long to) const {
        std::vector<std::vector<std::size_t>> out;
        for (long long distance = from; distance <= to; ++distance)
            for (std::size_t d = 0; d < p.size(); ++d)
                for (long long step : {-distance, distance}) {
                    const long long v = static_cast<long long>(p[d]) + step;
                    if (v < 0 || v >= static_cast<long long>(m_dims[d].size())) continue;
                    auto q = p;
                    q[d] = static_cast<std::size_t>(v);
                    out.push_back(q);
                }
        return out;
    }
    // The configuration of the best attempt, read back from its candidate.
    std::optional<std::vector<std::size_t>> best_point(const search_state& s) const {
        if (!s.best) return std::nullopt;
        return point_of(s, s.history[*s.best].cand, false);
    }
    // The point of a candidate's tunables and flags. Loose: a value off the space counts as the
    // first; exact: nullopt unless every tunable and the flags are the space's own.
    std::optional<std::vector<std::size_t>> point_of(const search_state& s, const candidate& c,
                                                     bool exact) const {
        std::vector<std::size_t> p(m_dims.size(), 0);
        for (std::size_t d = 0; d < m_names.size(); ++d) {
            const auto it = c.tunables.find(m_names[d]);
            const auto pos = it == c.tunables.end()
                                 ? m_values[d].end()
                                 : std::find(m_values[d].begin(), m_values[d].end(), it->second);
            if (pos != m_values[d].end())
                p[d] = static_cast<std::size_t>(pos - m_values[d].begin());
            else if (exact)
                return std::nullopt;
        }
        bool flags = false;
        for (std::size_t f = 0; f < k_flag_variants.size(); ++f)
            if (c.compile_options == with_flags(s.initial, f)) p.back() = f, flags = true;
        if (exact && !flags) return std::nullopt;
        return p;
    }
    static std::vector<std::string> with_flags(const candidate& initial, std::size_t variant) {
        std::vector<std::string> opts = initial.compile_options;
        opts.insert(opts.end(), k_flag_variants[variant].begin(), k_flag_variants[variant].end());
        return opts;
    }
    candidate make_candidate(const search_state& s, const std::vector<std::size_t>& p) const {
        candidate c = s.initial;
        c.proposer = proposer_kind::autotune;
        c.parent_iteration =
            s.best ? std::optional<int>(s.history[*s.best].iteration) : std::nullopt;
        c.tunables.clear();
        std::string label;
        for (std::size_t d = 0; d < m_names.size(); ++d) {
            c.tunables[m_names[d]] = m_values[d][p[d]];
            label +=
                (label.empty() ? "" : " ") + m_names[d] + "=" + std::to_string(m_values[d][p[d]]);
        }
        c.compile_options = with_flags(s.initial, p.back());
        for (const auto& f : k_flag_variants[p.back()]) label += (label.empty() ? "" : " ") + f;
        c.label = label.empty() ? "defaults" : label;
        c.rationale = "autotune: " + c.label;
        return c;
    }

    const manifest& m_manifest;
    int m_batch;
    int m_max_threads;
    std::mt19937_64 m_rng;
    std::vector<std::string> m_names;
    std::vector<std::vector<std::int64_t>> m_values;
    std::vector<std::vector<std::int64_t>> m_dims;  // tunables, then the flag variant index
    long long m_widest = 1;                         // the most values a dimension can move
    std::set<std::vector<std::size_t>> m_seen;
};

}  // namespace

std::unique_ptr<proposer> make_autotune_proposer(const manifest& m, std::uint64_t seed,
                                                 int batch_size, int max_threads_per_block) {
    return std::make_unique<autotune_proposer>(m, seed, batch_size, max_threads_per_block);
}

}  // namespace cuopt
