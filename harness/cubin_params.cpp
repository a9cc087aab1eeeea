#include "harness/cubin_params.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace cuopt {

namespace {

// An .nv.info section is a sequence of records on a 4-byte grid: u8 format, u8 attribute,
// then a u16 (the value for HVAL; the value byte and a pad byte for BVAL; padding for NVAL;
// the payload's size for SVAL, whose payload follows). Checked against nvcc and NVRTC cubins
// for sm_90 (CUDA 13): a __cluster_dims__ kernel carries an NVAL record (01 3e 00 00) and a
// cooperative one a BVAL record (02 4c 01 00), each 4 bytes long.
constexpr std::uint8_t k_format_nval = 0x01;
constexpr std::uint8_t k_format_bval = 0x02;
constexpr std::uint8_t k_format_hval = 0x03;
constexpr std::uint8_t k_format_sval = 0x04;
// EIATTR_KPARAM_INFO's payload: u32 index, u16 ordinal, u16 offset, u32 size and flags.
constexpr std::uint8_t k_attr_kparam_info = 0x17;
constexpr std::uint16_t k_kparam_info_bytes = 12;

// Little-endian reads that never step outside the image.
class byte_view {
  public:
    byte_view(const char* data, std::size_t size) : m_data(data), m_size(size) {}
    bool has(std::uint64_t offset, std::uint64_t bytes) const {
        return offset <= m_size && bytes <= m_size - offset;
    }
    template <typename T>
    T at(std::uint64_t offset) const {
        T v{};
        std::memcpy(&v, m_data + offset, sizeof v);  // callers check has() first; hosts are LE
        return v;
    }
    const char* data() const { return m_data; }

  private:
    const char* m_data;
    std::size_t m_size;
};

struct section {
    std::uint64_t offset = 0, size = 0;
};

// One ELF64 section header: where its name, type and contents are.
struct section_header {
    std::string name;
    std::uint32_t type = 0;
    std::uint64_t offset = 0, size = 0;
    std::uint32_t link = 0;
};

constexpr std::uint32_t k_sht_symtab = 2;

// Every section header of a little-endian ELF64 image, or nullopt when it is not one or its
// header table or section names lie outside the image.
std::optional<std::vector<section_header>> read_sections(const byte_view& elf) {
    if (!elf.has(0, 64) ||
        std::memcmp(elf.data(),
                    "\x7f"
                    "ELF",
                    4) != 0 ||
        elf.at<std::uint8_t>(4) != 2 /* ELFCLASS64 */ || elf.at<std::uint8_t>(5) != 1 /* LE */)
        return std::nullopt;
    const auto table = elf.at<std::uint64_t>(0x28);
    const auto entry_size = elf.at<std::uint16_t>(0x3A);
    const auto count = elf.at<std::uint16_t>(0x3C);
    const auto names_index = elf.at<std::uint16_t>(0x3E);
    if (entry_size < 64 || names_index >= count ||
        !elf.has(table, static_cast<std::uint64_t>(entry_size) * count))
        return std::nullopt;
    auto header = [&](std::uint16_t i) {
        return table + static_cast<std::uint64_t>(i) * entry_size;
    };
    const section names{elf.at<std::uint64_t>(header(names_index) + 24),
                        elf.at<std::uint64_t>(header(names_index) + 32)};
    if (!elf.has(names.offset, names.size)) return std::nullopt;
    std::vector<section_header> out;
    for (std::uint16_t i = 0; i < count; ++i) {
        section_header& s = out.emplace_back();
        const auto name = elf.at<std::uint32_t>(header(i));
        if (name < names.size) {
            const char* text = elf.data() + names.offset + name;
            s.name.assign(text, strnlen(text, names.size - name));
        }
        s.type = elf.at<std::uint32_t>(header(i) + 4);
        s.offset = elf.at<std::uint64_t>(header(i) + 24);
        s.size = elf.at<std::uint64_t>(header(i) + 32);
        s.link = elf.at<std::uint32_t>(header(i) + 40);
    }
    return out;
}

// The ELF64 section named `wanted`, if there is one and it lies inside the image.
std::optional<section> find_section(const byte_view& elf, const std::string& wanted) {
    const auto sections = read_sections(elf);
    if (!sections) return std::nullopt;
    for (const section_header& h : *sections) {
        if (h.name != wanted) continue;
        if (!elf.has(h.offset, h.size)) return std::nullopt;
        return section{h.offset, h.size};
    }
    return std::nullopt;
}

// The names of the symbols the image imports (undefined in its symbol table), or nullopt
// when the table or its string table does not read.
std::optional<std::vector<std::string>> imported_symbols(const byte_view& elf,
                                                         const std::vector<section_header>& all) {
    constexpr std::uint64_t k_symbol_bytes = 24;  // Elf64_Sym
    const auto table = std::find_if(all.begin(), all.end(),
                                    [](const section_header& h) { return h.type == k_sht_symtab; });
    if (table == all.end() || table->link >= all.size()) return std::nullopt;
    const section_header& strings = all[table->link];
    if (!elf.has(table->offset, table->size) || !elf.has(strings.offset, strings.size))
        return std::nullopt;
    std::vector<std::string> out;
    for (std::uint64_t at = table->offset; table->offset + table->size - at >= k_symbol_bytes;
         at += k_symbol_bytes) {
        const auto name = elf.at<std::uint32_t>(at);
        if (elf.at<std::uint16_t>(at + 6) != 0 /* SHN_UNDEF */ || name == 0) continue;
        if (name >= strings.size) return std::nullopt;
        const char* text = elf.data() + strings.offset + name;
        out.emplace_back(text, strnlen(text, strings.size - name));
    }
    return out;
}

// The device heap's system calls as ptxas imports them: malloc and free (in-kernel new and
// delete lower to them), __cuda_syscall_aligned_malloc (__nv_aligned_device_malloc), and any
// other __cuda_syscall that allocates or frees.
bool is_heap_call(const std::string& name) {
    if (name == "malloc" || name == "free") return true;
    return name.rfind("__cuda_syscall", 0) == 0 &&
           (name.find("alloc") != std::string::npos || name.find("free") != std::string::npos);
}

}  // namespace

