#include "file_io.hpp"

#include <cerrno>
#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace membrane {
namespace llama {
namespace {

constexpr std::size_t kDirectAlign = 4096;

/// Closes a descriptor when it goes out of scope.
struct Fd {
    int fd = -1;
    explicit Fd(int f) : fd(f) {}
    Fd(const Fd &) = delete;
    Fd &operator=(const Fd &) = delete;
    ~Fd() {
        if (fd >= 0) close(fd);
    }
};

Status file_size(int fd, const std::string &path, std::size_t &size) {
    struct stat st;
    if (fstat(fd, &st) != 0) return Status::io(errno, "fstat " + path);
    if (!S_ISREG(st.st_mode)) return Status::io(EINVAL, path + " is not a regular file");
    size = static_cast<std::size_t>(st.st_size);
    return Status();
}

} // namespace

FileBytes::FileBytes(FileBytes &&other) noexcept { *this = std::move(other); }

FileBytes &FileBytes::operator=(FileBytes &&other) noexcept {
    if (this != &other) {
        release();
        data_ = other.data_;
        size_ = other.size_;
        mapped_ = other.mapped_;
        direct_ = other.direct_;
        other.data_ = nullptr;
        other.size_ = 0;
    }
    return *this;
}

FileBytes::~FileBytes() { release(); }

void FileBytes::release() noexcept {
    if (data_ == nullptr) return;
    if (mapped_) {
        // SAFETY: data_/size_ are the mapping mmap returned, unmapped once.
        munmap(const_cast<std::uint8_t *>(data_), size_);
    } else {
        std::free(const_cast<std::uint8_t *>(data_));
    }
    data_ = nullptr;
    size_ = 0;
}

Status FileBytes::map(const std::string &path, FileBytes &out) {
    Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.fd < 0) return Status::io(errno, "open " + path);
    std::size_t size = 0;
    if (Status s = file_size(fd.fd, path, size); !s) return s;
    FileBytes bytes;
    if (size > 0) {
        void *p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd.fd, 0);
        if (p == MAP_FAILED) return Status::io(errno, "mmap " + path);
        bytes.data_ = static_cast<const std::uint8_t *>(p);
        bytes.size_ = size;
        bytes.mapped_ = true;
    }
    out = std::move(bytes);
    return Status();
}

Status FileBytes::read_direct(const std::string &path, FileBytes &out) {
    bool direct = true;
    int raw = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT);
    if (raw < 0 && errno == EINVAL) {
        direct = false;
        raw = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    }
    Fd fd(raw);
    if (fd.fd < 0) return Status::io(errno, "open " + path);
    std::size_t size = 0;
    if (Status s = file_size(fd.fd, path, size); !s) return s;
    // O_DIRECT reads whole blocks into a block-aligned buffer; the last one comes back
    // short at the end of the file.
    std::size_t capacity = (size + kDirectAlign - 1) / kDirectAlign * kDirectAlign;
    if (capacity == 0) capacity = kDirectAlign;
    auto *buf = static_cast<std::uint8_t *>(std::aligned_alloc(kDirectAlign, capacity));
    if (buf == nullptr) return Status::io(ENOMEM, "a buffer for " + path);
    FileBytes bytes;
    bytes.data_ = buf;
    bytes.direct_ = direct;
    std::size_t done = 0;
    while (done < size) {
        ssize_t n = read(fd.fd, buf + done, capacity - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return Status::io(errno, "read " + path);
        if (n == 0) break;
        done += static_cast<std::size_t>(n);
    }
    if (done != size) return Status::io(EIO, path + " changed size while read");
    bytes.size_ = size;
    out = std::move(bytes);
    return Status();
}

Status write_file(const std::string &path, bool atomically, bool durable, const std::function<Status(int fd)> &fill) {
    const std::string target = atomically ? path + ".tmp." + std::to_string(getpid()) : path;
    int raw = open(target.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (raw < 0) return Status::io(errno, "create " + target);
    Status s;
    {
        Fd fd(raw);
        s = fill(fd.fd);
        if (s && durable && fsync(fd.fd) != 0) s = Status::io(errno, "fsync " + target);
        int closed = close(fd.fd);
        fd.fd = -1;
        if (s && closed != 0) s = Status::io(errno, "close " + target);
    }
    if (!atomically) return s;
    if (s && rename(target.c_str(), path.c_str()) != 0) s = Status::io(errno, "rename to " + path);
    if (!s) {
        unlink(target.c_str());
        return s;
    }
    if (durable) {
        std::string dir = path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/') + 1);
        Fd dfd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (dfd.fd < 0 || fsync(dfd.fd) != 0) return Status::io(errno, "fsync " + dir);
    }
    return Status();
}

} // namespace llama
} // namespace membrane
