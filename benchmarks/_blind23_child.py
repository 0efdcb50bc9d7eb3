"""Child of benchmarks/hostile_blind23.py: runs `vramlint check` from the checkout given as argv[1] under a Python
audit hook that logs every file opened, folder listed, link read and process started to argv[2] (one JSON line
each, appended as the run goes so that a run killed at its limit still leaves its log); argv[3:] are vramlint's
arguments. The parent decides which of them were outside what the case allows."""

import json
import os
import sys

checkout, log_path, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
sys.path.insert(0, checkout)
_log = open(log_path, "a", buffering=1)  # noqa: SIM115 - open for the whole run
_busy = False


def _hook(event, args):
    global _busy
    if _busy:
        return
    if event not in ("open", "os.listdir", "os.scandir", "subprocess.Popen", "os.system", "os.exec",
                     "os.posix_spawn", "os.spawn", "os.readlink", "os.symlink", "os.rename", "os.remove",
                     "os.mkdir", "shutil.copyfile", "os.chmod"):
        return
    _busy = True
    try:
        first = args[0] if args else None
        if isinstance(first, int) or first is None:
            return
        if isinstance(first, bytes):
            first = os.fsdecode(first)
        mode = ""
        if event == "open":
            mode = str(args[1]) if len(args) > 1 and args[1] is not None else ""
            flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
            if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC):
                mode += "+write"
        _log.write(json.dumps({"event": event, "path": str(first), "mode": mode}) + "\n")
    except Exception:  # noqa: BLE001 - the hook must never change the run
        pass
    finally:
        _busy = False


sys.addaudithook(_hook)
import vramlint  # noqa: E402

_log.write(json.dumps({"event": "vramlint", "path": os.path.dirname(vramlint.__file__), "mode": ""}) + "\n")
from vramlint.cli import main  # noqa: E402

sys.argv = ["vramlint", *argv]  # the console script's path (its code caches too)
sys.exit(main())
