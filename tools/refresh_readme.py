"""Refresh the README's sample CLI output and its screenshots, or check that they are current.

    python tools/refresh_readme.py                  # the CLI sample, then the screenshots
    python tools/refresh_readme.py --sample-only    # the CLI sample only (no browser)
    python tools/refresh_readme.py --check          # exit 1 with a diff if the sample is stale

The sample sits in ``README.md`` between ``<!-- cli-sample:start -->`` and
``<!-- cli-sample:end -->``: a ``bash`` block holding one ``logrerank`` command (optionally
preceded by ``NAME=value`` settings such as ``COLUMNS=100``) and a ``text`` block holding what
that command prints. This script runs the command (in a subprocess, from the repository root, on
the bundled checkpoints) and writes its output into the ``text`` block. Two machine-dependent
things are normalised: the repository's absolute path is written relative to it, and the
``timings:`` line (wall-clock seconds) is left out. The run forces fp32 (``precision: auto`` would
pick bf16 on a CPU with AMX tiles), so the sample is the same on every CPU.

The screenshots (``assets/screenshot_*.png``) come from the browser tests through
``tests/browser/refresh_readme_screenshots.py`` (headless Debian Chromium). The test
``tests/integration/test_readme_sample.py`` runs ``--check``.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
START, END = "<!-- cli-sample:start -->", "<!-- cli-sample:end -->"
BLOCK = re.compile(r"```(?P<lang>[a-z]*)\n(?P<body>.*?)```", re.S)
SCREENSHOTS = ROOT / "tests" / "browser" / "refresh_readme_screenshots.py"

RUNNER = """
import sys
import logrerank.local.backbone as backbone
backbone.cpu_bf16_is_faster = lambda: False  # fp32 on every CPU, AMX or not
from logrerank.cli import main
sys.exit(main(sys.argv[1:]))
"""
"""Runs the ``logrerank`` console script's ``main`` with fp32 forced on the CPU."""


class SampleError(RuntimeError):
    """The README's sample block is missing or malformed, or its command failed."""


def sample_block(readme: str) -> tuple[int, int, str, str]:
    """Find the sample between the markers.

    Args:
        readme: the README's text.

    Returns:
        ``(start, end, command, output)``: the span of the ``text`` block's body in ``readme``,
        the command line of the ``bash`` block and the current output in the ``text`` block.

    Raises:
        SampleError: the markers or one of the two blocks are missing.
    """
    i, j = readme.find(START), readme.find(END)
    if i < 0 or j < i:
        raise SampleError(f"README.md has no {START} ... {END} section")
    blocks = list(BLOCK.finditer(readme, i, j))
    bash = next((b for b in blocks if b.group("lang") == "bash"), None)
    text = next((b for b in blocks if b.group("lang") == "text"), None)
    if bash is None or text is None:
        raise SampleError("the sample section needs a ```bash command block and a ```text block")
    command = " ".join(bash.group("body").replace("\\\n", " ").split())
    return text.start("body"), text.end("body"), command, text.group("body")


def parse_command(command: str) -> tuple[dict[str, str], list[str]]:
    """Split ``NAME=value ... logrerank ARGS`` into the settings and the ``logrerank`` arguments.

    Raises:
        SampleError: the command is not a ``logrerank`` command.
    """
    words = shlex.split(command)
    env = {}
    while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    if not words or words[0] != "logrerank":
        raise SampleError(f"the sample command must be a logrerank command: {command!r}")
    return env, words[1:]


def normalise(output: str) -> str:
    """The CLI's output as the README shows it: paths relative to the repository, no timings."""
    output = output.replace(f"{ROOT}{os.sep}", "")
    lines = [line.rstrip() for line in output.splitlines() if not line.startswith("timings: ")]
    return "\n".join(lines).strip("\n") + "\n"


def run_sample(command: str, timeout: float = 900) -> str:
    """Run the sample command from the repository root and return its normalised output.

    Raises:
        SampleError: the command exited non-zero (its stderr is in the message).
    """
    env_vars, args = parse_command(command)
    env = dict(os.environ, **env_vars)
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TRANSFORMERS_OFFLINE", "1")
    proc = subprocess.run(
        [sys.executable, "-c", RUNNER, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if proc.returncode != 0:
        raise SampleError(f"{command!r} exited with {proc.returncode}:\n{proc.stderr[-2000:]}")
    return normalise(proc.stdout)


def check(readme: str | None = None) -> tuple[bool, str]:
    """Whether the README's sample equals the CLI's output now, and a unified diff if not."""
    readme = README.read_text(encoding="utf-8") if readme is None else readme
    _, _, command, shown = sample_block(readme)
    fresh = run_sample(command)
    if fresh == shown:
        return True, ""
    diff = difflib.unified_diff(
        shown.splitlines(), fresh.splitlines(), "README.md", command, lineterm=""
    )
    return False, "\n".join(diff)


def refresh_sample() -> bool:
    """Write the CLI's current output into the README's sample; whether anything changed."""
    readme = README.read_text(encoding="utf-8")
    start, end, command, shown = sample_block(readme)
    fresh = run_sample(command)
    if fresh == shown:
        return False
    README.write_text(readme[:start] + fresh + readme[end:], encoding="utf-8")
    return True


def main(argv: list[str] | None = None) -> int:
    """Command line; see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="compare only; exit 1 if stale")
    mode.add_argument("--sample-only", action="store_true", help="refresh the CLI sample only")
    args = parser.parse_args(argv)
    try:
        if args.check:
            same, diff = check()
            print("README sample is current" if same else diff)
            return 0 if same else 1
        changed = refresh_sample()
    except SampleError as exc:
        print(f"refresh_readme: {exc}", file=sys.stderr)
        return 2
    print("README.md: CLI sample " + ("rewritten" if changed else "already current"))
    if args.sample_only:
        return 0
    return subprocess.call([sys.executable, str(SCREENSHOTS)], cwd=ROOT)


if __name__ == "__main__":
    raise SystemExit(main())
