"""peer.py - the Python contender of the libshexec benchmark.

Runs one measurement the way a Python agent host runs commands, with the
standard library only, and prints one line "RESULT key=value ..." for the
C driver (bench/main.c) to parse. Anything wrong (a non-zero exit, a short
read) raises, so the interpreter exits non-zero and the driver stops.

    peer.py version
    peer.py spawn run|run-notimeout SHELL N HOST_MIB [BUDGET_S]
                                         sequential agent-style runs of `true`
    peer.py stream CMD [stderr]          Popen + 64 KiB reads to EOF (of stdout,
                                         or of stderr with the argument)
    peer.py idle CMD                     context switches over one run
    peer.py latency CMD N                readline latency of timestamped lines
    peer.py concurrency K CMD            K asyncio subprocesses at once
    peer.py workload SHELL DIR N LIST    N commands of the agent-like list (the
                                         file LIST, one per line, repeated), each
                                         run like an agent in DIR
"""
import asyncio
import mmap
import os
import resource
import signal
import subprocess
import sys
import time

SH = "/bin/sh"


def result(**kv):
    print("RESULT " + " ".join(f"{k}={v}" for k, v in kv.items()), flush=True)


def run_like_an_agent(cmd, shell=SH, timeout=120):
    # The local environment of SWE-agent-style hosts (mini-swe-agent): the
    # command through the shell in a new session, stdout and stderr merged
    # into one captured text, communicate() with a timeout. With a timeout,
    # Popen.wait polls for the exit with sleeps of 0.5 ms doubling.
    p = subprocess.Popen(cmd, shell=True, executable=shell, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        raise
    if p.returncode != 0:
        raise SystemExit(f"`{cmd}` exited {p.returncode}")
    return out


def hold_memory(mib):
    if mib <= 0:
        return None
    # populated up front: resident, as a heap in use
    return mmap.mmap(-1, mib << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS |
                     mmap.MAP_POPULATE)


def t_spawn(mode, shell, n, host_mib, budget_s="0"):
    if mode not in ("run", "run-notimeout"):
        raise SystemExit(f"unknown spawn mode {mode}")
    timeout = 120 if mode == "run" else None
    n, budget = int(n), float(budget_s)
    ballast = hold_memory(int(host_mib))
    # a budget (seconds) ends the loop early: a slow spawner still gives a rate
    t0 = time.perf_counter()
    for _ in range(10):
        run_like_an_agent("true", shell, timeout)
        if budget and time.perf_counter() - t0 > budget / 4:
            break
    t0, done = time.perf_counter(), 0
    while done < n:
        run_like_an_agent("true", shell, timeout)
        done += 1
        if budget and done >= 3 and time.perf_counter() - t0 > budget:
            break
    dt = time.perf_counter() - t0
    del ballast
    result(runs_per_s=f"{done / dt:.3f}", runs=done)


def maxrss_kib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def t_stream(cmd, which="stdout"):
    rss0 = maxrss_kib()
    t0 = time.perf_counter()
    if which == "stderr":
        p = subprocess.Popen([SH, "-c", cmd], stderr=subprocess.PIPE, bufsize=0)
        pipe = p.stderr
    else:
        p = subprocess.Popen([SH, "-c", cmd], stdout=subprocess.PIPE, bufsize=0)
        pipe = p.stdout
    read, total = pipe.read, 0
    while True:
        b = read(65536)
        if not b:
            break
        total += len(b)
    if p.wait() != 0:
        raise SystemExit(f"`{cmd}` exited {p.returncode}")
    dt = time.perf_counter() - t0
    result(bytes=total, seconds=f"{dt:.6f}", rss_growth_kib=maxrss_kib() - rss0)


def t_idle(cmd):
    before = resource.getrusage(resource.RUSAGE_THREAD).ru_nvcsw
    run_like_an_agent(cmd)
    after = resource.getrusage(resource.RUSAGE_THREAD).ru_nvcsw
    result(nvcsw=after - before)


def pct(sorted_v, p):
    # nearest rank, as the C side computes it
    rank = max(1, min(len(sorted_v), -(-len(sorted_v) * p // 100)))
    return sorted_v[rank - 1]


def t_latency(cmd, n):
    n = int(n)
    clock = time.clock_gettime_ns
    mono = time.CLOCK_MONOTONIC
    lat = []
    p = subprocess.Popen([SH, "-c", cmd], stdout=subprocess.PIPE)
    for line in p.stdout:
        t = clock(mono)
        lat.append((t - int(line.split()[1])) / 1e3)
    if p.wait() != 0:
        raise SystemExit(f"`{cmd}` exited {p.returncode}")
    if len(lat) != n:
        raise SystemExit(f"saw {len(lat)} lines, expected {n}")
    lat.sort()
    result(p50_us=f"{pct(lat, 50):.1f}", p99_us=f"{pct(lat, 99):.1f}")


async def one_stream(cmd):
    p = await asyncio.create_subprocess_exec(SH, "-c", cmd, stdout=asyncio.subprocess.PIPE)
    total = 0
    while True:
        b = await p.stdout.read(65536)
        if not b:
            break
        total += len(b)
    if await p.wait() != 0:
        raise SystemExit(f"`{cmd}` exited {p.returncode}")
    return total


async def all_streams(k, cmd):
    return await asyncio.gather(*(one_stream(cmd) for _ in range(k)))


def t_concurrency(k, cmd):
    t0 = time.perf_counter()
    got = asyncio.run(all_streams(int(k), cmd))
    dt = time.perf_counter() - t0
    result(seconds=f"{dt:.6f}", min_bytes=min(got), max_bytes=max(got))


def t_workload(shell, cwd, n, listing):
    with open(listing) as f:
        cmds = [c for c in f.read().split("\n") if c]
    t0 = time.perf_counter()
    for i in range(int(n)):
        cmd = cmds[i % len(cmds)]
        p = subprocess.Popen(cmd, shell=True, executable=shell, text=True, cwd=cwd,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             start_new_session=True)
        p.communicate(timeout=120)
        if p.returncode != 0:
            raise SystemExit(f"`{cmd}` exited {p.returncode}")
    result(seconds=f"{time.perf_counter() - t0:.6f}")


def main(argv):
    tests = {"spawn": t_spawn, "stream": t_stream, "idle": t_idle, "latency": t_latency,
             "concurrency": t_concurrency, "workload": t_workload}
    if argv and argv[0] == "version":
        result(version=sys.version.split()[0], exe=sys.executable)
    elif argv and argv[0] in tests:
        tests[argv[0]](*argv[1:])
    else:
        raise SystemExit(f"usage: peer.py {{version|{'|'.join(tests)}}} ARGS")


if __name__ == "__main__":
    main(sys.argv[1:])
