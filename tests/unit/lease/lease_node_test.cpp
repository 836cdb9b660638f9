// The lease's pieces that touch the node: reports and revocations in the messages and the
// book, the job processes ai-lease finds in /proc and freezes, the TCP probe, health
// events from a file that grows, rotates and shrinks, and the UDP transport.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "../scratch_dir.hpp"
#include "slurm_ai/lease/datagram.hpp"
#include "slurm_ai/lease/health.hpp"
#include "slurm_ai/lease/lease.hpp"
#include "slurm_ai/lease/node_tasks.hpp"
#include "slurm_ai/lease/probe.hpp"

using namespace slurm_ai::lease;
namespace fs = std::filesystem;

TEST_CASE("reports and revoking grants read back; bad ones name the field", "[lease]") {
    const Report lost{"c2", "peer_lost", 7, "c3", "NCCL error: remote process exited"};
    const std::string text = to_text(lost);
    CHECK(text == "slurm-ai-lease/1 report node=c2 kind=peer_lost job=7 suspect=c3 "
                  "why=NCCL_error:_remote_process_exited");
    CHECK(message_kind(text) == "report");
    CHECK(parse_report(text).value().why == "NCCL_error:_remote_process_exited");
    const Report unknown_peer{"c2", "peer_lost", 7, "", "gloo"};
    CHECK(parse_report(to_text(unknown_peer)).value() == unknown_peer);
    const Report xid{"c4", "health", 0, "c4", "Xid_79"};
    CHECK(parse_report(to_text(xid)).value() == xid);
    CHECK(parse_report("slurm-ai-lease/1 report node=c4 kind=health job=0 suspect=c1 why=x")
              .error()
              .field == "suspect");  // a node's agent speaks for its own node only
    CHECK(parse_report("slurm-ai-lease/1 report node=c2 kind=peer_lost job=0 suspect= why=x")
              .error()
              .field == "job");
    CHECK(parse_report("slurm-ai-lease/1 report node=c2 kind=reboot job=0 suspect= why=x")
              .error()
              .field == "kind");

    const Grant g{"c1", 5, 9, {7, 12}};
    CHECK(to_text(g) == "slurm-ai-lease/1 grant node=c1 boot=5 seq=9 revoked=7,12");
    CHECK(parse_grant(to_text(g)).value() == g);
    CHECK(parse_grant("slurm-ai-lease/1 grant node=c1 boot=5 seq=9 revoked=x").error().field ==
          "revoked");
    CHECK(message_kind("slurm-ai-lease/1 renew node=c1") == "renew");
    CHECK(message_kind("hello").empty());
}

TEST_CASE("a lease taken over revokes its jobs until their tasks are gone", "[lease]") {
    LeaseBook book(LeaseTimes{});
    CHECK(book.renewed({"c3", 1, 1, {7, 9}}, 0.0));
    CHECK(book.grant({"c3", 1, 1, {7, 9}}).revoked.empty());
    CHECK(book.newly_lapsed(3.5) == std::vector<std::string>{"c3"});
    book.take_over("c3");  // ai-recover confirmed it and recovers 7 and 9 elsewhere
    // The node comes back with job 7's tasks still there (frozen): the grant revokes 7.
    const Renewal back{"c3", 1, 2, {7}};
    CHECK(book.renewed(back, 40.0));
    CHECK(book.grant(back).revoked == std::vector<std::uint32_t>{7});
    // Once they are gone, job 7 may run there again (its next run): nothing is revoked.
    CHECK(book.renewed({"c3", 1, 3, {}}, 41.0));
    CHECK(book.renewed({"c3", 1, 4, {7}}, 90.0));
    CHECK(book.grant({"c3", 1, 4, {7}}).revoked.empty());
    book.take_over("c9");  // never heard of: nothing to take over
    CHECK(book.jobs_of("c9").empty());
}

