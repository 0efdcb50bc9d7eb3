"""Ansible tasks that run a container: `community.docker.docker_container` and `containers.podman.podman_container`
(and their short names), in a tasks file or a playbook, also under `block:` / `rescue:` / `always:`.

The task's parameters are the container's as plainly as a compose service's keys are, so each task is read as a
compose service (vramlint.extract.compose), its parameters given the compose names: `image`, `command`,
`entrypoint`, `env` (`environment`), `device_requests` (deploy devices), `devices` / `device`, `gpus`, `runtime`,
`ipc_mode` (`ipc`), `shm_size`. Locations stay on the task's own lines.

Values are Jinja2, which Ansible renders before the module runs. A `{{ name }}` (optionally `| default(...)`) is
read from what the repository itself gives: the task's and its blocks' `vars:`, a playbook's play `vars:` and
`vars_files` (files inside the scanned tree, relative to the playbook), the group_vars/all beside the playbook or
beside an inventory file next to its folder, over it the group_vars/NAME (a file, or a folder of files) and
host_vars/NAME of the one group or host the plays run on (`hosts: NAME`), and the role's `vars/main.yml` over its
`defaults/main.yml`, in Ansible's precedence among those, when the variable is a plain scalar there. Other
groups', hosts' and extra vars are set where the play runs, and override these: a value from
the role's defaults is said as coming from there. `regex_replace('PATTERN', 'REPL')` with literal arguments is
Python's re.sub, as Ansible's filter is (an invalid pattern, or one that may backtrack without bound, leaves the
value unknown). Anything else (`{% %}`, other filters, expressions) is unknown, said once per variable and file,
never taken as written.
"""

from __future__ import annotations

import dataclasses
import os
import re
from typing import TYPE_CHECKING, Any

from vramlint.cmdline import UNKNOWN_MARK
from vramlint.model import Location, Problem, Server

if TYPE_CHECKING:
    from vramlint.fsread import Refusal

CONTAINER_MODULES = {
    "community.docker.docker_container": "docker",
    "docker_container": "docker",
    "containers.podman.podman_container": "podman",
    "podman_container": "podman",
}
# keys that hold further tasks: blocks, and a playbook's plays
_NESTED_TASKS = ("block", "rescue", "always", "tasks", "pre_tasks", "post_tasks", "handlers")
# Ansible nests task lists this deep at most in any real file; the walk stops there
MAX_TASK_DEPTH = 20
# a variable whose value names others (`vllm_image: "{{ repo }}:{{ tag }}"`) is resolved this many levels deep
MAX_VARIABLE_DEPTH = 10
MAX_RENDERED = 1024 * 1024  # characters a value renders to, past which it is unknown
# (module parameter, compose key) for each parameter read; docker's and podman's names differ for a few
_PARAMETERS = {
    "docker": (("image", "image"), ("command", "command"), ("entrypoint", "entrypoint"), ("env", "environment"),
               ("devices", "devices"), ("runtime", "runtime"), ("ipc_mode", "ipc"), ("shm_size", "shm_size")),
    "podman": (("image", "image"), ("command", "command"), ("entrypoint", "entrypoint"), ("env", "environment"),
               ("device", "devices"), ("gpus", "gpus"), ("runtime", "runtime"), ("ipc", "ipc"),
               ("shm_size", "shm_size")),
}
_EXPRESSION = re.compile(r"\{\{-?(.*?)-?\}\}", re.S)
_NAME = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*")
_FILTER = re.compile(r"\|\s*([A-Za-z_]+)\s*(?:\(\s*(?:'([^']*)'|\"([^\"]*)\"|(-?\d+(?:\.\d+)?))?\s*"
                     r"(?:,\s*(?:true|false|True|False)\s*)?\))?\s*")
# Jinja2 filters whose result vramlint computes (Ansible's `quote` is shlex.quote)
_FILTERS = ("default", "d", "quote", "string", "trim")



def _tasks_in(node: Any, path: str = "", depth: int = 0):
    """Every task of a task list (and of the blocks and plays in it), with the `vars:` of the blocks around it
    and its YAML path."""
    from vramlint.yamlload import join_path

    if not isinstance(node, list) or depth > MAX_TASK_DEPTH:
        return
    for index, item in enumerate(node):
        if not isinstance(item, dict):
            continue
        nested = False
        for key in _NESTED_TASKS:
            if isinstance(item.get(key), list):
                nested = True
                for task, outer, where in _tasks_in(item[key], join_path(join_path(path, index), key), depth + 1):
                    yield task, [item, *outer], where
        if not nested:
            yield item, [], join_path(path, index)


def container_tasks(data: Any) -> list[tuple[dict, str, str, list[dict], str]]:
    """(task, module name, runtime (docker | podman), enclosing blocks, YAML path of the module's parameters)
    for each container task of ``data``."""
    from vramlint.yamlload import join_path

    out = []
    for task, outer, where in _tasks_in(data):
        for key in task:
            if isinstance(key, str) and key in CONTAINER_MODULES and isinstance(task[key], dict):
                out.append((task, key, CONTAINER_MODULES[key], outer, join_path(where, key)))
                break
    return out


# tasks that run a command line: `command` (no shell: Ansible splits the string with shlex), `shell` (`/bin/sh -c`),
# `raw` (the remote shell, no module); their free-form string, `cmd:` or `argv:` list
COMMAND_MODULES = {
    "ansible.builtin.command": "command", "ansible.legacy.command": "command", "command": "command",
    "ansible.builtin.shell": "shell", "ansible.legacy.shell": "shell", "shell": "shell",
    "ansible.builtin.raw": "raw", "ansible.legacy.raw": "raw", "raw": "raw",
}
# what a command must name to be read as one that may start vLLM (the others are not looked into)
_MAY_START = re.compile(r"vllm|docker|podman|nerdctl", re.I)


def command_tasks(data: Any) -> list[tuple[dict, str, list[dict], str]]:
    """(task, module name, enclosing blocks, YAML path of the task) for each command/shell/raw task whose text
    names vLLM or a container CLI."""
    from vramlint.yamlload import join_path

    out = []
    for task, outer, where in _tasks_in(data):
        for key in task:
            if isinstance(key, str) and key in COMMAND_MODULES:
                value = task[key]
                text = value if isinstance(value, str) else repr(value) if isinstance(value, dict) else ""
                if _MAY_START.search(text):
                    out.append((task, key, outer, join_path(where, key)))
                break
    return out


def is_ansible_tasks(doc: Any) -> bool:
    """A tasks file or playbook (a YAML list) with a docker/podman container task, or a command task that may
    start vLLM."""
    data = getattr(doc, "data", doc)
    return isinstance(data, list) and bool(container_tasks(data) or command_tasks(data))


# ---------------------------------------------------------------------------------------------------------------
# the role's variables


