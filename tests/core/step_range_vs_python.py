"""Generates many NRL_NSYS_PROFILE_STEP_RANGE values, parses each as NeMo RL does (split on ':',
Python's int() on both halves, start >= 1, start < stop) and as nsel does, and fails on any
disagreement. Values are drawn from what int() treats specially: signs, underscores, digits of
other scripts, Unicode and ASCII blanks, and bytes that are not UTF-8 (read with surrogateescape,
as os.environ does). Numbers past 64 bits are the one difference kept on purpose (the contract
refuses values that overflow): they must be refused by nsel and are counted apart."""
import argparse
import random
import subprocess
import sys
import unicodedata

DIGITS = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.decimal(chr(c), None) is not None]
BLANKS = [" ", "\t", "\n", "\v", "\f", "\r", "\x1c", "\x1f", "\x85", "\xa0", "\u1680", "\u2000",
          "\u200a", "\u200b", "\u2028", "\u202f", "\u205f", "\u3000", "\ufeff", "\u180e"]
OTHER = ["+", "-", "_", "__", ":", ".", "e", "x", "0x", "a", "١", "²", "½", "Ⅻ", "\x00", "\x7f"]
LIMIT = 2**63


def piece(rng):
    r = rng.random()
    if r < 0.45:
        return rng.choice("0123456789")
    if r < 0.6:
        return rng.choice(DIGITS)
    if r < 0.8:
        return rng.choice(BLANKS)
    if r < 0.97:
        return rng.choice(OTHER)
    return rng.choice(["9" * 19, "9223372036854775807", "9223372036854775808", "1" + "0" * 30])


def number(rng):
    if rng.random() < 0.5:
        # A well-formed number in some spelling: blanks, a sign, digits joined by underscores.
        digits = [rng.choice(DIGITS if rng.random() < 0.3 else "0123456789")
                  for _ in range(rng.randint(1, 4))]
        text = digits[0]
        for d in digits[1:]:
            text += ("_" if rng.random() < 0.3 else "") + d
        sign = rng.choice(["", "", "+", "-"])
        return (rng.choice(BLANKS + [""] * 10) + sign + text + rng.choice(BLANKS + [""] * 10))
    return "".join(piece(rng) for _ in range(rng.randint(0, 5)))


def value(rng):
    if rng.random() < 0.9:
        return number(rng) + ":" + number(rng)
    return "".join(piece(rng) for _ in range(rng.randint(0, 8)))


def nemo_rl(text):
    """NeMo RL's parsing of the variable; None where it raises."""
    parts = text.split(":")
    if len(parts) != 2:
        return None
    try:
        start, stop = int(parts[0]), int(parts[1])
    except ValueError:
        return None
    if not (start < stop and start >= 1):
        return None
    return (start, stop)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("oracle")
    parser.add_argument("--cases", type=int, default=200000)
    parser.add_argument("--seed", type=int, default=20261201)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    raw = []
    for _ in range(args.cases):
        data = value(rng).encode("utf-8", "surrogatepass")
        if rng.random() < 0.03:  # a byte that is not UTF-8
            at = rng.randint(0, len(data))
            data = data[:at] + bytes([rng.choice([0x80, 0xc3, 0xff, 0xed])]) + data[at:]
        if b"," in data or b"\x00" in data:
            continue  # ',' separates nsel's several windows; no variable holds a NUL
        raw.append(data)
    payload = "".join(d.hex() + "\n" for d in raw)
    result = subprocess.run([args.oracle], input=payload.encode(), capture_output=True, check=True)
    answers = result.stdout.decode().split("\n")
    accepted = wide = 0
    for data, answer in zip(raw, answers):
        text = data.decode("utf-8", "surrogateescape")
        expected = nemo_rl(text)
        if expected is not None and max(abs(v) for v in expected) >= LIMIT:
            wide += 1
            if answer != "error":
                print(f"nsel accepted a number past 64 bits: {text!r} -> {answer}")
                return 1
            continue
        want = "error" if expected is None else f"{expected[0]} {expected[1]}"
        if answer != want:
            print(f"disagreement on {text!r} ({data!r}): NeMo RL {want}, nsel {answer}")
            return 1
        accepted += expected is not None
    print(f"{len(raw)} values agree with NeMo RL's parsing ({accepted} accepted as windows, "
          f"{len(raw) - accepted - wide} refused by both; {wide} past 64 bits refused by nsel only)")
    return 0 if len(answers) == len(raw) + 1 and accepted > len(raw) // 20 else 1


if __name__ == "__main__":
    sys.exit(main())
