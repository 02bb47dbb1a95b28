#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""tools/bench/bench-baseline's logic on made-up tables, in TAP: how a row is
known across a quick and a full run, which ratio is the row's, which way is
better, when a row is worse, when a regression, and the tolerances.

    test-bench-baseline.py TOOLS/BENCH/BENCH-BASELINE"""
import contextlib
import importlib.machinery
import importlib.util
import io
import json
import os
import sys
import tempfile

loader = importlib.machinery.SourceFileLoader("bench_baseline", sys.argv[1])
spec = importlib.util.spec_from_loader("bench_baseline", loader)
bb = importlib.util.module_from_spec(spec)
loader.exec_module(bb)

HEAD = "| what | bgrun | reference | ratio | goal |\n| --- | --- | --- | --- | --- |\n"


def table(launch_ratio="ext4 1.20x; tmpfs 0.90x", rate="300.0 jobs/s", rate_ratio="1.50x", n=300):
    return HEAD + (
        f"| Launch → job running; median / p99 (n={n}) | ext4: 4 ms | raw StartTransientUnit: ext4: 3 ms | "
        f"{launch_ratio} | ≤ 1.2x |\n"
        f"| ″ | ext4: 4 ms | fork+exec (floor): 1 ms | ext4 4.00x (p99 9.00x); tmpfs 2.00x | – |\n"
        f"| Throughput: {n} × `true` | {rate} (1.0 s) | systemd-run: 200 units/s | {rate_ratio} | – |\n"
        f"| ″ split at started_at | call → started_at 2 ms | – | – | – |\n")


tests, failures = [], 0


def test(fn):
    tests.append(fn)
    return fn


def write(directory, name, text):
    path = os.path.join(directory, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def compare(d, run_text, baseline):
    store = write(d, "baseline.json", json.dumps(baseline))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = bb.compare(write(d, "run.md", run_text), store, os.path.join(d, "history.json"))
    return rc, out.getvalue()


def baseline_of(text, tolerance):
    with tempfile.TemporaryDirectory() as d:
        rows = bb.parse(write(d, "t.md", text))
    for r in rows.values():
        r["tolerance"] = tolerance
        r["tolerance_from"] = "test"
    return {"format": 1, "recorded": {}, "rows": rows}


@test
def rows_are_known_by_their_words_across_quick_and_full_runs():
    with tempfile.TemporaryDirectory() as d:
        full = bb.parse(write(d, "full.md", table(n=300)))
        quick = bb.parse(write(d, "quick.md", table(n=30)))
    assert set(full) == set(quick), (set(full) ^ set(quick))
    # Two ratios of the first row, two of its ″ row, the throughput; the
    # split row has none.
    assert len(full) == 5, list(full)


@test
def a_ditto_row_is_its_first_rows_and_details_in_parentheses_are_not_ratios():
    with tempfile.TemporaryDirectory() as d:
        rows = bb.parse(write(d, "t.md", table()))
    floor = {k: v["ratio"] for k, v in rows.items() if "fork+exec" in k}
    assert sorted(floor.values()) == [2.0, 4.0], floor  # never the p99's 9.00x
    assert all(k.startswith("Launch → job running") for k in floor), floor


@test
def times_are_better_lower_and_rates_higher():
    with tempfile.TemporaryDirectory() as d:
        rows = bb.parse(write(d, "t.md", table()))
    better = {("Throughput" in k): v["better"] for k, v in rows.items()}
    assert better == {True: "higher", False: "lower"}, better


@test
def a_row_within_its_tolerance_is_ok_and_a_better_one_never_flagged():
    base = baseline_of(table(), 0.2)
    with tempfile.TemporaryDirectory() as d:
        rc, out = compare(d, table(launch_ratio="ext4 1.30x; tmpfs 0.50x", rate_ratio="3.00x"), base)
    assert rc == 0 and "worse (once" not in out and "REGRESSION" not in out, out


@test
def worse_once_is_said_and_worse_twice_in_a_row_is_a_regression():
    base = baseline_of(table(), 0.2)
    slow = table(launch_ratio="ext4 2.40x; tmpfs 0.90x")
    with tempfile.TemporaryDirectory() as d:
        rc1, out1 = compare(d, slow, base)
        rc2, out2 = compare(d, slow, base)
        rc3, out3 = compare(d, table(), base)
        rc4, out4 = compare(d, slow, base)
    assert rc1 == 0 and "worse (once" in out1 and "REGRESSION" not in out1, out1
    assert rc2 == 3 and out2.count("**REGRESSION**") == 1, out2
    assert rc3 == 0 and "worse (once" not in out3, out3
    assert rc4 == 0 and "REGRESSION" not in out4, "a good run in between starts the count again"


@test
def a_rate_is_worse_when_it_falls():
    base = baseline_of(table(), 0.2)
    with tempfile.TemporaryDirectory() as d:
        compare(d, table(rate_ratio="1.00x"), base)
        rc, out = compare(d, table(rate_ratio="1.00x"), base)
    assert rc == 3 and "Throughput" in out.split("**REGRESSION**")[0].splitlines()[-1], out


@test
def calibrate_takes_the_spread_of_repeated_runs_at_least_ten_percent():
    with tempfile.TemporaryDirectory() as d:
        store = os.path.join(d, "baseline.json")
        runs = [write(d, f"q{i}.md", table(launch_ratio=f"ext4 {v}x; tmpfs 0.90x"))
                for i, v in enumerate(("1.00", "1.20", "1.60"))]
        with contextlib.redirect_stderr(io.StringIO()):
            bb.save(write(d, "full.md", table()), store)
            bb.calibrate(store, runs)
            rows = json.load(open(store, encoding="utf-8"))["rows"]
            bb.save(write(d, "full2.md", table(launch_ratio="ext4 1.10x; tmpfs 0.90x")), store)
        kept = json.load(open(store, encoding="utf-8"))["rows"]
    ext4 = next(v for k, v in rows.items() if k.startswith("Launch") and "StartTransientUnit" in k and "ext4" in k)
    tmpfs = next(v for k, v in rows.items() if k.startswith("Launch") and "StartTransientUnit" in k and "tmpfs" in k)
    assert abs(ext4["tolerance"] - 1.5 * (1.60 - 1.20) / 1.20) < 0.001, ext4
    assert tmpfs["tolerance"] == 0.10, tmpfs  # no spread: the floor
    again = next(v for k, v in kept.items() if k.startswith("Launch") and "StartTransientUnit" in k and "ext4" in k)
    assert again["ratio"] == 1.10 and again["tolerance"] == ext4["tolerance"], "a new baseline keeps tolerances"


@test
def the_readme_changes_between_its_markers_only():
    with tempfile.TemporaryDirectory() as d:
        readme = write(d, "README.md", f"before\n{bb.BEGIN}\nold table\n{bb.END}\nafter\n")
        assert bb.readme(readme, write(d, "run.md", "new table\n")) == 0
        text = open(readme, encoding="utf-8").read()
        no_markers = write(d, "OTHER.md", "no markers\n")
        with contextlib.redirect_stderr(io.StringIO()):
            rc = bb.readme(no_markers, os.path.join(d, "run.md"))
    assert text == f"before\n{bb.BEGIN}\nnew table\n{bb.END}\nafter\n", text
    assert rc == 2


print(f"1..{len(tests)}")
for i, fn in enumerate(tests, 1):
    try:
        fn()
        print(f"ok {i} - {fn.__name__}")
    except Exception as e:  # noqa: BLE001 - every failure is reported
        failures += 1
        print(f"not ok {i} - {fn.__name__}: {e!r}")
sys.exit(1 if failures else 0)