def role_folder(file: str) -> str | None:
    """The role a tasks file belongs to (`roles/NAME/tasks/main.yml` -> `roles/NAME`): the folder above the
    nearest `tasks/` folder that holds `defaults/` or `vars/`, else None."""
    folder = os.path.dirname(file)
    for _ in range(6):
        if os.path.basename(folder) == "tasks":
            role = os.path.dirname(folder)
            if any(os.path.isdir(os.path.join(role, sub)) for sub in ("defaults", "vars")) or \
                    os.path.basename(os.path.dirname(role)) == "roles":
                return role or "."
            return None
        parent = os.path.dirname(folder)
        if parent == folder or not folder:
            return None
        folder = parent
    return None


class _Variable:
    __slots__ = ("value", "where")

    def __init__(self, value: Any, where: Location | None):
        self.value, self.where = value, where


def _variables_file(path: str) -> dict[str, _Variable] | Refusal:
    """The top-level variables of a role's defaults or vars file, with where each is written; a Refusal when it
    cannot be read or its YAML is invalid (Ansible stops on it)."""
    from vramlint.discover import display_path
    from vramlint.fsread import Refusal, read_text

    text = read_text(path)
    if isinstance(text, Refusal):
        return text
    return _variables_text(text, display_path(path))


def _take_variables(out: dict[str, _Variable], read: list[str], path: str, shown: str) -> None:
    """The variables of the file at ``path`` into ``out``, and ``shown`` into ``read``; one that cannot be read is
    said there with why, so the note naming the files a value was rendered with says it (never dropped)."""
    variables = _variables_file(path)
    if isinstance(variables, dict):
        out.update(variables)
        read.append(shown)
    else:
        read.append(f"{shown} (not read: {variables.reason}; its variables are unknown)")


def _variables_text(text: str, shown: str) -> dict[str, _Variable] | Refusal:
    """The top-level variables of a variables file's text, with where each is written; a Refusal saying where
    its YAML is invalid (Ansible stops the play on it: "Syntax Error while loading YAML")."""
    from vramlint.fsread import Refusal
    from vramlint.yamlload import key_location, load_text

    docs, problems = load_text(text, shown)
    invalid = next((p for p in problems if p.level == "error"), None)
    if invalid is not None:
        return Refusal(f"{invalid.message} at {shown}:{invalid.line}")
    out: dict[str, _Variable] = {}
    for doc in docs:
        if isinstance(doc.data, dict):
            for key, value in doc.data.items():
                out[str(key)] = _Variable(value, key_location(shown, doc.data, key))
    return out


def role_variables(file: str) -> tuple[dict[str, _Variable], list[str]]:
    """The variables the role of ``file`` gives, and the files read: its defaults/main, then the play's
    `group_vars/all` beside the `roles/` folder (which applies to every host, and overrides role defaults), then
    the role's vars/main (over both: Ansible's precedence among these). Other groups' and hosts' variables apply
    only to the hosts in them, which the repository does not say: not read."""
    role = role_folder(file)
    if role is None:
        return {}, []
    out: dict[str, _Variable] = {}
    read: list[str] = []
    roles = os.path.dirname(role)
    places = [(role, "defaults", "defaults", "all")]
    if os.path.basename(roles) == "roles":
        play_dir = os.path.dirname(roles) or "."
        # an `inventory/` folder beside the playbooks: its group_vars/all applies to every host, under the
        # playbook's own group_vars/all (Ansible's precedence: inventory group_vars, then playbook group_vars)
        places.append((os.path.join(play_dir, "inventory"), "group_vars", "the inventory's group_vars", "all"))
        places.append((play_dir, "group_vars", "the play's group_vars", "all"))
        group = _play_group(play_dir, os.path.basename(role))
        if group is not None:
            # the group's variables apply to every host of the play that applies the role, over `all`'s
            places.extend(_hosts_places(play_dir, group))
    places.append((role, "vars", "vars", "main"))
    _read_places(places, out, read)
    return out, read


def _read_places(places: list[tuple[str, str, str, str]], out: dict[str, _Variable], read: list[str]) -> None:
    """The variables files of ``places`` ((folder, `defaults` | `vars` | `group_vars`, how it is said, the group
    or `main`)), later ones over earlier ones, into ``out``; the files read said in ``read``."""
    for base, sub, shown, stem in places:
        inventory_vars = sub in ("group_vars", "host_vars")
        names = (f"{stem}.yml", f"{stem}.yaml", stem) if inventory_vars else ("main.yml", "main.yaml", "main")
        for name in names:
            path = os.path.join(base, sub, name)
            if os.path.isfile(path):
                _take_variables(out, read, path, f"{shown}/{name}" if inventory_vars else f"the role's {sub}/{name}")
                break
            if os.path.isdir(path) and inventory_vars:
                # a group's folder: its files are read in name order, a later one's value winning
                files = sorted(f for f in os.listdir(path) if f.endswith((".yml", ".yaml")))[:MAX_GROUP_FILES]
                taken: list[str] = []
                for file in files:
                    _take_variables(out, taken, os.path.join(path, file), file)
                if files:
                    read.append(f"{shown}/{name}/ ({', '.join(taken)})")
                    break


# files an inventory is commonly kept in: a group_vars/ beside one is that inventory's (Ansible reads
# group_vars/ beside the inventory source)
_INVENTORY_NAMES = ("inventory.ini", "inventory.yml", "inventory.yaml", "inventory", "hosts", "hosts.ini",
                    "hosts.yml", "hosts.yaml")


def playbook_group_variables(file: str, data: Any = None) -> tuple[dict[str, _Variable], list[str]]:
    """The `all` group's variables a playbook outside a role is run with, as the repository gives them: the
    group_vars/all beside an inventory file in the playbook's folder or the one above it (`ansible/inventory.ini`
    and `ansible/group_vars/all.yml` for `ansible/playbooks/site.yml`), under the playbook's own group_vars/all
    (Ansible's precedence: inventory group_vars/all < playbook group_vars/all), and an `inventory/` folder's
    group_vars/all beside the playbook under both; over them the group_vars/NAME and host_vars/NAME of the one
    group or host the playbook's plays run on (``data``: the playbook). Other groups' variables apply only to the
    hosts in them: not read."""
    out: dict[str, _Variable] = {}
    read: list[str] = []
    play_dir = os.path.dirname(file) or "."
    # an `inventory/` folder beside the playbook, as beside a role's roles/ folder (role_variables)
    places = [(os.path.join(play_dir, "inventory"), "group_vars", "the inventory's group_vars", "all")]
    for folder in (os.path.normpath(os.path.join(play_dir, "..")), play_dir):
        inventory = next((n for n in _INVENTORY_NAMES if os.path.isfile(os.path.join(folder, n))), None)
        if inventory is not None and os.path.isdir(os.path.join(folder, "group_vars")):
            shown = "the play's group_vars" if folder == play_dir else f"{inventory}'s group_vars"
            places.append((folder, "group_vars", shown, "all"))
    if places[-1][0] != play_dir:
        places.append((play_dir, "group_vars", "the play's group_vars", "all"))
    group = _playbook_hosts(data) if data is not None else None
    if group is not None:
        places.extend(_hosts_places(play_dir, group, [p[0] for p in places[1:-1]]))
    _read_places(places, out, read)
    return out, read


