"""Launchers an image runs, read from the repository through the COPY/ADD that put them in it: a script, or
supervisord and the configuration it reads (`supervisord`). Used for compose services built from a Dockerfile and
for Dockerfiles read alone; never run.
"""

from __future__ import annotations

import os
from typing import Any

from vramlint.extract import scripts
from vramlint.model import Location


def supervisord_invocation(conf: str, text: str, display: str, image: str | None, env: dict[str, str | None],
                           env_locations: dict[str, Location], copied: str | None, context_note: str = ""
                           ) -> tuple[Any, str | None, str | None, dict[str, Any] | None]:
    """The vLLM server supervisord starts from the configuration ``text`` (`conf` in the container, the file at
    ``display``), with the container's ``env`` as supervisord's environment: (invocation, note, None, what the
    program adds: its env, env locations and notes), or (None, None, why, None)."""
    import posixpath

    from vramlint.extract.supervisord import program_servers, unknown_note

    found, problems = program_servers(text, display, image, env, env_locations,
                                      posixpath.dirname(conf) if conf.startswith("/") else None)
    if not found:
        if problems:
            return None, None, f"supervisord's configuration {conf} ({display}) is not read: {problems[0].message}", None
        if "vllm" not in text.lower():
            return None, None, None, None
        return None, None, (f"supervisord's configuration {conf} ({display}) mentions vLLM but no [program:*] "
                            "command= starts a vLLM server vramlint can read; not checked"), None
    program, inv = found[0]
    how = f", which the image has from {copied}{context_note}" if copied else \
        "; the container runs the image's copy of it, taken to be this file"
    note = (f"the vLLM command line is read from [program:{program.section.name.split(':', 1)[1]}] of supervisord's "
            f"configuration {conf} ({display}){how}")
    if len(found) > 1:
        note += (f"; {len(found) - 1} more program{'s' if len(found) > 2 else ''} of it start vLLM in the same "
                 "container and are not read here")
    extra = {"env": {k: v for k, v in program.env.items() if env.get(k, object()) != v or k not in env},
             "env_locations": program.env_locations, "notes": [n for n in [*program.notes, unknown_note(program)] if n]}
    return inv, note, None, extra


def follow_image_launcher(words: list[Any], built: Any, context: str, context_display: str, image: str | None,
                          env: dict[str, str | None], env_locations: dict[str, Location], context_note: str = ""
                          ) -> tuple[Any, str | None, str | None, dict[str, Any] | None, str | None]:
    """What an image built from ``built`` (`dockerfile.BuiltImage`) runs when ``words`` (its ENTRYPOINT + CMD)
    start a launcher the build COPYs from ``context`` (a folder on disk, shown as ``context_display``): a script,
    or supervisord and its configuration. (invocation, note, why, extra, the real path of the file read) as in
    `launcher_invocation` / `supervisord_invocation`; all None when ``words`` start no launcher."""
    import posixpath

    from vramlint.extract.image_files import context_source, unpacked_by_add
    from vramlint.extract.supervisord import conf_in_image, supervisord_call

    def is_dir(rel: str) -> bool:
        return os.path.isdir(os.path.join(context, rel))

    def shown(rel: str) -> str:
        return posixpath.normpath(posixpath.join(context_display, rel)) if context_display not in ("", ".") else rel

    sv = supervisord_call(words)
    if sv is not None:
        confs = conf_in_image(sv, built, context)
        if not confs:
            named = sv.conf or "its default configuration (/etc/supervisor/supervisord.conf)"
            return None, None, (f"it runs supervisord with {named}, which no COPY/ADD of {built.dockerfile} puts in "
                                "the image from the build context"), None, None
        why = None
        for in_image, rel, line in confs:
            host = os.path.join(context, rel)
            text, why_not = scripts.read_script_file(host)
            if text is None:
                why = f"supervisord's configuration {in_image} ({shown(rel)}) is not read: {why_not}"
                continue
            inv, note, why, extra = supervisord_invocation(
                in_image, text, shown(rel), image, env, env_locations, f"COPY {rel} (line {line} of "
                f"{built.dockerfile})", context_note)
            if inv is not None:
                return inv, note, None, extra, os.path.realpath(host)
        return None, None, why, None, None
    call = scripts.script_call(words)
    if call is None or not call.path.text:
        return None, None, None, None, None
    in_image = posixpath.normpath(posixpath.join(built.workdir, call.path.text))
    found = context_source(built, in_image, is_dir)
    if found is None:
        return None, None, (f"the script {call.path.text} it runs is in the image, and no COPY/ADD of "
                            f"{built.dockerfile} puts it there from the build context"), None, None
    host = os.path.join(context, found[0])
    if not os.path.isfile(host):
        # said with the build context taken, when that is vramlint's assumption (the Dockerfile's folder): a build
        # from another folder (`docker build -f docker/Dockerfile .`) copies the file from there
        return None, None, (f"the script {call.path.text} it runs is copied from {found[0]} of the build context, "
                            f"and {shown(found[0])} is not in the repository{context_note}"), None, None
    if unpacked_by_add(built, found[1], host):
        return None, None, (f"the script {call.path.text} it runs is in the archive {shown(found[0])}, which ADD "
                            f"(line {found[1]} of {built.dockerfile}) unpacks into the image: not read"), None, None
    text, why_not = scripts.read_script_file(host)
    if text is None:
        return None, None, f"the script {call.path.text} ({shown(found[0])}) is not read: {why_not}", None, None
    inv, note, why = scripts.launcher_invocation(call, text, shown(found[0]), image, env,
                                         f"COPY {found[0]} (line {found[1]} of {built.dockerfile})", context_note)
    return inv, note, why, None, os.path.realpath(host) if inv is not None else None

