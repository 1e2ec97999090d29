"""logrerank Gradio app: ``python app.py [--port N]`` (see :mod:`logrerank.app.main`).

``import app`` gives the Blocks object ``app.demo`` (built at import time, models loaded once).
"""

from logrerank.app.main import demo, main

__all__ = ["demo", "main"]

if __name__ == "__main__":
    main()
