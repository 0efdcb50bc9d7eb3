"""The Intel Gaudi devices the Habana container runtime gives a container.

habana-container-runtime (HabanaAI/habana-container-runtime) is runc with a pre-start hook that, when
HABANA_VISIBLE_DEVICES is set in the container's OCI spec, mounts the Gaudi devices it lists by index ("all": every
device of the host); HABANA_VISIBLE_MODULES lists them by module id instead. Intel Gaudi's documentation ("Multiple
Dockers Each with a Single Workload") gives `docker run --runtime=habana -e HABANA_VISIBLE_DEVICES=0,1,2,3` as a
container on four Gaudi processors.
"""

from __future__ import annotations

import re

GAUDI_VARIABLES = ("HABANA_VISIBLE_DEVICES", "HABANA_VISIBLE_MODULES")


def visible_gaudi(env: dict[str, str | None]) -> tuple[str, list[str] | None, bool] | None:
    """(the variable that says, the devices it lists, whether the file says which), or None when neither variable
    is set. The list is None for "all" (every device of the host: how many, the file does not say) and when the
    value is set where the container runs (``-e NAME``, a variable of the shell)."""
    for name in GAUDI_VARIABLES:
        if name not in env:
            continue
        value = env[name]
        if value is None:
            return name, None, False
        raw = value.strip().strip("'\"")
        if raw.lower() == "all":
            return name, None, True
        if re.fullmatch(r"\d+(,\d+)*", raw):
            return name, raw.split(","), True
        return name, None, False
    return None
