#!/usr/bin/python3
"""A PyTorch data-parallel trainer that consumes only the suite's task environment.

Run by srun under the SPANK plugin, one process per task (gloo on CPU; no torchrun: the
packaged one fails under Debian 12's Python 3.11). Its ranks find each other by
torch.distributed's env:// rendezvous from MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE
as the plugin sets them; nothing else about the cluster is assumed (MASTER_ADDR is
127.0.0.1 on the loopback mini-cluster and a host name in a container cluster).

The model is a small MLP in float64, trained by SGD with momentum on synthetic data: the
global batch of step k is a function of (--seed, k) alone, and each rank takes a
contiguous slice of it by RANK and WORLD_SIZE.

Why the gradient is reduced in fixed point: after a node failure a job may resume on fewer
nodes, or an elastic job may change size, and its final parameters must still equal,
bit for bit, those of an uninterrupted run with the same seed. A float all-reduce cannot
promise that: float addition is not associative, so the sum depends on how the batch is
split among ranks and on the order the collective adds the parts in. Here each sample's
gradient is computed alone (a batch of one: the same operations whichever rank does it,
with one intra-op thread), rounded to an int64 multiple of 2**-SCALE_BITS, and the
integers are summed locally and by all_reduce(SUM). Integer addition is exact and
associative, so the reduced gradient, and every update after it, is independent of the
world size, the sharding and the collective's algorithm. The update itself is the same
float64 arithmetic on every rank, so all ranks hold the same state at every step and any
survivor's checkpoint will do.

Checkpoints follow the suite's convention (docs/checkpoint.md): DIR/step-<k> holding
state.pt (torch.save: step, parameters, momentum, the run's hyperparameters and the
parameters' digest) and, written last, COMPLETE ("step S rank R node N"); it is written
under a hidden name (.tmp-S-rR-NODE-PID) and renamed into place. DIR is AI_CHECKPOINT_DIR, else --dir; without either there are none.
Rank 0 checkpoints every --every steps and at the end. The checkpoint-request signal
(AI_CHECKPOINT_SIGNAL, default SIGUSR1) and SIGTERM are turned into flags that travel in
the same all_reduce as the gradient, so that all ranks agree on the step boundary where
rank 0 checkpoints (and, for SIGTERM, where all stop with exit status 143: an elastic
job's script ends the step that way to start it again at a new size).
When the collective cannot complete (a peer died: gloo reports the closed connection, or a
peer hangs: the collective stays pending for --stall-s), the rank holds the last step it
committed, as every rank does: a checkpoint request or SIGTERM then makes it write that
step itself (the first writer of a step wins), and it waits to be ended.

Resuming: with AI_CHECKPOINT_DIR set, from AI_CHECKPOINT_RESUME (unset: a fresh start);
otherwise from --resume. Rank 0 loads and verifies the checkpoint (COMPLETE marker, the
same seed, batch and optimiser settings, the parameters' digest) and broadcasts the state,
as DDP broadcasts rank 0's parameters; a bad checkpoint is an error (exit status 3), and
so is a failed rendezvous (exit status 4: a peer never came or left early; ddp_job.sh
starts the step again).

Output lines (one per event, read by tests/trainer/trainer_log.py and the tests):
  <time> rank=R node=N resume step=S from=PATH|scratch world=W master=ADDR:PORT restart=C
  <time> rank=R node=N step=S loss=L            (step S committed; L: its batch's mean loss)
  <time> rank=R node=N checkpoint step=S why=periodic|signal|stop|final
  <time> rank=R node=N stalled step=S why=TEXT  (the collective of step S+1 failed or hangs)
  <time> rank=R node=N stopped step=S           (SIGTERM: ended at a step boundary)
  <time> rank=R node=N stopped before the rendezvous   (SIGTERM while loading torch)
  <time> rank=R node=N done step=S digest=HEX   (sha256 of the final parameters' bytes)
  <time> rank=R node=N error TEXT
"""
import os
import signal
import sys

# Before the slow import of torch: the request signal's default action would end the task.
_FLAGS = {"request": False, "term": False}
_REQUEST_SIG = int(os.environ.get("AI_CHECKPOINT_SIGNAL") or signal.SIGUSR1)


def _on_request(*_):
    _FLAGS["request"] = True


def _on_term(*_):
    _FLAGS["term"] = True


signal.signal(signal.SIGTERM, _on_term)
signal.signal(_REQUEST_SIG, _on_request)  # the request signal wins if it is SIGTERM

import argparse  # noqa: E402
import datetime  # noqa: E402
import hashlib  # noqa: E402
import shlex  # noqa: E402
import shutil  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

