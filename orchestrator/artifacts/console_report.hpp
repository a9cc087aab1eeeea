#pragma once
/// What a run prints on stderr while it works: one progress line per attempt and the
/// closing table of per-case latencies. Reads results, never decides anything.

#include <map>
#include <optional>
#include <string>

#include "orchestrator/evidence/winner_evidence.hpp"
#include "orchestrator/search/search_loop.hpp"

namespace cuopt {

/// "0.0123 ms", or "-" when there is no figure.
std::string format_ms(std::optional<double> ms);

/// "[iter 3/7 #1   12.4 s] autotune BLOCK=64  valid  geomean 0.0123 ms  1.20x  NEW BEST": the
/// iteration of how many, the attempt within it, the time since the run began (with several
/// GPUs, "  on GPU 1" after the speedup: the one that measured it); a rejected
/// attempt's reason follows on indented lines, wrapped at words, then a warning line per case
/// timed while the GPU throttled ("  warning: case 'x' timed while throttled (sw_power_cap)")
/// or whose two clocks (CUPTI, CUDA events) disagree.
std::string progress_line(const attempt_result& r, const search_outcome& o, int max_iterations,
                          double elapsed_s);

/// `text` in lines of at most `width` characters (longer words stand alone), broken at spaces
/// and at the text's own line breaks, later lines starting with `indent`; cut at a word with
/// " ..." beyond `max_chars`.
std::string wrap_text(const std::string& text, std::size_t width, const std::string& indent,
                      std::size_t max_chars);

/// The closing verdict, opening with summary.json's verdict word (and FAKE RUN for a simulated
/// harness): "go: best: BLOCK_X=32 BLOCK_Y=16 (iteration 3, attempt 2), 1.20x geomean over the
/// initial kernel (re-measured ...); 57 attempts, 55 valid, 2 rejected (compile_error 1,
/// timeout 1); run-007 in 24 s", then one "  why: ..." line per reason it is not a go.
std::string verdict_line(const search_outcome& o, const evidence_report& ev,
                         const std::string& run_name, double wall_s, const std::string& verdict,
                         const std::vector<std::string>& reasons = {}, bool simulated = false);

/// "timer: …" and "gpu: …" lines over these attempts' responses (each marked "(simulated)" for
/// a fake run), each line starting with `prefix`; "" where no response said anything.
std::string timing_condition_lines(const std::vector<attempt_result>& attempts, bool simulated,
                                   const std::string& prefix = "");

/// "gpu busy: 61% of the search's 14.2 s on GPU 0 (CUPTI: 8.7 s in 1,234 kernels)", from
/// run.json's gpu_busy: the search's busy time over its wall time on every GPU (with several,
/// "on GPUs 0, 1 (GPU 0 61%, GPU 1 35%; CUPTI: ...)"), with the harness runs that gave no
/// figure said (the figure is then a floor); "gpu busy: simulated
/// (the fake harness measured nothing)" for a fake run; "gpu busy: not measured (...)" where no
/// run gave a figure.
std::string gpu_busy_line(const gpu_busy_record& g);

/// Per case: the initial kernel's median, the best's and the speedup.
/// With the vendor library's medians (`devices`: each GPU of --devices, the first first), more
/// columns: the vendor's time and vendor / best (above 1: the best beats the library). One
/// vendor column where every GPU's figures agree within 2% (the first GPU's); one per GPU where
/// they differ, "vs vendor" then against the GPU that measured the best, said on a line below.
/// Then the clock the search timed with ("timer: cupti (CUDA events beside: median overhead
/// 1.3 us)") and the GPU's clocks, temperature, power and throttled cases over the search
/// ("gpu: SM 1980 MHz, ..."). A simulated harness's timer and GPU lines say "(simulated)".
/// An imported problem's baseline is PyTorch eager (the column says "eager"); the user's own
/// kernel beside it is a column ("yours"), and `pytorch_compile` two more: torch.compile's
/// median and torch.compile / best.
std::string closing_table(const search_outcome& o, const manifest& m,
                          const std::vector<device_reference>& devices = {}, bool simulated = false,
                          const attempt_result* pytorch_compile = nullptr);

}  // namespace cuopt
