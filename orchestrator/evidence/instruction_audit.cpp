#include "orchestrator/evidence/instruction_audit.hpp"

#include <algorithm>
#include <cstdlib>
#include <regex>
#include <sstream>

namespace cuopt {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::istringstream in(s);
    std::string part;
    while (std::getline(in, part, sep)) out.push_back(part);
    return out;
}

bool has_token(const std::vector<std::string>& tokens, const char* t) {
    return std::find(tokens.begin() + 1, tokens.end(), t) != tokens.end();
}

// The MMA class of an opcode split at its dots ("" for none). The spellings are those of
// cuobjdump 13.0 on nvcc 13.0 cubins (tests/fixtures/sass/): HMMA.16816.F32 (f16 inputs),
// HMMA.16816.F32.BF16, HMMA.1684.F32.TF32, IMMA.16816.S8.S8, IMMA.8832.U4.U4, DMMA.884,
// QMMA.16832.F32.E4M3.E4M3 (sm_89, sm_120), HGMMA.64x8x16.F32[.BF16|.TF32],
// IGMMA.64x8x32.S8.S8, QGMMA.64x8x32.F32.E4M3.E5M2 (sm_90a), UTCHMMA, UTCIMMA, UTCQMMA (sm_100a).
std::string mma_class(const std::vector<std::string>& t) {
    const std::string& op = t[0];
    if (op == "HMMA" || op == "HGMMA")
        return has_token(t, "BF16") ? "bf16" : has_token(t, "TF32") ? "tf32" : "f16";
    if (op == "IMMA" || op == "IGMMA")
        return has_token(t, "U4") || has_token(t, "S4") ? "int4" : "int8";
    if (op == "DMMA") return "f64";
    if (op == "QMMA" || op == "QGMMA" || op == "OMMA" || op == "UTCQMMA" || op == "UTCOMMA")
        return "fp8";
    if (op == "BMMA" || op == "BGMMA" || op == "UTCBMMA") return "b1";
    if (op == "UTCHMMA") return "f16|bf16|tf32";  // the type is in the instruction descriptor
    if (op == "UTCIMMA") return "int8";
    return "";
}

bool is_fp64(const std::vector<std::string>& t) {
    static const std::set<std::string> ops = {"DADD", "DMUL",  "DFMA", "DSETP",
                                              "DSET", "DMNMX", "DMMA"};
    if (ops.count(t[0])) return true;
    static const std::set<std::string> conversions = {"F2F", "F2I", "I2F", "MUFU", "FRND"};
    return conversions.count(t[0]) &&
           (has_token(t, "F64") || has_token(t, "RCP64H") || has_token(t, "RSQ64H"));
}

bool is_atomic(const std::string& op) {
    static const std::set<std::string> ops = {"ATOM", "ATOMG", "ATOMS", "RED", "REDG", "REDAS"};
    return ops.count(op) > 0;  // REDUX / CREDUX are warp reductions, not memory atomics
}

// The symbol table's functions (cuobjdump -symbols): kernels (STO_ENTRY) and undefined ones.
void read_symbol(const std::string& line, std::set<std::string>& kernels,
                 std::vector<std::string>& externs) {
    std::istringstream in(line);
    std::vector<std::string> w;
    for (std::string s; in >> s;) w.push_back(s);
    if (w.size() < 4 || w[0] != "STT_FUNC") return;
    if (w[2] == "STO_ENTRY") kernels.insert(w.back());
    if (w.size() >= 5 && w[w.size() - 2] == "U" &&
        std::find(externs.begin(), externs.end(), w.back()) == externs.end())
        externs.push_back(w.back());
}

// The function a line opens ("Function : NAME" of cuobjdump, ".text.NAME:" of nvdisasm).
bool function_of(const std::string& line, std::string* name) {
    static const std::regex function(R"(^\s*Function\s*:\s*(\S+)\s*$)");
    static const std::regex text(R"(^\s*\.text\.(\S+):\s*$)");
    std::smatch m;
    if (!std::regex_match(line, m, function) && !std::regex_match(line, m, text)) return false;
    *name = m[1];
    return true;
}

void count_instruction(const std::string& opcode, const std::string& operands,
                       instruction_mix& mix) {
    const std::vector<std::string> t = split(opcode, '.');
    if (t.empty() || t[0] == "NOP") return;
    ++mix.total;
    if (const std::string c = mma_class(t); !c.empty()) {
        ++mix.mma[c];
        ++mix.mma_opcodes[opcode];
    }
    if (is_fp64(t)) ++mix.fp64;
    if (is_atomic(t[0])) {
        ++mix.atomics;
        ++mix.atomic_opcodes[t[0]];
    }
    static const std::regex clock(R"(SR_(CLOCK|GLOBALTIMER)[A-Z0-9_]*)");
    std::smatch m;
    if (std::regex_search(operands, m, clock)) {
        ++mix.clock_reads;
        mix.clock_registers.insert(m[0]);
    }
}

std::string target_of(const std::string& text) {
    static const std::regex target(R"(\.target\s+(sm_[0-9a-z]+))");
    std::smatch m;
    return std::regex_search(text, m, target) ? std::string(m[1]) : "";
}

