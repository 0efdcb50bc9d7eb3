"""Virtual machines a Terraform file creates whose start-up script runs vLLM (read, never run).

A VM runs its start-up script once it boots; the script's `docker run ... vllm/vllm-openai` or `vllm serve` is a
server on the VM's GPUs. The scripts and GPUs are the providers' own fields:

- `google_compute_instance` / `google_compute_instance_template` (hashicorp/google): `metadata_startup_script`,
  or `metadata = { startup-script = ... }` (the guest agent runs either at boot; `startup-script-url` names a
  file in Cloud Storage, not in the tree). GPUs: `guest_accelerator { type = "nvidia-l4" count = 1 }` (the type
  may be the accelerator type's full URL), else the accelerator-optimized machine type (a2-, a3-, g2-: their
  GPUs come with the machine type).
- `aws_instance`: `user_data` (text; the provider Base64-encodes it) or `user_data_base64`; `aws_launch_template`:
  `user_data`, which EC2 takes Base64-encoded. GPUs: `instance_type` (g5, g6, p4d, p5, ...).
- `azurerm_linux_virtual_machine` / `_scale_set`: `custom_data` or `user_data` (Base64); `azurerm_virtual_machine`:
  `os_profile { custom_data }`. GPUs: `size` / `sku` / `vm_size` (NC, ND, NV sizes).

The script is the attribute's value as Terraform evaluates it (a heredoc, `file()`, `templatefile()` with its
`${name}` substitutions where they are known, `$${X}` left as the shell's `${X}`), through `base64encode()` /
`filebase64()` or, on a Base64 field, decoded. It is then read as a shell script file is (`shell_scripts`), its
words on the lines where they are written (the `.tf` file's for a heredoc, the template's for a file). A
`#cloud-config` document (cloud-init YAML, not a script) is not read, and said.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from vramlint.extract import hcl
from vramlint.extract.terraform_eval import Context, Placed, is_unknown
from vramlint.model import GpuRequest, Location, Server

# resource type -> (script attributes in order, the ones whose value is Base64, GPU source kind, size attribute)
VM_RESOURCES: dict[str, tuple[tuple[str, ...], frozenset[str], str, str]] = {
    "google_compute_instance": (("metadata_startup_script", "metadata"), frozenset(), "gce", "machine_type"),
    "google_compute_instance_template": (("metadata_startup_script", "metadata"), frozenset(), "gce",
                                         "machine_type"),
    "aws_instance": (("user_data", "user_data_base64"), frozenset({"user_data_base64"}), "aws", "instance_type"),
    "aws_launch_template": (("user_data",), frozenset({"user_data"}), "aws", "instance_type"),
    "azurerm_linux_virtual_machine": (("custom_data", "user_data"), frozenset({"custom_data", "user_data"}), "azure",
                                      "size"),
    "azurerm_linux_virtual_machine_scale_set": (("custom_data", "user_data"), frozenset({"custom_data", "user_data"}),
                                                "azure", "sku"),
    "azurerm_virtual_machine": (("os_profile.custom_data",), frozenset({"os_profile.custom_data"}), "azure",
                                "vm_size"),
}
# A file with a VM whose start-up script is read from another file (`file()`, `templatefile()`): the script may name
# vLLM where the .tf names none (the scan's cheap test before reading such a file)
_READS_SCRIPT_FILE = re.compile(r"(?:metadata_startup_script|startup-script|user_data(?:_base64)?|custom_data)\"?\s*[=:]"
                                r"[^\n]*\b(?:file|templatefile|filebase64)\(")


def may_start_vm_script(text: str) -> bool:
    """Could this Terraform text create a VM whose start-up script is a file of the tree? False: certainly not."""
    return any(rtype in text for rtype in VM_RESOURCES) and _READS_SCRIPT_FILE.search(text) is not None


_METADATA_KEYS = ("startup-script", "user-data")  # GCE metadata the guest runs at boot (user-data: cloud-init)
MAX_SCRIPT_CHARS = 256 * 1024  # a start-up script (scripts.MAX_SCRIPT_BYTES: anything larger is not one)


def vm_servers(block: hcl.Block, ctx: Context, display: str, lines: list[str], mentions: bool
               ) -> tuple[list[Server], list[Any], list[str], str | None]:
    """The servers the VM's start-up script starts: (servers, problems, files read as the script, why it gives
    none: its script is not known or is no shell script, or it names vLLM and starts no server vramlint reads;
    else None). ``mentions``: the resource's own lines name vLLM; a script that is not known (or not one) is said
