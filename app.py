"""logrerank Gradio app: ``python app.py [--port N]`` (see :mod:`logrerank.app.main`).

Run as a script it checks the port before anything loads: a busy port is one line and exit
status 2 (:func:`logrerank.cli.app.run_app_script`). ``import app`` gives the Blocks object
``app.demo`` (built at import time; the models load on the first request, or in ``app.main``)
and ``app.main``.
"""

import sys

if __name__ == "__main__":
    from logrerank.cli.app import run_app_script

    sys.exit(run_app_script())

from logrerank.app.main import demo, main  # noqa: E402

__all__ = ["demo", "main"]
