"""A parent that imports and builds the API server once, then forks one real `uvicorn` server
per port it reads on stdin (printing the child's pid): a fault test kills many servers with
SIGKILL without paying the seconds of imports for each. Each child is a whole process on the
home of ``CASEWORK_HOME``, serving HTTP on loopback until it is killed."""

from __future__ import annotations

import os
import signal
import sys

import uvicorn

from casework.config import get_settings
from casework.server import create_app


def main() -> None:
    app = create_app(get_settings())  # opens no store: each child opens its own on first use
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps the killed children
    for line in sys.stdin:
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            uvicorn.run(app, host="127.0.0.1", port=int(line), log_level="warning")
            os._exit(0)
        print(pid, flush=True)


if __name__ == "__main__":
    main()
