// The operating-system side of saving and restoring: a read-only mapping, an O_DIRECT
// read into an aligned buffer, and a file published by rename.
#ifndef MEMBRANE_LLAMA_FILE_IO_HPP
#define MEMBRANE_LLAMA_FILE_IO_HPP

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "membrane_llama.hpp"

namespace membrane {
namespace llama {

/// A whole file's bytes, mapped or read; released on destruction.
class FileBytes {
  public:
    FileBytes() = default;
    FileBytes(FileBytes &&other) noexcept;
    FileBytes &operator=(FileBytes &&other) noexcept;
    FileBytes(const FileBytes &) = delete;
    FileBytes &operator=(const FileBytes &) = delete;
    ~FileBytes();

    /// Map `path` read-only (populated: the pages are read now, not at first touch).
    static Status map(const std::string &path, FileBytes &out);
    /// Read `path` with O_DIRECT into a 4096-aligned buffer (through the page cache
    /// where the file system refuses O_DIRECT; `direct()` says which).
    static Status read_direct(const std::string &path, FileBytes &out);

    Bytes bytes() const noexcept { return Bytes(data_, size_); }
    bool direct() const noexcept { return direct_; }

  private:
    void release() noexcept;
    const std::uint8_t *data_ = nullptr;
    std::size_t size_ = 0;
    bool mapped_ = false;
    bool direct_ = false;
};

/// Write `path` by calling `fill` on an open descriptor. `atomically`: on a new file
/// beside it, renamed into place, so a reader sees the old file or the whole new one and
/// a failure leaves `path` untouched; else `path` truncated and written in place.
/// `durable`: fsync the file (and, renamed, its directory) before returning.
Status write_file(const std::string &path, bool atomically, bool durable, const std::function<Status(int fd)> &fill);

} // namespace llama
} // namespace membrane

#endif