def _hosts_places(play_dir: str, name: str, inventories: list[str] | None = None) -> list[tuple[str, str, str, str]]:
    """The variables files for the hosts a play runs on (`hosts: NAME`), in Ansible's precedence over the `all`
    group's: the inventory's group_vars/NAME, the playbook's group_vars/NAME, then host_vars/NAME (when NAME is
    a host) in the same order (`ansible-doc -t vars host_group_vars`; the variable precedence list: inventory
    group_vars/* < playbook group_vars/* < inventory host_vars/* < playbook host_vars/*)."""
    bases = [os.path.join(play_dir, "inventory"), *(inventories or []), play_dir]
    bases = list(dict.fromkeys(bases))
    out = []
    for sub in ("group_vars", "host_vars"):
        for base in bases:
            shown = "the play's" if base == play_dir else "the inventory's"
            out.append((base, sub, f"{shown} {sub}", name))
    return out


def _playbook_hosts(data: Any) -> str | None:
    """The one group or host every play of a playbook runs on (`hosts: gpu_servers`), or None (several, `all`, a
    pattern or a template: which groups' and hosts' variables apply is not known)."""
    names: set[str] = set()
    for play in data if isinstance(data, list) else []:
        if not isinstance(play, dict) or "hosts" not in play:
            continue
        hosts = play.get("hosts")
        if not isinstance(hosts, str) or not re.fullmatch(r"[A-Za-z_][\w.-]*", hosts.strip()):
            return None
        names.add(hosts.strip())
    if len(names) != 1 or "all" in names:
        return None
    return names.pop()


MAX_PLAYBOOKS = 64  # playbooks looked at beside a role's roles/ folder for the hosts it is applied to
MAX_GROUP_FILES = 32


def _play_group(play_dir: str, role_name: str) -> str | None:
    """The one inventory group the playbooks beside ``roles/`` apply the role to (`hosts: dgx`, `roles: [vllm]`),
    or None (no such play, several groups, or a host pattern)."""
    from vramlint.fsread import Refusal, read_text
    from vramlint.yamlload import load_text

    candidates = []
    for folder in (play_dir, os.path.join(play_dir, "playbooks")):
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        candidates.extend(os.path.join(folder, n) for n in names if n.endswith((".yml", ".yaml")))
    groups: set[str] = set()
    for path in candidates[:MAX_PLAYBOOKS]:
        if not os.path.isfile(path):
            continue
        text = read_text(path)
        if isinstance(text, Refusal) or role_name not in text or "hosts:" not in text:
            continue
        docs, _ = load_text(text, path)
        for doc in docs:
            plays = doc.data if isinstance(doc.data, list) else []
            for play in plays:
                if not isinstance(play, dict) or not isinstance(play.get("roles"), list):
                    continue
                named = {r if isinstance(r, str) else r.get("role") or r.get("name")
                         for r in play["roles"] if isinstance(r, (str, dict))}
                if role_name not in named:
                    continue
                hosts = play.get("hosts")
                if not isinstance(hosts, str) or not re.fullmatch(r"[A-Za-z_][\w-]*", hosts.strip()):
                    return None  # a host pattern or template: which groups' variables apply is not known
                groups.add(hosts.strip())
    if len(groups) != 1 or "all" in groups:
        return None
    return groups.pop()


def _own_variables(file: str, blocks: list[dict], task: dict,
                   play_files: dict[int, dict[str, _Variable]] | None = None) -> dict[str, _Variable]:
    """The `vars:` of the blocks around the task and of the task itself, inner over outer; a play's
    `vars_files` (``play_files``, by the play's id) over its `vars:` and under its blocks' (Ansible's precedence:
    play vars < play vars_files < role vars < block vars < task vars)."""
    from vramlint.yamlload import key_location

    out: dict[str, _Variable] = {}
    for node in (*blocks, task):
        given = node.get("vars")
        if isinstance(given, dict):
            for key, value in given.items():
                out[str(key)] = _Variable(value, key_location(file, given, key))
        if play_files and id(node) in play_files:
            out.update(play_files[id(node)])
    return out


MAX_VARS_FILES = 16  # entries of one play's `vars_files` read (past that: said, not read)
MAX_VARS_FILE_BYTES = 1024 * 1024  # a variables file larger than this is said, not read
# distinct variables files one playbook's plays read (each read once, however many plays name it): 10,000 plays
# naming 16 one-MiB files each would otherwise be 160 GB of YAML
MAX_PLAYBOOK_VARS_FILES = 32


def _is_playbook(data: Any) -> bool:
    """A playbook: a list of plays, each naming its `hosts:` (a tasks file's items are tasks)."""
    return isinstance(data, list) and any(isinstance(p, dict) and "hosts" in p for p in data)


def play_files_variables(file: str, data: Any, problems: list[Problem]) -> tuple[dict[int, dict[str, _Variable]],
                                                                                  list[str]]:
    """The variables each play's `vars_files` gives (by the play's id), and the files read. Entries are paths
    relative to the playbook's folder (Ansible's loader resolves them from there); a list entry is read as
    Ansible reads it, its first file that exists. An entry that is a template, outside the scanned tree, not a
    regular file, too large or missing is said on its line and not read."""
    from vramlint.discover import display_path
    from vramlint.fsread import Refusal, read_text
    from vramlint.yamlload import key_location

    out: dict[int, dict[str, _Variable]] = {}
    read: list[str] = []
    if not _is_playbook(data):
        return out, read
    base = os.path.dirname(file)
    loaded: dict[str, dict[str, _Variable] | Refusal] = {}  # path -> its variables, or why it was not read
    for play in data:
        if not isinstance(play, dict) or "vars_files" not in play:
            continue
        entries = play["vars_files"]
        entries = [entries] if isinstance(entries, str) else entries
        if not isinstance(entries, list):
            where = key_location(file, play, "vars_files")
            problems.append(Problem(file, where.line if where else None, None, "the play's vars_files is not a "
                                    "list of file names: its variables are not read", level="note"))
            continue
        given: dict[str, _Variable] = {}
        for k, entry in enumerate(entries):
            where = key_location(file, entries, k)
            line = where.line if where else None
            if k >= MAX_VARS_FILES:
                problems.append(Problem(file, line, None, f"the play's vars_files has {len(entries)} entries: the "
                                        f"first {MAX_VARS_FILES} are read, the others' variables are unknown",
                                        level="note"))
                break
            choices = entry if isinstance(entry, list) else [entry]
            said = None
            for choice in choices[:MAX_VARS_FILES]:
                if not isinstance(choice, str) or "{{" in choice or "{%" in choice:
                    said = f"vars_files entry {_short(str(choice))!r} is not a plain file name (a Jinja2 template " \
                        "or not text): its variables are unknown"
                    break
                path = os.path.normpath(os.path.join(base, choice))
                if path not in loaded and len(loaded) >= MAX_PLAYBOOK_VARS_FILES:
                    said = f"vars_files {choice} not read: the playbook's plays name more than " \
                        f"{MAX_PLAYBOOK_VARS_FILES} variables files; its variables are unknown"
                    break
                if path not in loaded:
                    text = read_text(path, limit=MAX_VARS_FILE_BYTES)
                    loaded[path] = text if isinstance(text, Refusal) else _variables_text(text, display_path(path))
                text = loaded[path]
                if isinstance(text, Refusal):
                    if text.missing:
                        said = f"vars_files {choice}: no such file beside the playbook ({display_path(path)}): " \
                            "its variables are unknown"
                        continue  # a list entry: Ansible takes the first of its files that exists
                    said = f"vars_files {choice} not read ({text.reason}): its variables are unknown"
                    break
                given.update(text)
                if f"the play's vars_files {choice}" not in read:
                    read.append(f"the play's vars_files {choice}")
                said = None
                break
            if said is not None:
                problems.append(Problem(file, line, None, said, level="note"))
        out[id(play)] = given
    return out, read


