"""Write docs/options.md: the option table of every built-in plugin that declares an option spec.

Run ``python scripts/option_docs.py`` (``make docs``) after changing a spec; ``tests/spi/test_optionspec.py``
fails while the file differs from what the specs give.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "docs" / "options.md"

HEADER = """# Plugin options

Generated from each plugin's option spec by `make docs` (`scripts/option_docs.py`): do not edit by hand.
Every block may also set `plugin_input`, `plugin_output` (or the older `source_table_name`,
`result_table_name`) and `parallelism`. A key a plugin does not declare is a warning (`it is ignored`),
an error under the `[seatunnel] strict` setting.
"""


def render() -> str:
    sys.path.insert(0, str(ROOT))
    from airflow_provider_seatunnel.spi.registry import available, get_connector

    parts = [HEADER]
    for name in sorted(available(), key=str.lower):
        connector = get_connector(name)
        if connector is None or connector.option_spec is None or type(connector).__module__.split(".")[0] != \
                "airflow_provider_seatunnel":
            continue
        kinds = ", ".join(sorted(connector.capabilities.sections))
        table = connector.option_spec.markdown()
        parts.append(f"\n## {connector.name} ({kinds})\n\n{connector.description}\n\n{table}")
        sink_spec = getattr(connector, "sink_option_spec", None)  # a sink whose options differ from the source's
        if sink_spec is not None:
            parts.append(f"\n### {connector.name} as a sink\n\n{sink_spec.markdown()}")
    return "".join(parts)


if __name__ == "__main__":
    TARGET.write_text(render())
    print(f"wrote {TARGET.relative_to(ROOT)}")