SCALE_BITS = 32            # gradients in units of 2**-32
CLAMP = 2 ** 52            # a sample's quantized gradient element is clipped to +-2**52,
MAX_BATCH = 2 ** 10        # so that a batch's sum stays well within int64
IN, HIDDEN = 8, 16
FORMAT = "slurm-ai ddp_trainer 1"
ENV = ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE")


def stream_seed(*parts):
    """A 63-bit generator seed from the parts (the same on every rank and machine)."""
    text = ":".join(str(p) for p in parts).encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "little") >> 1


def make_model(seed):
    torch.manual_seed(stream_seed(seed, "init"))
    return torch.nn.Sequential(torch.nn.Linear(IN, HIDDEN), torch.nn.Tanh(),
                               torch.nn.Linear(HIDDEN, 1)).double()


def global_batch(seed, step, size):
    """Inputs and targets of step `step`: a function of (seed, step) only."""
    teacher = torch.Generator().manual_seed(stream_seed(seed, "teacher"))
    w = torch.randn(IN, 1, generator=teacher, dtype=torch.float64)
    g = torch.Generator().manual_seed(stream_seed(seed, "batch", step))
    x = torch.randn(size, IN, generator=g, dtype=torch.float64)
    y = torch.tanh(x @ w / IN ** 0.5) + 0.1 * torch.randn(size, 1, generator=g, dtype=torch.float64)
    return x, y


def digest_of(flat):
    return hashlib.sha256(flat.detach().contiguous().numpy().tobytes()).hexdigest()


