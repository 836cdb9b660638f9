#!/usr/bin/env python3
"""A toy data-parallel trainer for the checkpoint/restart tests and benchmark.

Every task (srun rank) holds the same state and advances it one step every --step-ms:
the state after step k is a SHA-256 chain over the step numbers, so a state can be checked
against its step number alone. Like data-parallel training, a step commits only once every
rank of the step has computed it (the all-reduce, here a barrier on files in
DIR/.progress-<run>/): when a rank's node dies, the others stall at their last committed
step, as they would in a collective, and a checkpoint they write then holds exactly that
step. Checkpoints follow the suite's convention
(docs/checkpoint.md): a directory DIR/step-<k> holding state.json and, written last, the
marker COMPLETE; it is written under a hidden name and renamed into place, so a reader
never sees half of one. Rank 0 checkpoints every --every steps; every rank checkpoints
at the next step boundary after the checkpoint-request signal (the first writer of a step
wins). At the end the final state is checkpointed too.

Where to resume: AI_CHECKPOINT_RESUME when the SPANK plugin set AI_CHECKPOINT_DIR (unset
RESUME then means a fresh start); without the plugin's variables, the newest complete
checkpoint as `ai-recover resume-path DIR` reports it (--resolver). The loaded state is
verified (marker present, chain matches the step) or the trainer exits 3.

Output lines (one per event, for the tests to read):
  <time> rank=R node=N resume step=S from=PATH restart=C
  <time> rank=R node=N step=S               (step S committed)
  <time> rank=R node=N checkpoint step=S why=periodic|signal|final
  <time> rank=R node=N done step=S digest=HEX
"""
import argparse
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

SEED = b"slurm-ai toy trainer"


def advance(digest: str, step: int) -> str:
    return hashlib.sha256((digest + ":" + str(step)).encode()).hexdigest()


def state_at(step: int) -> str:
    digest = hashlib.sha256(SEED).hexdigest()
    for k in range(1, step + 1):
        digest = advance(digest, k)
    return digest


