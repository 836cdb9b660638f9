#include "slurm_ai/checkpoint/checkpoint.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "slurm_ai/checkpoint/checkpoint_recovery.hpp"
#include "slurm_ai/checkpoint/checkpoint_restart_log.hpp"
#include "slurm_ai/checkpoint/recover_run.hpp"
#include "slurm_ai/common/file_io.hpp"
#include "slurm_ai/common/text_scan.hpp"
#include "scratch_dir.hpp"

using namespace slurm_ai;
using namespace slurm_ai::checkpoint;
namespace fs = std::filesystem;

namespace {

const std::string kInputs = SLURM_AI_TEST_INPUTS;

void touch(const fs::path &p, const std::string &text = "x") {
    std::ofstream(p) << text;
}

// A directory checkpoint; complete when `marker` says so.
void dir_ckpt(const fs::path &root, const std::string &name, bool marker) {
    fs::create_directories(root / name);
    touch(root / name / "state.json", "{}");
    if (marker)
        touch(root / name / "COMPLETE");
}

std::vector<std::string> names(const std::vector<Checkpoint> &v) {
    std::vector<std::string> out;
    for (const auto &c : v)
        out.push_back(c.name);
    return out;
}

std::map<std::string, std::string> as_map(const EnvPairs &env) {
    return {env.begin(), env.end()};
}

}  // namespace

TEST_CASE("step numbers come from the last run of digits", "[checkpoint]") {
    CHECK(step_of("step-000120") == 120u);
    CHECK(step_of("ckpt_120.pt") == 120u);
    CHECK(step_of("epoch3-step45") == 45u);
    CHECK(step_of("7") == 7u);
    CHECK(step_of("step-0") == 0u);
    CHECK_FALSE(step_of("latest").has_value());
    CHECK_FALSE(step_of("step-1234567890123456789").has_value());  // 19 digits
    CHECK(expand_dir("/ckpt/%j/run", "42") == "/ckpt/42/run");
    CHECK(expand_dir("/ckpt/100%", "42") == "/ckpt/100%");
}

TEST_CASE("the newest complete checkpoint skips torn and hidden entries", "[checkpoint]") {
    test::ScratchDir d("ckpt");
    dir_ckpt(d.path, "step-000100", true);
    dir_ckpt(d.path, "step-000200", true);
    dir_ckpt(d.path, "step-000300", false);   // torn: a writer died before the marker
    dir_ckpt(d.path, ".tmp-step-400", true);  // in progress under a hidden name
    touch(d.path / "model-250.pt");           // a file checkpoint without its marker
    touch(d.path / "notes.txt");              // no step number: not a checkpoint
    touch(d.path / "step-000900.complete");   // a marker whose checkpoint is gone

    auto all = scan(d.str());
    REQUIRE(all.ok());
    CHECK(names(all.value()) ==
          std::vector<std::string>{"step-000100", "step-000200", "model-250.pt", "step-000300"});
    auto newest = newest_complete(all.value());
    REQUIRE(newest);
    CHECK(newest->name == "step-000200");
    CHECK(newest->path == (d.path / "step-000200").string());
    CHECK(newest->directory);

    // The file checkpoint becomes the newest once its sibling marker exists.
    touch(d.path / "model-250.pt.complete");
    newest = newest_complete(scan(d.str()).value());
    REQUIRE(newest);
    CHECK(newest->name == "model-250.pt");
    CHECK_FALSE(newest->directory);
    CHECK(newest->step == 250u);
}

TEST_CASE("equal steps are ordered by when their marker was written", "[checkpoint]") {
    test::ScratchDir d("ckpt");
    dir_ckpt(d.path, "b-step-5", true);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    dir_ckpt(d.path, "a-step-5", true);
    auto newest = newest_complete(scan(d.str()).value());
    REQUIRE(newest);
    CHECK(newest->name == "a-step-5");
    auto b = scan(d.str()).value().front();
    CHECK(b.name == "b-step-5");
    CHECK(advanced(b, newest));
    CHECK_FALSE(advanced(newest, b));
    CHECK(advanced(std::nullopt, newest));
    CHECK_FALSE(advanced(newest, std::nullopt));
}

