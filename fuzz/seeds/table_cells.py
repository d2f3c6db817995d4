#!/usr/bin/env python3
"""Seeds for the table_cells target: every object of core/tests/upstream/tables/,
with its apiVersion and kind, behind a byte picking the recorders' clock."""
import json, os, pathlib

here = pathlib.Path(__file__).resolve().parent
tables = here.parent.parent / "core" / "tests" / "upstream" / "tables"
out = here.parent / "corpus" / "table_cells"
out.mkdir(parents=True, exist_ok=True)
n = 0
for path in sorted(tables.glob("*.json")):
    recorded = json.loads(path.read_text())
    r = recorded["resource"]
    api_version = f'{r["group"]}/{r["version"]}' if r.get("group") else r["version"]
    kind = recorded.get("table_single_object", {}).get("rows", [{}])[0].get("object", {}).get("kind")
    for i, obj in enumerate(recorded.get("objects", [])):
        obj.setdefault("apiVersion", api_version)
        if kind:
            obj.setdefault("kind", kind)
        (out / f"{path.stem}-{i}").write_bytes(b"\x01" + json.dumps(obj).encode())
        n += 1
print(f"{n} seeds in {out}")
