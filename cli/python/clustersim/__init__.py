"""clustersim in process: the `clustersim` commands as Python functions.

Each function runs the same code as the command of the same name (the
extension module _clustersim calls cli/commands.h), so the same input gives
the same JSON, the same files and the same error messages. A scenario is a
dict in the scenario schema (scenarios/proto/scenario.proto, as in a .json
scenario file), a path to a .textproto or .json file, or nothing; keyword
arguments are the command's flags with underscores (``tensor_model_parallel_size=8``
is ``--tensor-model-parallel-size 8``; ``True`` is a switch, a list repeats the
flag). Results are dicts (the JSON schema the command prints with
``--format json``); tables are lists of dicts, or pandas DataFrames with
``as_frame=True``.

Errors raise :class:`Error`, a ValueError whose message is what the command
prints after ``clustersim: error:``. Long calls release the GIL, stop on
Ctrl-C (KeyboardInterrupt) and report progress to ``progress(done, total)``.
See docs/python.md.
"""

import contextlib
import json
import os
import tempfile

from . import _clustersim
from ._clustersim import Error

__all__ = [
    "Error", "run", "serve", "search", "compare", "sweep", "collective", "validate",
    "list_gpus", "list_models", "list_clusters", "list_prices",
]


def _flags(kwargs):
    """Keyword arguments as command-line flags, in the order given."""
    args = []
    for key, value in kwargs.items():
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            args.append(flag)
        else:
            for v in value if isinstance(value, (list, tuple)) else [value]:
                text = _text(v)
                # "--flag value" as typed on the command line; "--flag=-1" keeps a
                # value that starts with a dash from reading as a flag.
                args += [f"{flag}={text}"] if text.startswith("-") else [flag, text]
    return args


def _text(value):
    return os.fspath(value) if isinstance(value, os.PathLike) else str(value)


def _scenario_args(scenario):
    """(positional args, scenario JSON) for a dict, a path or None."""
    if scenario is None:
        return [], None
    if isinstance(scenario, dict):
        return [], json.dumps(scenario)
    if isinstance(scenario, (str, os.PathLike)):
        return [os.fspath(scenario)], None
    raise TypeError("scenario must be a dict, a path to a .textproto/.json file, or None; "
                    f"got {type(scenario).__name__}")


def _call(name, args, scenario_json=None, progress=None):
    out, err, code = _clustersim.command(name, args, scenario_json, progress)
    return out.decode(), err.decode(), code


def _frame(rows, as_frame):
    if not as_frame:
        return rows
    try:
        import pandas
    except ImportError as e:
        raise ImportError("as_frame=True needs pandas (Debian: apt install python3-pandas; "
                          "or pip install pandas)") from e
    return pandas.DataFrame(rows)


def run(scenario=None, *, trace=None, report=None, timeline=False, progress=None, **flags):
    """Simulates one training step (`clustersim run`): the Result as a dict.

    trace / report write the Chrome trace and the HTML report as --trace and
    --report do. timeline=True adds result["timeline"]: the trace's events
    (dicts with name, ph, ts, dur, pid, tid, args) for custom plots.
    progress(done, total) is called with tasks simulated of the step.
    """
    positional, scenario_json = _scenario_args(scenario)
    scratch = (tempfile.TemporaryDirectory(prefix="clustersim-") if timeline and trace is None
               else contextlib.nullcontext())
    with scratch as tmp:
        trace_path = os.path.join(tmp, "timeline.json") if tmp else trace
        args = positional + ["--format=json"] + _flags(flags)
        args += _flags({"trace": trace_path, "report": report})
        out, _, _ = _call("run", args, scenario_json, progress)
        result = json.loads(out)
        if timeline:
            with open(trace_path) as f:
                result["timeline"] = json.load(f)["traceEvents"]
    return result


def serve(scenario=None, *, trace=None, report=None, progress=None, **flags):
    """Simulates serving (`clustersim serve`): the ServeResult as a dict."""
    positional, scenario_json = _scenario_args(scenario)
    args = positional + ["--format=json"] + _flags(flags) + _flags({"trace": trace, "report": report})
    out, _, _ = _call("serve", args, scenario_json, progress)
    return json.loads(out)