class Trainer:
    def __init__(self, args):
        self.args = args
        missing = [k for k in ENV if not os.environ.get(k)]
        if missing:
            sys.exit(f"ddp_trainer: {', '.join(missing)} not set: run it with srun under the "
                     f"suite's SPANK plugin, or set {', '.join(ENV)} yourself")
        self.rank = int(os.environ["RANK"])
        self.world = int(os.environ["WORLD_SIZE"])
        self.node = os.environ.get("SLURMD_NODENAME", socket.gethostname())
        self.restart = os.environ.get("AI_RESTART_COUNT", os.environ.get("SLURM_RESTART_COUNT", "0"))
        self.dir = os.environ.get("AI_CHECKPOINT_DIR") or args.dir
        torch.set_num_threads(1)  # one thread: the same float operations in every process
        self.model = make_model(args.seed)
        self.params = list(self.model.parameters())
        self.flat = torch.nn.utils.parameters_to_vector(self.params).detach().clone()
        self.momentum = torch.zeros_like(self.flat)
        self.step = 0

    # --- output ---------------------------------------------------------------------
    def say(self, what):
        print(f"{time.time():.3f} rank={self.rank} node={self.node} {what}", flush=True)

    def fail(self, why, code=3):
        self.say(f"error {why}")
        sys.exit(code)

    # --- checkpoints ----------------------------------------------------------------
    def settings(self):
        a = self.args
        return {"seed": a.seed, "batch": a.batch, "lr": a.lr, "momentum": a.momentum}

    def checkpoint(self, why):
        if not self.dir:
            return
        final = os.path.join(self.dir, f"step-{self.step:08d}")
        if os.path.exists(final):
            return
        os.makedirs(self.dir, exist_ok=True)
        # The writer's node in the names and the marker: docker.node_netcut checks that a
        # node cut off from the controller writes nothing here once it is fenced.
        tmp = os.path.join(self.dir,
                           f".tmp-{self.step:08d}-r{self.rank}-{self.node}-{os.getpid()}")
        os.makedirs(tmp, exist_ok=True)
        state = {"format": FORMAT, "step": self.step, "settings": self.settings(),
                 "params": self.flat.clone(), "momentum": self.momentum.clone(),
                 "digest": digest_of(self.flat), "world": self.world}
        with open(os.path.join(tmp, "state.pt"), "wb") as f:
            torch.save(state, f)
            f.flush()
            os.fsync(f.fileno())
        with open(os.path.join(tmp, "COMPLETE"), "w") as f:
            f.write(f"step {self.step} rank {self.rank} node {self.node}\n")
            f.flush()
            os.fsync(f.fileno())
        try:
            os.rename(tmp, final)  # fails if another rank got there first
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)
            return
        self.say(f"checkpoint step={self.step} why={why}")

    def resume_path(self):
        if "AI_CHECKPOINT_DIR" in os.environ:
            return os.environ.get("AI_CHECKPOINT_RESUME") or None
        return self.args.resume

    def load(self, path):
        """Rank 0: the verified state of checkpoint `path`, or why it is refused."""
        if not os.path.isfile(os.path.join(path, "COMPLETE")):
            return f"offered {path}, which has no COMPLETE marker"
        try:
            state = torch.load(os.path.join(path, "state.pt"), map_location="cpu")
        except Exception as e:  # noqa: BLE001 - any unreadable file is the same error
            return f"{path}/state.pt: cannot load: {e}"
        if not isinstance(state, dict) or state.get("format") != FORMAT:
            return f"{path}/state.pt: not a ddp_trainer checkpoint"
        if state["settings"] != self.settings():
            return f"{path}: written with {state['settings']}, this run has {self.settings()}"
        if state["params"].shape != self.flat.shape or digest_of(state["params"]) != state["digest"]:
            return f"{path}: parameters of step {state['step']} do not verify"
        return state

    def rendezvous(self):
        where = f"{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}"
        # PyTorch 2.4 and later ask for a libuv TCPStore, which Debian 13's python3-torch
        # is built without; the classic store works with every version.
        os.environ.setdefault("USE_LIBUV", "0")
        try:
            dist.init_process_group("gloo", init_method="env://",
                                    timeout=datetime.timedelta(seconds=self.args.timeout_s))
            # Rank 0 decides where to resume and broadcasts the state: every rank starts
            # from the same bits even if the nodes saw different newest checkpoints.
            path, state, meta = self.resume_path(), None, [None]
            if self.rank == 0:
                state = self.load(path) if path else None
                meta = [(path, state) if isinstance(state, str) else
                        (path, state["step"] if state else 0)]
            dist.broadcast_object_list(meta, src=0)
            path, step = meta[0]
            if isinstance(step, str):  # rank 0 refused the checkpoint: every rank says so
                self.fail(step)
            if self.rank == 0 and state:
                self.flat.copy_(state["params"])
                self.momentum.copy_(state["momentum"])
            dist.broadcast(self.flat, src=0)
            dist.broadcast(self.momentum, src=0)
        except RuntimeError as e:  # a peer that never came, or left during the rendezvous
            self.fail(f"rendezvous at {where} as rank {self.rank} of {self.world} failed: "
                      f"{str(e).strip().splitlines()[-1]}", code=4)
        self.step = step
        self.say(f"resume step={self.step} from={path or 'scratch'} world={self.world} "
                 f"master={where} restart={self.restart}")

    # --- training -------------------------------------------------------------------
    def local_gradient(self):
        """This rank's samples' gradients, each rounded to fixed point, summed in int64."""
        a = self.args
        x, y = global_batch(a.seed, self.step + 1, a.batch)
        lo, hi = a.batch * self.rank // self.world, a.batch * (self.rank + 1) // self.world
        torch.nn.utils.vector_to_parameters(self.flat, self.params)
        total = torch.zeros(self.flat.numel() + 1, dtype=torch.int64)  # + the loss
        for i in range(lo, hi):
            loss = (self.model(x[i:i + 1]) - y[i:i + 1]).pow(2).mean()
            grads = torch.autograd.grad(loss, self.params)
            g = torch.cat([t.reshape(-1) for t in grads] + [loss.detach().reshape(1)])
            total += torch.round(g * 2.0 ** SCALE_BITS).clamp(-CLAMP, CLAMP).to(torch.int64)
        return total

    def reduce(self, packed):
        """all_reduce(SUM) that keeps serving signals while it waits."""
        work = dist.all_reduce(packed, op=dist.ReduceOp.SUM, async_op=True)
        started = time.monotonic()
        while not work.is_completed():
            # A collective pending for --stall-s may never complete (a peer hangs): serve
            # what was asked with the committed step, which every rank holds.
            if time.monotonic() - started > self.args.stall_s:
                if _FLAGS["request"]:
                    _FLAGS["request"] = False
                    self.checkpoint("signal")
                if _FLAGS["term"]:
                    self.say(f"stalled step={self.step} why=pending_{time.monotonic() - started:.1f}s")
                    self.stop_stalled()
            time.sleep(0.001)
        try:
            work.wait()
        except RuntimeError as e:  # a peer died: gloo saw its connection close
            self.stalled(str(e).strip().splitlines()[-1][:160].replace(" ", "_"))
        return packed

    def stop_stalled(self):
        self.checkpoint("stop")
        self.say(f"stopped step={self.step}")
        os._exit(143)  # the broken collective's threads must not hold the exit

    def report_lost_peer(self, why):
        """Tells ai-recover that a peer was lost, with the command the suite names in the
        task's environment (AI_REPORT_FAILURE, docs/checkpoint.md "Leases"): it probes the
        job's other nodes at once instead of waiting for their leases to lapse. Best
        effort: the trainer's own handling goes on whatever the report does."""
        command = os.environ.get("AI_REPORT_FAILURE")
        if not command:
            return
        try:
            subprocess.run(shlex.split(command) + ["--why", f"gloo: {why}"[:100]],
                           timeout=10, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError):
            pass

    def stalled(self, why):
        """The collective of the next step failed: this rank holds the last committed
        step. Serves checkpoint requests and SIGTERM with it until the step is ended."""
        self.say(f"stalled step={self.step} why={why}")
        self.report_lost_peer(why)
        deadline = time.monotonic() + self.args.timeout_s
        while time.monotonic() < deadline:
            if _FLAGS["request"]:
                _FLAGS["request"] = False
                self.checkpoint("signal")
            if _FLAGS["term"]:
                self.stop_stalled()
            time.sleep(0.01)
        self.checkpoint("stop")
        self.say(f"error peers lost at step {self.step}: nobody ended the step within "
                 f"{self.args.timeout_s:g}s")
        os._exit(3)

    def run(self):
        a = self.args
        if _FLAGS["term"]:  # ended while loading torch: nothing to save
            self.say("stopped before the rendezvous")
            sys.exit(143)
        self.rendezvous()
        n = self.flat.numel()
        while self.step < a.steps:
            t0 = time.monotonic()
            grad = self.local_gradient()
            asked, term = _FLAGS["request"], _FLAGS["term"]
            flags = torch.tensor([int(asked), int(term)], dtype=torch.int64)
            packed = self.reduce(torch.cat([grad, flags]))
            mean = packed[:n + 1].to(torch.float64) / 2.0 ** SCALE_BITS / a.batch
            self.momentum.mul_(a.momentum).add_(mean[:n])
            self.flat.sub_(a.lr * self.momentum)
            self.step += 1
            self.say(f"step={self.step} loss={mean[n].item():.6f}")
            if packed[n + 2] > 0:
                if self.rank == 0:
                    self.checkpoint("stop")
                self.say(f"stopped step={self.step}")
                dist.destroy_process_group()
                sys.exit(143)
            if packed[n + 1] > 0:
                _FLAGS["request"] = False
                if self.rank == 0:
                    self.checkpoint("signal")
            elif self.rank == 0 and self.step % a.every == 0:
                self.checkpoint("periodic")
            left = a.step_ms / 1000.0 - (time.monotonic() - t0)
            if left > 0:
                time.sleep(left)
        if self.rank == 0:
            self.checkpoint("final")
            if a.final:
                torch.nn.utils.vector_to_parameters(self.flat, self.params)
                tmp = f"{a.final}.tmp-{os.getpid()}"
                torch.save({"step": self.step, "settings": self.settings(),
                            "state_dict": self.model.state_dict(), "params": self.flat.clone()}, tmp)
                os.replace(tmp, a.final)
        dist.barrier()
        self.say(f"done step={self.step} digest={digest_of(self.flat)}")
        dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, required=True, help="final step count")
    p.add_argument("--seed", type=int, default=1, help="data, initial parameters (default 1)")
    p.add_argument("--batch", type=int, default=24,
                   help=f"global batch size, at most {MAX_BATCH} (default 24)")
    p.add_argument("--lr", type=float, default=0.05, help="learning rate (default 0.05)")
    p.add_argument("--momentum", type=float, default=0.9, help="SGD momentum (default 0.9)")
    p.add_argument("--every", type=int, default=50, help="rank 0 checkpoints every N steps")
    p.add_argument("--step-ms", type=float, default=0, help="least time per step (tests)")
    p.add_argument("--dir", help="checkpoint directory when AI_CHECKPOINT_DIR is not set")
    p.add_argument("--resume", help="checkpoint to resume from when AI_CHECKPOINT_DIR is not set")
    p.add_argument("--final", help="rank 0 writes the final parameters here (torch.save)")
    p.add_argument("--stall-s", type=float, default=1.0,
                   help="a collective pending this long is stalled: signals are served locally")
    p.add_argument("--timeout-s", type=float, default=300,
                   help="rendezvous and collective timeout; a stalled rank gives up after it")
    a = p.parse_args()
    if a.steps < 0 or not 1 <= a.batch <= MAX_BATCH or a.every < 1:
        p.error(f"--steps must be >= 0, --every >= 1 and --batch within 1..{MAX_BATCH}")
    Trainer(a).run()


if __name__ == "__main__":
    main()