class _Renderer:
    """Jinja2 values rendered from the variables the repository gives; what it cannot render is unknown."""

    def __init__(self, variables: dict[str, _Variable]):
        self.variables = variables
        self.unknown: dict[str, str] = {}  # what is unknown -> why
        self.used: dict[str, _Variable] = {}  # the variables a value was rendered with
        # (name, depth) -> the variable's value rendered: the variables do not change, so each is rendered once a
        # depth (defaults naming each other 30 times a level, 20 deep, were rendered 30**10 times)
        self.rendered: dict[tuple[str, int], str] = {}

    def text(self, value: str, depth: int = 0) -> str:
        if "{{" not in value and "{%" not in value:
            return value
        if "{%" in value or "{#" in value:
            self.unknown.setdefault(_short(value), "a Jinja2 statement, which vramlint does not render")
            return UNKNOWN_MARK
        pieces: list[str] = []
        size, last = len(value), 0
        for m in _EXPRESSION.finditer(value):
            out = self._expression(m.group(1), depth)
            size += len(out)
            if size > MAX_RENDERED:
                # values that name each other grow as the product of their references
                self.unknown.setdefault(_short(value), f"renders to more than {MAX_RENDERED:,} characters")
                return UNKNOWN_MARK
            pieces += (value[last:m.start()], out)
            last = m.end()
        pieces.append(value[last:])
        return "".join(pieces)

    def _expression(self, inner: str, depth: int) -> str:
        value = self._value(inner, depth)
        if value is None:
            return UNKNOWN_MARK
        return value

    def _value(self, inner: str, depth: int) -> str | None:
        """``{{ name | filter ... }}`` evaluated, or None (unknown, and said why)."""
        m = _NAME.match(inner)
        filters = []
        at = m.end() if m else 0
        while m is not None and at < len(inner):
            f = _FILTER.match(inner, at)
            if f is None or f.group(1) not in _FILTERS:
                break
            filters.append((f.group(1), next((g for g in f.groups()[1:] if g is not None), None)))
            at = f.end()
        if m is None or at < len(inner):
            # an expression of more than a name and the filters above (`item.port`, `x | int`): the Jinja2 subset
            from vramlint.extract import jinja

            value = jinja.evaluate(inner, {n: v.value for n, v in self.variables.items()})
            if isinstance(value, (str, int, float)) and not isinstance(value, bool) and value is not None:
                return str(value)
            self.unknown.setdefault("{{" + inner.strip() + "}}", "an expression vramlint does not evaluate")
            return None
        name = m.group(1)
        var = self.variables.get(name)
        text: str | None = None
        if var is not None:
            if isinstance(var.value, (dict, list)) or var.value is None:
                self.unknown.setdefault(name, "not a plain value")
                return None
            if depth >= MAX_VARIABLE_DEPTH:
                self.unknown.setdefault(name, f"names other variables deeper than {MAX_VARIABLE_DEPTH} levels")
                return None
            text = self.rendered.get((name, depth))
            if text is None:
                value = var.value
                text = ("true" if value else "false") if isinstance(value, bool) else str(value)
                text = self.rendered[(name, depth)] = self.text(text, depth + 1)
            if UNKNOWN_MARK in text:
                return None
            self.used.setdefault(name, var)
        for filter_name, argument in filters:
            if filter_name in ("default", "d"):
                if text is None and argument is not None:
                    text = argument
            elif text is None:
                break
            elif filter_name == "quote":
                import shlex

                text = shlex.quote(text)
            elif filter_name == "trim":
                text = text.strip()
        if text is None:
            self.unknown.setdefault(name, "not set")
        return text

    def node(self, node: Any) -> Any:
        """A copy of ``node`` with each string rendered, its positions kept (for the locations said)."""
        from vramlint.yamlload import YamlMap, YamlSeq

        if isinstance(node, dict):
            out = YamlMap((k, self.node(v)) for k, v in node.items())
            out.lc, out.merge = getattr(node, "lc", None), None
            return out
        if isinstance(node, list):
            seq = YamlSeq(self.node(v) for v in node)
            seq.lc, seq.flow = getattr(node, "lc", None), getattr(node, "flow", False)
            return seq
        if isinstance(node, str):
            # the module passes `$` on as written (no shell, no compose interpolation): `$$` is compose's literal
            rendered = self.text(node).replace("$", "$$")
            if rendered == node:
                return node
            try:
                return type(node)(rendered)  # its style (a block scalar) kept
            except TypeError:
                return rendered
        return node


def render_role_template(text: str, file: str) -> tuple[str, str] | None:
    """A file of an Ansible role's templates/ (`roles/NAME/templates/deployment.yaml.j2`) with each `{{ var }}`
    the role's defaults/vars give as a one-line plain value written in (what Ansible's template module writes
    onto the host, when nothing overrides the role's values), and the note saying what was taken; None when the
    file is no role's template or no value was taken. Expressions left stay as written: the template reading
    makes them unknown."""
    folder = os.path.dirname(file)
    if os.path.basename(folder) != "templates":
        return None
    role = os.path.dirname(folder)
    variables, read = role_variables(os.path.join(role, "tasks", "main.yml"))
    if not variables:
        return None
    if "{%" in text:
        return _render_role_statements(text, variables, read)
    render = _Renderer(variables)
    from vramlint.fsread import MAX_FILE_BYTES

    room = [MAX_FILE_BYTES - len(text)]  # the rendered file is bounded as a file read is

    def one(m: re.Match) -> str:
        value = render._value(m.group(1), 0)
        if value is None or "\n" in value or "{{" in value or "{%" in value or len(value) > room[0]:
            return m.group(0)  # left as written: the template reading makes it unknown
        room[0] -= len(value)
        return value

    rendered = _EXPRESSION.sub(one, text)
    if not render.used:
        return None
    given = "; ".join(f"{name} = {_short(str(var.value))!r}"
                      + (f" ({var.where.file}:{var.where.line})" if var.where is not None else "")
                      for name, var in render.used.items())
    return rendered, (f"read as the Ansible role's template, rendered with {' and '.join(read)}: "
                      f"{given} (inventory, group_vars, host_vars or extra vars override them where the play runs)")