only then."""
    from vramlint.extract.shell_scripts import read_shell_script

    rtype, name = block.labels[0], block.labels[1]
    attrs, base64_attrs, cloud, size_attr = VM_RESOURCES[rtype]
    found = _script_attr(block, attrs)
    if found is None:
        return [], [], [], None
    field_name, expr = found
    text, why = _script_text(expr, ctx, field_name in base64_attrs)
    where = f"{rtype}.{name}"
    if text is None and not mentions:
        return [], [], [], None
    if text is None:
        return [], [], [], f"{where}: its start-up script ({field_name}) is not known to vramlint ({why})"
    if len(text) > MAX_SCRIPT_CHARS:
        return [], [], [], (f"{where}: its start-up script ({field_name}) is {len(text):,} characters, past "
                            f"vramlint's limit of {MAX_SCRIPT_CHARS:,} for a script: not read")
    if text.lstrip().startswith("#cloud-config") and not (mentions or "vllm" in text.lower()):
        return [], [], [], None
    if text.lstrip().startswith("#cloud-config"):
        return [], [], [], (f"{where}: its {field_name} is a cloud-init #cloud-config document, which vramlint does "
                            "not read as a script: its vLLM server is not checked")
    file, script = _placed_script(text, display, lines)
    servers, problems = read_shell_script(str(text), file, say_mention=False, script=script)
    consumed = [file] if file != display else []
    gpu = _vm_gpu(block, ctx, cloud, size_attr, display)
    for server in servers:
        server.kind = f"{rtype} start-up script"
        server.name = name
        server.notes.append(f"{where}: started by the VM's start-up script ({field_name}" +
                            (f", {file}" if file != display else "") + "): its GPUs are the VM's")
        _apply_gpu(server, gpu, where)
    if not servers and "vllm" not in text.lower():
        return [], problems, consumed, None
    if not servers:
        return [], problems, consumed, (f"{where}: its start-up script ({field_name}) names vLLM but starts no "
                                        "vLLM server vramlint reads (`docker run` of a vLLM image, `vllm serve`)")
    return servers, problems, consumed, None


def _script_attr(block: hcl.Block, attrs: tuple[str, ...]) -> tuple[str, hcl.Expr] | None:
    for name in attrs:
        if "." in name:  # a nested block's attribute (azurerm_virtual_machine's os_profile)
            outer, inner = name.split(".", 1)
            found = next((b.attr(inner) for b in block.blocks(outer) if b.attr(inner) is not None), None)
            if found is not None:
                return name, found.expr
            continue
        attr = block.attr(name)
        if attr is None:
            continue
        if name == "metadata":
            item = _metadata_item(attr.expr)
            if item is not None:
                return f"metadata.{item[0]}", item[1]
            continue
        return name, attr.expr
    return None


def _metadata_item(expr: hcl.Expr) -> tuple[str, hcl.Expr] | None:
    if not isinstance(expr, hcl.ObjectExpr):
        return None
    for wanted in _METADATA_KEYS:
        for item in expr.items:
            key = item.bare or _literal_key(item.key)
            if key == wanted:
                return wanted, item.value
    return None


def _literal_key(key: Any) -> str | None:
    if isinstance(key, hcl.Template) and all(isinstance(p, str) for p in key.parts):
        return "".join(key.parts)
    if isinstance(key, hcl.Literal) and isinstance(key.value, str):
        return key.value
    return None


def _script_text(expr: hcl.Expr, ctx: Context, encoded: bool) -> tuple[str | None, str]:
    """The script's text as the VM receives it decoded, or (None, why)."""
    if isinstance(expr, hcl.Call) and expr.name in ("base64encode", "filebase64") and len(expr.args) == 1:
        # the VM decodes what the provider sends: the text inside is the script
        inner = expr.args[0] if expr.name == "base64encode" else hcl.Call(
            expr.line, expr.col, expr.end, name="file", args=expr.args, text=expr.text)
        return _known(ctx.evaluate(inner), ctx)
    text, why = _known(ctx.evaluate(expr), ctx)
    if text is None or not encoded:
        return text, why
    try:
        return base64.b64decode(str(text), validate=True).decode("utf-8"), ""
    except (binascii.Error, ValueError):
        return None, "its value is not Base64 text, which this field takes"