TEST_CASE("a missing directory has no checkpoints; a file is an error", "[checkpoint]") {
    test::ScratchDir d("ckpt");
    auto none = scan((d.path / "not-yet").string());
    REQUIRE(none.ok());
    CHECK(none->empty());
    touch(d.path / "plain");
    auto bad = scan((d.path / "plain").string());
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().field == "--ai-checkpoint DIR");
    CHECK(bad.error().value == (d.path / "plain").string());
}

TEST_CASE("keep=N never removes the newest complete checkpoint", "[checkpoint]") {
    test::ScratchDir d("ckpt");
    for (int s : {10, 20, 30, 40})
        dir_ckpt(d.path, "step-" + std::to_string(s), true);
    dir_ckpt(d.path, "step-15", false);  // torn, older than what is kept: goes
    dir_ckpt(d.path, "step-50", false);  // torn, newer: may be a write in progress, stays
    auto all = scan(d.str()).value();

    CHECK(names(plan_prune(all, 2)) == std::vector<std::string>{"step-10", "step-15", "step-20"});
    CHECK(names(plan_prune(all, 4)).empty());
    // keep=0 is read as 1: the newest complete one always stays.
    CHECK(names(plan_prune(all, 0)) ==
          std::vector<std::string>{"step-10", "step-15", "step-20", "step-30"});

    auto errors = apply_prune(plan_prune(all, 1));
    CHECK(errors.empty());
    CHECK(names(scan(d.str()).value()) == std::vector<std::string>{"step-40", "step-50"});
    CHECK(newest_complete(scan(d.str()).value())->name == "step-40");

    // Without a complete checkpoint nothing goes, torn or not.
    test::ScratchDir e("ckpt");
    dir_ckpt(e.path, "step-1", false);
    CHECK(plan_prune(scan(e.str()).value(), 1).empty());
}

TEST_CASE("pruning removes the markers first", "[checkpoint]") {
    test::ScratchDir d("ckpt");
    dir_ckpt(d.path, "step-1", true);
    touch(d.path / "w-2.pt");
    touch(d.path / "w-2.pt.complete");
    dir_ckpt(d.path, "step-3", true);
    auto doomed = plan_prune(scan(d.str()).value(), 1);
    REQUIRE(names(doomed) == std::vector<std::string>{"step-1", "w-2.pt"});
    CHECK(apply_prune(doomed).empty());
    CHECK_FALSE(fs::exists(d.path / "w-2.pt.complete"));
    CHECK_FALSE(fs::exists(d.path / "w-2.pt"));
    CHECK_FALSE(fs::exists(d.path / "step-1"));
}

TEST_CASE("pruning a checkpoint that is a link removes the link, not what it names",
          "[checkpoint]") {
    test::ScratchDir d("ckpt"), elsewhere("ckpt-target");
    dir_ckpt(elsewhere.path, "real-1", true);
    touch(elsewhere.path / "real-1" / "weights.pt");
    fs::create_directory_symlink(elsewhere.path / "real-1", d.path / "step-1");
    dir_ckpt(d.path, "step-3", true);
    auto all = scan(d.str()).value();
    REQUIRE(names(all) == std::vector<std::string>{"step-1", "step-3"});
    CHECK(all[0].complete);  // read through the link: its marker is there
    auto doomed = plan_prune(all, 1);
    REQUIRE(names(doomed) == std::vector<std::string>{"step-1"});
    CHECK(apply_prune(doomed).empty());
    CHECK_FALSE(fs::exists(fs::symlink_status(d.path / "step-1")));
    CHECK(fs::exists(elsewhere.path / "real-1" / std::string(kMarkerInside)));
    CHECK(fs::exists(elsewhere.path / "real-1" / "weights.pt"));
}

