#include "slurm_ai/lease/munge_seal.hpp"

#include <munge.h>

#include <cstdlib>
#include <stdexcept>

namespace slurm_ai::lease {

std::string seal(std::string_view payload) {
    char *cred = nullptr;
    const munge_err_t rc =
        munge_encode(&cred, nullptr, payload.data(), static_cast<int>(payload.size()));
    if (rc != EMUNGE_SUCCESS) {
        std::free(cred);
        throw std::runtime_error(std::string("munge: ") + munge_strerror(rc));
    }
    std::string out(cred);
    std::free(cred);
    return out;
}

Parsed<Opened> open_sealed(std::string_view credential) {
    const std::string text(credential);
    void *buf = nullptr;
    int len = 0;
    Opened o;
    const munge_err_t rc = munge_decode(text.c_str(), nullptr, &buf, &len, &o.uid, &o.gid);
    if (rc != EMUNGE_SUCCESS) {
        std::free(buf);
        return InputError{"credential", text.substr(0, 40), munge_strerror(rc), "munge", 0};
    }
    o.payload.assign(static_cast<const char *>(buf), static_cast<std::size_t>(len));
    std::free(buf);
    return o;
}

}  // namespace slurm_ai::lease
