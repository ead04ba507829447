#!/usr/bin/env python3
"""OpenXLA's measured GPU matmul table -> clustersim measurement files.

OpenXLA's GPU cost model ships a table of measured matmul throughput per GPU
architecture (xla/backends/gpu/cost_model/matmul_interpolator_data.h,
Apache-2.0; see xla/SOURCE.md). Its entries give, per compute capability key
("sm_90", "sm_100"), batch b and shape m, n, k, the FLOP/s of one dot per
dtype combination. This script has two steps:

  extract HEADER -o CSV
      Reads the upstream header and writes the rows this project uses:
      b = 1, dtypes bf16 x bf16 -> bf16 and f8e4m3fn x f8e4m3fn -> bf16, keys
      sm_90 and sm_100, in the table's order. The shipped
      xla/matmul_interpolator_b1.csv was transcribed from the header by hand;
      running this on the upstream file and diffing the output checks it.

  measurements CSV --key KEY --gpu NAME --device-name TEXT --sm-count N -o OUT
      Writes a MeasurementFile (models/proto/calibration.proto) with one GEMM
      per row and dtype: median_us = 2*b*m*n*k / FLOPs * 1e6. All bf16 points
      come first, then all fp8 points, each in the table's order, so that the
      calibrate tool's every-4th-point held-out split takes shapes of both
      dtypes. --attention-csv appends the cuDNN rows of cudnn-frontend's SDPA
      training benchmark as attention measurements (forward, then backward).

  sdpa-measurements SDPA_CSV --gpu NAME --device-name TEXT --sm-count N -o OUT
      Writes a MeasurementFile of attention points only, from a cudnn-frontend
      SDPA training benchmark CSV (for a GPU without a GEMM table).

  check-sdpa SDPA_CSV
      Checks every row of a cudnn-frontend SDPA benchmark CSV: its TFLOPS
      columns are the attention FLOPs of the row's shape (4*b*h*sq*skv*d,
      halved when causal; backward 2.5x forward) over its times, to within the
      rounding of the times and rates.

  check CSV
      Checks every value of the CSV: the table's FLOP/s are 2*b*m*n*k divided
      by a whole number of nanoseconds (to within 1 FLOP/s of rounding), so a
      mistyped digit or a wrong shape shows as a time that is not whole
      nanoseconds.

Standard library only.

Example (from the repository root):
  python3 models/data/calibration/extract_xla_matmul.py measurements \\
      models/data/calibration/xla/matmul_interpolator_b1.csv --key sm_100 \\
      --gpu b200-sxm-180gb --device-name "NVIDIA B200" --sm-count 148 \\
      -o models/data/calibration/b200-sxm-180gb.measurements.textproto
"""

import argparse
import csv
import re
import sys

DTYPES = (
    ("bf16", "bf16xbf16->bf16"),
    ("fp8", "f8e4m3fnxf8e4m3fn->bf16"),
)
KEYS = ("sm_100", "sm_90")
CSV_FIELDS = ["key", "b", "m", "n", "k"] + [column for _, column in DTYPES]
# cudnn-frontend's benchmark/sdpa_benchmark_training CSV (times in ms).
SDPA_FIELDS = ["batch_size", "q_seqlen", "kv_seqlen", "num_q_heads", "num_kv_heads", "head_dim",
               "is_causal", "backend", "forward_time", "backward_time", "fwd_tflops_per_sec",
               "bwd_tflops_per_sec"]

UPSTREAM = ("OpenXLA GPU cost model matmul table "
            "xla/backends/gpu/cost_model/matmul_interpolator_data.h "
            "(Apache-2.0), as vendored in github.com/tensorflow/tensorflow "
            "third_party/xla at commit a305421c45a1ea5117c170b8d8a00a51f9dcee8f")


def parse_header(text):
    """Yields (key, b, m, n, k, {dtype column: flops string}) for every entry."""
    key = None
    entry = None
    for raw in text.splitlines():
        line = raw.strip()
        m = re.fullmatch(r'key: "(sm_\d+)"', line)
        if m:
            key = m.group(1)
            continue
        if line == "entries {" and key is not None:
            entry = {"flops": {}}
            continue
        if entry is None:
            continue
        m = re.fullmatch(r"([bmnk]): (\d+)", line)
        if m:
            entry[m.group(1)] = int(m.group(2))
            continue
        m = re.fullmatch(r'flops \{ key: "([^"]+)" value: (\d+) \}', line)
        if m:
            entry["flops"][m.group(1)] = m.group(2)
            continue
        if line == "}" and "k" in entry:
            yield key, entry["b"], entry["m"], entry["n"], entry["k"], entry["flops"]
            entry = None