TEST_CASE("pruning for a job's user leaves what its user does not own", "[checkpoint]") {
    // ai-recover prunes as SlurmUser in a directory the job's user writes. Between the scan
    // and the removal the user swaps the directory for a link to SlurmUser's own, where an
    // entry of the same name is SlurmUser's: it stays, and the message says why.
    test::ScratchDir d("ckpt"), daemon("ckpt-daemon");
    const fs::path user_dir = d.path / "job";
    fs::create_directories(user_dir);
    dir_ckpt(user_dir, "hash.1", true);
    dir_ckpt(user_dir, "hash.3", true);
    auto doomed = plan_prune(scan(user_dir.string()).value(), 1);
    REQUIRE(names(doomed) == std::vector<std::string>{"hash.1"});
    dir_ckpt(daemon.path, "hash.1", true);
    fs::rename(user_dir, d.path / "job.old");
    fs::create_directory_symlink(daemon.path, user_dir);
    const std::uint32_t user = ::geteuid() + 1;  // the daemon is this process's uid
    auto errors = apply_prune(doomed, user);
    REQUIRE(errors.size() == 1);
    CHECK_THAT(errors[0], Catch::Contains("hash.1") &&
                              Catch::Contains("uid " + std::to_string(user)));
    CHECK(fs::exists(daemon.path / "hash.1" / std::string(kMarkerInside)));
    CHECK(fs::exists(daemon.path / "hash.1" / "state.json"));

    // The user's own entries go.
    fs::remove(user_dir);
    fs::rename(d.path / "job.old", user_dir);
    CHECK(apply_prune(doomed, ::geteuid()).empty());
    CHECK_FALSE(fs::exists(user_dir / "hash.1"));
    CHECK(fs::exists(user_dir / "hash.3"));
}

TEST_CASE("each task learns where to resume from", "[checkpoint]") {
    test::ScratchDir d("ckpt");
    CheckpointSpec spec{d.str() + "/%j", 12, 120, 2};
    auto fresh = as_map(checkpoint_task_env(spec, "77", 0));
    CHECK(fresh["AI_CHECKPOINT_DIR"] == d.str() + "/77");
    CHECK_FALSE(fresh.count("AI_CHECKPOINT_RESUME"));
    CHECK_FALSE(fresh.count("AI_CHECKPOINT_STEP"));
    CHECK(fresh["AI_CHECKPOINT_SIGNAL"] == "12");
    CHECK(fresh["AI_CHECKPOINT_KEEP"] == "2");
    CHECK(fresh["AI_RESTART_COUNT"] == "0");

    dir_ckpt(d.path / "77", "step-00000040", true);
    dir_ckpt(d.path / "77", "step-00000060", false);
    auto again = as_map(checkpoint_task_env(spec, "77", 3));
    CHECK(again["AI_CHECKPOINT_RESUME"] == (d.path / "77" / "step-00000040").string());
    CHECK(again["AI_CHECKPOINT_STEP"] == "40");
    CHECK(again["AI_RESTART_COUNT"] == "3");

    // An unreadable DIR (here: a file) offers nothing rather than failing the task.
    touch(d.path / "88");
    auto odd = as_map(checkpoint_task_env(spec, "88", 1));
    CHECK(odd["AI_CHECKPOINT_DIR"] == d.str() + "/88");
    CHECK_FALSE(odd.count("AI_CHECKPOINT_RESUME"));
}

