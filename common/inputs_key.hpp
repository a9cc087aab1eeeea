#pragma once
/// The per-run secret behind every generated input. A run draws a 128-bit key (getrandom) and
/// keeps it in RUN/inputs-key.json (0600), outside every folder a candidate's compile can read;
/// its requests name that file and a round (the search's, each evidence round's own), and the
/// harness derives each generator's ChaCha20 stream from (key, round, seed). Replay and gate
/// read the same file, so they regenerate the run's inputs bit for bit.

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace cuopt {

using inputs_key_words = std::array<std::uint32_t, 4>;

/// The file name of the key in a run folder.
inline constexpr const char* k_inputs_key_file = "inputs-key.json";

/// A request's reference to its key: the key file and which of its rounds.
struct inputs_key_ref {
    std::filesystem::path file;  // absolute once read (the harness resolves it inside --root)
    std::uint64_t round = 0;
};

/// 128 fresh bits from getrandom; throws std::runtime_error when the kernel gives none.
inputs_key_words draw_inputs_key();

/// 64 random bits from getrandom (evidence rounds, launch offsets): nobody can predict them.
std::uint64_t draw_random_u64();

/// Writes {"schema_version": 1, "key": "<32 hex digits>"} at `file` with mode 0600, atomically
/// and durably (write_file_with: no link followed). Throws file_write_error.
void write_inputs_key(const std::filesystem::path& file, const inputs_key_words& key);

/// Reads a key file: opened with O_NOFOLLOW (a link is refused), a regular file of at most
/// 4 KiB, schema_version 1 and 32 hex digits. Throws std::runtime_error naming the file and
/// the field.
inputs_key_words read_inputs_key(const std::filesystem::path& file);

/// The key's public name: the first 16 hex digits of the SHA-256 of its 16 bytes, for records
/// and responses (which key made these inputs), never the key itself.
std::string inputs_key_id(const inputs_key_words& key);

/// The checked launch's position among `positions` timed launches for a round of the key: a
/// keyed draw (domain 2), so a request can leave the position out and a kernel that reads its
/// request still cannot tell which launch is checked. The optimizer computes the same to make
/// its oracle for that launch.
int keyed_checked_position(const inputs_key_words& key, std::uint64_t round, int positions);

/// The ChaCha20 key of one generator's stream (counter_rng.h's derive_stream_key; domain 1:
/// the file inputs' rotations).
std::array<std::uint32_t, 8> stream_key_of(const inputs_key_words& key, std::uint64_t round,
                                           std::uint64_t seed, std::uint32_t domain = 0);

}  // namespace cuopt
