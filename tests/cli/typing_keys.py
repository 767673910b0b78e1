"""Keys typed into the REPL the way a person types them, for the in-process `drive_repl` fixture."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


def later(*steps: str, pause: float = 0.5) -> Callable[[object, object], None]:
    """Type each of `steps` after a pause: completion, suggestion and the history load run in the background,
    as a person's typing gives them time to (be generous: a loaded machine may delay them)."""

    def start(session: object, pipe) -> None:
        def type_slowly() -> None:
            for keys in steps:
                time.sleep(pause)
                pipe.send_text(keys)

        threading.Thread(target=type_slowly, daemon=True).start()

    return start