def _known(value: Any, ctx: Context) -> tuple[str | None, str]:
    if isinstance(value, str) and not is_unknown(value):
        return value, ""
    if isinstance(value, str) and "vllm" in value.lower():
        return value, ""  # a script with some values unknown: read, those values unknown
    why = next((f"{name}: {reason}" for name, reason in ctx.unknown.items()), "an expression it does not evaluate")
    return None, why


def _placed_script(text: str, display: str, lines: list[str]) -> tuple[str, Any]:
    """The file the script's lines are in and the script as one Token whose words point at their lines there."""
    from vramlint.cmdline import Token

    file = getattr(text, "file", None) if isinstance(text, Placed) else None
    if file is None and isinstance(text, Placed) and "\n" in text:
        # a heredoc of the .tf file: its body from the line after `<<EOF`, each line at the heredoc's indentation
        return display, Token(str(text), Location(display, text.line, 1), block="|", indent=text.indent + 1,
                              lines=lines)
    shown = file or display
    return shown, Token(str(text), Location(shown, 0, 1), block="|", indent=1, lines=str(text).splitlines())


def _vm_gpu(block: hcl.Block, ctx: Context, cloud: str, size_attr: str, display: str) -> GpuRequest | None:
    from vramlint import gpus

    if cloud == "gce":
        accelerator = _guest_accelerator(block, ctx, display)
        if accelerator is not None:
            return accelerator
    attr = block.attr(size_attr)
    if attr is None:
        return None
    size = ctx.evaluate(attr.expr)
    loc = Location(display, attr.expr.line + 1, attr.expr.col + 1)
    if not isinstance(size, str) or is_unknown(size):
        return GpuRequest(type=None, count=None, evidence=f"{size_attr}: not known", location=loc)
    hit = gpus.instance_type(size)
    if hit is None:
        return GpuRequest(type=None, count=None, evidence=f"{size_attr} = {size} (no GPU vramlint knows)",
                          location=loc)
    return GpuRequest(type=hit[0], count=hit[1], evidence=f"{size_attr} = {size}", location=loc, count_location=loc)


def _guest_accelerator(block: hcl.Block, ctx: Context, display: str) -> GpuRequest | None:
    from vramlint.extract.podspec import resolve_gpu_hint

    items: list[tuple[Any, Any, Location]] = []
    for acc in block.blocks("guest_accelerator"):
        t, c = acc.attr("type"), acc.attr("count")
        items.append((ctx.evaluate(t.expr) if t else None, ctx.evaluate(c.expr) if c else 1,
                      Location(display, (t.expr.line if t else acc.line) + 1, (t.expr.col if t else acc.col) + 1)))
    attr = block.attr("guest_accelerator")  # the attribute form: a list of objects
    if attr is not None:
        value = ctx.evaluate(attr.expr)
        for item in value if isinstance(value, list) else []:
            if isinstance(item, dict):
                items.append((item.get("type"), item.get("count", 1),
                              Location(display, attr.expr.line + 1, attr.expr.col + 1)))
    if not items:
        return None
    kind, count, loc = items[0]
    if len(items) > 1 or not isinstance(kind, str) or is_unknown(kind):
        return GpuRequest(type=None, count=None, evidence="guest_accelerator: not known", location=loc)
    short = kind.rstrip("/").rsplit("/", 1)[-1]  # (a full accelerator type URL ends with its name)
    number = count if isinstance(count, int) and not isinstance(count, bool) and 0 < count <= 64 else None
    return GpuRequest(type=resolve_gpu_hint(short) or short, count=number,
                      evidence=f"guest_accelerator {{ type = \"{short}\", count = {count} }}", location=loc,
                      count_location=loc)


def _apply_gpu(server: Server, vm: GpuRequest | None, where: str) -> None:
    """The VM's GPUs under what the script gives the server: `--gpus all` (or none said) is every GPU of the VM;
    a count or device list the script names stays, on the VM's GPU type."""
    if vm is None:
        if server.gpu is None or server.gpu.type is None:
            server.notes.append(f"{where} says no GPU (no accelerator and no GPU machine type): the server's GPU "
                                "is not known; set `gpus:` in .vramlint.yaml (or --gpu) to check it")
        return
    own = server.gpu
    if own is None or own.count is None:
        vm.evidence = f"{where}: {vm.evidence}" + (f"; {own.evidence}" if own is not None and own.evidence else "")
        server.gpu = vm
        return
    own.type = own.type or vm.type
    own.evidence = f"{where}: {vm.evidence}; {own.evidence}"
