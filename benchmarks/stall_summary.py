"""Where a kernel's warps wait: the warp-stall samples of an Nsight Compute report, per stall
reason and per SASS instruction, from its source page exported as CSV
(``ncu --import R.ncu-rep --page source --csv --print-source sass > R.sass.csv``).

    python benchmarks/stall_summary.py R.sass.csv --top 20

Prints each stall reason's share of all samples and of the samples not spent waiting at a
barrier (a one-block kernel's idle warps wait there while the warps with work run the level),
then the instructions with the most samples and their two main reasons.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

SAMPLES = "Warp Stall Sampling (All Samples)"
EXECUTED = "Instructions Executed"
BARRIER = "stall_barrier"


def _number(text: str) -> float:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("csv", type=Path, help="the source page of an ncu report, as CSV")
    p.add_argument("--top", type=int, default=20, help="instructions to list")
    args = p.parse_args()
    with args.csv.open(newline="") as f:
        rows = list(csv.reader(f))
    at = next(i for i, row in enumerate(rows) if SAMPLES in row)
    header, body = rows[at], [row for row in rows[at + 1 :] if len(row) == len(rows[at])]
    column = {name: i for i, name in enumerate(header)}
    reasons = [h for h in header if h.startswith("stall_") and "(Not Issued)" not in h]
    totals = {r: sum(_number(row[column[r]]) for row in body) for r in reasons}
    samples = sum(_number(row[column[SAMPLES]]) for row in body)
    working = samples - totals.get(BARRIER, 0.0)
    print(f"{len(body)} instructions, {samples:.0f} samples, {working:.0f} not at a barrier")
    print("| reason | samples | share | share not at a barrier |")
    print("| --- | ---: | ---: | ---: |")
    for reason, count in sorted(totals.items(), key=lambda item: -item[1]):
        if count:
            rest = "" if reason == BARRIER else f"{100 * count / max(working, 1):.1f}%"
            print(f"| {reason} | {count:.0f} | {100 * count / samples:.1f}% | {rest} |")
    print("\n| # | samples | executed | instruction | main reasons |")
    print("| ---: | ---: | ---: | --- | --- |")
    ranked = sorted(range(len(body)), key=lambda i: -_number(body[i][column[SAMPLES]]))
    for i in ranked[: args.top]:
        row = body[i]
        main_reasons = sorted(((_number(row[column[r]]), r) for r in reasons), reverse=True)[:2]
        why = ", ".join(f"{r} {n:.0f}" for n, r in main_reasons if n)
        print(
            f"| {i} | {_number(row[column[SAMPLES]]):.0f} | {_number(row[column[EXECUTED]]):.0f} "
            f"| `{row[column['Source']].strip()}` | {why} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
