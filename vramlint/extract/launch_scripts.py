"""What a launcher's own command runs from the scanned tree, shared by the readers of launcher files that are no
image (a supervisord program, a systemd unit): the script it starts, followed with the environment the launcher
gives it, and the GPU count its CUDA_VISIBLE_DEVICES gives. A module of its own so that those readers and
`launchers` use it without importing each other."""

from __future__ import annotations

import os
from typing import Any

from vramlint.extract import scripts


def follow_repository_script(command: list[Any], folder: str | None, env: dict[str, str | None], folder_key: str,
                             runs: str) -> tuple[Any, str | None, str | None, list[Any]]:
    """What a launcher's command line (a supervisord program's, a systemd unit's ExecStart) starts when it runs
    a script of the scanned tree: (invocation, note, None, []) when the script's own command starts vLLM, (None,
    None, None, servers) when it starts vLLM's container (`docker run`, read as the shell-script reader reads
    it), else (None, None, why it reads no server, []), `why` None when ``command`` runs no script. A relative
    script path is taken from ``folder`` (the working directory the launcher sets with ``folder_key``; None or
    relative: not known). ``env`` is the environment the launcher gives it; ``runs`` the note said of each
    server, `{shown}` in it the script's path."""
    from vramlint.cmdline import has_unknown_mark
    from vramlint.discover import display_path

    call = scripts.script_call(command)
    if call is None or not call.path.text or has_unknown_mark(call.path.text):
        return None, None, None, []
    target = call.path.text
    if not target.startswith("/"):
        if folder is None or not folder.startswith("/"):
            return None, None, (f"runs the script {target}, relative to a working directory this file does not set "
                                f"({folder_key}): not read, so the server it may start is not checked"), []
        target = os.path.join(folder, target)
    shown = display_path(os.path.normpath(target))
    text, why_not = scripts.read_script_file(os.path.normpath(target))
    if text is None:
        return None, None, (f"runs the script {shown}, which is not read ({why_not}): the server it may start is "
                            "not checked"), []
    said = runs.replace("{shown}", shown)
    inv, _note, why = scripts.launcher_invocation(call, text, shown, None, dict(env), None)
    if inv is not None:
        return inv, f"the vLLM command line is read from the script {shown}: {said}", None, []
    from vramlint.extract.shell_scripts import read_shell_script

    launched, _problems = read_shell_script(text, shown, say_mention=False, env=dict(env))
    for server in launched:
        server.notes.append(said)
    if launched:
        return None, None, None, launched
    return None, None, (f"runs the script {shown}, which mentions vLLM but starts no vLLM server vramlint can read: "
                        "not checked" if why else None), []


def visible_devices_gpu(server: Any) -> None:
    """The GPU count a launcher's CUDA_VISIBLE_DEVICES gives its process (the host's devices: which GPU is not
    said), when it lists devices."""
    import re

    cuda = server.env.get("CUDA_VISIBLE_DEVICES")
    if cuda is not None and re.fullmatch(r"[\w-]+(,[\w-]+)*", cuda.strip()):
        from vramlint.model import GpuRequest

        ids = cuda.strip().split(",")
        server.gpu = GpuRequest(type=None, count=len(ids), evidence=f"CUDA_VISIBLE_DEVICES={cuda}",
                                location=server.env_locations.get("CUDA_VISIBLE_DEVICES"), device_ids=ids)