def _render_role_statements(text: str, variables: dict[str, _Variable], read: list[str]) -> Any:
    """A role's YAML template with `{% %}` statements (a compose file whose services a `{% for %}` writes) rendered
    with the Jinja2 subset (vramlint.extract.jinja), what is unknown left as written: (the text, the note, where
    each rendered line was written: (line, column) -> the template's), or None."""
    from vramlint.extract import jinja

    values = {name: var.value for name, var in variables.items()}
    values.setdefault("ansible_managed", "Ansible managed")
    rendered = jinja.render(text, values, keep_unknown=True)
    if rendered.failed is not None or not rendered.used:
        return None
    given = "; ".join(f"{name} = {_short(str(variables[name].value))!r}"
                      + (f" ({variables[name].where.file}:{variables[name].where.line})"
                         if variables[name].where is not None else "")
                      for name in list(rendered.used)[:12] if name in variables)
    note = (f"read as the Ansible role's template, rendered (its `{{% %}}` statements too) with {' and '.join(read)}: "
            f"{given} (inventory, group_vars, host_vars or extra vars override them where the play runs)")
    if rendered.skipped:
        note += f"; template blocks not rendered: {'; '.join(rendered.skipped[:6])}"
    return rendered.text, note, rendered.origin


TEMPLATE_MODULES = ("ansible.builtin.template", "ansible.legacy.template", "template")
MAX_TASK_FILES = 32  # a role's tasks files looked at for the template task that writes a unit's script


def role_template_script(unit_path: str, words: list[Any]) -> tuple[str, str, str] | None:
    """The script a role's unit template runs (`ExecStart={{ dir }}/launch.sh`) when a `template:` task of the role
    writes that path (`dest: "{{ dir }}/launch.sh"`, the dest rendered as the unit was): (the script template's
    display path, its text rendered with the role's variables and laid on the template's lines, what is said of
    it), or None."""
    from vramlint.discover import display_path
    from vramlint.extract import jinja
    from vramlint.fsread import Refusal, read_text
    from vramlint.yamlload import load_text

    texts = [w.text for w in words]
    i = 0
    while i < len(texts) and texts[i] is not None and (texts[i] in ("env", "exec") or "=" in texts[i]):
        i += 1
    if i >= len(texts) or texts[i] is None:
        return None
    wanted = {texts[i]}
    if os.path.basename(texts[i]) in ("sh", "bash", "dash", "zsh") and i + 1 < len(texts) and texts[i + 1]:
        wanted.add(texts[i + 1])
    role = _template_role(unit_path)
    if role is None:
        return None
    variables, read = role_variables(os.path.join(role, "tasks", "main.yml"))
    values = {name: var.value for name, var in variables.items()}
    tasks_dir = os.path.join(role, "tasks")
    try:
        files = sorted(f for f in os.listdir(tasks_dir) if f.endswith((".yml", ".yaml")))[:MAX_TASK_FILES]
    except OSError:
        return None
    for name in files:
        path = os.path.join(tasks_dir, name)
        text = read_text(path)
        if isinstance(text, Refusal) or "template" not in text:
            continue
        docs, _ = load_text(text, display_path(path))
        for doc in docs:
            for task, _outer, _where in _tasks_in(doc.data):
                module = next((m for m in TEMPLATE_MODULES if isinstance(task.get(m), dict)), None)
                if module is None:
                    continue
                src, dest = task[module].get("src"), task[module].get("dest")
                if not isinstance(src, str) or not isinstance(dest, str):
                    continue
                written = jinja.render(dest, values)
                if written.failed is not None or written.text not in wanted:
                    continue
                source = src if os.path.isabs(src) else os.path.join(role, "templates", src)
                script = read_text(source)
                if isinstance(script, Refusal):
                    return None
                rendered = jinja.render(script, values)
                if rendered.failed is not None:
                    return None
                line = getattr(getattr(task, "lc", None), "line", None)
                said = (f"the unit runs the script the role's `template:` task writes ({display_path(path)}"
                        f"{f':{line + 1}' if line is not None else ''}: {src} -> {_short(dest)}), rendered with "
                        f"{' and '.join(read) if read else 'no role defaults or vars file'}")
                unknown = [f"{what} ({why})" for what, why in rendered.unknown.items()]
                if unknown:
                    said += f"; its Jinja2 values unknown: {', '.join(unknown[:6])}"
                if rendered.skipped:
                    said += f"; template blocks not rendered: {'; '.join(rendered.skipped[:4])}"
                return display_path(source), jinja.laid_out(rendered), said
    return None


def _template_role(file: str) -> str | None:
    """The role whose `templates/` folder (or a folder under it) holds ``file``, or None."""
    folder = os.path.dirname(file)
    for _ in range(4):
        if os.path.basename(folder) == "templates":
            return os.path.dirname(folder) or "."
        parent = os.path.dirname(folder)
        if parent == folder or not folder:
            return None
        folder = parent
    return None


def render_role_unit(text: str, display: str, path: str | None) -> Any:
    """A systemd unit written as an Ansible role's template (`roles/NAME/templates/vllm.service.j2`, which a
    `template:` task writes to /etc/systemd/system/) rendered as Ansible's template module renders it (Jinja2,
    trim_blocks) with the variables the role gives: (the `jinja.Rendered` unit, what is said of it), or a Problem
    (a note) when it cannot be rendered."""
    from vramlint.extract import jinja

    role = _template_role(path or display)
    variables, read = role_variables(os.path.join(role, "tasks", "main.yml")) if role is not None else ({}, [])
    values = {name: var.value for name, var in variables.items()}
    # Ansible's template module sets `ansible_managed` (ansible.cfg's DEFAULT_MANAGED_STR, "Ansible managed")
    values.setdefault("ansible_managed", "Ansible managed")
    rendered = jinja.render(text, values)
    if rendered.failed is not None:
        return Problem(display, rendered.failed_line or 1, 1, f"an Ansible template of a systemd unit that vramlint cannot render "
                       f"({rendered.failed}): a vLLM server it starts is not checked; render it (`ansible-playbook "
                       "--check --diff`, or `ansible -m template`) and check the unit written", level="note")
    notes = []
    given = [f"{name} = {_short(str(variables[name].value))!r}"
             + (f" ({variables[name].where.file}:{variables[name].where.line})"
                if variables[name].where is not None else "")
             for name in rendered.used if name in variables]
    if given:
        notes.append(f"read as the Ansible role's template of a systemd unit, rendered with {' and '.join(read)}: "
                     f"{'; '.join(given[:12])}{' and more' if len(given) > 12 else ''} (inventory, group_vars, "
                     "host_vars or extra vars override them where the play runs)")
    unknown = [f"{what} ({why})" for what, why in rendered.unknown.items()]
    if unknown:
        given_by = " and ".join(read) if read else "no role defaults or vars file"
        notes.append(f"Jinja2 values unknown: {', '.join(unknown[:8])}{' and more' if len(unknown) > 8 else ''}, as "
                     f"read from {given_by} (inventory, group_vars or extra vars may set them where the play runs); "
                     "set them in the role's defaults/main.yml to check them")
    if rendered.skipped:
        notes.append(f"template blocks not rendered: {'; '.join(rendered.skipped[:6])}")
    return rendered, notes


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ---------------------------------------------------------------------------------------------------------------
# tasks as compose services


