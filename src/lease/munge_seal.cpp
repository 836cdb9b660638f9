#include "slurm_ai/lease/munge_seal.hpp"

#include <munge.h>

#include <cstdlib>
#include <stdexcept>

namespace slurm_ai::lease {
namespace {

// A munge context that talks to the munged at `socket` (the default one when empty).
class Context {
  public:
    explicit Context(const std::string &socket) : ctx_(munge_ctx_create()) {
        if (!ctx_)
            throw std::runtime_error("munge: cannot create a context");
        if (!socket.empty() && munge_ctx_set(ctx_, MUNGE_OPT_SOCKET, socket.c_str()) !=
                                   EMUNGE_SUCCESS)
            throw std::runtime_error("munge: cannot use the socket " + socket);
    }
    ~Context() { munge_ctx_destroy(ctx_); }
    Context(const Context &) = delete;
    Context &operator=(const Context &) = delete;
    munge_ctx_t get() const { return ctx_; }

  private:
    munge_ctx_t ctx_;
};

}  // namespace

std::string seal(std::string_view payload, const std::string &socket) {
    Context ctx(socket);
    char *cred = nullptr;
    const munge_err_t rc =
        munge_encode(&cred, ctx.get(), payload.data(), static_cast<int>(payload.size()));
    if (rc != EMUNGE_SUCCESS) {
        std::free(cred);
        throw std::runtime_error(std::string("munge: ") + munge_strerror(rc));
    }
    std::string out(cred);
    std::free(cred);
    return out;
}

Parsed<Opened> open_sealed(std::string_view credential, const std::string &socket) {
    const std::string text(credential);
    Context ctx(socket);
    void *buf = nullptr;
    int len = 0;
    Opened o;
    const munge_err_t rc = munge_decode(text.c_str(), ctx.get(), &buf, &len, &o.uid, &o.gid);
    if (rc != EMUNGE_SUCCESS) {
        std::free(buf);
        return InputError{"credential", text.substr(0, 40), munge_strerror(rc), "munge", 0};
    }
    o.payload.assign(static_cast<const char *>(buf), static_cast<std::size_t>(len));
    std::free(buf);
    return o;
}

}  // namespace slurm_ai::lease