std::optional<std::size_t> count_kernel_params(const std::vector<char>& cubin,
                                               const std::string& lowered_name) {
    const byte_view elf(cubin.data(), cubin.size());
    const std::optional<section> info = find_section(elf, ".nv.info." + lowered_name);
    if (!info) return std::nullopt;
    std::vector<std::uint16_t> ordinals;
    std::uint64_t at = info->offset;
    const std::uint64_t end = info->offset + info->size;
    while (at < end) {
        if (end - at < 4) return std::nullopt;
        const auto format = elf.at<std::uint8_t>(at), attribute = elf.at<std::uint8_t>(at + 1);
        const auto value = elf.at<std::uint16_t>(at + 2);
        if (format == k_format_sval) {
            if (end - at - 4 < value) return std::nullopt;
            if (attribute == k_attr_kparam_info) {
                if (value < k_kparam_info_bytes) return std::nullopt;
                ordinals.push_back(elf.at<std::uint16_t>(at + 8));
            }
            at += 4 + value;
        } else if (format == k_format_nval || format == k_format_bval || format == k_format_hval) {
            at += 4;
        } else {
            return std::nullopt;  // a format this reader does not know: trust nothing
        }
    }
    // One record per parameter: the ordinals are exactly 0..n-1, else the reading is wrong.
    std::sort(ordinals.begin(), ordinals.end());
    for (std::size_t i = 0; i < ordinals.size(); ++i)
        if (ordinals[i] != i) return std::nullopt;
    return ordinals.size();
}

std::optional<module_footprint> read_module_footprint(const std::vector<char>& cubin) {
    const byte_view elf(cubin.data(), cubin.size());
    const auto sections = read_sections(elf);
    if (!sections) return std::nullopt;
    const auto imported = imported_symbols(elf, *sections);
    if (!imported) return std::nullopt;
    module_footprint f;
    for (const std::string& name : *imported)
        if (is_heap_call(name)) f.heap_calls.push_back(name);
    for (const section_header& h : *sections)
        if (h.name == ".nv.global" || h.name == ".nv.global.init")
            f.writable_global_bytes += h.size;
    return f;
}

std::string worker_retire_reason(const std::vector<char>& cubin) {
    const std::optional<module_footprint> f = read_module_footprint(cubin);
    if (!f)
        return "its cubin's symbol table does not read, so its use of the device heap is unknown";
    if (!f->heap_calls.empty()) {
        std::string calls;
        for (const std::string& c : f->heap_calls) calls += (calls.empty() ? "" : ", ") + c;
        return "its kernel uses the device heap (" + calls +
               "): blocks it never freed outlive its module in this context";
    }
    if (f->writable_global_bytes > 0)
        return "its module has " + std::to_string(f->writable_global_bytes) +
               " bytes of writable __device__ globals, freed unzeroed when it unloads";
    return "";
}

}  // namespace cuopt
