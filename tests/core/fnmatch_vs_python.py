"""Generates many (pattern, name) pairs, asks Python's fnmatch.fnmatchcase and nsel's matcher,
and fails on the first disagreement. Patterns are drawn from the characters that matter to the
rules (*, ?, [, ], !, ^, -, backslash, ranges, non-ASCII) so that every rule is exercised."""
import argparse
import fnmatch
import json
import random
import subprocess
import sys

ALPHABET = list("ab-z]![^\\*?:.,/") + ["é", "ß", "中", "\n", " "]
NAME_ALPHABET = list("abz-]![^\\:./_") + ["é", "ß", "中", "\n", " "]
WORKERS = ["dtensor_policy_worker", "dtensor_policy_worker_v2", "megatron_policy_worker",
           "vllm_generation_worker", "vllm_async_generation_worker", "sglang_generation_worker"]


def pattern(rng):
    if rng.random() < 0.15:
        base = rng.choice(WORKERS)
        pieces = list(base)
        for _ in range(rng.randint(1, 3)):
            pieces[rng.randrange(len(pieces))] = rng.choice(["*", "?", "[a-z]", "[!_]", "[^v]"])
        return "".join(pieces)
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 8)))


def name(rng, pat):
    if rng.random() < 0.15:
        return rng.choice(WORKERS)
    if rng.random() < 0.3:
        # A name built from the pattern's own characters matches far more often.
        chars = [c for c in pat if c not in "*?"] or ["a"]
        return "".join(rng.choice(chars + NAME_ALPHABET) for _ in range(rng.randint(0, 8)))
    return "".join(rng.choice(NAME_ALPHABET) for _ in range(rng.randint(0, 8)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("oracle")
    parser.add_argument("--cases", type=int, default=200000)
    parser.add_argument("--seed", type=int, default=20261129)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    cases = []
    for _ in range(args.cases):
        p = pattern(rng)
        cases.append((p, name(rng, p)))
    payload = "".join(json.dumps(case, ensure_ascii=True) + "\n" for case in cases)
    result = subprocess.run([args.oracle], input=payload.encode(), capture_output=True, check=True)
    answers = result.stdout.decode().split()
    if len(answers) != len(cases):
        sys.exit(f"oracle answered {len(answers)} of {len(cases)} cases")
    matches = 0
    for (p, n), answer in zip(cases, answers):
        expected = fnmatch.fnmatchcase(n, p)
        matches += expected
        if expected != (answer == "1"):
            sys.exit(f"disagreement: pattern {p!r} name {n!r}: python {expected}, nsel {answer}")
    print(f"fnmatch: {len(cases)} cases agree with Python ({matches} matches)")


if __name__ == "__main__":
    main()