TEST_CASE("the lease book outlives a restart of ai-recover", "[lease]") {
    LeaseBook book(LeaseTimes{});
    CHECK(book.renewed({"c1", 5, 10, {7}}, 0.0));
    CHECK(book.renewed({"c2", 5, 3, {8, 9}}, 0.0));
    CHECK(book.renewed({"c4", 5, 1, {}}, 0.0));  // runs no checkpointing job: not kept
    CHECK(book.take_changed());
    CHECK(book.renewed({"c1", 5, 11, {7}}, 1.0));  // the same jobs: nothing new to save
    CHECK_FALSE(book.take_changed());
    CHECK(book.newly_lapsed(3.5) == std::vector<std::string>{"c2"});
    book.take_over("c2");
    CHECK(book.take_changed());
    const std::string saved = book.saved();
    CHECK(saved == "slurm-ai-lease/1 hold node=c1 boot=5 seq=11 jobs=7 revoked=\n"
                   "slurm-ai-lease/1 hold node=c2 boot=5 seq=3 jobs=8,9 revoked=8,9\n");

    // The restarted ai-recover, at t=100: every kept node counts as renewed then.
    LeaseBook again(LeaseTimes{});
    CHECK_FALSE(again.restore(saved, 100.0));
    CHECK_FALSE(again.take_changed());
    CHECK(again.last_renewal("c1") == 100.0);
    CHECK(again.jobs_of("c2") == std::vector<std::uint32_t>{8, 9});
    CHECK_FALSE(again.last_renewal("c4"));
    CHECK(again.nodes_with_jobs() == 2);
    CHECK(again.revoked_jobs() == 2);
    CHECK_FALSE(again.renewed({"c2", 5, 3, {8, 9}}, 101.0));  // a replay is still refused
    // c2 comes back with job 8's tasks: the grant still revokes it (no thaw of the old copy).
    CHECK(again.renewed({"c2", 5, 4, {8}}, 102.0));
    CHECK(again.grant({"c2", 5, 4, {8}}).revoked == std::vector<std::uint32_t>{8});
    CHECK(again.revoked_jobs() == 1);  // job 9's tasks are gone from c2
    // c1 died while ai-recover was down: it never renews, and lapses LeaseLapse later.
    CHECK(again.newly_lapsed(102.9).empty());
    CHECK(again.newly_lapsed(103.5) == std::vector<std::string>{"c1"});

    // A damaged file names the line and the field, and restores nothing.
    LeaseBook empty(LeaseTimes{});
    auto error = empty.restore("slurm-ai-lease/1 hold node=c1 boot=5 seq=1 jobs=7 revoked=\n"
                               "slurm-ai-lease/1 hold node=c2 boot=5 seq=x jobs=8 revoked=\n",
                               0.0);
    REQUIRE(error);
    CHECK(error->field == "seq");
    CHECK(error->line == 2);
    CHECK(empty.jobs_of("c1").empty());
    error = empty.restore("slurm-ai-lease/1 hold node=c1 boot=5 seq=1 jobs=7 revoked=7;8\n", 0.0);
    REQUIRE(error);
    CHECK(error->field == "revoked");
}

namespace {

// A child that sleeps with the given environment; killed at scope exit.
struct Child {
    pid_t pid = -1;
    explicit Child(std::vector<std::string> env) {
        pid = fork();
        if (pid == 0) {
            std::vector<char *> envp;
            for (auto &e : env)
                envp.push_back(e.data());
            envp.push_back(nullptr);
            char sleep_arg[] = "30";
            char prog[] = "/bin/sleep";
            char *argv[] = {prog, sleep_arg, nullptr};
            execve(prog, argv, envp.data());
            _exit(127);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));  // exec'd by now
    }
    char state() const {
        std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
        std::string text((std::istreambuf_iterator<char>(stat)), {});
        auto close = text.rfind(')');
        return close == std::string::npos ? '?' : text[close + 2];
    }
    ~Child() {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
    }
};

}  // namespace

