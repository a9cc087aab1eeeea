#include "common/json_fields.hpp"

#include <cmath>

#include "common/message_text.hpp"

namespace cuopt {

using rapidjson::Value;

json_field::json_field(const Value& value, std::string source, std::string path)
    : value_(&value), source_(std::move(source)), path_(std::move(path)) {}

json_field json_field::child(const Value& v, std::string path) const {
    return json_field(v, source_, std::move(path));
}

void json_field::fail(const std::string& expected, const std::string& found) const {
    std::string m = source_.empty() ? "" : source_ + ": ";
    if (!path_.empty()) m += "field " + shortened(path_) + ": ";
    m += "expected " + expected;
    if (!found.empty()) m += ", found " + found;
    throw json_error(m);
}

std::string json_field::found() const {
    switch (value_->GetType()) {
        case rapidjson::kNullType:
            return "null";
        case rapidjson::kFalseType:
        case rapidjson::kTrueType:
            return "a boolean";
        case rapidjson::kObjectType:
            return "an object";
        case rapidjson::kArrayType:
            return "an array";
        case rapidjson::kStringType:
            return "a string";
        case rapidjson::kNumberType:
            return value_->IsInt64() ? "an integer" : "a number";
    }
    return "something else";
}

json_field json_field::operator[](const char* key) const {
    if (!value_->IsObject()) fail("an object", found());
    const std::string path = path_.empty() ? key : path_ + "." + key;
    const auto it = value_->FindMember(key);
    if (it == value_->MemberEnd()) child(*value_, path).fail("a member", "none");
    return child(it->value, path);
}

std::optional<json_field> json_field::find(const char* key) const {
    if (!value_->IsObject()) fail("an object", found());
    const auto it = value_->FindMember(key);
    if (it == value_->MemberEnd() || it->value.IsNull()) return std::nullopt;
    return child(it->value, path_.empty() ? key : path_ + "." + key);
}

json_field json_field::operator[](std::size_t i) const {
    if (!value_->IsArray()) fail("an array", found());
    const std::string path = path_ + "[" + std::to_string(i) + "]";
    if (i >= value_->Size())
        child(*value_, path).fail("an element", "an array of " + std::to_string(value_->Size()));
    return child((*value_)[static_cast<rapidjson::SizeType>(i)], path);
}

std::size_t json_field::size() const {
    if (!value_->IsArray()) fail("an array", found());
    return value_->Size();
}

std::vector<json_field> json_field::items() const {
    std::vector<json_field> out;
    const std::size_t n = size();
    out.reserve(n);
    for (std::size_t i = 0; i < n; ++i) out.push_back((*this)[i]);
    return out;
}

std::vector<std::pair<std::string, json_field>> json_field::members() const {
    if (!value_->IsObject()) fail("an object", found());
    std::vector<std::pair<std::string, json_field>> out;
    for (const auto& m : value_->GetObject()) {
        std::string name(m.name.GetString(), m.name.GetStringLength());
        out.emplace_back(name, child(m.value, path_.empty() ? name : path_ + "." + name));
    }
    return out;
}

std::string json_field::text_as(const std::string& expected) const {
    if (!value_->IsString()) fail(expected, found());
    return std::string(value_->GetString(), value_->GetStringLength());
}

std::string json_field::text() const {
    return text_as("a string");
}

std::uint64_t json_field::unsigned64() const {
    if (!value_->IsUint64()) {
        const std::string expected = "an integer from 0 to 18446744073709551615";
        if (value_->IsNumber() && !value_->IsDouble()) fail(expected, json_scalar_text(*value_));
        fail(expected, found());
    }
    return value_->GetUint64();
}

long long json_field::integer_in(long long low, long long high) const {
    const bool full = low == std::numeric_limits<long long>::min() &&
                      high == std::numeric_limits<long long>::max();
    const std::string expected =
        full ? "an integer"
             : "an integer from " + std::to_string(low) + " to " + std::to_string(high);
    if (!value_->IsInt64()) {
        if (value_->IsNumber() && !value_->IsDouble()) fail(expected, json_scalar_text(*value_));
        fail(expected, found());
    }
    const long long x = value_->GetInt64();
    if (x < low || x > high) fail(expected, std::to_string(x));
    return x;
}

double json_field::number() const {
    if (!value_->IsNumber()) fail("a number", found());
    const double x = value_->GetDouble();
    if (!std::isfinite(x)) fail("a finite number", json_scalar_text(*value_));
    return x;
}

bool json_field::boolean() const {
    if (!value_->IsBool()) fail("true or false", found());
    return value_->GetBool();
}

std::vector<std::string> json_field::texts() const {
    std::vector<std::string> out;
    for (const json_field& e : items()) out.push_back(e.text());
    return out;
}

std::vector<double> json_field::numbers() const {
    std::vector<double> out;
    for (const json_field& e : items()) out.push_back(e.number());
    return out;
}

std::optional<std::string> json_field::optional_text(const char* key) const {
    const auto f = find(key);
    return f ? std::optional<std::string>(f->text()) : std::nullopt;
}

std::optional<double> json_field::optional_number(const char* key) const {
    const auto f = find(key);
    return f ? std::optional<double>(f->number()) : std::nullopt;
}

std::optional<bool> json_field::optional_boolean(const char* key) const {
    const auto f = find(key);
    return f ? std::optional<bool>(f->boolean()) : std::nullopt;
}

std::vector<std::string> json_field::optional_texts(const char* key) const {
    const auto f = find(key);
    return f ? f->texts() : std::vector<std::string>{};
}

std::vector<double> json_field::optional_numbers(const char* key) const {
    const auto f = find(key);
    return f ? f->numbers() : std::vector<double>{};
}

const rapidjson::Value* member(const rapidjson::Value& v, const char* key) {
    if (!v.IsObject()) return nullptr;
    const auto it = v.FindMember(key);
    return it == v.MemberEnd() || it->value.IsNull() ? nullptr : &it->value;
}

const rapidjson::Value& object_or_empty(const rapidjson::Value& v, const char* key) {
    static const rapidjson::Value k_empty(rapidjson::kObjectType);
    const rapidjson::Value* m = member(v, key);
    return m && m->IsObject() ? *m : k_empty;
}

const rapidjson::Value& array_or_empty(const rapidjson::Value& v, const char* key) {
    static const rapidjson::Value k_empty(rapidjson::kArrayType);
    const rapidjson::Value* m = member(v, key);
    return m && m->IsArray() ? *m : k_empty;
}

std::optional<double> number_of(const rapidjson::Value& v) {
    return v.IsNumber() ? std::optional<double>(v.GetDouble()) : std::nullopt;
}

std::optional<long long> integer_of(const rapidjson::Value& v) {
    return v.IsInt64() ? std::optional<long long>(v.GetInt64()) : std::nullopt;
}

std::string text_of(const rapidjson::Value& v) {
    if (v.IsString()) return std::string(v.GetString(), v.GetStringLength());
    return v.IsNumber() || v.IsBool() ? json_scalar_text(v) : "";
}

std::string name_of(const rapidjson::Value::Member& m) {
    return std::string(m.name.GetString(), m.name.GetStringLength());
}

std::optional<double> number_of(const rapidjson::Value& v, const char* key) {
    const rapidjson::Value* m = member(v, key);
    return m ? number_of(*m) : std::nullopt;
}

std::optional<long long> integer_of(const rapidjson::Value& v, const char* key) {
    const rapidjson::Value* m = member(v, key);
    return m ? integer_of(*m) : std::nullopt;
}

std::optional<bool> bool_of(const rapidjson::Value& v, const char* key) {
    const rapidjson::Value* m = member(v, key);
    return m && m->IsBool() ? std::optional<bool>(m->GetBool()) : std::nullopt;
}

std::string text_of(const rapidjson::Value& v, const char* key) {
    const rapidjson::Value* m = member(v, key);
    return m ? text_of(*m) : "";
}

std::optional<std::string> string_of(const rapidjson::Value& v, const char* key) {
    const rapidjson::Value* m = member(v, key);
    return m && m->IsString() ? std::optional<std::string>(text_of(*m)) : std::nullopt;
}

}  // namespace cuopt
