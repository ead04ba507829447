"""The Python API against the clustersim binary: same bytes, same errors, same files."""

import json
import os

import pytest

import clustersim
from clustersim import _clustersim
from conftest import SOURCE, example

LLAMA = example("llama2-7b-h100.json")
GPT = example("gpt-22b-a100.textproto")
SERVE = example("serve-llama3-8b-h100.textproto")


def command_bytes(name, args, scenario_json=None):
    out, _, code = _clustersim.command(name, args, scenario_json, None)
    assert code == 0
    return out


def test_run_json_is_the_cli_bytes(cli):
    code, out, _ = cli("run", GPT, "--format", "json")
    assert code == 0
    assert command_bytes("run", [GPT, "--format=json"]) == out
    assert clustersim.run(GPT) == json.loads(out)


def test_run_dict_and_kwargs_match_the_cli(cli):
    with open(LLAMA) as f:
        scenario = json.load(f)
    code, out, _ = cli("run", LLAMA, "--format", "json", "--tensor-model-parallel-size", "4",
                       "--sequence-parallel")
    assert code == 0
    assert command_bytes("run", ["--format=json", "--tensor-model-parallel-size=4",
                                 "--sequence-parallel"], json.dumps(scenario)) == out
    by_dict = clustersim.run(scenario, tensor_model_parallel_size=4, sequence_parallel=True)
    by_path = clustersim.run(LLAMA, tensor_model_parallel_size=4, sequence_parallel=True)
    assert by_dict == by_path == json.loads(out)
    assert by_dict["scenario"]["parallelism"]["tensor_model_parallel_size"] == 4


def test_run_from_keywords_only(cli):
    flags = dict(model="llama2-7b", gpu="h100-sxm5-80gb", num_gpus=8,
                 tensor_model_parallel_size=2, micro_batch_size=1, global_batch_size=16)
    code, out, _ = cli("run", "--format", "json", "--model", "llama2-7b", "--gpu",
                       "h100-sxm5-80gb", "--num-gpus", "8", "--tensor-model-parallel-size", "2",
                       "--micro-batch-size", "1", "--global-batch-size", "16")
    assert code == 0
    assert clustersim.run(**flags) == json.loads(out)


def test_serve_json_is_the_cli_bytes(cli):
    code, out, _ = cli("serve", SERVE, "--format", "json", "--no-curve", "--num-requests", "50")
    assert code == 0
    assert command_bytes("serve", [SERVE, "--format=json", "--no-curve",
                                   "--num-requests=50"]) == out
    assert clustersim.serve(SERVE, no_curve=True, num_requests=50) == json.loads(out)


@pytest.mark.parametrize("args, kwargs", [
    (["--tensor-model-parallel-size", "3"], {"tensor_model_parallel_size": 3}),
    (["--no-such-flag", "1"], {"no_such_flag": 1}),
    (["--micro-batch-size", "x"], {"micro_batch_size": "x"}),
])
def test_errors_carry_the_cli_message(cli, args, kwargs):
    code, out, err = cli("run", LLAMA, *args)
    assert code == 2 and out == b""
    prefix = "clustersim: error: "
    assert err.startswith(prefix)
    with pytest.raises(clustersim.Error) as e:
        clustersim.run(LLAMA, **kwargs)
    assert str(e.value) == err[len(prefix):].rstrip("\n")
    assert e.value.exit_code == 2
    assert isinstance(e.value, ValueError)


def test_dict_errors_name_the_field():
    with pytest.raises(clustersim.Error, match="<scenario>"):
        clustersim.run({"cluster": {"num_gpus": "eight"}})
    with pytest.raises(clustersim.Error, match="tensor_model_parallel_size"):
        clustersim.run({"model": {"preset": "llama2-7b"},
                        "cluster": {"gpu": "h100-sxm5-80gb", "num_gpus": 8},
                        "parallelism": {"tensor_model_parallel_size": 3}})
    with pytest.raises(TypeError):
        clustersim.run(42)


def test_errors_name_their_field_as_an_attribute():
    with pytest.raises(clustersim.Error) as e:
        clustersim.run(LLAMA, num_gpus=0)
    assert e.value.field == "cluster.num_gpus"
    with pytest.raises(clustersim.Error) as e:
        clustersim.run(LLAMA, precision="fp64")
    assert e.value.field == "training.precision"
    with pytest.raises(clustersim.Error) as e:
        clustersim.run(LLAMA, no_such_flag=1)
    assert e.value.field is None or e.value.field.startswith("--")