TEST_CASE("ai-lease finds this node's job processes in /proc and freezes them", "[lease]") {
    Child ckpt({"SLURM_JOB_ID=4242", "SLURMD_NODENAME=n7", "AI_CHECKPOINT_DIR=/ckpt/4242"});
    Child helper({"SLURM_JOB_ID=4242", "SLURMD_NODENAME=n7"});  // the batch shell, say
    Child other_node({"SLURM_JOB_ID=4243", "SLURMD_NODENAME=n8", "AI_CHECKPOINT_DIR=/c"});
    Child plain({"SLURM_JOB_ID=4244", "SLURMD_NODENAME=n7"});
    auto tasks = node_tasks("/proc", "n7");
    // Only processes of this test's children can carry these names; others are ignored.
    std::erase_if(tasks, [&](const NodeTask &t) {
        return t.pid != ckpt.pid && t.pid != helper.pid && t.pid != plain.pid;
    });
    REQUIRE(tasks.size() == 3);
    CHECK(checkpointing_jobs(tasks) == std::vector<std::uint32_t>{4242});
    // Fencing job 4242 freezes both its processes, and nothing of job 4244's.
    auto frozen = signal_jobs(tasks, {4242}, SIGSTOP);
    CHECK(frozen.size() == 2);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK(ckpt.state() == 'T');
    CHECK(helper.state() == 'T');
    CHECK(plain.state() == 'S');
    CHECK(other_node.state() == 'S');
    signal_jobs(tasks, {4242}, SIGCONT);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK(ckpt.state() == 'S');
}

TEST_CASE("a fake /proc: odd entries are skipped", "[lease]") {
    slurm_ai::test::ScratchDir dir("lease-proc");
    auto write = [&](const std::string &pid, const std::string &env) {
        fs::create_directories(dir.path / pid);
        std::ofstream(dir.path / pid / "environ", std::ios::binary) << env;
    };
    using namespace std::string_literals;
    write("10", "SLURM_JOB_ID=5\0SLURMD_NODENAME=c1\0AI_CHECKPOINT_DIR=/x\0"s);
    write("11", "SLURM_JOB_ID=5x\0SLURMD_NODENAME=c1\0"s);  // not a job id
    write("12", "SLURMD_NODENAME=c1\0"s);                    // no job
    write("self", "SLURM_JOB_ID=6\0SLURMD_NODENAME=c1\0"s);  // not a pid
    write("13", "SLURM_JOB_ID=6\0SLURMD_NODENAME=c10\0"s);   // another node
    write("14", "XSLURM_JOB_ID=8\0SLURMD_NODENAME=c1\0SLURM_JOB_ID=9\0"s);
    fs::create_directories(dir.path / "15");                 // ended: no environ
    const auto tasks = node_tasks(dir.path.string(), "c1");
    REQUIRE(tasks.size() == 2);
    CHECK(tasks[0] == NodeTask{10, 5, true});
    CHECK(tasks[1] == NodeTask{14, 9, false});
    CHECK(node_tasks((dir.path / "none").string(), "c1").empty());
}

TEST_CASE("the TCP probe tells answering, refusing and silent hosts apart", "[lease]") {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len);
    const auto port = ntohs(a.sin_port);
    REQUIRE(::listen(fd, 4) == 0);
    CHECK(probe_tcp("127.0.0.1", port, 1.0) == Reach::kAnswers);
    ::close(fd);
    CHECK(probe_tcp("127.0.0.1", port, 1.0) == Reach::kRefuses);  // the host is up
    CHECK(probe_tcp("no-such-host.invalid", 6818, 1.0) == Reach::kSilent);
    CHECK(std::string(to_string(Reach::kSilent)) == "silent");
}

