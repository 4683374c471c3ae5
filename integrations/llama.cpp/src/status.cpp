#include <cstring>

#include "membrane_llama.hpp"

namespace membrane {
namespace llama {

Status::Status(Failure failure, std::string detail) : failure_(failure), detail_(std::move(detail)) {}

Status Status::frame(const Error &error, std::string detail) {
    Status s(Failure::frame, std::move(detail));
    s.frame_error_ = error;
    return s;
}

Status Status::identity(FieldSet fields, std::string detail) {
    Status s(Failure::identity, std::move(detail));
    s.mismatched_ = fields;
    return s;
}

Status Status::layout(std::string detail) { return Status(Failure::layout, std::move(detail)); }

Status Status::llama_call(std::string detail) { return Status(Failure::llama, std::move(detail)); }

Status Status::io(int os_error, std::string detail) {
    Status s(Failure::io, std::move(detail));
    s.os_error_ = os_error;
    return s;
}

std::string Status::message() const {
    std::string out;
    switch (failure_) {
    case Failure::none:
        return "ok";
    case Failure::frame:
        out = "frame refused: " + frame_error_.message();
        break;
    case Failure::identity: {
        out = "made for another model: identity fields differ:";
        for (std::uint32_t f = 0; f < 32; f++) {
            Field field = static_cast<Field>(f);
            if (mismatched_.contains(field)) out += std::string(" ") + std::string(name(field));
        }
        break;
    }
    case Failure::layout:
        out = "not a state this context can take";
        break;
    case Failure::llama:
        out = "llama.cpp refused";
        break;
    case Failure::io:
        out = std::string("I/O error: ") + std::strerror(os_error_);
        break;
    }
    if (!detail_.empty()) out += " (" + detail_ + ")";
    return out;
}

} // namespace llama
} // namespace membrane
