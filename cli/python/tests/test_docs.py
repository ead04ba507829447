"""docs/python.md's examples: every ```python block, in order, in one namespace, and
every `PYTHONPATH=build/python ... -c` line of its ```sh blocks, so the page cannot drift."""

import os
import re
import subprocess

from conftest import SOURCE

PAGE = os.path.join(SOURCE, "docs", "python.md")


def blocks(language):
    text = open(PAGE).read()
    return re.findall(r"^```" + language + r"\n(.*?)^```", text, flags=re.S | re.M)


def test_python_examples_run(tmp_path, monkeypatch, capsys):
    for name in ("scenarios", "models", "tests"):
        os.symlink(os.path.join(SOURCE, name), tmp_path / name)
    monkeypatch.chdir(tmp_path)
    examples = blocks("python")
    assert len(examples) >= 4
    namespace = {}
    for i, code in enumerate(examples):
        exec(compile(code, f"{PAGE} python block {i + 1}", "exec"), namespace)
    assert (tmp_path / "step.json").exists() and (tmp_path / "report.html").exists()
    assert "error: " in capsys.readouterr().out


def test_shell_one_liners_run():
    env = dict(os.environ, PYTHONPATH=os.environ["PYTHONPATH"])
    lines = [line for block in blocks("sh") for line in block.splitlines()
             if line.startswith("PYTHONPATH=build/python") and " -c " in line]
    assert lines
    for line in lines:
        command = line.replace("PYTHONPATH=build/python ", "", 1)
        subprocess.run(["bash", "-c", command], cwd=SOURCE, env=env, check=True)