def _service_node(args: dict, runtime: str, render: _Renderer) -> Any:
    """The task's parameters under their compose names (positions kept: the service's keys are the task's)."""
    from vramlint.yamlload import LineCol, YamlMap, YamlSeq

    service = YamlMap()
    service.merge = None
    source_lc = getattr(args, "lc", None)
    lc = LineCol(getattr(source_lc, "line", 0) or 0, getattr(source_lc, "col", 0) or 0)
    lc.data = {}
    source = getattr(source_lc, "data", None) or {}
    for param, key in _PARAMETERS[runtime]:
        if param not in args or args[param] is None:
            continue
        value = _environment(args[param], render) if key == "environment" else render.node(args[param])
        if param == "entrypoint" and runtime == "docker" and isinstance(value, str):
            # the module's `entrypoint` is a list; Ansible makes a string a list by splitting it at commas
            words = YamlSeq(w.strip() for w in value.split(",") if w.strip())
            words.lc, words.flow = None, True
            value = words
        service[key] = value
        if param in source:
            lc.data[key] = source[param]
    requests = args.get("device_requests")
    if isinstance(requests, list):
        devices = YamlSeq()
        devices.lc, devices.flow = getattr(requests, "lc", None), False
        for item in requests:
            request = render.node(item) if isinstance(item, dict) else item
            if isinstance(request, dict) and isinstance(request.get("capabilities"), list):
                # the module's capabilities are a list of lists (OR of ANDs); compose's one list
                request["capabilities"] = [c for group in request["capabilities"]
                                           for c in (group if isinstance(group, list) else [group])]
            devices.append(request)
        reservations = YamlMap(devices=devices)
        reservations.lc, reservations.merge = None, None
        resources = YamlMap(reservations=reservations)
        resources.lc, resources.merge = None, None
        deploy = YamlMap(resources=resources)
        deploy.lc, deploy.merge = None, None
        service["deploy"] = deploy
    service.lc = lc
    return service


def _environment(env: Any, render: _Renderer) -> Any:
    """``env`` rendered; a variable unknown in a value the budget does not read (a token) is not worth a note,
    as compose's reading has it (compose._ENV_READ_PREFIXES)."""
    from vramlint.extract.compose import _ENV_READ_PREFIXES

    if not isinstance(env, dict):
        return render.node(env)
    quiet = _Renderer(render.variables)
    out = render.node({})
    out.lc = getattr(env, "lc", None)
    for key, value in env.items():
        out[key] = (render if str(key).startswith(_ENV_READ_PREFIXES) else quiet).node(value)
    render.used.update((k, v) for k, v in quiet.used.items() if k not in render.used)
    return out


MAX_RENDERED_SETS = 16  # distinct sets of task variables the file's lines are rendered with (see extract_ansible)


def extract_ansible(doc: Any) -> tuple[list[Server], list[Problem]]:
    """The vLLM servers the container tasks of an Ansible tasks file or playbook start."""
    from vramlint.extract import compose
    from vramlint.yamlload import LineCol, YamlMap, join_path

    file, lines = doc.file, doc.lines
    servers: list[Server] = []
    problems: list[Problem] = []
    tasks = container_tasks(doc.data)
    if not tasks and not command_tasks(doc.data):
        return servers, problems
    role_vars, read = role_variables(file)
    if role_folder(file) is None and _is_playbook(doc.data):
        role_vars, read = playbook_group_variables(file, doc.data)
    play_files, files_read = play_files_variables(file, doc.data, problems)
    read = read + files_read
    said: set[str] = set()
    command_servers = _command_task_servers(doc, role_vars, read, problems, said, play_files)
    rendered: dict[str, list[str]] = {}  # the file's lines as each set of variables renders them
    by_container: dict[object, Server] = {}  # in the order the servers were started (by name: linear in the tasks)
    for task, module, runtime, blocks, task_path, item_vars, item_note in _each_item(tasks, role_vars, file, play_files):
        args = task[module]
        task_lc = getattr(task, "lc", None)
        at = [task_lc.line, task_lc.col, task_lc.line, task_lc.col] if task_lc is not None else None
        render = _Renderer({**role_vars, **_own_variables(file, blocks, task, play_files), **item_vars})
        state = render.text(str(args.get("state", "started")))
        title = render.text(str(task.get("name") or args.get("name") or module))
        name = render.text(str(args.get("name") or task.get("name") or module))
        if UNKNOWN_MARK in name:
            name = str(task.get("name") or module)
        if state in ("absent", "stopped"):
            continue  # the task stops or removes the container: it starts no server
        node = _service_node(args, runtime, render)
        services = YamlMap({name: node})
        services.merge = None
        services.lc = LineCol(at[0] if at else 0, at[1] if at else 0)
        services.lc.data = {name: at} if at else {}
        # the lines as rendered, so that the words of a rendered block scalar are placed on the lines they were
        # written on (cmdline._Positions aligns a block's source lines with its text)
        # (rendered once per distinct set of variables, and past MAX_RENDERED_SETS not at all - the positions of
        # a block's words may then be off by the width of its `{{ }}`s: 20,000 tasks re-rendered a 100,000-line
        # file each, 127 CPU-s)
        shown = None
        if lines is not None:
            key = repr(sorted(render.variables.items(), key=lambda kv: str(kv[0])))
            shown = rendered.get(key)
            if shown is None and len(rendered) < MAX_RENDERED_SETS:
                quiet = _Renderer(render.variables)
                shown = rendered[key] = [quiet.text(line).replace("$", "$$") if "{{" in line or "$" in line
                                         else line for line in lines]
            elif shown is None:
                shown = lines
        said_before = len(problems)
        try:
            server = compose._service(services, name, file, shown, None, {}, False, problems, said)
        except (TypeError, ValueError, AttributeError) as exc:  # malformed parameters: said, the next task read
            line = at[0] + 1 if at else None
            problems.append(Problem(file, line, None, f"task {title}: could not be read ({exc})"))
            continue
        # the compose reading names the service; here it is the task (and its container)
        for i in range(said_before, len(problems)):
            p = problems[i]
            if p.message.startswith(f"service {name}: "):
                label = f"task {title}" + (f" (container {name})" if name != title else "")
                problems[i] = dataclasses.replace(p, message=label + p.message[len(f"service {name}"):])
        if server is None:
            continue
        server.source_format = "ansible"
        server.kind = f"Ansible {module} task"
        server.container = name
        _retarget(server, join_path("services", name), task_path, runtime)
        _say_variables(server, render, read, said)
        if item_note is not None:
            server.notes.append(item_note)
        when = _when(task, blocks, {n: v.value for n, v in render.variables.items()})
        if when is not None:
            server.notes.append(when)
        key: object = name if UNKNOWN_MARK not in name else object()  # a name known only at run time: its own
        earlier = by_container.pop(key, None)
        if earlier is not None:
            # one container name is one container on the host: a later task recreates or reconfigures it, and
            # what runs is what the last one leaves (two servers would be counted as sharing its GPUs)
            server.notes.append(f"the task at line {earlier.location.line} starts the container {name} too; "
                                "read as this later task leaves it")
        by_container[key] = server  # (re-inserted last, as the later task leaves it)
    servers = list(by_container.values()) + command_servers
    compose._mark_shared_gpus(servers)
    return servers, problems


