"""Runs a command N times and prints "<median wall s> <median CPU s> <peak RSS KiB>", the figures
every bench script compares with its peer. CPU is user + system time of the command and every
process it waited for, the peak RSS their largest (getrusage); on a shared machine the CPU time
is the steadier of the two.

    python3 bench/measure.py REPEAT PREPARE COMMAND [ARG...]

PREPARE runs with bash before each run, untimed (":" for nothing)."""
import resource
import subprocess
import sys
import time


def main():
    repeat, prepare, command = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    walls, cpus = [], []
    for _ in range(repeat):
        subprocess.run(["bash", "-c", prepare], check=True)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        began = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        walls.append(time.perf_counter() - began)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    walls.sort()
    cpus.sort()
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(f"{walls[len(walls) // 2]:.3f} {cpus[len(cpus) // 2]:.3f} {peak}")


if __name__ == "__main__":
    main()
