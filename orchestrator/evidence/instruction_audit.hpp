#pragma once
/// What a kernel's machine code does, read off its cubin with the toolkit's disassembler
/// (`cuobjdump -symbols -sass`): its tensor-core (MMA) instructions and their input types, FP64
/// arithmetic, atomics and reductions, reads of the clock registers, calls of device-side
/// malloc/free, and how many instructions it has. A manifest may require an MMA class
/// (`"requires": {"mma": "fp8"}`): a winner whose SASS lacks it computes in another precision
/// than the problem asks (`precision_path`). The parser is a pure function of the text; running
/// the tool is apart from it.

#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/runner_process.hpp"

namespace cuopt {

struct instruction_mix {
    int total = 0;  // instructions of the counted functions, NOPs left out
    /// Per MMA class: fp8 (fp8 and narrower floats), f16, bf16, tf32, int8, int4, f64, b1, and
    /// f16|bf16|tf32 for Blackwell's UTCHMMA, whose input type is in a run-time descriptor.
    std::map<std::string, int> mma;
    std::map<std::string, int> mma_opcodes;     // per full opcode: "HMMA.16816.F32.BF16"
    int fp64 = 0;                               // FP64 arithmetic and conversions (DMMA included)
    int atomics = 0;                            // ATOM, ATOMG, ATOMS, RED, REDG, ... (not REDUX)
    std::map<std::string, int> atomic_opcodes;  // per opcode without modifiers: "ATOMG"
    int clock_reads = 0;                        // reads of SR_CLOCK* and SR_GLOBALTIMER*
    std::set<std::string> clock_registers;      // "SR_CLOCKLO", "SR_GLOBALTIMERLO", ...
    std::vector<std::string> externs;           // functions called but not defined: malloc, free
    std::vector<std::string> functions;         // the functions counted: the entry, device code
    std::vector<std::string> other_kernels;     // kernels of the cubin never launched: not counted
};

/// The mix of `cuobjdump -symbols -sass` text (nvdisasm's instruction lines parse too). Only the
/// entry and the functions that are not kernels are counted: another kernel of the same source
/// is never launched, so an unused kernel full of fp8 MMAs cannot dress up the one that runs. An
/// `entry` the text does not name (or "") counts every function.
instruction_mix parse_sass(const std::string& text, const std::string& entry);

/// The values `requires.mma` takes: fp8, f16, bf16, tf32, int8, f64, any.
const std::vector<std::string>& requirable_mma_classes();

/// Whether the mix holds an MMA of class `required` ("any": of any class).
bool satisfies_mma(const instruction_mix& m, const std::string& required);

/// Whether the code calls device-side malloc or free.
bool calls_device_heap(const instruction_mix& m);

/// One line: "212 instructions; MMA: fp8 16 (QGMMA.64x8x32.F32.E4M3.E4M3 16); FP64: 0; ...".
std::string describe_mix(const instruction_mix& m);

struct instruction_audit {
    bool ran = false;
    std::string reason;  // why it did not run
    std::string tool;    // the disassembler that read the cubin
    std::string arch;    // the cubin's target, "sm_90"
    instruction_mix mix;
};

/// `configured` when given (it must exist), else cuobjdump on PATH, in $CUDAToolkit_ROOT/bin,
/// $CUDA_HOME/bin, the toolkit this program was built with, /usr/local/cuda/bin; empty when none.
std::filesystem::path find_disassembler(const std::string& configured);

/// Runs `tool -symbols -sass cubin` (a child process, scrubbed environment, `timeout`) and parses
/// it; a tool that fails or prints no instruction gives ran = false with the reason.
instruction_audit audit_cubin(process_runner& runner, const std::filesystem::path& tool,
                              const std::filesystem::path& cubin, const std::string& entry,
                              std::chrono::milliseconds timeout);

}  // namespace cuopt