class Trainer:
    def __init__(self, args):
        self.args = args
        self.rank = int(os.environ.get("SLURM_PROCID", "0"))
        self.world = int(os.environ.get("SLURM_STEP_NUM_TASKS", os.environ.get("SLURM_NTASKS", "1")))
        self.node = os.environ.get("SLURMD_NODENAME", socket.gethostname())
        self.dir = os.environ.get("AI_CHECKPOINT_DIR") or args.dir
        if not self.dir:
            sys.exit("toy_trainer: no checkpoint directory (AI_CHECKPOINT_DIR or --dir)")
        self.restart = os.environ.get("AI_RESTART_COUNT", os.environ.get("SLURM_RESTART_COUNT", "0"))
        self.requested = False
        sig = int(os.environ.get("AI_CHECKPOINT_SIGNAL", signal.SIGUSR1))
        signal.signal(sig, self.on_request)
        signal.signal(signal.SIGTERM, self.on_term)

    def say(self, what):
        print(f"{time.time():.3f} rank={self.rank} node={self.node} {what}", flush=True)

    def on_request(self, *_):
        self.requested = True

    def on_term(self, *_):
        self.say("terminated")
        sys.exit(143)

    def resume_path(self):
        if "AI_CHECKPOINT_DIR" in os.environ:
            return os.environ.get("AI_CHECKPOINT_RESUME") or None
        if not self.args.resolver:
            return None
        r = subprocess.run(self.args.resolver.split() + [self.dir], capture_output=True, text=True)
        return r.stdout.strip() if r.returncode == 0 and r.stdout.strip() else None

    def load(self, path):
        if not os.path.isfile(os.path.join(path, "COMPLETE")):
            self.fail(f"offered {path}, which has no COMPLETE marker")
        with open(os.path.join(path, "state.json")) as f:
            state = json.load(f)
        step, digest = int(state["step"]), state["digest"]
        if digest != state_at(step):
            self.fail(f"{path}: state of step {step} does not verify")
        return step, digest

    def fail(self, why):
        self.say(f"error {why}")
        sys.exit(3)

    def checkpoint(self, step, digest, why):
        final = os.path.join(self.dir, f"step-{step:08d}")
        if os.path.exists(final):
            return
        tmp = os.path.join(self.dir, f".tmp-{step:08d}-r{self.rank}-{os.getpid()}")
        os.makedirs(tmp, exist_ok=True)
        for name, text in (("state.json", json.dumps({"step": step, "digest": digest})),
                           ("COMPLETE", f"step {step} rank {self.rank}\n")):
            with open(os.path.join(tmp, name), "w") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
        try:
            os.rename(tmp, final)  # fails if another rank got there first
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)
            return
        self.say(f"checkpoint step={step} why={why}")

    def post(self, kind, step):
        tmp = os.path.join(self.progress, f".{kind}-{self.rank}")
        with open(tmp, "w") as f:
            f.write(str(step))
        os.replace(tmp, os.path.join(self.progress, f"{kind}-{self.rank}"))

    def posted(self, kind):
        """What every rank posted (-1: nothing yet)."""
        out = []
        for r in range(self.world):
            try:
                with open(os.path.join(self.progress, f"{kind}-{r}")) as f:
                    out.append(int(f.read() or -1))
            except (OSError, ValueError):
                out.append(-1)
        return out

    def barrier(self, step, digest):
        """Waits until every rank computed `step`; serves checkpoint requests meanwhile
        (the state is that of step - 1, the last one committed)."""
        while min(self.posted("arrived")) < step:
            if self.requested:
                self.requested = False
                self.checkpoint(step - 1, digest, "signal")
            time.sleep(0.002)

    def run(self):
        os.makedirs(self.dir, exist_ok=True)
        run_id = "-".join(os.environ.get(k, "0") for k in
                          ("SLURM_JOB_ID", "SLURM_RESTART_COUNT", "SLURM_STEP_ID"))
        self.progress = os.path.join(self.dir, f".progress-{run_id}")
        os.makedirs(self.progress, exist_ok=True)
        if self.rank == 0:  # earlier runs' barriers: nobody waits on them any more
            for old in os.listdir(self.dir):
                if old.startswith(".progress-") and old != os.path.basename(self.progress):
                    shutil.rmtree(os.path.join(self.dir, old), ignore_errors=True)
        path = self.resume_path()
        step, digest = (0, state_at(0)) if path is None else self.load(path)
        self.say(f"resume step={step} from={path or 'scratch'} restart={self.restart}")
        self.post("resumed", step)
        while min(self.posted("resumed")) < 0:
            time.sleep(0.002)
        if set(self.posted("resumed")) != {step}:
            self.fail(f"ranks resumed from different steps: {self.posted('resumed')}")
        time.sleep(self.args.startup_s)  # loading a model takes a while
        while step < self.args.steps:
            time.sleep(self.args.step_ms / 1000.0)  # compute
            self.post("arrived", step + 1)
            self.barrier(step + 1, digest)  # all-reduce
            step += 1
            digest = advance(digest, step)
            self.say(f"step={step}")
            if self.requested:
                self.requested = False
                self.checkpoint(step, digest, "signal")
            elif self.rank == 0 and step % self.args.every == 0:
                self.checkpoint(step, digest, "periodic")
        self.checkpoint(step, digest, "final")
        self.say(f"done step={step} digest={digest}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, required=True, help="final step count")
    p.add_argument("--step-ms", type=float, default=100, help="time per step")
    p.add_argument("--every", type=int, default=50, help="rank 0 checkpoints every N steps")
    p.add_argument("--startup-s", type=float, default=0, help="pause before the first step")
    p.add_argument("--dir", help="checkpoint directory when AI_CHECKPOINT_DIR is not set")
    p.add_argument("--resolver", help="command printing the newest complete checkpoint of DIR")
    Trainer(p.parse_args()).run()


if __name__ == "__main__":
    main()