def search(scenario=None, *, as_frame=False, report=None, threads=None, progress=None, **flags):
    """Ranks parallel strategies (`clustersim search`): the top-k rows.

    Keyword arguments are the command's flags (model, gpu, num_gpus,
    num_gpus_range, rank_by, top_k, train_tokens, set=[...], ...); threads
    defaults to every core. progress(done, total) counts strategies.
    """
    positional, scenario_json = _scenario_args(scenario)
    args = positional + ["--format=json", "--no-progress"] + _flags(flags)
    args += _flags({"report": report, "threads": threads})
    out, _, _ = _call("search", args, scenario_json, progress)
    return _frame(json.loads(out), as_frame)


def compare(*scenarios, set=None, variant=None, as_frame=False, report=None, progress=None):
    """Runs scenario files side by side (`clustersim compare`): one row per case.

    set: "field=value" strings applied to every case; variant: "field=value,..."
    strings, one more case each per scenario (as --set and --variant).
    """
    paths = [os.fspath(s) for s in scenarios]
    args = paths + ["--format=json"] + _flags({"set": set, "variant": variant, "report": report})
    out, _, _ = _call("compare", args, None, progress)
    return _frame(json.loads(out), as_frame)


def sweep(sweep_file, *, output=None, shard=None, report=None, as_frame=False, progress=None):
    """Simulates a grid (`clustersim sweep`): every line of OUTPUT.jsonl as rows.

    output is the PREFIX of the .csv/.jsonl files (resumable as on the command
    line); without it they go to a temporary folder that is removed.
    progress(done, total) counts points.
    """
    with tempfile.TemporaryDirectory(prefix="clustersim-sweep-") as tmp:
        prefix = os.fspath(output) if output is not None else os.path.join(tmp, "sweep")
        args = [os.fspath(sweep_file)] + _flags({"output": prefix, "shard": shard, "report": report})
        _call("sweep", args, None, progress)
        with open(prefix + ".jsonl") as f:
            rows = [json.loads(line) for line in f if line.strip()]
    return _frame(rows, as_frame)


_COLLECTIVE_COLUMNS = ("size", "count", "time_us", "algbw_gb_s", "busbw_gb_s", "algorithm")


def collective(*, as_frame=False, **flags):
    """An nccl-tests-style table (`clustersim collective`): one row per size.

    Flags: node, num_gpus, nics_per_node, op, algorithm, protocol, min_bytes,
    max_bytes, factor. Columns: size and count (ints), time_us, algbw_gb_s,
    busbw_gb_s (floats), algorithm ("ring/ll": the algorithm and protocol chosen).
    """
    out, _, _ = _call("collective", _flags(flags))
    rows = []
    for line in out.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cells = line.split()
        row = dict(zip(_COLLECTIVE_COLUMNS, cells))
        row["size"], row["count"] = int(row["size"]), int(row["count"])
        for key in ("time_us", "algbw_gb_s", "busbw_gb_s"):
            row[key] = float(row[key])
        rows.append(row)
    return _frame(rows, as_frame)


def validate(*files, as_frame=False, progress=None, **flags):
    """Simulates published measurement tables (`clustersim validate`): one row per table row.

    Flags as the command's (stride, offset, host_overhead_us, ...). Each row
    has the file, id, metric, measured, predicted and error_pct (None when the
    row was not simulated, with the reason in "not_run"), and the simulated
    memory_gib per GPU, memory_capacity_gib and fits (None when not simulated).
    """
    args = [os.fspath(f) for f in files] + ["--format=json"] + _flags(flags)
    out, _, _ = _call("validate", args, None, progress)
    return _frame(json.loads(out), as_frame)


def list_gpus():
    """The GPU catalog's names (`clustersim list gpus`)."""
    return _clustersim.gpus()


def list_models():
    """The model presets' names (`clustersim list models`)."""
    return _clustersim.models()


def list_clusters():
    """The node presets' names (`clustersim list clusters`)."""
    return _clustersim.clusters()


def list_prices(as_frame=False):
    """The price catalog (`clustersim list prices`): one row per entry, name-sorted."""
    return _frame(_clustersim.prices(), as_frame)
