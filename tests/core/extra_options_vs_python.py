"""Generates many NRL_NSYS_EXTRA_OPTIONS objects whose values are JSON numbers in every spelling
json.loads reads (NaN, Infinity, -Infinity, integers past 64 bits, exponents, 1e400, tiny and
subnormal floats, -0, -0.0), plus strings, and fails unless nsel gives each option the text
Python's str() gives the value json.loads returns (what NeMo RL hands to Ray's nsys command).
Objects json.loads refuses must be refused by nsel too."""
import argparse
import json
import random
import struct
import sys


def number(rng):
    r = rng.random()
    if r < 0.08:
        return rng.choice(["NaN", "Infinity", "-Infinity", "-0", "0", "-0.0", "0.0", "1e400",
                           "-1e400", "1e-400", "4.9e-324", "2.2250738585072014e-308",
                           "1.7976931348623157e308", "18446744073709551616",
                           "-9223372036854775809", "9223372036854775807", "1E5", "1e+16",
                           "1e16", "1e15", "0.0001", "0.00001", "123456789012345678"])
    if r < 0.3:  # an integer, often past 64 bits
        digits = str(rng.randint(1, 9)) + "".join(rng.choice("0123456789")
                                                  for _ in range(rng.randint(0, 40)))
        return rng.choice(["", "-"]) + digits
    if r < 0.6:  # a random double, printed as Python prints it or with extra digits
        bits = rng.getrandbits(64)
        value = struct.unpack("<d", struct.pack("<Q", bits))[0]
        if value != value or value in (float("inf"), float("-inf")):
            return "1.5"
        text = repr(value)
        if rng.random() < 0.3:
            text = "%.25e" % value
        return text
    # a number typed by hand: digits, fraction, exponent
    text = rng.choice(["", "-"]) + rng.choice(["0", str(rng.randint(1, 10**rng.randint(1, 20)))])
    if rng.random() < 0.6:
        text += "." + "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 20)))
    if rng.random() < 0.5:
        text += rng.choice("eE") + rng.choice(["", "+", "-"]) + str(rng.randint(0, 330))
    return text


def bad(rng):
    return rng.choice(["nan", "inf", "+1", "01", "1.", ".5", "1e", "-", "NaNx", "Infinit",
                       "0x10", "1_0", "--1", "- 1", "1.e5", "Infinity1"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("oracle")
    parser.add_argument("--cases", type=int, default=50000)
    parser.add_argument("--seed", type=int, default=20261201)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    texts = []
    for _ in range(args.cases):
        items = []
        for k in range(rng.randint(1, 4)):
            v = number(rng) if rng.random() < 0.9 else (bad(rng) if rng.random() < 0.5 else
                                                         json.dumps("s" + str(k)))
            items.append(f'"key{k}"{rng.choice(["", " "])}:{rng.choice(["", " ", chr(10)])}{v}')
        texts.append("{" + ", ".join(items) + "}")
    payload = "".join(t.encode().hex() + "\n" for t in texts)
    result = subprocess_run(args.oracle, payload)
    answers = result.split("\n")
    accepted = 0
    for text, answer in zip(texts, answers):
        try:
            loaded = json.loads(text)
        except ValueError:
            loaded = None
        if loaded is None:
            want = "error"
        else:
            want = "\x1e".join(f"{k}={v if isinstance(v, str) else str(v)}"
                               for k, v in loaded.items()).encode().hex()
            accepted += 1
        if answer != want:
            shown = answer if answer == "error" else bytes.fromhex(answer).decode()
            print(f"disagreement on {text!r}: Python {loaded!r}, nsel {shown!r}")
            return 1
    print(f"{len(texts)} NRL_NSYS_EXTRA_OPTIONS values agree with json.loads and str() "
          f"({accepted} objects accepted, {len(texts) - accepted} refused by both)")
    return 0 if len(answers) == len(texts) + 1 and accepted > len(texts) // 4 else 1


def subprocess_run(oracle, payload):
    import subprocess
    return subprocess.run([oracle], input=payload.encode(), capture_output=True,
                          check=True).stdout.decode()


if __name__ == "__main__":
    sys.exit(main())
