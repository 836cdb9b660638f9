#include "slurm_ai/placement/failure_class.hpp"

#include <array>
#include <string>

#include "slurm_ai/common/enum_names.hpp"
#include "slurm_ai/common/text_scan.hpp"

namespace slurm_ai {

std::string_view to_string(FailureClass c) {
    static constexpr std::string_view kNames[] = {"gpu",     "network",  "power",
                                                  "cooling", "software", "other"};
    return enum_name(c, kNames);
}

FailureClass classify_failure(std::string_view text) {
    const std::string t = text::lower(text);
    auto any = [&](std::initializer_list<std::string_view> words) {
        for (auto w : words)
            if (t.find(w) != std::string::npos)
                return true;
        return false;
    };
    if (any({"gpu", "xid", "ecc", "nvlink", "nvidia", "dcgm"}))
        return FailureClass::kGpu;
    if (any({"nic", "hca", "infiniband", "ib port", "link down", "cable", "optical",
             "transceiver", "rdma", "roce", "efa"}))
        return FailureClass::kNetwork;
    if (any({"power", "psu"}))
        return FailureClass::kPower;
    if (any({"fan", "temperature", "thermal", "overheat"}))
        return FailureClass::kCooling;
    if (any({"kernel", "panic", "file system", "filesystem", "fs readonly", "operating system",
             "software", "firmware", "driver", "kill task", "epilog", "prolog"}))
        return FailureClass::kSoftware;
    return FailureClass::kOther;
}

}  // namespace slurm_ai