MAX_LOOP_SERVERS = 16  # loop items read as servers of their own (a loop past that: the first ones, said)


def _each_item(tasks: list[Any], role_vars: dict[str, _Variable], file: str,
               play_files: dict[int, dict[str, _Variable]]) -> Any:
    """Each container task once, or once per item of its loop when its parameters use the item: (the task's
    fields..., the item's variable, what is said of the item)."""
    for task, module, runtime, blocks, task_path in tasks:
        variables = {**role_vars, **_own_variables(file, blocks, task, play_files)}
        loop_var, items, loop_said = _loop_items(task, variables)
        if loop_var is None or not re.search(rf"\b{re.escape(loop_var)}\b", repr(task[module])):
            yield task, module, runtime, blocks, task_path, {}, None
        elif items is None:
            yield task, module, runtime, blocks, task_path, {}, f"the task loops, and {loop_said}: the item's " \
                "values are unknown"
        else:
            for k, item in enumerate(items[:MAX_LOOP_SERVERS]):
                note = f"the loop's item {k + 1} of {len(items)}: {loop_var} = {_short(repr(item), 50)}"
                if k == 0 and len(items) > MAX_LOOP_SERVERS:
                    note += f" (the loop has {len(items)} items: the first {MAX_LOOP_SERVERS} are read)"
                yield task, module, runtime, blocks, task_path, {loop_var: _Variable(item, None)}, note
_LOOP_KEYS = ("loop", "with_items", "with_list")


def _loop_items(task: dict, variables: dict[str, _Variable]) -> tuple[str | None, list[Any] | None, str | None]:
    """(the loop variable, the items, what is said of them) of a task's `loop:` / `with_items:` / `with_list:`;
    (None, None, None) for a task without a loop; items None when they are not known here."""
    from vramlint.extract import jinja

    key = next((k for k in _LOOP_KEYS if k in task), None)
    if key is None:
        return None, None, None
    control = task.get("loop_control")
    name = str(control.get("loop_var")) if isinstance(control, dict) and control.get("loop_var") else "item"
    value = task[key]
    if isinstance(value, str):
        m = _EXPRESSION.fullmatch(value.strip())
        value = jinja.evaluate(m.group(1), {n: v.value for n, v in variables.items()}) if m else jinja.UNKNOWN
    if not isinstance(value, list):
        return name, None, f"its `{key}:` items are not known here"
    if key == "with_items":  # with_items flattens one level of lists
        value = [v for item in value for v in (item if isinstance(item, list) else [item])]
    return name, list(value), None


def _when(task: dict, blocks: list[dict], variables: dict[str, Any]) -> str | None:
    """What is said of the `when:` conditions of the task and its blocks (None when there are none, or the
    role's values make each true)."""
    from vramlint.extract import jinja

    conditions: list[str] = []
    for node in (*blocks, task):
        when = node.get("when")
        for cond in (when if isinstance(when, list) else [when] if when is not None else []):
            conditions.append(str(cond).strip())
    if not conditions:
        return None
    values = [jinja.evaluate(c, variables) for c in conditions]
    shown = " and ".join(f"`{_short(c, 50)}`" for c in conditions[:4]) + (" ..." if len(conditions) > 4 else "")
    if any(v is not jinja.UNKNOWN and not v for v in values):
        return (f"the task runs only when {shown} (its `when:`), which the role's values make false: it does not "
                "run unless the play's variables differ; read as if it runs")
    if all(v is not jinja.UNKNOWN and v for v in values):
        return None
    return f"the task runs only when {shown} (its `when:`), which is decided where the play runs"


def _command_text(task: dict, module: str) -> tuple[Any, Any, Any] | None:
    """(the node, the key, the string) of the command a task runs: its free-form string, `cmd:`, or its `argv:`
    list (joined as a shell would quote it)."""
    import shlex

    value = task[module]
    if isinstance(value, str):
        return task, module, value
    if isinstance(value, dict):
        for key in ("cmd", "_raw_params"):
            if isinstance(value.get(key), str):
                return value, key, value[key]
        argv = value.get("argv")
        if isinstance(argv, list) and all(isinstance(a, (str, int, float)) for a in argv):
            return value, "argv", shlex.join(str(a) for a in argv)
    return None


def _placed_script(file: str, lines: list[str] | None, node: Any, key: Any, rendered: Any) -> Any:
    """The rendered command as a script Token whose words point at the task's lines: each rendered line placed
    on the line of the file it was written on (a line after a `\\` continuation right after it)."""
    from vramlint.cmdline import Token
    from vramlint.yamlload import value_location

    loc = value_location(file, node, key)
    start_line, start_col = (loc.line, loc.column) if loc is not None else (1, 1)
    block = False
    indent = 1
    if lines is not None and 0 < start_line <= len(lines):
        src = lines[start_line - 1]
        ch = src[start_col - 1:start_col]
        if ch in ("|", ">"):
            block = True
            for follow in lines[start_line:]:
                if follow.strip():
                    indent = len(follow) - len(follow.lstrip(" ")) + 1
                    break
        elif ch in ("'", '"'):
            start_col += 1
    first = start_line + 1 if block else start_line
    # the script's own lines, the first on line `first` (a literal block Token placed there: no padding lines, which
    # made each of 5,000 tasks a script of the file's length)
    out: list[str] = []
    text = rendered.text
    at = 0
    for piece in text.split("\n"):
        source_line = rendered.where[at][0] if at < len(rendered.where) else None
        at += len(piece) + 1
        slot = max(source_line - 1 if source_line is not None else len(out), len(out))
        filler = "\\" if out and out[-1].rstrip().endswith("\\") else ""  # (as jinja.laid_out)
        while len(out) < slot:
            out.append(filler)
        pad = (indent - 1) if block else (start_col - 1 if not out else 0)
        out.append(" " * pad + piece)
    script = "\n".join(out)
    return Token(script, Location(file, first - 1, 1), block="|", indent=1, lines=out), script


