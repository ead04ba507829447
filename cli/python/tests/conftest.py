"""Shared fixtures: the source root, the clustersim binary, and a runner of it."""

import os
import subprocess

import pytest

SOURCE = os.environ.get("CLUSTERSIM_SOURCE_DIR",
                        os.path.abspath(os.path.join(os.path.dirname(__file__), "../../..")))
BINARY = os.environ.get("CLUSTERSIM_BINARY", os.path.join(SOURCE, "build/cli/clustersim"))


def example(*parts):
    return os.path.join(SOURCE, "scenarios", "examples", *parts)


@pytest.fixture
def cli():
    """Runs the clustersim binary: (exit code, stdout bytes, stderr text)."""

    def run(*args, cwd=SOURCE):
        p = subprocess.run([BINARY, *args], cwd=cwd, capture_output=True)
        return p.returncode, p.stdout, p.stderr.decode()

    return run
