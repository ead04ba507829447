"""Every file of the fuzz corpora (tests/fuzz/seeds.sh) through the module's entry points.

Each input, whole and cut in half, must give a result or raise clustersim.Error:
any other exception, or the interpreter aborting, fails. The inputs go in as
files (run, serve, sweep, validate, model_config), as scenario dicts and JSON
text, and as command-line words (the cli corpus: `run` arguments).
"""

import json
import os
import subprocess

import pytest

import clustersim
from clustersim import _clustersim
from conftest import SOURCE

TARGETS = ["scenario_text", "scenario_json", "hf_config", "sweep", "validation_csv", "cli"]


def corpus(target, scratch):
    """The seed files of one fuzz target, as tests/fuzz/seeds.sh lists them."""
    out = subprocess.run(["bash", os.path.join(SOURCE, "tests/fuzz/seeds.sh"), target,
                          str(scratch)], capture_output=True, text=True, check=True).stdout
    files = []
    for folder in out.split():
        folder = folder if os.path.isabs(folder) else os.path.join(SOURCE, folder)
        for root, _, names in os.walk(folder):
            files += [os.path.join(root, n) for n in sorted(names) if not n.endswith(".md")]
    return sorted(files)


def accept(call):
    """Runs `call`; only a result or clustersim.Error are acceptable."""
    try:
        return call()
    except clustersim.Error:
        return None


def variants(path, tmp_path):
    """The file itself and its first half, written next to the scratch files."""
    data = open(path, "rb").read()
    half = tmp_path / ("half-" + os.path.basename(path))
    half.write_bytes(data[: len(data) // 2])
    return [path, str(half)]


def scenario_command(text):
    return "serve" if "inference" in text else "run"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A folder where inputs' relative paths (scenarios/, models/, tests/) resolve and
    outputs (traces, reports) land."""
    d = tmp_path_factory.mktemp("work")
    for name in ("scenarios", "models", "tests"):
        os.symlink(os.path.join(SOURCE, name), d / name)
    return d


@pytest.mark.parametrize("target", TARGETS)
def test_corpus(target, tmp_path, workdir, monkeypatch):
    monkeypatch.chdir(workdir)
    files = corpus(target, tmp_path)
    assert files, f"no seeds for {target}"
    fast = ["--no-curve", "--num-requests=20"]
    for path in files:
        for f in variants(path, tmp_path):
            text = open(f, "rb").read().decode("utf-8", errors="replace")
            if target in ("scenario_text", "scenario_json"):
                cmd = scenario_command(text)
                extra = fast if cmd == "serve" else []
                accept(lambda: _clustersim.command(cmd, [f] + extra, None, None))
                accept(lambda: _clustersim.command(cmd, extra, text, None))
                try:
                    scenario = json.loads(text)
                except ValueError:
                    continue
                if isinstance(scenario, dict):
                    accept(lambda: getattr(clustersim, cmd)(scenario, **(
                        {"no_curve": True, "num_requests": 20} if cmd == "serve" else {})))
            elif target == "hf_config":
                accept(lambda: clustersim.run(model_config=f, gpu="h100-sxm5-80gb", num_gpus=8,
                                              global_batch_size=8, seq_length=2048))
            elif target == "sweep":
                if "grid" in os.path.basename(path) and f == path:
                    continue  # the shipped grids simulate hundreds of points: their halves suffice
                accept(lambda: clustersim.sweep(f))
            elif target == "validation_csv":
                accept(lambda: clustersim.validate(f))
            elif target == "cli":
                accept(lambda: _clustersim.command("run", text.split() + ["--format=json"], None,
                                                   None))
