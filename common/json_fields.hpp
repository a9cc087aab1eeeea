#pragma once
/// One typed reader for every JSON file the tools load: a view of a value that knows the
/// file it came from and the path to it, so that every complaint reads the same way:
/// "run/history.json: field attempts[3].cases[0].status: expected one of passed, ...".
/// Strict getters throw json_error; the optional_* ones read an absent or null member as
/// std::nullopt (the lenient readers of files older versions wrote). Below the class, the
/// lenient free functions (member, text_of, number_of...) read what is there and never
/// complain: for what a report shows rather than what a run trusts.

#include <rapidjson/document.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/json_document.hpp"
#include "common/message_text.hpp"
#include "common/name_table.hpp"

namespace cuopt {

class json_field {
  public:
    /// The document's root (or any value) read from `source` (a file name for messages).
    json_field(const rapidjson::Value& value, std::string source, std::string path = "");

    const rapidjson::Value& value() const { return *value_; }
    const std::string& source() const { return source_; }
    /// "attempts[3].cases[0]"; "" at the root.
    const std::string& path() const { return path_; }

    bool is_null() const { return value_->IsNull(); }
    bool is_object() const { return value_->IsObject(); }
    bool is_array() const { return value_->IsArray(); }
    bool is_text() const { return value_->IsString(); }

    /// A required member (throws when this is no object or the member is absent).
    json_field operator[](const char* key) const;
    /// A member that is present and not null, else nullopt (throws when this is no object).
    std::optional<json_field> find(const char* key) const;
    bool has(const char* key) const { return find(key).has_value(); }

    /// An element of an array (throws when this is no array or `i` is past its end).
    json_field operator[](std::size_t i) const;
    json_field operator[](int i) const { return (*this)[static_cast<std::size_t>(i)]; }
    std::size_t size() const;  // of an array
    std::vector<json_field> items() const;
    /// An object's members in document order.
    std::vector<std::pair<std::string, json_field>> members() const;

    // ---- this value, typed ----
    std::string text() const;
    /// An integer within [low, high].
    long long integer_in(long long low, long long high) const;
    template <class Int = long long>
    Int integer() const {
        if constexpr (std::is_unsigned_v<Int> && sizeof(Int) == 8) return unsigned64();
        constexpr long long low = static_cast<long long>(std::numeric_limits<Int>::min());
        constexpr long long high =
            static_cast<unsigned long long>(std::numeric_limits<Int>::max()) > LLONG_MAX
                ? LLONG_MAX
                : static_cast<long long>(std::numeric_limits<Int>::max());
        return static_cast<Int>(integer_in(low, high));
    }
    /// An integer within [0, 2^64 - 1] (what integer<std::uint64_t>() reads).
    std::uint64_t unsigned64() const;
    double number() const;  // finite
    bool boolean() const;
    template <class Enum, std::size_t N>
    Enum word(const name_table<Enum, N>& table) const {
        const std::string w = text_as("one of " + names_of(table));
        if (const std::optional<Enum> e = table.parse(w)) return *e;
        fail("one of " + names_of(table), quote_value(w));
    }
    std::vector<std::string> texts() const;
    std::vector<double> numbers() const;

    // ---- a required member, typed ----
    std::string text(const char* key) const { return (*this)[key].text(); }
    template <class Int = long long>
    Int integer(const char* key) const {
        return (*this)[key].integer<Int>();
    }
    double number(const char* key) const { return (*this)[key].number(); }
    bool boolean(const char* key) const { return (*this)[key].boolean(); }
    template <class Enum, std::size_t N>
    Enum word(const char* key, const name_table<Enum, N>& table) const {
        return (*this)[key].word(table);
    }
    std::vector<std::string> texts(const char* key) const { return (*this)[key].texts(); }
    std::vector<double> numbers(const char* key) const { return (*this)[key].numbers(); }

    // ---- an optional member: absent or null -> nullopt; another kind still throws ----
    std::optional<std::string> optional_text(const char* key) const;
    template <class Int = long long>
    std::optional<Int> optional_integer(const char* key) const {
        const auto f = find(key);
        return f ? std::optional<Int>(f->integer<Int>()) : std::nullopt;
    }
    std::optional<double> optional_number(const char* key) const;
    std::optional<bool> optional_boolean(const char* key) const;
    template <class Enum, std::size_t N>
    std::optional<Enum> optional_word(const char* key, const name_table<Enum, N>& table) const {
        const auto f = find(key);
        return f ? std::optional<Enum>(f->word(table)) : std::nullopt;
    }
    /// An absent or null array member reads as empty.
    std::vector<std::string> optional_texts(const char* key) const;
    std::vector<double> optional_numbers(const char* key) const;

    /// Throws json_error("SOURCE: field PATH: expected WHAT[, found FOUND]"): for the checks a
    /// reader makes beyond the kinds (a value another field rules out).
    [[noreturn]] void fail(const std::string& expected, const std::string& found = "") const;

  private:
    json_field child(const rapidjson::Value& v, std::string path) const;
    std::string text_as(const std::string& expected) const;
    std::string found() const;  // what this value is, for messages

    template <class Enum, std::size_t N>
    static std::string names_of(const name_table<Enum, N>& table) {
        std::string out;
        for (const auto& e : table.entries) out += (out.empty() ? "" : ", ") + std::string(e.name);
        return out;
    }

    const rapidjson::Value* value_;
    std::string source_;
    std::string path_;
};

// ---- lenient reads, for what is shown rather than trusted (a report of a damaged run
// folder shows what it can): a missing member, null or a value of another kind reads as
// absent (text_of aside, which shows numbers too), never as an error. ----
const rapidjson::Value* member(const rapidjson::Value& v, const char* key);
const rapidjson::Value& object_or_empty(const rapidjson::Value& v, const char* key);
const rapidjson::Value& array_or_empty(const rapidjson::Value& v, const char* key);
std::optional<double> number_of(const rapidjson::Value& v, const char* key);
std::optional<long long> integer_of(const rapidjson::Value& v, const char* key);
std::optional<bool> bool_of(const rapidjson::Value& v, const char* key);
/// A member as text for display: a string as it is, a number as its digits, a boolean as
/// 1 or 0; "" when absent or another kind. Where only a string will do, string_of.
std::string text_of(const rapidjson::Value& v, const char* key);
/// A string member, and only a string.
std::optional<std::string> string_of(const rapidjson::Value& v, const char* key);
/// The same for a value in hand (an array's element, an object's member while iterating).
std::optional<double> number_of(const rapidjson::Value& v);
std::optional<long long> integer_of(const rapidjson::Value& v);
std::string text_of(const rapidjson::Value& v);
/// An object member's name, whole (a NUL inside it included).
std::string name_of(const rapidjson::Value::Member& m);

}  // namespace cuopt