TEST_CASE("a requeued job's start delay is told from a user's --begin", "[checkpoint][recovery]") {
    // As Slurm shows a job it requeued: pending, BeginTime, start = submit + cred_expire + 1.
    JobView pending;
    pending.job_id = 1;
    pending.state = "PENDING";
    pending.reason = "BeginTime";
    pending.restarts = 2;
    pending.submit_time = 1795352000;
    pending.start_time = pending.submit_time + 121;
    CHECK(pending.pending());
    CHECK(begin_delayed_by_requeue(pending, pending.submit_time + 1));
    auto requeued_after_end = pending;  // the reason its failed run left
    requeued_after_end.reason = "NonZeroExitCode";
    CHECK(begin_delayed_by_requeue(requeued_after_end, pending.submit_time + 1));
    auto user_begin = pending;  // a --begin a day after submission is the user's own
    user_begin.start_time = user_begin.submit_time + 86400;
    CHECK_FALSE(begin_delayed_by_requeue(user_begin, pending.submit_time + 1));
    CHECK_FALSE(begin_delayed_by_requeue(pending, pending.start_time + 1));
    JobView running = pending;
    running.state = "RUNNING";
    running.reason = "None";
    CHECK(running.running());
    CHECK_FALSE(begin_delayed_by_requeue(running, running.start_time));
}

TEST_CASE("recovery plans", "[checkpoint][recovery]") {
    JobView job;
    job.job_id = 9;
    job.state = "RUNNING";
    job.nodes = {"n1", "n3"};  // n2 already dropped by --no-kill
    job.batch_host = "n1";
    job.partition = "debug";
    job.requeue = true;
    job.num_nodes = 3;
    JobHints hints;
    hints.checkpoint = CheckpointSpec{"/ckpt", 10, 300, 3};
    std::vector<std::string> part{"n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8"};
    RecoveryInput in{job, {"n1", "n2", "n3"}, {"n2", "n7"}, hints, part, 1000};

    SECTION("a plain job is requeued without the failed node, after a checkpoint") {
        auto p = plan_recovery(in);
        CHECK(p.action == Action::kRequeue);
        CHECK(p.lost == std::vector<std::string>{"n2"});
        CHECK(p.survivors == std::vector<std::string>{"n1", "n3"});
        CHECK(p.ask_checkpoint);
        CHECK(p.exclude == std::vector<std::string>{"n2"});
        CHECK_THAT(p.why, Catch::Contains("requeued with n2 excluded"));
    }
    SECTION("a failure outside the job changes nothing") {
        in.failed = {"n7", "n8"};
        auto p = plan_recovery(in);
        CHECK(p.action == Action::kNone);
        CHECK(p.lost.empty());
        CHECK_FALSE(p.ask_checkpoint);
    }
    SECTION("an elastic job above its minimum shrinks") {
        in.hints.elastic = ElasticSpec{2, 4};
        auto p = plan_recovery(in);
        CHECK(p.action == Action::kShrink);
        CHECK(p.ask_checkpoint);
        CHECK(p.survivors == std::vector<std::string>{"n1", "n3"});
        CHECK(p.exclude.empty());
    }
    SECTION("an elastic job below its minimum, or without its batch host, is requeued") {
        in.hints.elastic = ElasticSpec{3, 4};
        CHECK(plan_recovery(in).action == Action::kRequeue);
        CHECK_THAT(plan_recovery(in).why, Catch::Contains("below its elastic minimum of 3"));
        in.hints.elastic = ElasticSpec{1, 4};
        in.failed = {"n1"};
        in.job.nodes = {"n1", "n2", "n3"};
        auto p = plan_recovery(in);
        CHECK(p.action == Action::kRequeue);
        CHECK_THAT(p.why, Catch::Contains("batch host"));
    }
    SECTION("a job Slurm requeued itself gets the exclusion only") {
        in.job.state = "PENDING";
        in.job.nodes.clear();
        in.job.excluded = {"n5"};
        auto p = plan_recovery(in);
        CHECK(p.action == Action::kExclude);
        CHECK_FALSE(p.ask_checkpoint);
        CHECK(p.exclude == std::vector<std::string>{"n2", "n5"});
    }
    SECTION("a job that may not be requeued is left to Slurm") {
        in.job.requeue = false;
        auto p = plan_recovery(in);
        CHECK(p.action == Action::kNone);
        CHECK_THAT(p.why, Catch::Contains("--no-requeue"));
    }
    SECTION("a job without a checkpoint directory is not signalled") {
        in.hints.checkpoint.reset();
        auto p = plan_recovery(in);
        CHECK(p.action == Action::kRequeue);
        CHECK_FALSE(p.ask_checkpoint);
    }
    SECTION("a finished job has nothing to restart") {
        in.job.state = "COMPLETED";
        CHECK(plan_recovery(in).action == Action::kNone);
        CHECK_FALSE(in.job.settling());
        in.job.state = "COMPLETING";  // ending, or on its way back to the queue
        CHECK(in.job.settling());
        CHECK_FALSE(in.job.running());
        CHECK(plan_recovery(in).action == Action::kNone);
    }
    SECTION("a job that failed with the node is requeued; one that failed on its own is not") {
        in.job.state = "FAILED";
        in.job.end_time = 1001;  // its script's srun found a node short
        auto p = plan_recovery(in);
        CHECK(p.action == Action::kRequeue);
        CHECK_FALSE(p.ask_checkpoint);  // nothing runs to write one
        CHECK(p.exclude == std::vector<std::string>{"n2"});
        CHECK_THAT(p.why, Catch::Contains("ended FAILED with it: requeued with n2 excluded"));
        in.job.state = "NODE_FAIL";
        in.job.end_time = 1000 - 30;  // srun saw the node die before slurmctld did
        CHECK(plan_recovery(in).action == Action::kRequeue);
        in.job.requeue = false;
        CHECK(plan_recovery(in).action == Action::kNone);
        CHECK_THAT(plan_recovery(in).why, Catch::Contains("--no-requeue"));
        in.job.requeue = true;
        in.job.end_time = 1000 - 3600;  // an hour before the node went down
        CHECK(plan_recovery(in).action == Action::kNone);
        in.job.end_time = 1000 + 3600;
        CHECK(plan_recovery(in).action == Action::kNone);
        in.job.end_time = 1001;
        in.job.state = "COMPLETED";  // finished its work in time
        CHECK(plan_recovery(in).action == Action::kNone);
        in.job.state = "FAILED";
        in.failed_at = 0;  // when the node went down is not known
        CHECK(plan_recovery(in).action == Action::kNone);
    }
}

