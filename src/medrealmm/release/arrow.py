"""Arrow schemas of a release's tables: nested data as lists and structs, not JSON text.

So the Hugging Face viewer, ``datasets`` and pandas show an event's sender and images, or a
criterion's weight, as fields. One explicit schema per table keeps every release's types the
same whatever its rows hold (an all-text release still has a list of image structs). Only a
consultation's free-form ``meta`` mapping stays JSON text: its keys differ from case to case.
Timestamps are ISO 8601 text, as the schema models write them.
"""

from __future__ import annotations

import pyarrow as pa

TEXT = pa.string()
IMAGE = pa.struct(
    [
        ("path", TEXT),
        ("origin", TEXT),
        ("kind", TEXT),
        ("category", TEXT),
        ("sha256", TEXT),
    ]
)
EVENT = pa.struct(
    [("sender", TEXT), ("timestamp", TEXT), ("content", TEXT), ("images", pa.list_(IMAGE))]
)
JUDGEMENT = pa.struct([("label", pa.bool_()), ("score", pa.float64()), ("reason", TEXT)])
RULE = pa.struct([("type", TEXT), ("limit", pa.int64())])
CRITERION = pa.struct(
    [
        ("id", TEXT),
        ("text", TEXT),
        ("weight", pa.int64()),
        ("kind", TEXT),
        ("rule", RULE),
        ("tags", pa.list_(TEXT)),
        ("axis", TEXT),
    ]
)

SCHEMAS = {
    "consultations": pa.schema(
        [
            ("id", TEXT),
            ("department", TEXT),
            ("subspecialty", TEXT),
            ("events", pa.list_(EVENT)),
            ("meta", TEXT),
        ]
    ),
    "instances": pa.schema(
        [
            ("id", TEXT),
            ("consultation_id", TEXT),
            ("department", TEXT),
            ("subspecialty", TEXT),
            ("t_star", pa.int64()),
            ("context", pa.list_(EVENT)),
            ("target_reply", TEXT),
            ("intent", TEXT),
            ("stage", TEXT),
            ("cropper", JUDGEMENT),
            ("verifier", JUDGEMENT),
            ("consultation_turns", pa.int64()),
        ]
    ),
    "rubrics": pa.schema(
        [
            ("instance_id", TEXT),
            ("round", pa.int64()),
            ("criteria", pa.list_(CRITERION)),
            ("approved", pa.bool_()),
        ]
    ),
}
#: columns kept as JSON text, per table (the manifest lists them; the loader decodes them)
JSON_COLUMNS = {"consultations": ("meta",), "instances": (), "rubrics": ()}