def test_trace_report_and_timeline(tmp_path, cli):
    trace, report = tmp_path / "step.json", tmp_path / "report.html"
    result = clustersim.run(GPT, trace=trace, report=report, timeline=True)
    cli_trace, cli_report = tmp_path / "cli.json", tmp_path / "cli.html"
    code, out, _ = cli("run", GPT, "--format", "json", "--trace", str(cli_trace),
                       "--report", str(cli_report))
    assert code == 0
    assert trace.read_bytes() == cli_trace.read_bytes()
    assert report.read_bytes() == cli_report.read_bytes()
    events = result.pop("timeline")
    assert result == json.loads(out)
    assert events == json.loads(trace.read_text())["traceEvents"]
    assert any(e.get("ph") == "X" and e.get("dur", 0) > 0 for e in events)
    assert "timeline" not in clustersim.run(GPT)


def test_search_rows_and_frame(cli):
    flags = dict(model="llama2-7b", gpu="h100-sxm5-80gb", num_gpus=2, global_batch_size=8,
                 top_k=3, threads=2)
    code, out, _ = cli("search", "--format", "json", "--no-progress", "--model", "llama2-7b",
                       "--gpu", "h100-sxm5-80gb", "--num-gpus", "2", "--global-batch-size", "8",
                       "--top-k", "3", "--threads", "2")
    assert code == 0
    rows = clustersim.search(**flags)
    assert rows == json.loads(out) and len(rows) == 3
    frame = clustersim.search(**flags, as_frame=True)
    assert list(frame["label"]) == [r["label"] for r in rows]


def test_compare_rows(cli):
    code, out, _ = cli("compare", GPT, "--variant", "recompute=selective", "--format", "json")
    assert code == 0
    rows = clustersim.compare(GPT, variant=["recompute=selective"])
    assert rows == json.loads(out) and len(rows) == 2


def test_sweep_rows_match_the_cli_files(tmp_path, cli):
    grid = tmp_path / "grid.textproto"
    grid.write_text(f'base_scenario: "{LLAMA}"\n'
                    'axis { field: "tp" values: "1" values: "2" }\n')
    code, _, err = cli("sweep", str(grid), "--output", str(tmp_path / "cli"))
    assert code == 0, err
    rows = clustersim.sweep(grid, output=tmp_path / "py")
    assert (tmp_path / "py.jsonl").read_bytes() == (tmp_path / "cli.jsonl").read_bytes()
    assert (tmp_path / "py.csv").read_bytes() == (tmp_path / "cli.csv").read_bytes()
    assert len(rows) == 2 and rows == clustersim.sweep(grid)


def test_collective_table(cli):
    rows = clustersim.collective(node="dgx-h100", num_gpus=8, min_bytes="1M", max_bytes="4M")
    assert [r["size"] for r in rows] == [1 << 20, 2 << 20, 4 << 20]
    assert all(r["busbw_gb_s"] > 0 and "/" in r["algorithm"] for r in rows)
    with pytest.raises(clustersim.Error, match="--op"):
        clustersim.collective(op="all_sum")


def test_validate_rows():
    table = os.path.join(SOURCE, "tests/validation/vtrain/ground_truth_single.csv")
    rows = clustersim.validate(table, stride=50)
    assert rows and all(r["file"] == table for r in rows)
    ran = [r for r in rows if r["predicted"] is not None]
    assert ran and all(abs(r["error_pct"]) < 100 for r in ran)


def test_lists_match_the_cli(cli):
    for name, fn in [("gpus", clustersim.list_gpus), ("models", clustersim.list_models),
                     ("clusters", clustersim.list_clusters)]:
        code, out, _ = cli("list", name)
        assert code == 0 and fn() == out.decode().split()
    prices = clustersim.list_prices()
    code, out, _ = cli("list", "prices")
    assert len(prices) == len(out.decode().splitlines()) - 1
    assert {"name", "gpu", "usd_per_gpu_hour", "source"} <= set(prices[0])


def test_as_frame_without_pandas_says_so(monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_pandas(name, *args, **kwargs):
        if name == "pandas":
            raise ImportError("no pandas here")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pandas)
    with pytest.raises(ImportError, match="python3-pandas"):
        clustersim.list_prices(as_frame=True)