TEST_CASE("exclusions never make a job unrunnable", "[checkpoint][recovery]") {
    std::vector<std::string> part{"n1", "n2", "n3", "n4"};
    std::string note;
    CHECK(plan_exclusions({"n1"}, {"n2"}, part, 2, &note) == std::vector<std::string>{"n1", "n2"});
    CHECK(note.empty());
    CHECK(plan_exclusions({"n1"}, {"n2"}, part, 3, &note) == std::vector<std::string>{"n1"});
    CHECK_THAT(note, Catch::Contains("not excluding n2: the job needs 3"));
    CHECK(plan_exclusions({}, {"n2"}, {}, 3) == std::vector<std::string>{"n2"});
}

TEST_CASE("the time-limit checkpoint request is due SECS before the end", "[checkpoint]") {
    JobView job;
    job.state = "RUNNING";
    job.start_time = 1000;
    job.end_time = 4600;
    CheckpointSpec spec{"/c", 10, 300, 3};
    CHECK(checkpoint_signal_due(job, spec) == 4300);
    job.end_time = 0;
    CHECK_FALSE(checkpoint_signal_due(job, spec).has_value());
    job.end_time = 4600;
    job.state = "PENDING";
    CHECK_FALSE(checkpoint_signal_due(job, spec).has_value());
}