def extract(args):
    with open(args.header, encoding="utf-8") as f:
        text = f.read()
    rows = []
    for key, b, m, n, k, flops in parse_header(text):
        if key not in KEYS or b != 1:
            continue
        missing = [column for _, column in DTYPES if column not in flops]
        if missing:
            sys.exit(f"{args.header}: {key} {m}x{n}x{k} has no {missing[0]} entry")
        rows.append([key, b, m, n, k] + [flops[column] for _, column in DTYPES])
    if not rows:
        sys.exit(f"{args.header}: no b=1 entries for {', '.join(KEYS)}; is this "
                 "matmul_interpolator_data.h?")
    rows.sort(key=lambda r: KEYS.index(r[0]))  # stable: keeps the table order per key
    with open(args.output, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(CSV_FIELDS)
        w.writerows(rows)


def read_csv(path, fields=CSV_FIELDS):
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames != fields:
            sys.exit(f"{path}: header must be {','.join(fields)}")
        return list(reader)


def whole_ns(work, flops):
    """True when flops is work / t for a whole number t of nanoseconds, to 1 FLOP/s.

    The table's values are work/t truncated after a floating-point division, which
    can land one below or above the exact quotient; a mistyped digit moves the
    value by far more.
    """
    top = work * 10**9
    t = round(top / flops)
    return t > 0 and abs(top // t - flops) <= 1


def check(args):
    bad = 0
    rows = read_csv(args.csv)
    for row in rows:
        work = 2 * int(row["b"]) * int(row["m"]) * int(row["n"]) * int(row["k"])
        for _, column in DTYPES:
            if not whole_ns(work, int(row[column])):
                bad += 1
                print(f"{args.csv}: {row['key']} {row['m']}x{row['n']}x{row['k']} "
                      f"{column} {row[column]} is not 2*b*m*n*k over whole nanoseconds")
    print(f"{len(rows) * len(DTYPES) - bad} of {len(rows) * len(DTYPES)} values consistent")
    return 1 if bad else 0


def file_header(args):
    """The measurement file's comment lines (--comment, how to fit it), its gpu
    and its provenance."""
    name = args.output_name or args.output
    return [f"# {line}" for line in args.comment] + [
        "# Fitted by",
        f"#   clustersim calibrate {name} \\",
        f"#       --output {name.replace('measurements', 'calibration')}",
        "# Schema: models/proto/calibration.proto (MeasurementFile). p10/p90 are not published (0).",
        "gpu {",
        f'  name: "{args.gpu}"',
        f'  device_name: "{args.device_name}"',
        f"  sm_count: {args.sm_count}",
        "}",
        'provenance: "published points, not measured by models/validator"',
    ]


def measurements(args):
    rows = [r for r in read_csv(args.csv) if r["key"] == args.key and
            min(int(r["m"]), int(r["n"])) >= args.min_mn]
    if not rows:
        sys.exit(f"{args.csv}: no rows with key {args.key} and m, n >= {args.min_mn}")
    dims = sorted({int(r["k"]) for r in rows})
    mn = sorted({int(r["m"]) for r in rows} | {int(r["n"]) for r in rows})
    out = [
        f"# Measured matmul throughput from OpenXLA's GPU cost-model table, key {args.key!r}",
        "# (compute capability only: the table does not name the board it ran on).",
        "# Generated by models/data/calibration/extract_xla_matmul.py from",
        f"# models/data/calibration/xla/matmul_interpolator_b1.csv; do not edit by hand.",
    ] + file_header(args) + [
        f'sources: "[XLA-MM] {UPSTREAM}: measured FLOP/s per (b, m, n, k) and dtype, key {args.key}"',
        'method: "published throughput; median_us = 2*b*m*n*k / FLOPs; b = 1, '
        f'm, n in {{{", ".join(map(str, mn))}}}, k in {{{", ".join(map(str, dims))}}}"',
    ]
    out += [f'sources: "{line}"' for line in args.source]
    out += [f'method_parameters: "{name}"' for name in args.method_parameter or []]
    for dtype, column in DTYPES:
        if dtype not in args.dtype:
            continue
        for r in rows:
            b, m, n, k = (int(r[c]) for c in ("b", "m", "n", "k"))
            flops = int(r[column])
            median_us = 2 * b * m * n * k / flops * 1e6
            out += [
                "measurement {",
                f'  kind: KERNEL_GEMM op: "xla matmul" dtype: "{dtype}" m: {m} n: {n} k: {k} '
                f"batch: {b}",
                f'  median_us: {median_us:.4f} implementation: "XLA GPU dot ({column})"',
                f'  source: "[XLA-MM] {args.key} b={b} {m}x{n}x{k} {column}: {flops} FLOP/s"',
                "}",
            ]
    out += attention_measurements(args)
    with open(args.output, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


# How each cuDNN backend of the SDPA benchmark calls the kernel.
SDPA_BACKENDS = {
    "pyt_cudnn": "cuDNN SDPA via torch (SDPBackend.CUDNN_ATTENTION)",
    "cudnn_fe": "cuDNN SDPA via the cudnn-frontend Python graph API",
}


def sdpa_flops(r, direction):
    """Attention FLOPs of one SDPA benchmark row: 4*b*h*sq*skv*d forward,
    halved when causal; backward 2.5x forward (the benchmark's own count)."""
    f = 4 * int(r["batch_size"]) * int(r["num_q_heads"]) * int(r["q_seqlen"]) * \
        int(r["kv_seqlen"]) * int(r["head_dim"])
    if r["is_causal"] == "True":
        f /= 2
    return f * (2.5 if direction == "bwd" else 1)


def check_sdpa(args):
    bad = 0
    rows = read_csv(args.csv, SDPA_FIELDS)
    for r in rows:
        for name, column in (("fwd", "forward_time"), ("bwd", "backward_time")):
            ms = float(r[column])
            # The CSV rounds times to 1 us and rates to 1e-3 TFLOPS (some runs
            # to whole TFLOPS): the rate must lie in what the rounded time allows.
            lo = sdpa_flops(r, name) / ((ms + 0.0005) * 1e9)
            hi = sdpa_flops(r, name) / ((ms - 0.0005) * 1e9)
            rate = float(r[f"{name}_tflops_per_sec"])
            if not lo - 0.5 <= rate <= hi + 0.5:
                bad += 1
                print(f"{args.csv}: seq {r['q_seqlen']} {r['backend']} {name} {rate} TFLOPS is not "
                      f"the shape's FLOPs over {ms} ms ({lo:.1f} to {hi:.1f})")
    print(f"{2 * len(rows) - bad} of {2 * len(rows)} rates consistent")
    return 1 if bad else 0


def attention_measurements(args):
    """Attention points from cudnn-frontend's SDPA training benchmark CSV
    (--attention-csv): one forward and one backward measurement per row of the
    cuDNN backend (--attention-backend), after the GEMM points so that the
    GEMMs keep their split."""
    if not args.attention_csv:
        return []
    out = []
    backend = args.attention_backend
    rows = [r for r in read_csv(args.attention_csv, SDPA_FIELDS) if r["backend"] == backend]
    if not rows:
        sys.exit(f"{args.attention_csv}: no rows of backend {backend}")
    for kind, column, name in (("KERNEL_ATTENTION_FWD", "forward_time", "fwd"),
                               ("KERNEL_ATTENTION_BWD", "backward_time", "bwd")):
        for r in rows:
            causal = r["is_causal"] == "True"
            rate = r[f"{name}_tflops_per_sec"]
            out += [
                "measurement {",
                f'  kind: {kind} op: "cudnn sdpa {name}{" causal" if causal else ""}" '
                'dtype: "bf16"',
                f'  batch: {r["batch_size"]} seq_q: {r["q_seqlen"]} seq_kv: {r["kv_seqlen"]} '
                f'heads: {r["num_q_heads"]} head_dim: {r["head_dim"]} '
                f'causal: {"true" if causal else "false"}',
                f'  median_us: {float(r[column]) * 1000:.1f} '
                f'implementation: "{SDPA_BACKENDS[backend]}"',
                f'  source: "[CUDNN-SDPA] {r["num_q_heads"]} q / {r["num_kv_heads"]} kv heads, '
                f'seq {r["q_seqlen"]}: {name} {rate} TFLOPS"',
                "}",
            ]
    return out


def sdpa_measurements(args):
    """A MeasurementFile of attention points only (no GEMM table)."""
    out = [
        "# cuDNN fused attention from cudnn-frontend's SDPA training benchmark",
        "# (models/data/calibration/cudnn/SOURCE.md).",
        "# Generated by models/data/calibration/extract_xla_matmul.py sdpa-measurements from",
        f"# {args.csv}; do not edit by hand.",
    ] + file_header(args)
    out += [f'sources: "{line}"' for line in args.source]
    out += ['method: "published time per call as the benchmark reports it (ms, 3 decimals)"']
    out += [f'fixed_parameters: "{name}"' for name in args.fixed_parameter or []]
    args.attention_csv = args.csv
    out += attention_measurements(args)
    with open(args.output, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    e = sub.add_parser("extract", help="upstream header -> CSV of the rows used")
    e.add_argument("header")
    e.add_argument("-o", "--output", required=True)
    c = sub.add_parser("check", help="check every CSV value against whole-ns timing")
    c.add_argument("csv")
    cs = sub.add_parser("check-sdpa", help="check an SDPA benchmark CSV's rates against its times")
    cs.add_argument("csv")
    a = sub.add_parser("sdpa-measurements", help="SDPA benchmark CSV -> attention-only "
                                                 "MeasurementFile textproto")
    a.add_argument("csv")
    a.add_argument("--gpu", required=True)
    a.add_argument("--device-name", required=True)
    a.add_argument("--sm-count", type=int, required=True)
    a.add_argument("--attention-backend", default="cudnn_fe", choices=sorted(SDPA_BACKENDS))
    a.add_argument("--fixed-parameter", action="append",
                   help="a per-GPU parameter the points cannot determine (repeatable); "
                        "written as fixed_parameters")
    a.add_argument("--comment", action="append", default=[])
    a.add_argument("--source", action="append", default=[])
    a.add_argument("-o", "--output", required=True)
    a.add_argument("--output-name", help="path to print in the file's comment (default: -o)")
    m = sub.add_parser("measurements", help="CSV -> MeasurementFile textproto")
    m.add_argument("csv")
    m.add_argument("--key", required=True, choices=KEYS)
    m.add_argument("--gpu", required=True, help="GPU catalog name, e.g. b200-sxm-180gb")
    m.add_argument("--device-name", required=True)
    m.add_argument("--sm-count", type=int, required=True)
    m.add_argument("--dtype", action="append", choices=[d for d, _ in DTYPES],
                   help="dtypes to write (repeatable; default: all)")
    m.add_argument("--min-mn", type=int, default=0,
                   help="keep the shapes whose m and n are both at least this")
    m.add_argument("--method-parameter", action="append",
                   help="a per-GPU parameter that describes the timing method (repeatable); "
                        "written as method_parameters")
    m.add_argument("--comment", action="append", default=[],
                   help="a line for the file's header comment (repeatable)")
    m.add_argument("--attention-csv",
                   help="cudnn-frontend SDPA benchmark CSV whose cuDNN rows become attention "
                        "measurements (bf16)")
    m.add_argument("--attention-backend", default="pyt_cudnn", choices=sorted(SDPA_BACKENDS),
                   help="the CSV's backend column of the rows to use")
    m.add_argument("--source", action="append", default=[],
                   help="a further sources line (repeatable)")
    m.add_argument("-o", "--output", required=True)
    m.add_argument("--output-name", help="path to print in the file's comment (default: -o)")
    args = p.parse_args()
    if args.command == "measurements" and not args.dtype:
        args.dtype = [d for d, _ in DTYPES]
    if args.command == "extract":
        extract(args)
    elif args.command == "check":
        return check(args)
    elif args.command == "check-sdpa":
        return check_sdpa(args)
    elif args.command == "sdpa-measurements":
        sdpa_measurements(args)
    else:
        measurements(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
