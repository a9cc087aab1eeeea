#pragma once
/// One way to write JSON: json_object and json_array add members and elements in the order
/// written (files are compared by tests and read by people), and json_value turns the
/// tools' C++ values into JSON the same way everywhere: every string through json_text
/// (valid UTF-8), an empty optional as null, vectors and maps as arrays and objects.
///   json_object o(a);
///   o.add("index", d.index).add("name", d.name).add_if(d.simulated, "simulated", true);
///   return o.take();

#include <rapidjson/document.h>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/json_document.hpp"

namespace cuopt {

using json_allocator = rapidjson::Document::AllocatorType;

class json_object;
class json_array;

template <class T>
rapidjson::Value json_value(T&& v, json_allocator& a);

namespace json_detail {
template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};
template <class T>
struct is_sequence : std::false_type {};
template <class T, class A>
struct is_sequence<std::vector<T, A>> : std::true_type {};
template <class T, std::size_t N>
struct is_sequence<std::array<T, N>> : std::true_type {};
template <class T>
struct is_map : std::false_type {};
template <class K, class V, class C, class A>
struct is_map<std::map<K, V, C, A>> : std::true_type {};
}  // namespace json_detail

/// An object under construction; members keep the order they were added in.
class json_object {
  public:
    explicit json_object(json_allocator& a) : a_(&a), own_(rapidjson::kObjectType), v_(&own_) {}
    /// Adds to a document's root (made an object if it is not one), after what it holds.
    explicit json_object(rapidjson::Document& doc) : a_(&doc.GetAllocator()), v_(&doc) {
        if (!doc.IsObject()) doc.SetObject();
    }
    /// Adds to an existing object (made one if it is not), after what it holds.
    json_object(rapidjson::Value& target, json_allocator& a) : a_(&a), v_(&target) {
        if (!target.IsObject()) target.SetObject();
    }
    json_object(const json_object&) = delete;
    json_object& operator=(const json_object&) = delete;
    json_object(json_object&& o) noexcept
        : a_(o.a_), own_(std::move(o.own_)), v_(o.v_ == &o.own_ ? &own_ : o.v_) {}
    json_object& operator=(json_object&&) = delete;

    /// The key is copied: it may be a temporary.
    template <class T>
    json_object& add(std::string_view key, T&& value) {
        v_->AddMember(json_text(key, *a_), json_value(std::forward<T>(value), *a_), *a_);
        return *this;
    }
    template <class T>
    json_object& add_if(bool condition, std::string_view key, T&& value) {
        return condition ? add(key, std::forward<T>(value)) : *this;
    }
    json_object& add_null(std::string_view key) { return add(key, rapidjson::Value()); }

    json_allocator& allocator() const { return *a_; }
    /// The object built so far (moved out; this is empty afterwards).
    rapidjson::Value take() { return rapidjson::Value(std::move(*v_)); }

  private:
    json_allocator* a_;
    rapidjson::Value own_;
    rapidjson::Value* v_;
};

/// An array under construction.
class json_array {
  public:
    explicit json_array(json_allocator& a) : a_(&a), v_(rapidjson::kArrayType) {}

    template <class T>
    json_array& push(T&& value) {
        v_.PushBack(json_value(std::forward<T>(value), *a_), *a_);
        return *this;
    }
    bool empty() const { return v_.Empty(); }
    json_allocator& allocator() const { return *a_; }
    rapidjson::Value take() { return rapidjson::Value(std::move(v_)); }

  private:
    json_allocator* a_;
    rapidjson::Value v_;
};

/// A C++ value as JSON: bool, integers, floating point (as given: callers decide what a
/// non-finite value becomes), strings, std::optional (null when empty), vectors and arrays,
/// maps with string keys (in the map's order), rapidjson values (moved, or deep-copied from
/// an lvalue) and finished json_object / json_array builders.
template <class T>
rapidjson::Value json_value(T&& v, json_allocator& a) {
    using D = std::decay_t<T>;
    if constexpr (std::is_same_v<D, rapidjson::Value>) {
        if constexpr (std::is_rvalue_reference_v<T&&> &&
                      !std::is_const_v<std::remove_reference_t<T>>)
            return rapidjson::Value(std::move(v));
        else
            return rapidjson::Value(v, a);
    } else if constexpr (std::is_same_v<D, json_object> || std::is_same_v<D, json_array>) {
        return v.take();
    } else if constexpr (std::is_same_v<D, std::nullptr_t> || std::is_same_v<D, std::nullopt_t>) {
        return rapidjson::Value();
    } else if constexpr (std::is_same_v<D, bool>) {
        return rapidjson::Value(v);
    } else if constexpr (std::is_integral_v<D> && std::is_signed_v<D>) {
        return rapidjson::Value(static_cast<std::int64_t>(v));
    } else if constexpr (std::is_integral_v<D>) {
        return rapidjson::Value(static_cast<std::uint64_t>(v));
    } else if constexpr (std::is_floating_point_v<D>) {
        return rapidjson::Value(static_cast<double>(v));
    } else if constexpr (std::is_convertible_v<const D&, std::string_view>) {
        return json_text(std::string_view(v), a);
    } else if constexpr (json_detail::is_optional<D>::value) {
        return v ? json_value(*std::forward<T>(v), a) : rapidjson::Value();
    } else if constexpr (json_detail::is_sequence<D>::value) {
        rapidjson::Value out(rapidjson::kArrayType);
        for (auto&& e : v) out.PushBack(json_value(e, a), a);
        return out;
    } else if constexpr (json_detail::is_map<D>::value) {
        rapidjson::Value out(rapidjson::kObjectType);
        for (auto&& [k, x] : v) out.AddMember(json_text(k, a), json_value(x, a), a);
        return out;
    } else {
        static_assert(!sizeof(D), "json_value: no JSON form for this type");
    }
}

}  // namespace cuopt