TEST_CASE("restart records round-trip and torn lines are skipped", "[checkpoint][log]") {
    test::ScratchDir d("ckpt");
    auto path = restart_log_path(d.str(), 12);
    CHECK(path == d.str() + "/ai_recover/jobs/12.jsonl");
    CHECK(read_restart_log(path)->records.empty());

    RestartRecord failure;
    failure.at = 1795352481.5;
    failure.event = "node_failure";
    failure.action = "requeue";
    failure.reason = "n2 DOWN (Not responding): lost n2: requeued with n2 excluded";
    failure.run_start = 1795352400;
    failure.failed = {"n2"};
    failure.nodes = "n[1-2]";
    failure.survivors = "n1";
    failure.excluded = "n2";
    failure.step_before = 120;
    failure.step_after = 131;
    failure.checkpoint = "/ckpt/step-131";
    failure.waited_s = 2.25;
    failure.restarts = 1;
    RestartRecord again;
    again.at = 1795352490;
    again.event = "running_again";
    again.nodes = "n[5-6]";
    again.checkpoint = "/ckpt/step-131";
    again.down_s = 9.5;
    again.restarts = 1;
    REQUIRE_FALSE(append_record(path, failure));
    {
        std::ofstream(path, std::ios::app) << "{\"at\": 17953524\n";  // a writer died mid-line
    }
    REQUIRE_FALSE(append_record(path, again));

    auto log = read_restart_log(path);
    REQUIRE(log.ok());
    CHECK(log->bad_lines == 1);
    REQUIRE(log->records.size() == 2);
    CHECK(log->records[0] == failure);
    CHECK(log->records[1] == again);

    auto text = describe(failure);
    CHECK_THAT(text, Catch::Contains("node failure: n2 DOWN (Not responding)"));
    CHECK_THAT(text, Catch::Contains("checkpoint step 120 -> 131"));
    CHECK_THAT(text, Catch::Contains("waited 2.2 s") || Catch::Contains("waited 2.3 s"));
    CHECK_THAT(text, Catch::Contains("resumes from /ckpt/step-131"));
    CHECK_THAT(text, Catch::EndsWith("[restarts 1]"));
    CHECK_THAT(describe(again),
               Catch::Contains("running again on n[5-6], 9.5 s after Slurm marked"));

    // A record without its required fields is not a record.
    CHECK_THROWS(nlohmann::json::parse(R"({"event":"x"})").get<RestartRecord>());
}

TEST_CASE("fuzz regressions of the restart log replay cleanly", "[checkpoint][fuzz]") {
    const fs::path dir =
        fs::path(kInputs).parent_path() / "fuzz" / "regressions" / "checkpoint_records";
    int replayed = 0;
    for (const auto &entry : fs::directory_iterator(dir)) {
        auto text = read_text_file(entry.path().string());
        REQUIRE(text.ok());
        INFO(entry.path().string());
        // Either a record whose time no clock shows (printed as a number, not converted),
        // or a number too big for its field: a line the log skips and counts.
        const RestartLog log = parse_restart_log(text.value());
        CHECK(log.records.size() + log.bad_lines == 1);
        for (const auto &r : log.records) {
            CHECK_THAT(describe(r), Catch::StartsWith("(at "));
            CHECK(parse_restart_log(dump_restart_record(r)).records.size() == 1);
        }
        ++replayed;
    }
    CHECK(replayed > 0);
}

TEST_CASE("ai-recover's record of a run reads back, and a torn one is an error",
          "[checkpoint][log]") {
    RecoverRun run{1795352400, {"n2", "n1"}, true};
    const std::string text = dump_recover_run(run);
    CHECK(text == "{\"nodes\":[\"n1\",\"n2\"],\"run_start\":1795352400,\"signalled\":true}\n");
    auto back = parse_recover_run(text, "runs/12.json");
    REQUIRE(back.ok());
    CHECK(back.value() == run);
    CHECK(parse_recover_run("{}", "runs/12.json").value() == RecoverRun{});
    for (const char *torn : {"{\"run_start\": 17953", "[]", "{\"run_start\": 1.5}",
                             "{\"run_start\": 1e300}", "{\"nodes\": \"n1\"}"}) {
        INFO(torn);
        auto p = parse_recover_run(torn, "runs/12.json");
        REQUIRE_FALSE(p.ok());
        CHECK_THAT(p.error().message(), Catch::StartsWith("runs/12.json: run="));
    }
}