TEST_CASE("fatal Xids are read from kernel log lines; others are left to the job", "[lease]") {
    auto e = fatal_xid("Nov 27 01:02:03 gpu-07 kernel: [12345.678] NVRM: Xid (PCI:0000:3b:00): "
                       "79, pid=1234, name=python, GPU has fallen off the bus.\n");
    REQUIRE(e);
    CHECK(e->xid == 79);
    CHECK(e->device == "PCI:0000:3b:00");
    CHECK(e->text == "Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the "
                     "bus.");
    CHECK(fatal_xid("NVRM: Xid (PCI:0000:18:00): 74, pid=7, NVLink: fatal error")->xid == 74);
    CHECK(fatal_xid("NVRM: Xid (PCI:0000:18:00): 95")->xid == 95);
    CHECK_FALSE(fatal_xid("NVRM: Xid (PCI:0000:3b:00): 13, Graphics Exception"));  // the app's
    CHECK_FALSE(fatal_xid("NVRM: Xid (PCI:0000:3b:00): 31, MMU fault"));
    CHECK_FALSE(fatal_xid("NVRM: Xid (PCI:0000:3b:00): 790, pid=1"));
    CHECK_FALSE(fatal_xid("NVRM: Xid (PCI:0000:3b:00): x79"));
    CHECK_FALSE(fatal_xid("slurmd: Xid mentioned in passing"));
}

TEST_CASE("a health file is followed through appends, rotation and truncation", "[lease]") {
    slurm_ai::test::ScratchDir dir("lease-health");
    const fs::path file = dir.path / "xid.log";
    std::ofstream(file) << "old line from before the agent\n";
    FileTail tail(file.string());
    CHECK(tail.new_lines().empty());  // what was there before the agent started is old
    std::ofstream(file, std::ios::app) << "first\nsecond, half";
    CHECK(tail.new_lines() == std::vector<std::string>{"first"});
    std::ofstream(file, std::ios::app) << " done\n";
    CHECK(tail.new_lines() == std::vector<std::string>{"second, half done"});
    fs::rename(file, dir.path / "xid.log.1");  // logrotate
    std::ofstream(file) << "after rotation\n";
    CHECK(tail.new_lines() == std::vector<std::string>{"after rotation"});
    std::ofstream(file, std::ios::trunc) << "x\n";  // truncated in place: shorter
    CHECK(tail.new_lines() == std::vector<std::string>{"x"});
    FileTail later((dir.path / "later.log").string());
    CHECK(later.new_lines().empty());
    std::ofstream(dir.path / "later.log") << "written after the agent started\n";
    CHECK(later.new_lines() == std::vector<std::string>{"written after the agent started"});
}

TEST_CASE("datagrams go to the listener and its answer comes back", "[lease]") {
    auto server = Datagram::listen(0);  // the kernel picks the port
    REQUIRE(server.port() != 0);
    auto agent = Datagram::toward("127.0.0.1", server.port());
    CHECK(agent.peer_address() == "127.0.0.1");  // numeric: probed without a name server
    CHECK(agent.send("slurm-ai-lease/1 renew node=c1 boot=1 seq=1 jobs="));
    auto got = server.receive(2.0);
    REQUIRE(got);
    CHECK(got->first == "slurm-ai-lease/1 renew node=c1 boot=1 seq=1 jobs=");
    CHECK_THAT(got->second.text(), Catch::Contains(std::to_string(agent.port())));
    CHECK(server.send_to("grant", got->second));
    auto answer = agent.receive(2.0);
    REQUIRE(answer);
    CHECK(answer->first == "grant");
    CHECK_FALSE(agent.receive(0.05));  // nothing more: a timeout, not a message
    CHECK_THROWS_WITH(Datagram::toward("no-such-host.invalid", 6828),
                      Catch::Contains("no-such-host.invalid"));
    // A port already taken: both families refuse it, and the error names the setting.
    const std::string taken = "LeasePort=" + std::to_string(server.port()) + ":";
    const auto open_fds = [] {
        return std::distance(std::filesystem::directory_iterator("/proc/self/fd"),
                             std::filesystem::directory_iterator{});
    };
    const auto before = open_fds();
    CHECK_THROWS_WITH(Datagram::listen(server.port()), Catch::Contains(taken));
    CHECK(open_fds() == before);  // neither refused socket stays open
}