std::string counts_text(const std::map<std::string, int>& counts) {
    std::string out;
    for (const auto& [name, n] : counts)
        out += (out.empty() ? "" : ", ") + name + " " + std::to_string(n);
    return out;
}

}  // namespace

instruction_mix parse_sass(const std::string& text, const std::string& entry) {
    instruction_mix mix;
    const std::vector<std::string> lines = split(text, '\n');
    std::set<std::string> kernels, functions;
    std::string name;
    for (const std::string& line : lines) {
        read_symbol(line, kernels, mix.externs);
        if (function_of(line, &name)) functions.insert(name);
    }
    const bool every = entry.empty() || !functions.count(entry);
    for (const std::string& f : functions) {
        const bool counted = every || f == entry || !kernels.count(f);
        (counted ? mix.functions : mix.other_kernels).push_back(f);
    }
    static const std::regex instruction(
        R"(^\s*/\*[0-9a-fA-F]+\*/\s*(?:@!?U?P[0-9T]+\s+)?([A-Z][A-Za-z0-9_.]*)\s*([^;]*);)");
    bool counting = false;
    for (const std::string& line : lines) {
        if (function_of(line, &name))
            counting =
                std::find(mix.functions.begin(), mix.functions.end(), name) != mix.functions.end();
        std::smatch m;
        if (counting && std::regex_search(line, m, instruction)) count_instruction(m[1], m[2], mix);
    }
    return mix;
}

const std::vector<std::string>& requirable_mma_classes() {
    static const std::vector<std::string> classes = {"fp8",  "f16", "bf16", "tf32",
                                                     "int8", "f64", "any"};
    return classes;
}

bool satisfies_mma(const instruction_mix& m, const std::string& required) {
    if (required == "any") return !m.mma.empty();
    const bool descriptor_typed = m.mma.count("f16|bf16|tf32") > 0;
    if (required == "f16" || required == "bf16" || required == "tf32")
        return m.mma.count(required) > 0 || descriptor_typed;
    return m.mma.count(required) > 0;
}

bool calls_device_heap(const instruction_mix& m) {
    for (const std::string& e : m.externs)
        if (e == "malloc" || e == "free") return true;
    return false;
}

std::string describe_mix(const instruction_mix& m) {
    std::string out = std::to_string(m.total) + " instructions; MMA: ";
    if (m.mma.empty()) out += "none";
    for (const auto& [c, n] : m.mma) {
        std::string opcodes;
        for (const auto& [op, k] : m.mma_opcodes)
            if (mma_class(split(op, '.')) == c)
                opcodes += (opcodes.empty() ? "" : ", ") + op + " " + std::to_string(k);
        out += (out.back() == ' ' ? "" : ", ") + c + " " + std::to_string(n) + " (" + opcodes + ")";
    }
    out += "; FP64: " + std::to_string(m.fp64) + "; atomics: " + std::to_string(m.atomics);
    if (m.atomics) out += " (" + counts_text(m.atomic_opcodes) + ")";
    out += "; clock reads: " + std::to_string(m.clock_reads);
    std::string registers;
    for (const std::string& r : m.clock_registers) registers += (registers.empty() ? "" : ", ") + r;
    if (m.clock_reads) out += " (" + registers + ")";
    std::string calls;
    for (const std::string& e : m.externs) calls += (calls.empty() ? "" : ", ") + e;
    return out + (calls.empty() ? "" : "; calls: " + calls);
}

fs::path find_disassembler(const std::string& configured) {
    if (!configured.empty()) return fs::exists(configured) ? fs::path(configured) : fs::path();
    std::vector<fs::path> candidates;
    if (const char* path = std::getenv("PATH"))
        for (const std::string& dir : split(path, ':'))
            if (!dir.empty()) candidates.push_back(fs::path(dir) / "cuobjdump");
    for (const char* root : {"CUDAToolkit_ROOT", "CUDA_HOME", "CUDA_PATH"})
        if (const char* r = std::getenv(root)) candidates.push_back(fs::path(r) / "bin/cuobjdump");
#ifdef CUOPT_CUDA_BIN_DIR
    candidates.push_back(fs::path(CUOPT_CUDA_BIN_DIR) / "cuobjdump");
#endif
    candidates.push_back("/usr/local/cuda/bin/cuobjdump");
    for (const fs::path& p : candidates) {
        std::error_code ec;
        if (fs::is_regular_file(p, ec)) return p;
    }
    return {};
}

instruction_audit audit_cubin(process_runner& runner, const fs::path& tool, const fs::path& cubin,
                              const std::string& entry, std::chrono::milliseconds timeout) {
    instruction_audit a;
    a.tool = tool.string();
    const process_result p =
        runner.run({tool.string(), "-symbols", "-sass", cubin.string()}, timeout);
    if (p.failed_to_start || p.timed_out || p.signal || p.exit_code != 0) {
        const std::string first = p.stderr_text.substr(0, p.stderr_text.find('\n'));
        a.reason =
            tool.filename().string() + " " + p.describe() + (first.empty() ? "" : ": ") + first;
        return a;
    }
    a.mix = parse_sass(p.stdout_text, entry);
    a.arch = target_of(p.stdout_text);
    if (a.mix.functions.empty()) {
        a.reason = tool.filename().string() + " printed no function of " + cubin.string();
        return a;
    }
    a.ran = true;
    return a;
}

}  // namespace cuopt
