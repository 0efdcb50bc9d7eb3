"""Scripts that containers run from ConfigMaps, read once every scanned file's ConfigMaps are known: each gives
the container's server (read by `podspec.container_server` with the script as its command line) or a note
saying why it cannot. Apart from `scripts` so that `podspec`, which records the references, does not import
what reads them.
"""

from __future__ import annotations

from typing import Any

from vramlint.extract.scripts import UNKNOWN_DIR, ScriptCall, ScriptRef, script_command


def script_key(ref: ScriptRef) -> tuple[str | None, tuple[str, str] | None]:
    """(the script's absolute path in the container, or None when it is relative to a folder the files do not
    say; the (ConfigMap, key) mounted there, or None). The path is resolved before it is compared with the
    mounts: `cd /workspace && ./prefill.sh` opens /workspace/prefill.sh."""
    from vramlint.extract.podspec import config_key_for, configmap_mounts, is_map, scalar_text

    working_dir = scalar_text(ref.container.get("workingDir")) if is_map(ref.container) else None
    seen = ref.call.path_in_container(working_dir)
    return seen, (config_key_for(seen, configmap_mounts(ref.hit.node, ref.container)) if seen else None)


def resolve_script_refs(refs: list[ScriptRef], configmaps: dict[str, list[Any]], records: Any,
                        joined: bool = True) -> None:
    """Read each referenced script from its ConfigMap: a server when it starts vLLM, else a note when the
    container mentions vLLM (with the reason the server cannot be read). ``joined``: ``configmaps`` holds every
    scanned file's (False: one document's only, so a ConfigMap not in it is not said to be missing)."""
    from vramlint.cmdline import yaml_token
    from vramlint.extract.podspec import container_server
    from vramlint.model import Problem

    for ref in refs:
        path = ref.call.path.text or ""
        seen, key = script_key(ref)
        cm = None
        if key is not None:
            candidates = configmaps.get(key[0], [])
            cm = next((c for c in candidates if c.file == ref.doc.file), candidates[0] if candidates else None)
        content = cm.data.get(key[1]) if cm is not None and key is not None else None
        if not isinstance(content, str):
            if ref.hidden is not None and not joined and cm is None:
                records.problems.append(Problem(ref.doc.file, ref.location.line, ref.location.column, ref.hidden,
                                                level="note"))
            elif ref.hidden is not None:
                if seen is None:
                    why = (f"the script {path} it runs is relative to {_relative_base(ref.call)}, which the files "
                           "do not say, so which file it is is not known (give the container a `workingDir`, or "
                           "run the script by its absolute path)")
                elif key is None:
                    why = f"the script {seen} it runs is not mounted from a ConfigMap (it is in the image)"
                elif cm is None:
                    why = (f"the script {path} it runs comes from ConfigMap {key[0]!r} (key {key[1]!r}), which is "
                           "not among the scanned files (scan the file that defines it)")
                else:
                    why = f"the script {path} it runs is key {key[1]!r} of ConfigMap {key[0]!r}, which has no such key"
                records.problems.append(Problem(ref.doc.file, ref.location.line, ref.location.column,
                                                f"{ref.hidden}; {why}", level="note"))
            continue
        dpath = f"{cm.path}.{key[1]}"
        script = yaml_token(cm.file, cm.data, key[1], dpath, cm.doc.lines)
        server, problems = container_server(ref.doc, ref.ctx, ref.hit, ref.index, ref.container,
                                            command_override=script_command(ref.call, script), args_override=[],
                                            shm_known=ref.shm_known, records=records, follow_scripts=False,
                                            container_path=ref.container_path)
        records.problems.extend(p for p in problems if p.level != "note")
        if server is None:
            if ref.hidden is not None or "vllm" in content.lower():
                records.problems.append(Problem(
                    ref.doc.file, ref.location.line, ref.location.column,
                    f"runs the script {path} (ConfigMap {key[0]!r} key {key[1]!r} in {cm.file}), which mentions "
                    "vLLM but starts no vLLM server vramlint can read (a launcher that builds the command at run "
                    "time); not checked", level="note"))
            continue
        server.notes.append(f"the vLLM command line is read from the script {path}: ConfigMap {key[0]!r} key "
                            f"{key[1]!r} in {cm.file}")
        records.servers.append(server)


def _relative_base(call: ScriptCall) -> str:
    if call.cwd == UNKNOWN_DIR:
        return "a folder its `cd` names only at run time"
    if call.cwd:
        return f"the folder `cd {call.cwd}` moves to within the container's working directory (the image's WORKDIR)"
    return "the container's working directory (the image's WORKDIR)"