def _command_task_servers(doc: Any, role_vars: dict[str, _Variable], read: list[str], problems: list[Problem],
                          said: set[str], play_files: dict[int, dict[str, _Variable]]) -> list[Server]:
    """The vLLM servers the command/shell/raw tasks of a tasks file start: their command rendered with the
    task's variables (one server per loop item when the item feeds the command), read as a shell script is
    (`vllm serve`, `python -m vllm.entrypoints...`, `docker run` / `podman run` of a vLLM image)."""
    from vramlint.extract import jinja
    from vramlint.extract.shell_scripts import read_shell_script

    file, lines = doc.file, doc.lines
    servers: list[Server] = []
    for task, module, blocks, _path in command_tasks(doc.data):
        found = _command_text(task, module)
        if found is None:
            continue
        node, key, command = found
        variables = {**role_vars, **_own_variables(file, blocks, task, play_files)}
        values = {n: v.value for n, v in variables.items()}
        title = str(task.get("name") or module)
        loop_var, items, loop_said = _loop_items(task, variables)
        uses_item = loop_var is not None and re.search(rf"\b{re.escape(loop_var)}\b", command) is not None
        runs: list[tuple[Any, str | None]] = [(None, None)]
        if uses_item and items is not None:
            runs = [(item, f"the loop's item {k + 1} of {len(items)}: {loop_var} = {_short(repr(item), 50)}")
                    for k, item in enumerate(items[:MAX_LOOP_SERVERS])]
        env = task.get("environment")
        when = _when(task, blocks, values)
        task_lc = getattr(task, "lc", None)
        for run, (item, item_said) in enumerate(runs, start=1):
            scope = dict(values)
            if uses_item and items is not None:
                scope[loop_var] = item
            rendered = jinja.render(command, scope)
            if rendered.failed is not None:
                if "vllm" not in command.lower():
                    break  # a docker command that names no vLLM (`docker ps`): nothing to say
                problems.append(Problem(file, task_lc.line + 1 if task_lc else None, None,
                                        f"task {title}: its command is a Jinja2 template vramlint cannot render "
                                        f"({rendered.failed}): a vLLM server it starts is not checked", level="note"))
                break
            script, text = _placed_script(file, lines, node, key, rendered)
            task_env = None
            if isinstance(env, dict):
                task_env = {}
                for name, value in env.items():
                    got = jinja.render(str(value), scope) if isinstance(value, (str, int, float)) else None
                    task_env[str(name)] = None if got is None or got.failed or "\ue000" in got.text else got.text
            found_servers, found_problems = read_shell_script(text, file, say_mention=False, env=task_env,
                                                              script=script)
            problems.extend(found_problems)
            for server in found_servers:
                server.source_format = "ansible"
                server.kind = f"Ansible {module} task"
                server.name = title if item_said is None else f"{title} [{run}]"
                _say_rendered(server, rendered, variables, read, said)
                if item_said is not None:
                    server.notes.append(item_said)
                if loop_said is not None and uses_item:
                    server.notes.append(f"the task loops, and {loop_said}: the item's values are unknown")
                if uses_item and items is not None and len(items) > MAX_LOOP_SERVERS and run == 1:
                    server.notes.append(f"the loop has {len(items)} items: the first {MAX_LOOP_SERVERS} are read")
                if when is not None:
                    server.notes.append(when)
                servers.append(server)
    return servers


def _say_rendered(server: Server, rendered: Any, variables: dict[str, _Variable], read: list[str],
                  said: set[str]) -> None:
    """Where a command's Jinja2 values came from, and which are unknown (each said once per file)."""
    given = []
    for name in rendered.used:
        var = variables.get(name)
        if var is None or f"jinja-used:{name}" in said:
            continue
        said.add(f"jinja-used:{name}")
        given.append(f"{name} = {_short(str(var.value))!r}" + (f" ({var.where.file}:{var.where.line})"
                                                               if var.where is not None else ""))
    if given:
        server.notes.append(f"Jinja2 values taken from the play's variables: {'; '.join(given[:12])}"
                            f"{' and more' if len(given) > 12 else ''} (inventory, group_vars, host_vars or extra "
                            "vars override them where the play runs)")
    fresh = [(what, why) for what, why in rendered.unknown.items() if f"jinja:{what}" not in said]
    if fresh:
        said.update(f"jinja:{what}" for what, _ in fresh)
        given_by = " and ".join(read) if read else "no role defaults or vars file beside the tasks"
        server.notes.append(f"Jinja2 values unknown: {', '.join(f'{w} ({y})' for w, y in fresh[:8])}, as read from "
                            f"the task's vars and {given_by} (inventory, group_vars or extra vars may set them where "
                            f"the play runs); set them in {_where_to_set(server)} to check them")
    if rendered.skipped:
        server.notes.append(f"template blocks not rendered: {'; '.join(rendered.skipped[:6])}")


def _retarget(server: Server, service_path: str, task_path: str, runtime: str) -> None:
    """The YAML paths the compose reading gave (`services.NAME.environment.X`) made the task's own
    (`[1].block[0].community.docker.docker_container.env.X`): the JSON report and SARIF name them."""
    names = {key: param for param, key in _PARAMETERS[runtime]}
    names["deploy.resources.reservations.devices"] = "device_requests"

    def moved(loc: Any) -> Any:
        if not isinstance(loc, Location) or not loc.yaml_path.startswith(service_path):
            return loc
        rest = loc.yaml_path[len(service_path):].lstrip(".")
        for key, param in names.items():
            if rest == key or rest.startswith((key + ".", key + "[")):
                rest = param + rest[len(key):]
                break
        return dataclasses.replace(loc, yaml_path=f"{task_path}.{rest}" if rest else task_path)

    for owner in (server, server.gpu):
        if owner is None:
            continue
        for field in dataclasses.fields(owner):
            value = getattr(owner, field.name)
            if isinstance(value, Location):
                setattr(owner, field.name, moved(value))
            elif isinstance(value, dict) and any(isinstance(v, Location) for v in value.values()):
                setattr(owner, field.name, {k: moved(v) for k, v in value.items()})


def _say_variables(server: Server, render: _Renderer, read: list[str], said: set[str]) -> None:
    """Where the Jinja2 values came from, and which are unknown (each variable said once per file)."""
    by_file: dict[str, list[str]] = {}
    for name, var in render.used.items():
        key = f"jinja-used:{name}"
        if key in said:
            continue
        said.add(key)
        where = var.where.file if var.where is not None else "the task's vars"
        line = f" (line {var.where.line})" if var.where is not None else ""
        by_file.setdefault(where, []).append(f"{name} = {_short(str(var.value))!r}{line}")
    for where, given in by_file.items():
        server.notes.append(f"Jinja2 values taken from {where}: {'; '.join(given)} (inventory, group_vars, "
                            "host_vars or extra vars override them where the play runs)")
    fresh = [(what, why) for what, why in render.unknown.items() if f"jinja:{what}" not in said]
    if not fresh:
        return
    said.update(f"jinja:{what}" for what, _ in fresh)
    given = " and ".join(read) if read else "no role defaults or vars file beside the tasks"
    named = ", ".join(f"{what} ({why})" for what, why in fresh)
    server.notes.append(f"Jinja2 values unknown: {named}, as read from the task's vars and {given} (inventory, "
                        "group_vars or extra vars may set them where the play runs); set them in "
                        f"{_where_to_set(server)} to check them")


def _where_to_set(server: Server) -> str:
    """Where a value the tasks name is given so that vramlint reads it: a role's defaults, or a playbook's
    vars."""
    file = server.location.file if server.location is not None else ""
    if file and role_folder(file) is None:
        return "the play's vars or vars_files, or group_vars/all.yml beside the playbook"
    return "the role's defaults/main.yml"
